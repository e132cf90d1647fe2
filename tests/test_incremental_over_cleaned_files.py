"""Incremental queries over a window whose files a clean deleted, as Apache Hudi 1.2.0 answers them (measured on
the corpus's ``clean-savepoint-cow-*`` tables, written by the reference writer and by Hudi itself):

- table version 6 (timeline layout 1): Hudi's ``MergeOnReadIncrementalRelationV1`` reads the latest slices of the
  files the window's writes wrote, without a full table scan fallback; a window whose latest file was cleaned
  fails (FileNotFoundException), a window whose older files alone were cleaned is answered. The spec reader and
  the model refuse the first (``IncrementalRefused``) and answer the second.
- table version 8 and 9 (layout 2): ``HoodieIncrementalRelationV2Trait.fullTableScan`` reads the table's latest
  slices as a snapshot does (every log block applied), keeping the rows of the window's instants: a record copied
  into a newer base file (its commit time unchanged) is read from that file, and a record the window wrote that
  was updated since, in a base file or a log block, is not returned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.interface.adapter import Query
from conformance.runner import execute, load_cases
from spec.errors import IncrementalRefused
from spec.read.reader import read_table

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = {fc.case.id: fc for suite in ("services", "concurrency") for fc in load_cases(FIXTURES, suite=suite)}


def _commits(adapter: Any) -> list[tuple[str, str]]:
    """The completed commits: (requested time, completion time; the requested time where there is none)."""
    return [(t, done or t) for t, action, state, done in adapter.timeline()
            if action in ("commit", "deltacommit") and state == "COMPLETED"]


def _written(case_id: str, tmp_path: Path) -> tuple[ReferenceLocalAdapter, SpecModelAdapter]:
    """The case's table written by the reference writer (local engine), and the model after the same steps."""
    case = CASES[case_id].case
    writer, model = ReferenceLocalAdapter(), SpecModelAdapter()
    for adapter, folder in ((writer, tmp_path / "ref"), (model, tmp_path / "model")):
        for step in execute(adapter, case, ("L1",), folder):
            assert not step.stop, step.outcome
    return writer, model


def _rows(rows: Any, commits: list[tuple[str, str]]) -> list[tuple[Any, ...]]:
    """(id, v, the commit's number, the number of the commit that wrote the row's base file, or "log")."""
    number = {t: f"c{n}" for n, (t, _) in enumerate(commits, 1)}
    return sorted((r["id"], r["v"], number[r["_hoodie_commit_time"]],
                   number.get(r["_hoodie_file_name"].rsplit("_", 1)[-1].removesuffix(".parquet"), "log"))
                  for r in rows)


def _both(writer: ReferenceLocalAdapter, model: SpecModelAdapter, begin: int | None,
          end: int) -> list[list[tuple[Any, ...]]]:
    """The window (commit ``begin``, commit ``end``] (by number, completion times) read by the spec reader on the
    written table and by the model."""
    out = []
    for commits, read in ((_commits(writer), lambda q: read_table(writer.path, "incremental", begin=q.begin,
                                                                  end=q.end).to_pylist()),
                          (_commits(model), model.rows)):
        q = Query("incremental", begin=None if begin is None else commits[begin - 1][1], end=commits[end - 1][1])
        out.append(_rows(read(q), commits))
    return out


def test_version_6_refuses_a_window_whose_latest_file_was_cleaned(tmp_path: Path) -> None:
    writer, model = _written("clean-savepoint-cow-v6", tmp_path)
    c2 = _commits(writer)[1][0]
    for begin in (None, 1):  # the second commit's base file was cleaned: both windows ending there read it
        with pytest.raises(IncrementalRefused, match=f"{c2}.parquet, which a clean deleted"):
            _both(writer, model, begin, 2)
        with pytest.raises(IncrementalRefused):
            model.rows(Query("incremental", begin=None if begin is None else _commits(model)[0][0],
                             end=_commits(model)[1][0]))
    # (c1, c3]: c2's file was cleaned too, but the window's latest file of the group is c3's, which is there
    ours, theirs = _both(writer, model, 1, 3)
    assert ours == theirs == [(1, "v1@3", "c3", "c3")]


def test_version_8_reads_a_window_over_cleaned_files_from_the_latest_slices(tmp_path: Path) -> None:
    # (start, c3]: c2's base file was cleaned; the latest base file (c4's) holds id 1 as c3 wrote it and id 2 as
    # c4 rewrote it, so only id 1 is the window's, read from c4's file
    ours, theirs = _both(*_written("clean-savepoint-cow-v8", tmp_path), None, 3)
    assert ours == theirs == [(1, "v1@3", "c3", "c4")]


def test_version_8_full_scan_applies_every_log_block_of_the_latest_slices(tmp_path: Path) -> None:
    # commits c1, c2 (delta), c3 (the compaction, completed last), c4, c5 (delta); a clean deleted c1's base
    # file and c2's log. (start, c4] holds c1, c2 and c4: id 1 as c2 wrote it sits in the compacted base file,
    # but c5's log block updated it, so only id 2 (c4's log record) is the window's
    ours, theirs = _both(*_written("clean-pending-compaction-mor-v8", tmp_path), None, 4)
    assert ours == theirs == [(2, "v2@3", "c4", "log")]


def test_a_version_6_table_with_a_hollow_commit_refuses_every_window(tmp_path: Path) -> None:
    """A write that lost conflict resolution to a compaction is left inflight, requested before the compaction's
    commit: on version 6 every incremental window is refused, by the spec reader of the written table and by
    the model (``spec.read.query_plan.check_hollow_commits``), as Apache Hudi refuses it ('Found hollow commit')."""
    from spec.read.query_plan import hollow_commit
    from spec.timeline.instant import Action, Instant, State

    writer, model = _written("concurrent-compaction-mor-v6", tmp_path)
    pending = [t for t, _, state, _ in writer.timeline() if state != "COMPLETED"]
    assert len(pending) == 1
    for begin in (None, _commits(writer)[0][0]):
        with pytest.raises(IncrementalRefused, match=f"write {pending[0]} is pending"):
            read_table(writer.path, "incremental", begin=begin)
        with pytest.raises(IncrementalRefused, match="hollow commit"):
            model.rows(Query("incremental", begin=None if begin is None else _commits(model)[0][0]))
    a, b = Instant("20240101000001000", Action.DELTA_COMMIT, State.INFLIGHT), Instant(
        "20240101000002000", Action.COMMIT, State.COMPLETED)
    assert hollow_commit([a, b]) == a.requested
    assert hollow_commit([a, b], [a.requested]) is None  # a pending clustering leaves no hole
    assert hollow_commit([b, Instant("20240101000003000", Action.DELTA_COMMIT, State.INFLIGHT)]) is None

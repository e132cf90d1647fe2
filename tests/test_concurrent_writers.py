"""Several writers under optimistic concurrency control, on S3 (moto on 127.0.0.1) and on local files.

- overlapping file groups: a write whose file group another write changed after it started loses —
  WriteConflict naming that instant, its instant left inflight without a heartbeat, as Apache Hudi leaves
  it, and rolled back by the next writer; the other write's rows intact; on disjoint file groups both
  commit (deterministic: the second write runs inside the first);
- a failed write of a live writer is never rolled back by another: its heartbeat keeps it alive;
- two processes upserting disjoint keys at the same moment, trial after trial: no row is ever lost —
  each writer commits all its rows or fails with WriteConflict, its write left inflight until a writer of
  the next trial (or the last write) rolls it back.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.checker import check_table
from reference.write.client import WriteClient
from spec.errors import InvalidConfig, WriteConflict
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from tests import processes

ROOT = Path(__file__).resolve().parent.parent

OCC = {"hoodie.table.name": "occ", "hoodie.datasource.write.recordkey.field": "id",
       "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
       "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.wait_time_ms_between_retry": "50"}
TRIALS = 3
SLOW_TRIALS = 20


def _rows(keys: range, part: str, ts: int = 1) -> pa.Table:
    return pa.Table.from_pylist([{"id": f"k{i}", "ts": ts, "p": part, "v": f"{part}{i}@{ts}"} for i in keys])


def _table(where: str, s3_server: Any, tmp_path: Path, table_type: str = "COPY_ON_WRITE",
           version: int = 8) -> tuple[str, dict[str, str]]:
    path = f"s3://{s3_server.new_bucket()}/t" if where == "s3" else str(tmp_path / "t")
    options = {**OCC, "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version)}
    WriteClient(path, engine="local").write(pa.concat_tables([_rows(range(0, 10), "a"), _rows(range(10, 20), "b")]),
                                            "upsert", options)
    return path, options


def _state(path: str) -> dict[str, str]:
    return {r["id"]: r["v"] for r in read_table(path).to_pylist()}


def _names(path: str) -> list[str]:
    return [f.path for f in Storage(path).list("", recursive=True) if not f.is_dir]


@pytest.mark.parametrize(("where", "table_type", "version"), [("local", "COPY_ON_WRITE", 8),
                                                              ("local", "MERGE_ON_READ", 6),
                                                              ("s3", "MERGE_ON_READ", 8)])
def test_overlapping_file_groups_exactly_one_writer_wins(where: str, table_type: str, version: int,
                                                         s3_server: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path, options = _table(where, s3_server, tmp_path, table_type, version)
    first, second = WriteClient(path, engine="local"), WriteClient(path, engine="local")
    original = WriteClient._write
    inner: dict[str, str] = {}

    def write_with_a_rival(self: WriteClient, *args: Any) -> Any:
        md = original(self, *args)  # the first writer has written its files; before it commits, another
        if self is first:           # writer updates the same file group and commits
            inner["instant"] = second.write(_rows(range(0, 3), "a", ts=3), "upsert", options).instant
        return md

    monkeypatch.setattr(WriteClient, "_write", write_with_a_rival)
    with pytest.raises(WriteConflict) as err:
        first.write(_rows(range(0, 5), "a", ts=2), "upsert", options)
    assert inner["instant"] in str(err.value) and "rolled back by the next writer" in str(err.value)
    loser = re.search(r"write (\d{17})", str(err.value))
    assert loser is not None
    assert [i.requested for i in Timeline.load(path).pending_writes().instants] == [loser.group(1)]  # a failed write
    assert not any(loser.group(1) in n for n in _names(path) if ".heartbeat" in n)
    state = _state(path)
    assert [state[f"k{i}"] for i in range(5)] == ["a0@3", "a1@3", "a2@3", "a3@1", "a4@1"]  # the winner's rows
    assert len(state) == 20
    monkeypatch.undo()
    WriteClient(path, engine="local").write(_rows(range(19, 20), "b", ts=4), "upsert", options)  # the next writer
    assert not any(loser.group(1) in n for n in _names(path) if ".hoodie/" not in n or "/.temp/" in n)
    assert not Timeline.load(path).pending_writes().instants
    assert _state(path) == {**state, "k19": "b19@4"}


def test_disjoint_file_groups_both_commit(s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, options = _table("local", s3_server, tmp_path)
    first, second = WriteClient(path, engine="local"), WriteClient(path, engine="local")
    original = WriteClient._write

    def write_with_a_neighbour(self: WriteClient, *args: Any) -> Any:
        md = original(self, *args)
        if self is first:
            second.write(_rows(range(10, 13), "b", ts=3), "upsert", options)  # another partition: other groups
        return md

    monkeypatch.setattr(WriteClient, "_write", write_with_a_neighbour)
    first.write(_rows(range(0, 3), "a", ts=2), "upsert", options)
    state = _state(path)
    assert [state[f"k{i}"] for i in (0, 1, 2, 10, 11, 12, 13)] == ["a0@2", "a1@2", "a2@2", "b10@3", "b11@3",
                                                                   "b12@3", "b13@1"]
    assert len(Timeline.load(path).commits_timeline().instants) == 3


def test_a_live_writers_pending_instant_is_not_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, options = _table("local", None, tmp_path)
    first, second = WriteClient(path, engine="local"), WriteClient(path, engine="local")
    original = WriteClient._write
    seen: dict[str, Any] = {}

    def write_with_a_rival(self: WriteClient, *args: Any) -> Any:
        if self is first:  # while the first write is pending, a second writer begins, and commits
            seen["pending"] = [i.requested for i in Timeline.load(path).pending_writes().instants]
            second.write(_rows(range(10, 12), "b", ts=3), "upsert", options)
            seen["after"] = [i.requested for i in Timeline.load(path).pending_writes().instants]
        return original(self, *args)

    monkeypatch.setattr(WriteClient, "_write", write_with_a_rival)
    first.write(_rows(range(0, 2), "a", ts=2), "upsert", options)
    assert len(seen["pending"]) == 1 and seen["after"] == seen["pending"]  # not rolled back by the second
    assert not any(i.action == "rollback" for i in Timeline.load(path).instants)
    assert _state(path)["k0"] == "a0@2" and _state(path)["k10"] == "b10@3"


def test_eager_failed_writes_cannot_go_with_optimistic_concurrency(tmp_path: Path) -> None:
    with pytest.raises(InvalidConfig, match="EAGER cannot be used"):
        WriteClient(str(tmp_path / "t"), engine="local").write(
            _rows(range(2), "a"), "upsert", {**OCC, "hoodie.cleaner.policy.failed.writes": "EAGER"})


def _trials(where: str, s3_server: Any, tmp_path: Path, trials: int, same_partition: bool) -> dict[str, int]:
    """Two writer processes upsert disjoint new keys at the same moment, ``trials`` times; after each
    trial the table holds exactly the rows of the writers that committed."""
    path, options = _table(where, s3_server, tmp_path)
    parts = {"A": "a", "B": "a" if same_partition else "b"}
    batches = {w: [[{"id": f"{w}{t}-{i}", "ts": 1, "p": parts[w], "v": f"{w}{t}"} for i in range(30)]
                   for t in range(trials)] for w in ("A", "B")}
    expected = _state(path)
    outcomes = {"ok": 0, "conflict": 0}
    with contextlib.ExitStack() as stack:
        writers = {w: stack.enter_context(processes.start(
            processes.python(str(ROOT / "tests" / "concurrent_writer.py"), path, json.dumps(options), w),
            env=processes.child_env(), stdin=True)) for w in ("A", "B")}
        with processes.reported(*writers.values()):
            for writer in writers.values():
                writer.wait_for_line("ready")
            for t in range(trials):
                for w, writer in writers.items():  # go
                    writer.send_line(json.dumps(batches[w][t]))
                got = {}
                for writer in writers.values():
                    name, outcome, detail = json.loads(writer.next_line(expected=f"the outcome of trial {t}"))
                    got[name] = (outcome, detail)
                lost = set()
                for w, (outcome, detail) in got.items():
                    assert outcome in ("ok", "conflict"), f"trial {t}, writer {w}: {detail}"
                    outcomes[outcome] += 1
                    if outcome == "ok":
                        expected.update({r["id"]: r["v"] for r in batches[w][t]})
                    elif (failed := re.search(r"write (\d{17})", detail)) is not None:
                        lost.add(failed.group(1))
                assert _state(path) == expected, f"trial {t}: rows lost ({got})"
                pending = {i.requested for i in Timeline.load(path).pending_writes().instants}
                assert pending <= lost, f"trial {t}: a write left pending that did not lose: {pending - lost}"
            for writer in writers.values():
                writer.finish().expect(0, "the writer ends when its input does")
    WriteClient(path, engine="local").write(_rows(range(0, 1), "a", ts=9), "upsert", options)  # rolls back the losers
    expected["k0"] = "a0@9"
    assert _state(path) == expected
    assert not Timeline.load(path).pending_writes().instants
    report = check_table(path)
    assert not [f for f in report.findings if f.level == "error"], report.findings
    return outcomes


@pytest.mark.parametrize("where", ["s3", "local"])
def test_two_processes_disjoint_keys_no_row_lost(where: str, s3_server: Any, tmp_path: Path) -> None:
    outcomes = _trials(where, s3_server, tmp_path, TRIALS, same_partition=True)
    assert sum(outcomes.values()) == 2 * TRIALS and outcomes["ok"] >= TRIALS  # at least one writer per trial


@pytest.mark.slow
@pytest.mark.parametrize("where", ["s3", "local"])
def test_two_processes_disjoint_partitions_both_commit(where: str, s3_server: Any, tmp_path: Path) -> None:
    outcomes = _trials(where, s3_server, tmp_path, TRIALS, same_partition=False)
    assert outcomes == {"ok": 2 * TRIALS, "conflict": 0}


@pytest.mark.slow
@pytest.mark.explore
@pytest.mark.parametrize("where", ["s3", "local"])
@pytest.mark.parametrize("same_partition", [True, False])
def test_twenty_trials_no_row_lost(where: str, same_partition: bool, s3_server: Any, tmp_path: Path) -> None:
    outcomes = _trials(where, s3_server, tmp_path, SLOW_TRIALS, same_partition)
    assert sum(outcomes.values()) == 2 * SLOW_TRIALS and outcomes["ok"] >= SLOW_TRIALS
    if not same_partition:
        assert outcomes["conflict"] == 0


def test_a_write_rolled_back_under_it_does_not_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reference.executors.common import load_table
    from reference.executors.rollback import rollback

    path, options = _table("local", None, tmp_path)
    first = WriteClient(path, engine="local")
    original = WriteClient._write

    def rolled_back_meanwhile(self: WriteClient, *args: Any) -> Any:
        md = original(self, *args)
        storage, cfg = load_table(path)
        rollback(storage, cfg)  # someone rolls back the pending write (the latest data-writing instant)
        return md

    monkeypatch.setattr(WriteClient, "_write", rolled_back_meanwhile)
    before = _state(path)
    with pytest.raises(WriteConflict, match="no longer inflight"):
        first.write(_rows(range(0, 2), "a", ts=2), "upsert", options)
    assert _state(path) == before
    assert not Timeline.load(path).pending_writes().instants

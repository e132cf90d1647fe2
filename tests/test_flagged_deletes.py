"""Upserts whose records are flagged ``_hoodie_is_deleted``: how a batch combines them, what a stored row does
against them, and what a handle writes for one of a key no file holds — the model, the reference on both
engines, and Apache Hudi 1.2.0's Spark datasource (the same cases, every layer).

What Hudi does, measured with these cases (and followed by the spec: ``spec.model.writes._version``,
``spec.read.merge.merge_handle_keeps_stored``, ``spec.model.writes.plan_write``):

- **in one batch** a flagged record and a row of one key combine by ordering value, the later of equal ones
  winning, on versions 6 and 8 alike: ``[ts 1, ts 0 flagged]`` keeps the row (the model deleted it on version
  8, taking the flag's 0 for the natural-order default of a log's delete record);
- **against a stored row** on copy-on-write a flagged record with a smaller ordering value loses: the row stays
  (0 included); on merge-on-read the flag goes to a log and the reader's merge decides (it deletes);
- **of a key no file holds** a flagged record is routed as an insert and written as nothing: a bucket of such
  records alone is a base file of no rows, one routed to a small file rewrites it, and the write stat counts
  it in ``numDeletes``.

Before these cases the reference wrote a flagged record of a new key as a row (a deleted key read back) and,
on copy-on-write version 6, let a stale flagged record delete a newer stored row (a row lost).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.case_kit import COW, MOR, config, rec, short
from conformance.interface.adapter import Query
from conformance.interface.ops import Case
from conformance.runner import FixtureCase, Verdict, run_case
from spec.model.operations import Stream, StreamRecord, Write

FLAG = "_hoodie_is_deleted"


def up(key: int, ts: int) -> dict[str, Any]:
    return {**rec(key, ts), FLAG: False}


def flagged(key: int, ts: int) -> dict[str, Any]:
    return {**rec(key, ts), FLAG: True}


PROBES: dict[str, tuple[tuple[dict[str, Any], ...], ...]] = {
    "row-then-older-flag": ((up(0, 1), flagged(0, 0)),),
    "flag-then-older-row": ((flagged(0, 1), up(0, 0)),),
    "older-flag-then-row": ((flagged(0, 0), up(0, 1)),),
    "row-then-newer-flag": ((up(0, 0), flagged(0, 1)),),
    "row-then-equal-flag": ((up(0, 1), flagged(0, 1)),),
    "flag-then-equal-row": ((flagged(0, 1), up(0, 1)),),
    "flag-of-a-new-key-into-a-small-file": ((up(1, 1),), (flagged(0, 0),)),
    "stale-flag-against-stored": ((up(0, 1),), (flagged(0, 0),)),
    "equal-flag-against-stored": ((up(0, 1),), (flagged(0, 1),)),
    "newer-flag-against-stored": ((up(0, 1),), (flagged(0, 2),)),
    "newer-flag-and-older-row-against-stored": ((up(0, 1),), (flagged(0, 2), up(0, 0))),
}
"""Each a sequence of upserts (one tuple a batch) on a table partitioned by ``p``, key ``id``, ordering ``ts``."""

MIXED = ((up(0, 1), up(2, 1), up(3, 1), flagged(1, 1)),
         (up(2, 1), flagged(2, 0), flagged(0, 0), flagged(3, 2), flagged(4, 0)),
         (flagged(0, 2), up(5, 0)))
"""Every rule at once: a new key's flag beside inserts, a batch's own combination, a stale and a newer flag
against stored rows, and a new key's flag routed to a small file."""

CONFIGS = [(t, v) for t in (COW, MOR) for v in (6, 8)]

STREAMS: dict[str, tuple[tuple[tuple[str, dict[str, Any]], ...], ...]] = {
    "stale-delete-next-checkpoint": ((("upsert", rec(0, 1)),), (("delete", rec(0, 0)),)),
    "older-delete-same-checkpoint": ((("upsert", rec(0, 1)), ("delete", rec(0, 0))),),
    # the state machine's minimized failure (a random run against the local engine): a key in two partitions
    "machine-two-partitions": ((("upsert", rec(0, 0, "b")), ("upsert", rec(0, 0, "a")), ("upsert", rec(0, 1, "a"))),
                               (("delete", rec(0, 0, "a")), ("upsert", rec(0, 1, "b")))),
}
"""Streams (one tuple a checkpoint) whose deletes are records flagged ``_hoodie_is_deleted``. A stale delete lost
against the stored row in the model but won in the reference: on merge-on-read version 6 the spec reader read a
slice of log files alone with the value-derived type of its rows' ordering values (``int``) against the delete's
declared ``long``, a type mismatch the delete wins (``spec.read.slice_merge``: the log blocks' declared type now);
and the model combined a table's first checkpoint before its schema was known (``spec.model.table_model.stream``).
"""


def case(name: str, batches: tuple[tuple[dict[str, Any], ...], ...], table_type: str, version: int) -> FixtureCase:
    ops = tuple(Write("upsert", batch) for batch in batches)
    return FixtureCase(Case(id=f"flagged-{name}-{short(table_type)}-v{version}", description=name,
                            config=config(table_type, version), ops=ops, tags=("deletes",),
                            provenance="tests/test_flagged_deletes.py"), "writes")


def stream_case(name: str, table_type: str, version: int) -> FixtureCase:
    checkpoints = tuple(tuple(StreamRecord(kind, r) for kind, r in cp) for cp in STREAMS[name])
    return FixtureCase(Case(id=f"stream-{name}-{short(table_type)}-v{version}", description=name,
                            config=config(table_type, version), ops=(Stream(checkpoints),), tags=("stream",),
                            provenance="tests/test_flagged_deletes.py"), "stream")


def _failures(results: dict[str, Any]) -> dict[str, str]:
    return {cid: r.diff for cid, r in results.items() if r.verdict != Verdict.PASS}


@pytest.mark.parametrize(("table_type", "version"), CONFIGS)
def test_the_local_engine_does_what_the_model_says(table_type: str, version: int) -> None:
    cases = [case(n, b, table_type, version) for n, b in (*PROBES.items(), ("mixed", MIXED))]
    assert _failures({fc.case.id: run_case(fc, ReferenceLocalAdapter) for fc in cases}) == {}


@pytest.mark.spark  # the reference streams through Spark Structured Streaming
@pytest.mark.parametrize(("table_type", "version"), [
    c if c in ((COW, 6), (MOR, 6)) else pytest.param(*c, marks=pytest.mark.slow) for c in CONFIGS])
def test_a_streams_deletes_do_what_the_model_says(spark: Any, table_type: str, version: int) -> None:
    """(The session is the test process's one, started by the ``spark`` fixture with Apache Hudi's bundle where
    there is one, before the reference's streaming writer asks for a session.)"""
    cases = [stream_case(n, table_type, version) for n in STREAMS]
    assert _failures({fc.case.id: run_case(fc, ReferenceLocalAdapter) for fc in cases}) == {}


def test_the_model_combines_a_batch_by_ordering_and_keeps_a_stored_row_against_a_stale_flag() -> None:
    """The model's answers, as Hudi gave them: one batch ``[ts 1, ts 0 flagged]`` keeps the row on versions 6 and
    8; on copy-on-write a stored row of ts 1 stays against a flag of ts 0 and goes with one of ts 1; a flag of a
    new key is no row."""

    def rows(name: str, table_type: str, version: int) -> list[Any]:
        fc = case(name, PROBES[name], table_type, version)
        adapter = SpecModelAdapter()
        with tempfile.TemporaryDirectory() as d:
            adapter.create(fc.case.config, Path(d))
            for op in fc.case.ops:
                adapter.apply(op)
            return [(r["id"], r["ts"]) for r in adapter.rows(Query("snapshot"))]

    for v in (6, 8):
        assert rows("row-then-older-flag", COW, v) == rows("row-then-older-flag", MOR, v) == [(0, 1)]
        assert rows("flag-then-older-row", COW, v) == rows("row-then-equal-flag", MOR, v) == []
        assert rows("stale-flag-against-stored", COW, v) == [(0, 1)]
        assert rows("equal-flag-against-stored", COW, v) == []
        assert rows("flag-of-a-new-key-into-a-small-file", MOR, v) == [(1, 1)]


@pytest.mark.slow
@pytest.mark.spark
def test_the_spark_engine_does_what_the_model_says(spark: Any) -> None:
    from conformance.adapters.reference_spark import ReferenceSparkAdapter

    cases = [case("mixed", MIXED, t, v) for t, v in CONFIGS]
    assert _failures({fc.case.id: run_case(fc, lambda: ReferenceSparkAdapter(spark)) for fc in cases}) == {}


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(1800)
def test_apache_hudi_does_what_the_model_says(apache_hudi: Any) -> None:
    """Every probe and the mixed case through Apache Hudi's datasource, every layer (rows, timeline, file groups,
    commit stats) equal to the model's."""
    from conformance.adapters import resolve_impl

    hudi = resolve_impl("hudi_spark")
    cases = [case("mixed", MIXED, t, v) for t, v in CONFIGS]
    cases += [case(n, b, t, v) for n, b in PROBES.items() for t, v in CONFIGS
              if (t, v) in ((COW, 6), (MOR, 8))]
    assert _failures({fc.case.id: run_case(fc, hudi) for fc in cases}) == {}

"""Random sequences over the case language, an adapter and the spec model in lockstep, diffed after
every step (``conformance.runner.Lockstep``).

- the spec adapter against the model: many examples, every operation of the vocabulary — the harness
  (observation, labels, query plans, diffs) must find no difference between the model and itself;
- a buggy adapter: the machine finds the bug, hypothesis minimizes the sequence, and the minimized
  sequence is written as a regression case that fails the buggy adapter and passes the model;
- the reference adapter (slow): short sequences of copy-on-write writes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from conformance.adapter import TableUnderTest
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.generate import write_regression
from conformance.ops import (
    Archive,
    Clean,
    Compact,
    Crash,
    CreateTable,
    DeletePartition,
    ExpectError,
    Op,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    StreamRecord,
    Write,
)
from conformance.runner import FixtureCase, Lockstep, Verdict, load_cases, run_case

KEYS = st.integers(0, 5)
PARTITIONS = st.sampled_from(["a", "b"])


@st.composite
def records(draw: st.DrawFn, n: int = 3) -> tuple[dict[str, Any], ...]:
    size = draw(st.integers(1, n))
    return tuple({"id": draw(KEYS), "ts": draw(st.integers(0, 3)), "p": draw(PARTITIONS), "v": f"x{i}"}
                 for i in range(size))


def _config(table_type: str, version: int) -> CreateTable:
    return CreateTable(table_type=table_type, table_version=version, partition_fields=("p",),
                       clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3)


class LockstepMachine(RuleBasedStateMachine):
    """Drives ``adapter_factory()`` and the model with the same operations; every step must agree."""

    adapter_factory: ClassVar[Callable[[], TableUnderTest]] = SpecModelAdapter
    table_types: ClassVar[tuple[str, ...]] = ("COPY_ON_WRITE", "MERGE_ON_READ")
    services: ClassVar[bool] = True
    last: ClassVar[Lockstep | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.lockstep: Lockstep | None = None
        self.writes = 0

    @initialize(table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), version=st.sampled_from([6, 8]))
    def create(self, table_type: str, version: int) -> None:
        if table_type not in self.table_types:
            table_type = self.table_types[0]
        self.lockstep = Lockstep(type(self).adapter_factory(), _config(table_type, version), Path(self.tmp.name))
        type(self).last = self.lockstep

    def _step(self, op: Op) -> None:
        assert self.lockstep is not None
        diffs = self.lockstep.step(op)
        bad = {layer: d for layer, d in diffs.items() if not d.ok}
        assert not bad, "\n".join(f"{layer}:\n{d.render()}" for layer, d in bad.items())

    @rule(operation=st.sampled_from(["upsert", "insert", "bulk_insert", "delete"]), recs=records())
    def write(self, operation: str, recs: tuple[dict[str, Any], ...]) -> None:
        self.writes += 1
        self._step(Write(operation, recs))

    @rule(operation=st.sampled_from(["insert_overwrite", "insert_overwrite_table"]), recs=records(2))
    def overwrite(self, operation: str, recs: tuple[dict[str, Any], ...]) -> None:
        self._step(Write(operation, recs))

    @precondition(lambda self: self.services)
    @rule(partition=PARTITIONS)
    def delete_partition(self, partition: str) -> None:
        self._step(DeletePartition((partition,)))

    @precondition(lambda self: self.services)
    @rule(mode=st.sampled_from(["schedule_and_run", "schedule", "run"]))
    def compact(self, mode: str) -> None:
        self._step(Compact(mode))

    @precondition(lambda self: self.services)
    @rule()
    def clean(self) -> None:
        self._step(Clean())

    @precondition(lambda self: self.services)
    @rule()
    def rollback(self) -> None:
        self._step(Rollback())

    @precondition(lambda self: self.services)
    @rule()
    def savepoint_and_restore(self) -> None:
        self._step(Savepoint())

    @precondition(lambda self: self.services)
    @rule()
    def restore(self) -> None:
        self._step(Restore())

    @precondition(lambda self: self.services)
    @rule()
    def archive(self) -> None:
        self._step(Archive())

    @precondition(lambda self: self.services)
    @rule(after=st.integers(0, 2), recs=records())
    def crash(self, after: int, recs: tuple[dict[str, Any], ...]) -> None:
        self._step(Crash(after))
        self._step(Write("upsert", recs))

    @precondition(lambda self: self.services)
    @rule(first=records(), second=records())
    def stream(self, first: tuple[dict[str, Any], ...], second: tuple[dict[str, Any], ...]) -> None:
        self._step(Stream((tuple(StreamRecord("upsert", r) for r in first),
                           tuple(StreamRecord("delete" if r["ts"] == 0 else "upsert", r) for r in second))))

    @precondition(lambda self: self.services)
    @rule()
    def refused_rollback(self) -> None:
        self._step(ExpectError("instant_not_found"))
        self._step(Rollback("20000101000000000"))

    def teardown(self) -> None:
        self.tmp.cleanup()


TestSpecAdapterAgainstModel = LockstepMachine.TestCase
TestSpecAdapterAgainstModel.settings = settings(stateful_step_count=8, deadline=None,
                                                suppress_health_check=[HealthCheck.too_slow])


class LosesDeletes(SpecModelAdapter):
    """A bug: deletes of a single record are dropped."""

    def apply(self, op: Op) -> None:
        if isinstance(op, Write) and op.operation == "delete" and len(op.records) == 1:
            return
        super().apply(op)


class BuggyMachine(LockstepMachine):
    adapter_factory = LosesDeletes
    services = False  # writes only: a small space to search and shrink


def test_the_machine_finds_a_bug_and_writes_a_minimized_regression(tmp_path: Path) -> None:
    from hypothesis.stateful import run_state_machine_as_test

    with pytest.raises(AssertionError):
        run_state_machine_as_test(BuggyMachine, settings=settings(max_examples=100, stateful_step_count=5,
                                                                  deadline=None, database=None,
                                                                  suppress_health_check=list(HealthCheck)))
    lockstep = BuggyMachine.last
    assert lockstep is not None
    case = lockstep.as_case("loses-deletes")
    deletes = [op for op in case.ops if isinstance(op, Write) and op.operation == "delete"]
    assert deletes and len(case.ops) <= 3  # minimized: at most a write, the delete, maybe one more
    folder = write_regression(tmp_path, case, "single-record deletes dropped")
    (fc,) = load_cases(tmp_path, "regressions")
    assert fc.case.id == folder.name
    assert run_case(fc, LosesDeletes).verdict == Verdict.FAIL
    assert run_case(fc, SpecModelAdapter).verdict == Verdict.PASS


def _reference_factory(spark: Any) -> Callable[[], TableUnderTest]:
    from conformance.adapters.reference_spark import ReferenceSparkAdapter

    return lambda: ReferenceSparkAdapter(spark)


@pytest.mark.slow
@pytest.mark.spark
def test_reference_adapter_against_model(spark: Any) -> None:
    from hypothesis.stateful import run_state_machine_as_test

    class ReferenceMachine(LockstepMachine):
        adapter_factory = staticmethod(_reference_factory(spark))  # type: ignore[assignment]
        table_types = ("COPY_ON_WRITE",)
        services = False

    run_state_machine_as_test(ReferenceMachine, settings=settings(max_examples=3, stateful_step_count=4,
                                                                  deadline=None, database=None,
                                                                  suppress_health_check=list(HealthCheck)))


def test_regression_round_trip_of_a_lockstep_case(tmp_path: Path) -> None:
    """A lockstep run's operations, as a case, replay with the same verdict through the runner."""
    lockstep = Lockstep(SpecModelAdapter(), _config("MERGE_ON_READ", 8), tmp_path / "run")
    for op in (Write("insert", ({"id": 1, "ts": 1, "p": "a", "v": "x"},)), Compact("schedule"),
               Write("upsert", ({"id": 1, "ts": 2, "p": "a", "v": "y"},)), Compact("run")):
        assert all(d.ok for d in lockstep.step(op).values())
    case = replace(lockstep.as_case("roundtrip"), description="a compaction around an upsert")
    write_regression(tmp_path / "fx", case, "round trip")
    (fc,) = load_cases(tmp_path / "fx", "regressions")
    # the model refuses the run (the plan had nothing to compact): recorded as an expected error
    assert isinstance(fc.case.ops[3], ExpectError) and fc.case.ops[3].kind == "instant_not_found"
    assert isinstance(fc, FixtureCase) and len(fc.expected or ()) == 5
    assert run_case(fc, SpecModelAdapter).verdict == Verdict.PASS

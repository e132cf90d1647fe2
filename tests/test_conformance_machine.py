"""The lockstep state machine (``conformance.machine``): random sequences over the case language, an
adapter and the spec model in lockstep, diffed after every step.

- the spec adapter against the model, the CI profile over every operation of the vocabulary: the
  harness (observation, labels, query plans, diffs) must find no difference between the model and
  itself;
- a buggy adapter: the machine finds the bug, hypothesis minimizes the sequence, and ``run_machine``
  writes the minimized sequence as a regression case that fails the buggy adapter and passes the model;
- the reference adapter, the CI profile (a few examples in CI, the whole profile under ``slow``):
  every operation on both table types, with upsert-only streams (see the reference's known failures)
  and crashes before the first or after the last file of a write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.generate import write_regression
from conformance.interface.adapter import TableUnderTest
from conformance.interface.ops import OP_NAMES, Op
from conformance.machine import (
    PROFILES,
    LockstepMachine,
    MachineOptions,
    machine_for,
    options_for,
    profile_settings,
    run_machine,
)
from conformance.runner import FixtureCase, Lockstep, Verdict, load_cases, run_case
from spec.model.operations import Compact, ExpectError, Write


def test_spec_adapter_passes_the_ci_profile() -> None:
    run_machine(SpecModelAdapter, "ci")


def test_the_rules_cover_the_vocabulary() -> None:
    rules = {name for name in dir(LockstepMachine) if not name.startswith("_")}
    needed = {"write", "overwrite", "delete_partition", "compact", "clean", "rollback", "savepoint", "restore",
              "archive", "crash", "stream", "refused_rollback", "concurrent"}
    assert needed <= rules
    ops = {"create_table", "write", "delete_partition", "compact", "clean", "rollback", "savepoint", "restore",
           "archive", "stream", "concurrent", "crash", "expect_error"}
    # cluster is run by the corpus's cases only: the machine's random clustering steps found a difference in an
    # incremental read (_hoodie_is_deleted) not yet reduced
    assert ops | {"cluster"} == set(OP_NAMES)
    assert PROFILES["ci"]["max_examples"] < PROFILES["long"]["max_examples"]


class LosesDeletes(SpecModelAdapter):
    """A bug: deletes of a single record are dropped."""

    def apply(self, op: Op) -> None:
        if isinstance(op, Write) and op.operation == "delete" and len(op.records) == 1:
            return
        super().apply(op)


def test_the_machine_finds_a_bug_and_writes_a_minimized_regression(tmp_path: Path) -> None:
    writes_only = MachineOptions(services=False)
    with pytest.raises(AssertionError, match="minimized sequence written to"):
        run_machine(LosesDeletes, "ci", writes_only, regressions=tmp_path, name="loses-deletes", max_examples=100,
                    stateful_step_count=5)
    (fc,) = load_cases(tmp_path, "regressions")
    assert fc.case.id.startswith("loses-deletes-") and fc.case.provenance.startswith("hypothesis")
    deletes = [op for op in fc.case.ops if isinstance(op, Write) and op.operation == "delete"]
    assert deletes and len(fc.case.ops) <= 3  # minimized: at most a write, the delete, maybe one more
    assert run_case(fc, LosesDeletes).verdict == Verdict.FAIL
    assert run_case(fc, SpecModelAdapter).verdict == Verdict.PASS


def test_machine_for_builds_independent_classes() -> None:
    a = machine_for(SpecModelAdapter, MachineOptions(table_types=("COPY_ON_WRITE",)))
    b = machine_for(LosesDeletes)
    assert a.options.table_types == ("COPY_ON_WRITE",) and b.options.table_types == MachineOptions().table_types
    assert issubclass(a, LockstepMachine) and a.last is None
    s = profile_settings("ci", max_examples=3)
    assert s.max_examples == 3 and s.stateful_step_count == PROFILES["ci"]["stateful_step_count"]


def test_regression_round_trip_of_a_lockstep_case(tmp_path: Path) -> None:
    """A lockstep run's operations, as a case, replay with the same verdict through the runner."""
    lockstep = Lockstep(SpecModelAdapter(), MachineOptions().config("MERGE_ON_READ", 8), tmp_path / "run")
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


REFERENCE_OPTIONS = replace(options_for(ReferenceLocalAdapter), stream_deletes=False)
"""What the reference is explored with: crashes before the first or after the last file (what a killed
process can stage: the crash points it declares), upsert-only streams and no small-file routing."""


def test_an_implementation_is_explored_at_the_crash_points_it_declares() -> None:
    """The machine draws ``crash`` only at the points an adapter declares: the reference stops a write as a
    killed process does, so a random run of it never asks for a stop between two files (which it refuses)."""
    assert ReferenceLocalAdapter.crash_points == (0, 99)
    assert machine_for(ReferenceLocalAdapter).options.crash_points == (0, 99)
    assert machine_for(SpecModelAdapter).options.crash_points == MachineOptions().crash_points
    assert machine_for(ReferenceLocalAdapter, MachineOptions(services=False)).options.crash_points == (0, 1, 2)


def _reference_factory(spark: Any) -> Callable[[], TableUnderTest]:
    from conformance.adapters.reference_spark import ReferenceSparkAdapter

    return lambda: ReferenceSparkAdapter(spark)


@pytest.mark.spark
def test_reference_in_lockstep_a_few_examples(spark: Any) -> None:
    run_machine(_reference_factory(spark), "ci", replace(REFERENCE_OPTIONS, crash_points=(0,)), max_examples=2,
                stateful_step_count=4)


@pytest.mark.slow
@pytest.mark.spark
def test_reference_passes_the_ci_profile(spark: Any) -> None:
    run_machine(_reference_factory(spark), "ci", REFERENCE_OPTIONS)


# The state machine's failures of random runs, each kept as the minimized case it wrote (tests/regressions: not
# in the corpus, whose matrix every implementation runs), with what it found.
REGRESSIONS = Path(__file__).resolve().parent / "regressions"
FOUND = {
    "lockstep-8df59e6c33": "an armed crash, then a write the table's schema refuses: the reference's crash child "
                           "refused it before the fault point and the parent reported a fault that never fired "
                           "(invalid_operation) instead of the refusal (schema_mismatch)",
}


@pytest.mark.slow
@pytest.mark.spark  # the cases stream, through Spark
def test_the_machines_regressions_pass_on_the_reference(spark: Any) -> None:
    cases = load_cases(REGRESSIONS, "regressions")
    assert {fc.case.id for fc in cases} == set(FOUND)
    results = {fc.case.id: run_case(fc, ReferenceLocalAdapter) for fc in cases}
    assert {k: r.diff for k, r in results.items() if r.verdict != Verdict.PASS} == {}
    assert all(run_case(fc, SpecModelAdapter).verdict == Verdict.PASS for fc in cases)

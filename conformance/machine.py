"""A hypothesis state machine over the whole case language: an adapter and the spec model in
lockstep (``conformance.runner.Lockstep``), diffed after every step.

Rules cover every operation: writes of all six operations, ``delete_partition``, streams of two
checkpoints (I, U | U, U: the second checkpoint updates keys the first inserted), compaction
(schedule and run, or each alone), clean, rollback, savepoint, restore, archive, two writers at once
(``concurrent``: updates of keys the table holds, the outcome known from the file groups holding them), a
crash before the next write, and an operation refused with an expected error. Each example creates a table (COW or
MOR, v6 or v8) and runs a random sequence; the first step at which the adapter's observation
differs from the model's fails the example, hypothesis shrinks the sequence, and ``run_machine``
writes the minimized sequence as a regression case (``conformance.generate.write_regression``).

Profiles (``PROFILES``): ``ci`` — few examples, short sequences, for every CI run; ``long`` — many
examples, longer sequences, for nightly runs. An adapter that cannot do everything narrows the
machine with ``MachineOptions`` (table types, crash points, stream deletes, small-file routing).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from conformance.interface.adapter import TableUnderTest
from conformance.interface.ops import CreateTable, Op
from conformance.runner import Lockstep
from spec.config.registry import default
from spec.model.operations import (
    Archive,
    Clean,
    Compact,
    Concurrent,
    Crash,
    DeletePartition,
    ExpectError,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    StreamRecord,
    Write,
)

PROFILES: Final[dict[str, dict[str, Any]]] = {
    "ci": {"max_examples": 25, "stateful_step_count": 8, "derandomize": True},
    "long": {"max_examples": 500, "stateful_step_count": 20, "derandomize": False},
}
"""Hypothesis settings per profile (deadline off, no health checks: steps may start Spark jobs).
``ci`` is derandomized: the same code draws the same sequences on every run, so a CI result never
depends on the dice; ``long`` explores at random, and a failure it finds is written as a regression
case (``run_machine(regressions=...)``), so the sequence stays in the corpus after the run."""

KEYS = st.integers(0, 5)
PARTITIONS = st.sampled_from(["a", "b"])


@st.composite
def records(draw: st.DrawFn, n: int = 3) -> tuple[dict[str, Any], ...]:
    """1..n records over six keys in two partitions, ordering values 0..3."""
    size = draw(st.integers(1, n))
    return tuple({"id": draw(KEYS), "ts": draw(st.integers(0, 3)), "p": draw(PARTITIONS), "v": f"x{i}"}
                 for i in range(size))


@dataclass(frozen=True)
class MachineOptions:
    """What the machine explores: table types, whether table services and faults run, the crash
    points (``after_files`` values), whether streams delete, and the small-file limit."""

    table_types: tuple[str, ...] = ("COPY_ON_WRITE", "MERGE_ON_READ")
    versions: tuple[int, ...] = (6, 8)
    services: bool = True
    crash_points: tuple[int, ...] = (0, 1, 2)
    stream_deletes: bool = True
    small_file_limit: int = default("small_file_limit")
    extra: dict[str, Any] = field(default_factory=dict)

    def config(self, table_type: str, version: int) -> CreateTable:
        return CreateTable(table_type=table_type, table_version=version, partition_fields=("p",),
                           clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3,
                           small_file_limit=self.small_file_limit, **self.extra)


class LockstepMachine(RuleBasedStateMachine):
    """Drives ``adapter_factory()`` and the model with the same operations; every step must agree.
    Subclass (or use ``machine_for``) to set the adapter and the options."""

    adapter_factory: ClassVar[Callable[[], TableUnderTest]]
    options: ClassVar[MachineOptions] = MachineOptions()
    last: ClassVar[Lockstep | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.lockstep: Lockstep | None = None
        self.written = False

    @initialize(table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), version=st.sampled_from([6, 8]))
    def create(self, table_type: str, version: int) -> None:
        opts = self.options
        if table_type not in opts.table_types:
            table_type = opts.table_types[0]
        if version not in opts.versions:
            version = opts.versions[0]
        self.lockstep = Lockstep(type(self).adapter_factory(), opts.config(table_type, version), Path(self.tmp.name))
        type(self).last = self.lockstep

    def _step(self, op: Op) -> None:
        assert self.lockstep is not None
        diffs = self.lockstep.step(op)
        bad = {layer: d for layer, d in diffs.items() if not d.ok}
        assert not bad, "\n".join(f"{layer}:\n{d.render()}" for layer, d in bad.items())

    @property
    def services(self) -> bool:
        return self.options.services

    @rule(operation=st.sampled_from(["upsert", "insert", "bulk_insert", "delete"]), recs=records())
    def write(self, operation: str, recs: tuple[dict[str, Any], ...]) -> None:
        self._step(Write(operation, recs))
        self.written = True

    @rule(operation=st.sampled_from(["insert_overwrite", "insert_overwrite_table"]), recs=records(2))
    def overwrite(self, operation: str, recs: tuple[dict[str, Any], ...]) -> None:
        self._step(Write(operation, recs))
        self.written = True

    # a table only has partitions to drop once something was written (a writer that creates the table
    # on its first write has no schema to create it from a delete_partition)
    @precondition(lambda self: self.services and self.written)
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
    def savepoint(self) -> None:
        self._step(Savepoint())

    @precondition(lambda self: self.services)
    @rule()
    def restore(self) -> None:
        self._step(Restore())

    @precondition(lambda self: self.services)
    @rule()
    def archive(self) -> None:
        self._step(Archive())

    @precondition(lambda self: self.services and bool(self.options.crash_points))
    @rule(data=st.data(), recs=records())
    def crash(self, data: st.DataObject, recs: tuple[dict[str, Any], ...]) -> None:
        self._step(Crash(data.draw(st.sampled_from(self.options.crash_points))))
        self._step(Write("upsert", recs))

    @precondition(lambda self: self.services)
    @rule(first=records(), second=records())
    def stream(self, first: tuple[dict[str, Any], ...], second: tuple[dict[str, Any], ...]) -> None:
        """Two checkpoints; the second updates the first's keys (U buckets over its I buckets)."""
        deletes = self.options.stream_deletes
        self._step(Stream((tuple(StreamRecord("upsert", r) for r in first),
                           tuple(StreamRecord("delete" if deletes and r["ts"] == 0 else "upsert", r)
                                 for r in (*second, *({**r, "ts": r["ts"] + 1} for r in first[:1]))))))

    def _model_state(self) -> Any:
        assert self.lockstep is not None
        return self.lockstep.model.model.state  # type: ignore[attr-defined]

    def _no_pending_write(self) -> bool:
        """No write is pending (a concurrent step's loser is rolled back by the next write first)."""
        return self.lockstep is not None and not any(
            not i.is_completed and i.action in ("commit", "deltacommit", "replacecommit")
            for i in self._model_state().timeline)

    @precondition(lambda self: self.services and self.written and self._no_pending_write())
    @rule(data=st.data(), reverse=st.booleans())
    def concurrent(self, data: st.DataObject, reverse: bool) -> None:
        """Two upserts at once of keys the table holds: of two that share a file group the later to commit
        aborts (write_conflict), else both commit. Version 6 merge-on-read writers append to one log file of a
        shared group: only disjoint groups there."""
        from spec.model.queries import key_locations, snapshot

        state = self._model_state()
        groups = key_locations(state)
        live = sorted({(str(r["_hoodie_partition_path"]), str(r["_hoodie_record_key"])) for r in snapshot(state)})
        assume(bool(live) and all(k in groups for k in live))
        first, second = data.draw(st.sampled_from(live)), data.draw(st.sampled_from(live))
        shared = bool(set(groups[first]) & set(groups[second]))
        assume(not (shared and state.config.is_mor and state.table_version < 8))
        order = (1, 0) if reverse else (0, 1)
        outcomes = ["ok", "ok"]
        if shared:
            outcomes[order[1]] = "write_conflict"
        members = tuple(Write("upsert", ({"id": int(k), "ts": 3, "p": p, "v": f"c{n}"},))
                        for n, (p, k) in enumerate((first, second)))
        self._step(Concurrent(members, order, tuple(outcomes)))

    @precondition(lambda self: self.services)
    @rule()
    def refused_rollback(self) -> None:
        self._step(ExpectError("instant_not_found"))
        self._step(Rollback("20000101000000000"))

    def teardown(self) -> None:
        self.tmp.cleanup()


def options_for(factory: Callable[[], TableUnderTest]) -> MachineOptions:
    """The options an implementation is explored with when none are given: the crash points it declares
    (``TableUnderTest.crash_points``, read from an adapter class or a factory object that has them)."""
    points = getattr(factory, "crash_points", None)
    return MachineOptions() if points is None else MachineOptions(crash_points=tuple(points))


def machine_for(factory: Callable[[], TableUnderTest], options: MachineOptions | None = None
                ) -> type[LockstepMachine]:
    """A machine class driving adapters from ``factory`` with ``options`` (by default ``options_for`` it)."""
    return type("Machine", (LockstepMachine,), {"adapter_factory": staticmethod(factory),
                                                 "options": options or options_for(factory), "last": None})


def profile_settings(profile: str = "ci", **overrides: Any) -> settings:
    """The hypothesis settings of a profile (``PROFILES``), with overrides."""
    return settings(deadline=None, database=None, suppress_health_check=list(HealthCheck),
                    **{**PROFILES[profile], **overrides})


def run_machine(factory: Callable[[], TableUnderTest], profile: str = "ci", options: MachineOptions | None = None,
                regressions: str | Path | None = None, name: str = "lockstep", **overrides: Any) -> None:
    """Run the machine; on a failure write the minimized sequence as a regression case under
    ``regressions`` (when given) and re-raise."""
    from conformance.generate import write_regression

    machine = machine_for(factory, options)
    try:
        run_state_machine_as_test(machine, settings=profile_settings(profile, **overrides))
    except AssertionError as err:
        lockstep = machine.last
        if regressions is not None and lockstep is not None:
            folder = write_regression(regressions, lockstep.as_case(name, str(err).splitlines()[0][:200]),
                                      f"lockstep with {factory().name}")
            raise AssertionError(f"{err}\nminimized sequence written to {folder}") from err
        raise

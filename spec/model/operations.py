"""The operations on a Hudi table: the case language's closed vocabulary, and the one dispatch over it.

Every operation is a frozen dataclass that checks its own members (an operation outside the
vocabulary's rules raises ``InvalidOperation``): a batch ``Write``, ``DeletePartition``, the table
services (``Compact``, ``Cluster``, ``Clean``, ``Rollback``, ``Savepoint``, ``Restore``, ``Archive``), a
streaming write (``Stream``), writers at once (``Concurrent``), a fault (``Crash``) and the directive
``ExpectError``. Their JSON
form and the table configuration a case starts from (``CreateTable``) are the conformance suite's
(``conformance/interface/ops.py``).

Whoever executes operations — the model, the reference, Apache Hudi on Spark — implements
``OperationHandler``, one method per operation, and is handed each operation by ``dispatch``: the
one place that tells operations apart. Its ``match`` ends in ``assert_never``, so a new operation
without a method is a type error; the handler's methods are abstract, so a class that derives from
it and misses one cannot be instantiated.

Record values are JSON scalars only (int, float, str, bool, null); floats must be finite.

Source: no Hudi class — the vocabulary is this project's; each operation stands for a Hudi entry
point named where it is executed (``SparkRDDWriteClient`` writes and table services, Flink's
``StreamWriteFunction``).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias, TypeVar, assert_never

from spec.config.write_operation import WRITER_OPERATIONS, WriteOperationType
from spec.errors import ERROR_KINDS, InvalidOperation
from spec.timeline.instant import validate_instant_time

Scalar: TypeAlias = int | float | str | bool | None
Record: TypeAlias = Mapping[str, Scalar]

WRITE_OPERATIONS: Final = tuple(op for op in WRITER_OPERATIONS if op != WriteOperationType.DELETE_PARTITION.option)
"""A ``Write``'s operations: the writer's, but ``delete_partition``, which is an operation of its own
(``DeletePartition``)."""
COMPACT_MODES: Final = ("schedule_and_run", "schedule", "run")
STREAM_RECORD_KINDS: Final = ("upsert", "delete")
CONCURRENT_OUTCOMES: Final = ("ok", "write_conflict")
"""What becomes of one member of a ``Concurrent``: it commits, or it aborts with ``write_conflict``."""


def invalid(message: str, hint: str | None = None) -> InvalidOperation:
    """The error for anything outside the case language: ``InvalidOperation`` pointing at it."""
    return InvalidOperation(message, hint=hint or "see conformance/interface/ops.py for the case language")


def check_record(rec: object, where: str) -> dict[str, Scalar]:
    """A record is a JSON object of field name → scalar (finite floats only)."""
    if not isinstance(rec, Mapping):
        raise invalid(f"{where}: a record must be an object of field → value, got {type(rec).__name__}")
    out: dict[str, Scalar] = {}
    for k, v in rec.items():
        if not isinstance(k, str):
            raise invalid(f"{where}: field names are strings, got {k!r}")
        if v is not None and not isinstance(v, bool | int | float | str):
            raise invalid(f"{where}: field {k!r} has a {type(v).__name__}; values are JSON scalars")
        if isinstance(v, float) and not math.isfinite(v):
            raise invalid(f"{where}: field {k!r} is {v}; only finite numbers have a JSON form")
        out[k] = v
    return out


def check_instant(t: str | None, where: str) -> None:
    """An instant time, when given, is one (17 digits)."""
    if t is not None:
        try:
            validate_instant_time(t)
        except Exception as err:
            raise invalid(f"{where}: {t!r} is not an instant time", "instant times are 17 digits") from err


def check_choice(value: object, choices: Sequence[object], where: str) -> None:
    """``value`` is one of ``choices``."""
    if value not in choices:
        raise invalid(f"{where}: {value!r} is not one of {', '.join(map(str, choices))}")


def check_positive(value: object, where: str, minimum: int = 1) -> None:
    """``value`` is an integer (not a bool) of at least ``minimum``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise invalid(f"{where}: {value!r} must be an integer >= {minimum}")


# --8<-- [start:ops]
@dataclass(frozen=True)
class Write:
    """A batch write: ``records`` are whole rows (for ``delete`` the key and partition fields suffice).
    ``options`` are ``hoodie.*`` write options given to this write only, on top of the table's
    (checked against the table: ``spec.write.writer_utils``)."""

    operation: str
    records: tuple[Record, ...]
    instant_time: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        check_choice(self.operation, WRITE_OPERATIONS, "write.operation")
        recs = tuple(check_record(r, f"write.records[{i}]") for i, r in enumerate(self.records))
        object.__setattr__(self, "records", recs)
        check_instant(self.instant_time, "write.instant_time")
        object.__setattr__(self, "options", tuple(sorted((str(k), str(v)) for k, v in self.options)))


@dataclass(frozen=True)
class DeletePartition:
    """Drop whole partitions (a replacecommit that replaces every file group in them)."""

    partitions: tuple[str, ...]
    instant_time: str | None = None

    def __post_init__(self) -> None:
        if not self.partitions or not all(isinstance(p, str) for p in self.partitions):
            raise invalid("delete_partition.partitions must list partition paths")
        check_instant(self.instant_time, "delete_partition.instant_time")


@dataclass(frozen=True)
class Compact:
    """Compaction: schedule a plan and run it, or only schedule, or only run a scheduled plan
    (``instant_time`` names it; None = the earliest pending one)."""

    mode: str = "schedule_and_run"
    instant_time: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.mode, COMPACT_MODES, "compact.mode")
        check_instant(self.instant_time, "compact.instant_time")


@dataclass(frozen=True)
class Cluster:
    """Clustering: schedule a plan with Hudi's size-based strategy and execute it (sort and size), as
    ``run_clustering(op => 'scheduleAndExecute')`` does; ``options`` are its ``hoodie.clustering.*`` settings
    (``spec.actions.clustering_plan.ClusteringConfig``, which refuses what it does not run when the clustering runs:
    ``unsupported_layout``, ``unsupported_option``)."""

    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(sorted((str(k), str(v)) for k, v in self.options)))


@dataclass(frozen=True)
class Clean:
    """Plan and run the cleaner with the table's clean policy."""

    instant_time: str | None = None

    def __post_init__(self) -> None:
        check_instant(self.instant_time, "clean.instant_time")


@dataclass(frozen=True)
class Rollback:
    """Roll back one data-writing instant: the latest one when ``instant_time`` is None."""

    instant_time: str | None = None

    def __post_init__(self) -> None:
        check_instant(self.instant_time, "rollback.instant_time")


@dataclass(frozen=True)
class Savepoint:
    """Savepoint a completed commit (the latest when ``instant_time`` is None)."""

    instant_time: str | None = None

    def __post_init__(self) -> None:
        check_instant(self.instant_time, "savepoint.instant_time")


@dataclass(frozen=True)
class Restore:
    """Restore the table to a savepoint (the latest when ``savepoint_time`` is None)."""

    savepoint_time: str | None = None

    def __post_init__(self) -> None:
        check_instant(self.savepoint_time, "restore.savepoint_time")


@dataclass(frozen=True)
class Archive:
    """Archive old instants off the active timeline (hoodie.keep.min/max.commits)."""


@dataclass(frozen=True)
class StreamRecord:
    """One record operation of a streaming checkpoint."""

    kind: str
    record: Record

    def __post_init__(self) -> None:
        check_choice(self.kind, STREAM_RECORD_KINDS, "stream record kind")
        object.__setattr__(self, "record", check_record(self.record, "stream record"))


@dataclass(frozen=True)
class Stream:
    """A streaming write: one commit per checkpoint; insert buckets are reused across checkpoints."""

    checkpoints: tuple[tuple[StreamRecord, ...], ...]

    def __post_init__(self) -> None:
        if not self.checkpoints:
            raise invalid("stream.checkpoints must hold at least one checkpoint")


@dataclass(frozen=True)
class Crash:
    """Fault injection: the next write dies after writing ``after_files`` data files."""

    after_files: int = 0

    def __post_init__(self) -> None:
        check_positive(self.after_files, "crash.after_files", minimum=0)


@dataclass(frozen=True)
class Concurrent:
    """Writers at once, under optimistic concurrency control (``hoodie.write.concurrency.mode=
    optimistic_concurrency_control``): every ``members`` write starts, in the order listed, from the table
    as it is (each takes its instant and writes its data files, none commits), then they try to commit in
    ``commit_order`` (member indexes, 0-based, each once). A table service member (``Compact`` in mode
    ``schedule_and_run`` or ``run``, ``Clean``) runs whole at its turn of ``commit_order``, beside the
    writes still pending. ``outcomes`` says, per member, what the case expects of it: ``ok`` (it commits)
    or ``write_conflict`` (it aborts: Hudi's conflict resolution, ``spec.timeline.conflict_resolution``);
    an implementation whose members end otherwise fails the step. No member names an instant time: each
    takes its own as it starts."""

    members: tuple[Write | Compact | Clean, ...]
    commit_order: tuple[int, ...]
    outcomes: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.members)
        if n < 2 or not all(isinstance(m, Write | Compact | Clean) for m in self.members):
            raise invalid("concurrent.members must hold two or more writes or table services (compact, clean)")
        if not any(isinstance(m, Write) for m in self.members):
            raise invalid("concurrent.members must hold at least one write", "table services beside a writer")
        for i, m in enumerate(self.members):
            if m.instant_time is not None and not (isinstance(m, Compact) and m.mode == "run"):
                raise invalid(f"concurrent.members[{i}] names instant {m.instant_time}",
                              "a concurrent member takes its instant as it starts: leave instant_time out")
            if isinstance(m, Compact) and m.mode == "schedule":
                raise invalid(f"concurrent.members[{i}]: a compaction beside writers runs "
                              "(schedule_and_run or run)", "schedule it as an operation of its own before")
        order = tuple(self.commit_order)
        if sorted(order) != list(range(n)) or not all(type(i) is int for i in order):
            raise invalid(f"concurrent.commit_order {list(order)} must name each member index 0..{n - 1} once")
        if len(self.outcomes) != n:
            raise invalid(f"concurrent.outcomes must give one outcome per member ({n}), got {len(self.outcomes)}")
        for i, (m, o) in enumerate(zip(self.members, self.outcomes, strict=True)):
            check_choice(o, CONCURRENT_OUTCOMES, f"concurrent.outcomes[{i}]")
            if not isinstance(m, Write) and o != "ok":
                raise invalid(f"concurrent.outcomes[{i}]: a table service resolves no conflict at its commit, "
                              "so it ends ok", "Hudi's BaseHoodieTableServiceClient completes services unchecked")
        object.__setattr__(self, "members", tuple(self.members))
        object.__setattr__(self, "commit_order", order)
        object.__setattr__(self, "outcomes", tuple(self.outcomes))


@dataclass(frozen=True)
class ExpectError:
    """The next operation must fail with this error kind (a ``spec.errors.ERROR_KINDS`` name)
    and leave the table exactly as it was."""

    kind: str

    def __post_init__(self) -> None:
        check_choice(self.kind, tuple(ERROR_KINDS), "expect_error.kind")


Operation: TypeAlias = (Write | DeletePartition | Compact | Cluster | Clean | Rollback | Savepoint | Restore | Archive
                        | Stream | Concurrent | Crash | ExpectError)
"""Every operation on a table. Nothing else is one."""
# --8<-- [end:ops]

R_co = TypeVar("R_co", covariant=True)


# --8<-- [start:dispatch]
class OperationHandler(Protocol[R_co]):
    """What executes operations: one method per operation, each returning what its executor
    returns for one (the model: the table after it; an adapter: nothing)."""

    @abstractmethod
    def write(self, op: Write) -> R_co:
        """Execute a batch write."""

    @abstractmethod
    def delete_partition(self, op: DeletePartition) -> R_co:
        """Drop the partitions."""

    @abstractmethod
    def compact(self, op: Compact) -> R_co:
        """Schedule and/or run a compaction."""

    @abstractmethod
    def cluster(self, op: Cluster) -> R_co:
        """Schedule a clustering and execute it."""

    @abstractmethod
    def clean(self, op: Clean) -> R_co:
        """Plan and run the cleaner."""

    @abstractmethod
    def rollback(self, op: Rollback) -> R_co:
        """Roll back an instant."""

    @abstractmethod
    def savepoint(self, op: Savepoint) -> R_co:
        """Savepoint a commit."""

    @abstractmethod
    def restore(self, op: Restore) -> R_co:
        """Restore the table to a savepoint."""

    @abstractmethod
    def archive(self, op: Archive) -> R_co:
        """Archive old instants."""

    @abstractmethod
    def stream(self, op: Stream) -> R_co:
        """Execute a streaming write, a commit per checkpoint."""

    @abstractmethod
    def concurrent(self, op: Concurrent) -> R_co:
        """Start the member writes, then commit them (and run the member services) in commit order."""

    @abstractmethod
    def crash(self, op: Crash) -> R_co:
        """Arm a fault for the next write."""

    @abstractmethod
    def expect_error(self, op: ExpectError) -> R_co:
        """Arm the expectation that the next operation fails with ``op.kind``."""


def dispatch(handler: OperationHandler[R_co], op: Operation) -> R_co:
    """Hand ``op`` to the handler's method for it: the one switch over the vocabulary."""
    match op:
        case Write():
            return handler.write(op)
        case DeletePartition():
            return handler.delete_partition(op)
        case Compact():
            return handler.compact(op)
        case Cluster():
            return handler.cluster(op)
        case Clean():
            return handler.clean(op)
        case Rollback():
            return handler.rollback(op)
        case Savepoint():
            return handler.savepoint(op)
        case Restore():
            return handler.restore(op)
        case Archive():
            return handler.archive(op)
        case Stream():
            return handler.stream(op)
        case Concurrent():
            return handler.concurrent(op)
        case Crash():
            return handler.crash(op)
        case ExpectError():
            return handler.expect_error(op)
        case _:
            assert_never(op)
# --8<-- [end:dispatch]

"""The reference implementation (``reference.write.client.WriteClient`` on PySpark) as an implementation
under test: it writes a real table directory in the case's work folder, which the harness reads
with the spec's reader (``DirectoryReads``).

Replayable like the model: instant times come from a clock that starts at 2024-01-01 and moves one
second per call, file id prefixes from the same ``00000000-0000-4000-8000-<n>`` sequence; a write
that names its instant time gets exactly that time.

Every operation of the case language goes to the reference's own entry point: writes to
``WriteClient.write``, ``compact`` to ``reference.executors.compaction``, ``stream`` to
``reference.write.streaming.StreamingWriter`` (one writer per operation, a commit per checkpoint; a
checkpoint's deletes are rows with ``_hoodie_is_deleted`` set), ``clean`` / ``rollback`` /
``savepoint`` / ``restore`` and ``archive`` to their executors in ``reference.executors``.

``crash`` arms a fault (``reference.instrumentation.faults``): the next write runs in a child process
(``conformance.adapters.crash_writer``) in a process group of its own, which the writer kills with
SIGKILL at a fault point — ``after_start`` for ``after_files`` 0 (the instant is inflight, no data
file written), ``before_commit`` otherwise (every data file written, the commit not). A case that
stops a write after some but not all of its files asks for what a parallel writer cannot stage
deterministically; the adapter refuses it (``invalid_operation``) rather than pass by accident.

``CAPABILITIES`` is the one place that says what the reference does; the adapter is the reference's
``spec.model.operations.OperationHandler``, a method per operation, and ``apply`` is ``dispatch``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC
from pathlib import Path
from typing import Any, ClassVar

from conformance.interface.adapter import DirectoryReads, TableUnderTest
from conformance.interface.ops import CreateTable
from spec.config.registry import BY_NAME, options_of
from spec.errors import ERROR_KINDS, HudiSpecError, InstantNotFound, InvalidOperation
from spec.model.operations import (
    WRITE_OPERATIONS,
    Archive,
    Clean,
    Cluster,
    Compact,
    Concurrent,
    Crash,
    DeletePartition,
    ExpectError,
    Operation,
    OperationHandler,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    Write,
    dispatch,
)
from spec.storage.lock import StorageLockConfig
from spec.timeline.instant import parse_instant_time

# --8<-- [start:capabilities]
WRITES: frozenset[str] = frozenset({
    "COPY_ON_WRITE", "MERGE_ON_READ",
    "v6", "v8", "v9",
    *(f"write:{op}" for op in WRITE_OPERATIONS),
    "delete_partition", "stream",
    "keygen:SIMPLE", "keygen:COMPLEX", "keygen:NON_PARTITION",
    "merge:EVENT_TIME_ORDERING", "merge:COMMIT_TIME_ORDERING",
    "index:BLOOM", "index:SIMPLE", "index:BUCKET", "index:GLOBAL_BLOOM", "index:GLOBAL_SIMPLE", "index:RECORD_INDEX",
})
"""Copy-on-write and merge-on-read writes of all seven operations and streaming checkpoints, table
versions 6 and 8."""

SERVICES: frozenset[str] = frozenset({"compact", "cluster", "clean", "rollback", "savepoint", "restore", "archive",
                                      "inline_compact", "auto_clean", "auto_archive"})
"""Table services on the table directory, run on request or inline after a commit."""

FAULTS: frozenset[str] = frozenset({"crash"})
"""A write killed by SIGKILL in a child process (before any data file, or after all of them)."""

CONCURRENCY: frozenset[str] = frozenset({"concurrent"})
"""Writers at once under optimistic concurrency control, each in a thread of its own, held before its commit
(``reference.instrumentation.pauses``)."""

CAPABILITIES: frozenset[str] = WRITES | SERVICES | FAULTS | CONCURRENCY
"""What the reference does. Extend here (and in the operation's method of ``ReferenceSparkAdapter``)."""
# --8<-- [end:capabilities]

KNOWN_FAILURES: dict[str, str] = {
}
"""Cases the reference is known to fail (reported XFAIL), with why."""

START_EPOCH = parse_instant_time("20240101000000000").replace(tzinfo=UTC).timestamp()
ID_PREFIX = "00000000-0000-4000-8000-"


CASE_SETTINGS = tuple(f.name for f in fields(CreateTable) if f.name in BY_NAME)
"""The settings of a case's table configuration that are registry settings (the writer's options)."""


def write_options(config: CreateTable) -> dict[str, str]:
    """The ``hoodie.*`` options a Spark user passes for a case's table configuration (table services
    included: the case says when they run, so automatic ones are switched on or off explicitly)."""
    opts = options_of(config, CASE_SETTINGS)
    opts[BY_NAME["keygen_type"].key] = config.resolved_key_generator
    return {**opts, **dict(config.options)}


REFUSED = 4
"""The exit code of the crash child (``conformance.adapters.crash_writer``) whose write was refused with a
``spec.errors`` error before the fault fired."""


class ReplayClock:
    """Seconds since the epoch: one second per call from 2024-01-01, or a time the case fixed."""

    def __init__(self, start: float = START_EPOCH) -> None:
        self.now = start - 1
        self.fixed: float | None = None

    def __call__(self) -> float:
        if self.fixed is not None:
            self.now, self.fixed = self.fixed, None
        else:
            self.now += 1
        return self.now

    @property
    def pinned(self) -> bool:
        """Whether the next reading is a time the case fixed (``reference.transaction.transaction.begin``)."""
        return self.fixed is not None

    def fix(self, instant_time: str) -> None:
        self.fixed = parse_instant_time(instant_time).replace(tzinfo=UTC).timestamp()

    def catch_up(self, instant_time: str) -> None:
        """Never hand out a time at or before ``instant_time`` again (another process used the clock)."""
        self.now = max(self.now, parse_instant_time(instant_time).replace(tzinfo=UTC).timestamp())


class FileIds:
    """File id prefixes ``00000000-0000-4000-8000-<n>``, n = 1, 2, ..."""

    def __init__(self) -> None:
        self.counter: Iterator[int] = itertools.count(1)
        self.last = 0

    def __call__(self) -> str:
        self.last = next(self.counter)
        return f"{ID_PREFIX}{self.last:012d}"

    def skip_to(self, n: int) -> None:
        self.counter = itertools.count(max(n, self.last + 1))


class ReferenceSparkAdapter(DirectoryReads, TableUnderTest, OperationHandler[None]):
    """``reference.write.client.WriteClient`` on a table directory in the case's work folder."""

    name: ClassVar[str] = "reference"
    capabilities: ClassVar[frozenset[str]] = CAPABILITIES
    crash_points: ClassVar[tuple[int, ...]] = (0, 99)  # a killed process: before the first file or after the last
    known_failures: ClassVar[dict[str, str]] = KNOWN_FAILURES
    engine: ClassVar[str] = "spark"
    """Where batch writes and compaction run (``reference.engines.ENGINES``); streams run on Spark."""

    def __init__(self, spark: Any = None) -> None:
        self.spark = spark
        self.client: Any = None
        self.options: dict[str, str] = {}
        self.clock = ReplayClock()
        self.ids = FileIds()
        self.config = CreateTable()
        self.crash_after: int | None = None

    def create(self, config: CreateTable, workdir: Path) -> None:
        from reference.write.client import WriteClient

        if self.spark is None and self.engine == "spark":
            from reference.engines.spark_session import get_or_create_session

            self.spark = get_or_create_session()
        self.path = str(workdir / config.table_name)
        self.client = WriteClient(self.path, self.spark, self.clock, self.ids, engine=self.engine)
        self.options = write_options(config)
        self.config = config

    def write(self, op: Write) -> None:
        """A batch write through ``WriteClient.write`` (in a child process when a crash is armed)."""
        import pyarrow as pa

        if op.instant_time is not None:
            self.clock.fix(op.instant_time)
        options = {**self.options, **dict(op.options)}
        if self.crash_after is not None:
            self._killed_write(op.operation, [dict(r) for r in op.records], options)
            return
        self.client.write(pa.Table.from_pylist([dict(r) for r in op.records]), op.operation, options)

    def delete_partition(self, op: DeletePartition) -> None:
        """A ``delete_partition`` write."""
        if op.instant_time is not None:
            self.clock.fix(op.instant_time)
        opts = {**self.options, "hoodie.datasource.write.partitions.to.delete": ",".join(op.partitions)}
        if self.crash_after is not None:
            self._killed_write("delete_partition", None, opts)
            return
        self.client.write(None, "delete_partition", opts)

    def _killed_write(self, operation: str, records: list[dict[str, Any]] | None, options: dict[str, str]) -> None:
        """The write in a child process killed at the armed fault point; the clock and the file ids
        then move past what the child used."""
        from reference.instrumentation.faults import FAULT_ENV
        from spec.storage.hoodie_storage import Storage
        from spec.timeline.active_timeline import Timeline

        after, self.crash_after = self.crash_after, None
        point = "after_start" if after == 0 else "before_commit"
        job = {"path": self.path, "operation": operation, "records": records, "options": options, "engine": self.engine,
               "clock": [self.clock.now, self.clock.fixed], "next_id": self.ids.last + 1}
        env = {**os.environ, FAULT_ENV: point}
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.clock.fixed = None
        proc = subprocess.Popen([sys.executable, "-m", "conformance.adapters.crash_writer"], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(json.dumps(job), timeout=600)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # stragglers of its group, if any
        if proc.returncode == REFUSED:  # refused before the fault point: the child's error, as the write's
            refusal = json.loads(out.strip().splitlines()[-1])
            raise ERROR_KINDS.get(refusal["kind"], HudiSpecError)(refusal["message"], hint=refusal["hint"])
        storage = Storage(self.path)
        if not storage.exists(".hoodie/hoodie.properties"):
            raise InvalidOperation(f"the killed write left no table: {err[-500:]}", hint="see the writer's stderr")
        timeline = Timeline.load(storage)
        times = [t for i in timeline.instants for t in (i.requested, i.completed) if t]
        if times:
            self.clock.catch_up(max(times))
        self.ids.skip_to(self.ids.last + 1000)
        if proc.returncode != -signal.SIGKILL:
            raise InvalidOperation(f"the {operation} was to be killed at {point} but ended with code "
                                   f"{proc.returncode}: {err[-500:]}",
                                   hint="is reference.instrumentation.faults wired at that point?")
        pending = timeline.pending_writes().instants
        written = _files_of(storage, pending[-1].requested) if pending else []
        if after and len(written) > after:
            raise InvalidOperation(f"the reference stops a write before its first file or after its last; the case "
                                   f"stops it after {after} of its {len(written)} files",
                                   hint="crash with after_files 0, or at least the write's number of files")

    def concurrent(self, op: Concurrent) -> None:
        """The member writes under optimistic concurrency control (``OCC_OPTIONS``), each a ``WriteClient`` in a
        thread of its own started in member order and held before its commit until its turn; at their turns the
        held writes commit (or lose conflict resolution: ``WriteConflict``) and the services run, here."""
        from conformance.adapters.concurrent_members import HeldWrite, occ_options
        from spec.model.concurrency import check_outcomes

        if self.crash_after is not None:
            raise InvalidOperation("a crash is armed: concurrent members cannot be killed", hint="crash before a write")
        options = occ_options(self.options)
        held: dict[int, HeldWrite] = {}
        try:
            for i, m in enumerate(op.members):
                if isinstance(m, Write):
                    held[i] = HeldWrite(lambda m=m: self._member_write(m, options)).start()  # type: ignore[misc]
            outcomes = ["ok"] * len(op.members)
            for i in op.commit_order:
                m = op.members[i]
                if isinstance(m, Write):
                    outcomes[i] = held[i].commit()
                elif isinstance(m, Compact):
                    self._locked_service(lambda m=m: self.compact(m), options)
                else:
                    self._locked_service(lambda m=m: self.clean(m), options)
        finally:
            for h in held.values():
                h.release()
        check_outcomes(op, outcomes)

    def _member_write(self, op: Write, options: dict[str, str]) -> None:
        import pyarrow as pa

        from reference.write.client import WriteClient

        client = WriteClient(self.path, self.spark, self.clock, self.ids, engine=self.engine)
        client.write(pa.Table.from_pylist([dict(r) for r in op.records]), op.operation, {**options, **dict(op.options)})

    def _locked_service(self, run: Any, options: dict[str, str]) -> None:
        """A table service beside the held writes, under their lock provider."""
        saved, self.options = self.options, options
        try:
            run()
        finally:
            self.options = saved

    def stream(self, op: Stream) -> None:
        """A ``StreamingWriter``, a commit per checkpoint."""
        import pyarrow as pa

        from reference.write.streaming import StreamingWriter

        if self.crash_after is not None:
            raise InvalidOperation("the reference kills only batch writes", hint="crash before a write")
        writer = StreamingWriter(self.path, self.options, self.spark, self.clock, self.ids)
        for checkpoint in op.checkpoints:
            deletes = any(r.kind == "delete" for r in checkpoint)
            rows = [{**r.record, "_hoodie_is_deleted": r.kind == "delete"} if deletes else dict(r.record)
                    for r in checkpoint]
            writer.write_checkpoint(pa.Table.from_pylist(rows))

    def compact(self, op: Compact) -> None:
        """Schedule and/or run a compaction with ``reference.executors.compaction``."""
        from reference.executors.compaction import run_compaction, schedule_compaction

        if not self._has_table():  # nothing written yet: nothing to schedule, nothing to run
            if not self.config.is_mor:
                raise InvalidOperation("compaction needs a merge-on-read table", hint="copy-on-write has no logs")
            if op.mode == "run":
                raise InstantNotFound("there is no pending compaction to run", hint="schedule one first")
            return
        locking = {k: v for k, v in self.options.items()  # its lock provider's, and its concurrency mode
                   if k.startswith("hoodie.write.lock.") or k == "hoodie.write.concurrency.mode"}
        if op.mode == "run":
            run_compaction(self.client, op.instant_time, options=locking)
            return
        t = schedule_compaction(self.client, op.instant_time, options=locking)
        if op.mode == "schedule_and_run" and t is not None:
            run_compaction(self.client, t, options=locking)

    def cluster(self, op: Cluster) -> None:
        """Schedule a clustering and execute it with ``reference.executors.clustering``."""
        from reference.executors.clustering import cluster

        if not self._has_table():  # nothing written yet: nothing to cluster
            return
        locking = {k: v for k, v in self.options.items() if k.startswith("hoodie.write.lock.")}
        cluster(self.client, options={**locking, **dict(op.options)})

    def _has_table(self) -> bool:
        from spec.storage.hoodie_storage import Storage

        return Storage(self.path).exists(".hoodie/hoodie.properties")

    def crash(self, op: Crash) -> None:
        """Arm the fault for the next write."""
        self.crash_after = op.after_files

    def apply(self, op: Operation) -> None:
        dispatch(self, op)

    def expect_error(self, op: ExpectError) -> None:
        """Never applied: ``expect_error`` is the harness's."""
        raise InvalidOperation("the reference adapter cannot apply ExpectError",
                               hint="expect_error is the harness's: conformance.runner arms it")

    def lock(self) -> StorageLockConfig:
        """The table lock the services take: the provider the case's write options name (``WriteConfig.lock``)."""
        from reference.config.options import parse_options

        return parse_options(self.options).lock

    def clean(self, op: Clean) -> None:
        """Run the cleaner with the table's clean policy (``reference.executors.clean``)."""
        from reference.executors.clean import clean
        from spec.write.service_configs import clean_config

        if not self._has_table():
            return  # nothing written, nothing to clean
        storage, table = _storage_table(self)
        c = self.config
        _fixing(self, op.instant_time)
        clean(storage, table, clean_config(c), clock=self.clock, lock=self.lock())

    def rollback(self, op: Rollback) -> None:
        """Roll back an instant (``reference.executors.rollback``)."""
        from reference.executors.rollback import rollback

        storage, table = _storage_table(self)
        rollback(storage, table, op.instant_time, clock=self.clock, lock=self.lock())

    def savepoint(self, op: Savepoint) -> None:
        """Savepoint a commit (``reference.executors.savepoint``)."""
        from reference.executors.savepoint import savepoint_create

        storage, table = _storage_table(self)
        savepoint_create(storage, table, op.instant_time, clock=self.clock, lock=self.lock())

    def restore(self, op: Restore) -> None:
        """Restore to a savepoint, the latest when the operation names none (``reference.executors.restore``)."""
        from reference.executors.common import timeline_of
        from reference.executors.restore import restore
        from spec.actions.restore import savepoint_to_restore

        storage, table = _storage_table(self)
        restore(storage, table, savepoint_to_restore(timeline_of(storage, table), op.savepoint_time), clock=self.clock,
                lock=self.lock())

    def archive(self, op: Archive) -> None:
        """Archive old instants (``reference.executors.archive``)."""
        from reference.executors.archive import archive
        from spec.write.service_configs import archive_config, compaction_config

        if not self._has_table():
            return  # nothing written, nothing to archive
        storage, table = _storage_table(self)
        c = self.config
        archive(storage, table, archive_config(c), compaction_config(c), lock=self.lock())


def _files_of(storage: Any, instant: str) -> list[str]:
    """The data files a write at ``instant`` created or appended to (its markers)."""
    return [f.path for f in storage.list(f".hoodie/.temp/{instant}", recursive=True)
            if not f.is_dir and ".marker." in f.name]


def _storage_table(adapter: ReferenceSparkAdapter) -> tuple[Any, Any]:
    from spec.config.table_config import TableConfig
    from spec.storage.hoodie_storage import Storage

    storage = Storage(adapter.path)
    if not storage.exists(".hoodie/hoodie.properties"):
        raise InstantNotFound("the table has no commit yet", hint="write something first")
    return storage, TableConfig.load(storage)


def _fixing(adapter: ReferenceSparkAdapter, t: str | None) -> None:
    if t is not None:
        adapter.clock.fix(t)


class ReferenceLocalAdapter(ReferenceSparkAdapter):
    """The reference with ``engine="local"``: batch writes and compaction run on pyarrow in this
    process, no Spark (streams, which have no local engine, still start one)."""

    name: ClassVar[str] = "reference_local"
    engine: ClassVar[str] = "local"


class ReferenceLocalRowsAdapter(ReferenceLocalAdapter):
    """The local engine with its column-at-a-time fast paths switched off: a merge into a base file runs
    record by record (``spec.read.merge``) and every log data block is encoded record by record
    (``spec.file_group.log_file.log_blocks``) — the paths the reference takes for columns the fast paths do not cover
    (nested and logical types, which the case language's JSON scalars never produce). A killed write
    runs in a child process with the fast paths on."""

    name: ClassVar[str] = "reference_local_rows"

    def apply(self, op: Operation) -> None:
        from reference.io import handles
        saved = handles._merge_columnwise, handles._encode_columnwise
        handles._merge_columnwise = handles._encode_columnwise = _no_fast_path  # type: ignore[assignment]
        try:
            super().apply(op)
        finally:
            handles._merge_columnwise, handles._encode_columnwise = saved


def _no_fast_path(*args: Any) -> None:
    """Stands for a fast path that does not cover the batch (its callers then go record by record)."""
    return None

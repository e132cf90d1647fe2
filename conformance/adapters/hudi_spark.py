"""Apache Hudi's Spark datasource as an implementation under test (``--impl hudi_spark``).

Needs the hudi-spark bundle jar of the user's Spark version: ``make apache-hudi`` fetches it into the
project's ``.cache/apache-hudi`` (found there by the Spark line of the installed pyspark), or
``HUDI_SPARK_BUNDLE=/path/to/bundle.jar`` (or ``hudi-conformance run --jars``) names one. Without it every
case is SKIPped with that reason: nothing is claimed. With it, each operation of the case language becomes
what a Spark user of Hudi does:

- writes (and ``delete_partition``) go through the datasource, ``df.write.format("hudi")`` with the
  table's options (``reference_spark.write_options``: table type, record key, ordering field,
  partition path, key generator, merge mode, sizing, inline services) plus
  ``hoodie.datasource.write.operation``;
- table services are Hudi's SQL procedures on the table registered in the session's catalog:
  ``run_compaction`` (``schedule``, ``execute``, ``scheduleandexecute``), ``run_clean``,
  ``rollback_to_instant``, ``create_savepoint``, ``rollback_to_savepoint``, ``archive_commits``;
- ``concurrent`` members are datasource writes and procedures under optimistic concurrency control
  (``OCC_OPTIONS``: Hudi's ``InProcessLockProvider``, the writers being one JVM's), each write in a thread of its
  own held between its data files and its commit by a gate (``HeldHudiWrite``: a Python UDF that waits for a
  file, in the query of a pre-commit validator, ``hoodie.precommit.validators``, which Hudi runs before it takes
  the lock to commit); at its turn a write's gate opens (and a service runs).

The mapping is ``plan_op`` (``SparkPlanner``, the adapter's ``spec.model.operations.OperationHandler``), a
pure function the tests check without Spark. The table directory is
observed like every writer's (``DirectoryReads``). Hudi chooses its own instant times: the runner maps a
case's named instants to Hudi's by order (``chooses_instant_times``), so the plan itself never names a time to
write at (``plan_op`` refuses one, ``invalid_operation``); streams (Flink's writer) are not declared.

A ``crash`` stops Hudi's next write where the case says, with Hudi's own failure paths (``hudi_spark_crash``):
after all of its data files, before its commit, by a pre-commit validator that fails
(``hoodie.precommit.validators``: Hudi validates the written files before it commits, and a failed
validation leaves the instant inflight with its files); before its first data file, after its inflight
instant, by a marker folder that cannot be made (direct markers, ``hoodie.write.markers.type=DIRECT``, under a
``.hoodie/.temp`` that is a file for the write's length: Hudi writes a data file's marker before the file, so
the write fails in its first write task). Hudi's next write rolls the failed one back, as the case expects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Final

from conformance.adapters.hudi_spark_bugs import KNOWN_FAILURES
from conformance.adapters.hudi_spark_crash import stopped_write
from conformance.adapters.hudi_spark_gate import HeldHudiWrite
from conformance.adapters.hudi_spark_refusals import refused
from conformance.adapters.reference_spark import write_options
from conformance.interface.adapter import DirectoryReads, TableUnderTest
from conformance.interface.ops import CreateTable
from spec.errors import (
    InstantNotFound,
    InvalidOperation,
)
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
from spec.timeline.instant import WRITE_ACTIONS

BUNDLE_ENV: Final = "HUDI_SPARK_BUNDLE"
BUNDLE_CACHE: Final = Path(__file__).resolve().parents[2] / ".cache" / "apache-hudi"
"""Where ``make apache-hudi`` puts the bundle (the project's checkout)."""

HUDI_CONF: Final = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    # Hudi sizes records with JOL, which tries to attach the HotSpot serviceability agent to its own JVM and
    # prints warnings when it cannot: skip that attempt (``hudi_session`` sends what JOL prints to stderr)
    "spark.driver.extraJavaOptions": "-Djol.skipHotspotSAAttach=true",
}
"""The session settings Hudi's Spark quick start asks for (Kryo with Hudi's registrar, Hudi's SQL extension
for ``CALL`` procedures, Hudi's catalog for ``CREATE TABLE ... USING hudi``), and quiet JOL."""

CAPABILITIES: Final = frozenset({
    "COPY_ON_WRITE", "MERGE_ON_READ", "v6", "v8", "v9",
    *(f"write:{op}" for op in WRITE_OPERATIONS), "delete_partition",
    "keygen:SIMPLE", "keygen:COMPLEX", "keygen:NON_PARTITION",
    "merge:EVENT_TIME_ORDERING", "merge:COMMIT_TIME_ORDERING",
    "index:BLOOM", "index:SIMPLE", "index:BUCKET", "index:GLOBAL_BLOOM", "index:GLOBAL_SIMPLE", "index:RECORD_INDEX",
    "compact", "cluster", "clean", "rollback", "savepoint", "restore", "archive", "crash",
    "inline_compact", "auto_clean", "auto_archive", "concurrent",
})
"""What Hudi's datasource and procedures express (the table version must be one the bundle writes)."""

DEFAULT_COMPACTION_TRIGGER: Final = 5
"""Hudi's ``hoodie.compact.inline.max.delta.commits`` default, the trigger ``archive_commits`` archives by."""

OCC_OPTIONS: Final = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                      "hoodie.cleaner.policy.failed.writes": "LAZY",
                      "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}
"""Hudi's options for the members of a ``concurrent`` step: optimistic concurrency control, failed writes rolled
back lazily, and the lock of the writers of one JVM."""

COMPACTION_OPS: Final = {"schedule": "schedule", "run": "execute", "schedule_and_run": "scheduleandexecute"}
COMPACT_NOW: Final = {"hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
                      "hoodie.compact.inline.max.delta.commits": "1"}
"""A compaction the case asks for is scheduled now: Hudi schedules one only once its trigger is met
(``ScheduleCompactionActionExecutor``: by default 5 delta commits since the last compaction)."""


@dataclass(frozen=True)
class SparkAction:
    """One step for Spark: a datasource write (``options``, ``records``) or a SQL statement (``sql``)."""

    kind: str
    options: Mapping[str, str] = field(default_factory=dict)
    records: tuple[Mapping[str, Any], ...] = ()
    sql: str = ""
    members: tuple[SparkAction, ...] = ()
    """A ``concurrent`` step's (kind ``concurrent``): each member's action, under ``OCC_OPTIONS``."""


METADATA_ENABLE: Final = "hoodie.metadata.enable"


def hudi_options(config: CreateTable, *extra: Mapping[str, str]) -> dict[str, str]:
    """The table's write options for Hudi's datasource, the ``extra`` ones on top. The merge mode goes under
    Hudi's write option, ``hoodie.write.record.merge.mode``, the registry's key (a table is created from it; the
    table property ``hoodie.record.merge.mode`` creates none: commit-time-ordering-cow-v8).

    A version 6 case's table has no metadata table (``hoodie.metadata.enable``: this writer keeps none on
    version 6), where Apache Hudi 1.2.0 creates one by default on every version, and bounds a version 6 table's
    archival by its compactions (``TimelineArchiverV1``, archive-cow-v6): Hudi is asked for the table the case
    describes, ``hoodie.metadata.enable=false``, unless the case sets it."""
    opts = {**write_options(config)}
    if config.table_version < 8:
        opts.setdefault(METADATA_ENABLE, "false")
    for e in extra:
        opts.update(e)
    return opts


def _literal(value: str | int) -> str:
    return str(value) if isinstance(value, int) else "'" + value.replace("'", "''") + "'"


def call(procedure: str, **args: str | int | None) -> str:
    """``CALL <procedure>(name => value, ...)`` with the arguments given (None ones left out)."""
    named = ", ".join(f"{k} => {_literal(v)}" for k, v in args.items() if v is not None)
    return f"CALL {procedure}({named})"


def _no_fixed_time(op: Operation, t: str | None) -> None:
    if t is not None:
        raise InvalidOperation(f"{type(op).__name__.lower()} at {t}: Apache Hudi's datasource chooses its own "
                               "instant times", hint="a case for hudi_spark leaves instant_time unset")


def plan_op(op: Operation, config: CreateTable, table: str, latest_write: str | None = None) -> SparkAction:
    """What Spark does for one operation on ``table`` (registered in the catalog at the table's path).
    ``latest_write`` is the latest completed data-writing instant (``rollback`` without a time)."""
    return dispatch(SparkPlanner(config, table, lambda: latest_write), op)


@dataclass(frozen=True)
class SparkPlanner(OperationHandler[SparkAction]):
    """The operations as Spark steps on ``table``: the ``spec.model.operations.OperationHandler`` of
    ``plan_op``; ``latest_write`` is asked only by a ``rollback`` that names no instant."""

    config: CreateTable
    table: str
    latest_write: Callable[[], str | None]

    def write(self, op: Write) -> SparkAction:
        """A datasource write with the write operation and the write's own options (on top of the table's)."""
        _no_fixed_time(op, op.instant_time)
        return SparkAction("write", hudi_options(self.config, dict(op.options),
                                                 {"hoodie.datasource.write.operation": op.operation}), op.records)

    def delete_partition(self, op: DeletePartition) -> SparkAction:
        """A datasource ``delete_partition`` write."""
        _no_fixed_time(op, op.instant_time)
        return SparkAction("write", hudi_options(self.config, {
            "hoodie.datasource.write.operation": "delete_partition",
            "hoodie.datasource.write.partitions.to.delete": ",".join(op.partitions)}))

    def compact(self, op: Compact) -> SparkAction:
        """``run_compaction``: schedule, execute or both."""
        if op.mode != "run":
            _no_fixed_time(op, op.instant_time)
        timestamp = int(op.instant_time) if op.instant_time is not None else None
        return SparkAction("sql", options=COMPACT_NOW, sql=call(
            "run_compaction", op=COMPACTION_OPS[op.mode], table=self.table, timestamp=timestamp,
            limit=1 if op.mode == "run" and timestamp is None else None))

    def cluster(self, op: Cluster) -> SparkAction:
        """``run_clustering(op => 'scheduleAndExecute')`` with the case's clustering options."""
        options = ",".join(f"{k}={v}" for k, v in op.options) or None
        return SparkAction("sql", sql=call("run_clustering", table=self.table, op="scheduleAndExecute",
                                           options=options))

    def clean(self, op: Clean) -> SparkAction:
        """``run_clean`` with the table's clean policy."""
        _no_fixed_time(op, op.instant_time)
        c = self.config
        return SparkAction("sql", sql=call(
            "run_clean", table=self.table, clean_policy=c.clean_policy, retain_commits=c.clean_commits_retained,
            hours_retained=c.clean_hours_retained, file_versions_retained=c.clean_file_versions_retained))

    def rollback(self, op: Rollback) -> SparkAction:
        """``rollback_to_instant``, the latest write when the operation names no instant; on a version 6 table
        the write client's ``rollback`` (``BaseHoodieWriteClient.rollback``), which the procedure wraps, as
        the procedure cannot roll back a version 6 table (``ROLLBACK_ON_VERSION_6``)."""
        instant = op.instant_time or self.latest_write()
        if instant is None:
            raise InvalidOperation("nothing to roll back", hint="write something first")
        if self.config.table_version < 8:
            return SparkAction("client", options={"rollback": instant})
        return SparkAction("sql", sql=call("rollback_to_instant", table=self.table, instant_time=instant))

    def savepoint(self, op: Savepoint) -> SparkAction:
        """``create_savepoint``."""
        return SparkAction("sql", sql=call("create_savepoint", table=self.table, commit_time=op.instant_time))

    def restore(self, op: Restore) -> SparkAction:
        """``rollback_to_savepoint``."""
        return SparkAction("sql", sql=call("rollback_to_savepoint", table=self.table, instant_time=op.savepoint_time))

    def archive(self, op: Archive) -> SparkAction:
        """``archive_commits`` with the table's archival settings; the write client's ``archive``
        (``BaseHoodieWriteClient.archive``, what automatic archival runs) when the table's compaction trigger is
        not Hudi's default, which the procedure cannot be given (``ARCHIVE_PROCEDURE_IGNORES_OPTIONS``): the
        archiver keeps what a compaction still to come needs by that trigger."""
        c = self.config
        if c.compact_max_delta_commits != DEFAULT_COMPACTION_TRIGGER:
            return SparkAction("client", options={"archive": ""})
        return SparkAction("sql", sql=call("archive_commits", table=self.table, min_commits=c.keep_min_commits,
                                           max_commits=c.keep_max_commits, retain_commits=c.clean_commits_retained))

    def concurrent(self, op: Concurrent) -> SparkAction:
        """Each member's action under optimistic concurrency control (``OCC_OPTIONS``)."""
        return SparkAction("concurrent", members=tuple(
            replace(a, options={**a.options, **OCC_OPTIONS}) for a in (dispatch(self, m) for m in op.members)))

    def stream(self, op: Stream) -> SparkAction:
        """Not mapped (streams are Flink's)."""
        raise _unmapped(op)

    def crash(self, op: Crash) -> SparkAction:
        """Arm the crash of the next write (``HudiSparkAdapter`` applies it: ``crash_options``)."""
        return SparkAction("crash", options={"after_files": str(op.after_files)})

    def expect_error(self, op: ExpectError) -> SparkAction:
        """Not mapped (``expect_error`` is the harness's)."""
        raise _unmapped(op)


def _unmapped(op: Operation) -> InvalidOperation:
    return InvalidOperation(f"hudi_spark does not map {type(op).__name__}", hint="streams are not declared by this "
                            "adapter")


def spark_line() -> str | None:
    """The installed pyspark's ``major.minor`` (the Spark line a bundle is built for), None without pyspark."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return ".".join(version("pyspark").split(".")[:2])
    except PackageNotFoundError:
        return None


def _version_key(jar: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", jar.stem.rsplit("-", 1)[-1]))


def bundle() -> str | None:
    """The hudi-spark bundle jar: the one ``HUDI_SPARK_BUNDLE`` names (None if it is no file), else the newest
    in ``.cache/apache-hudi`` built for the installed pyspark's Spark line."""
    path = os.environ.get(BUNDLE_ENV)
    if path:
        return path if Path(path).is_file() else None
    line = spark_line()
    jars = sorted(BUNDLE_CACHE.glob(f"hudi-spark{line}-bundle_*.jar"), key=_version_key) if line else []
    return str(jars[-1]) if jars else None


def hudi_conf(jar: str) -> dict[str, str]:
    """The Spark settings that put Apache Hudi (the bundle ``jar``) into a session."""
    return {"spark.jars": jar, **HUDI_CONF}


def has_hudi(spark: Any) -> bool:
    """Whether the session was started with Hudi's SQL extension (and so, with its bundle)."""
    return "HoodieSparkSessionExtension" in spark.conf.get("spark.sql.extensions", "")


def hudi_session(jar: str) -> Any:
    """The process's one Spark session (``reference.engines.spark_session.get_or_create_session``), started with the
    Hudi
    bundle, its SQL extension and catalog; a session already started without them is refused."""
    from reference.engines.spark_session import get_or_create_session

    session = get_or_create_session(app_name="hudi-conformance[hudi_spark]", conf=hudi_conf(jar))
    if not has_hudi(session):
        raise InvalidOperation("this process's Spark session was started without Apache Hudi",
                               hint="run --impl hudi_spark in a process of its own")
    # the JVM shares this program's standard output: what Hudi prints there (JOL's warnings) goes to standard
    # error, so that the program's own output (e.g. --output json) stays whole
    system = session._jvm.java.lang.System
    system.setOut(system.err)
    return session


class HudiSparkAdapter(DirectoryReads, TableUnderTest):
    """Apache Hudi on Spark: datasource writes and SQL procedures on a table directory."""

    name: ClassVar[str] = "hudi_spark"
    capabilities: ClassVar[frozenset[str]] = CAPABILITIES
    known_failures: ClassVar[Mapping[str, str]] = KNOWN_FAILURES
    chooses_instant_times: ClassVar[bool] = True

    def __init__(self) -> None:
        self.jar = bundle()
        self.spark: Any = None
        self.config = CreateTable()
        self.table = "t"
        self.workdir = ""
        self.gates = 0
        self.types: dict[str, Any] = {}
        self.crash_after: int | None = None

    @property
    def unavailable(self) -> str | None:  # type: ignore[override]
        if self.jar is not None:
            return None
        return (f"no hudi-spark bundle: run `make apache-hudi`, or set {BUNDLE_ENV} to the hudi-spark bundle jar "
                "of your Spark version (or pass --jars), to run Apache Hudi's Spark datasource")

    def create(self, config: CreateTable, workdir: Path) -> None:
        if self.jar is None:
            raise InvalidOperation(str(self.unavailable))
        self.spark = hudi_session(self.jar)
        self.config = config
        self.path = str(workdir / config.table_name)
        self.workdir = str(workdir)
        self.table = f"{config.table_name}_{abs(hash(self.path)) % 10**8}"

    def _latest_write(self) -> str | None:
        """The latest data-writing instant in any state, the one a rollback naming none undoes
        (``spec.actions.rollback.instant_to_rollback``)."""
        writes = [r for r, action, _, _ in self.timeline() if action in {str(a) for a in WRITE_ACTIONS}]
        return writes[-1] if writes else None

    def apply(self, op: Operation) -> None:
        action = dispatch(SparkPlanner(self.config, self.table, self._latest_write), op)
        if action.kind == "crash":
            self.crash_after = int(action.options["after_files"])
            return
        try:
            if isinstance(op, Concurrent):
                self._concurrent(op, action)
            elif action.kind == "write" and self.crash_after is not None:
                self._crashed_write(action)
            elif action.kind == "write":
                self._write(action)
            elif action.kind == "client" and "rollback" in action.options:
                self._client_rollback(action.options["rollback"])
            elif action.kind == "client":
                self._client_archive()
            else:
                self._procedure(action)
        except Exception as err:
            refusal = refused(err)
            if refusal is None:
                raise
            raise refusal from err

    def write_client(self) -> Any:
        """Hudi's Spark write client (``SparkRDDWriteClient``) on the table, its write config built from the
        table's write options (``hudi_options``) as a procedure's is from the session's settings."""
        jvm = self.spark._jvm
        props = jvm.java.util.Properties()
        for key, value in hudi_options(self.config).items():
            props.setProperty(key, value)
        config = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(self.path).withProps(props).build()
        context = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(self.spark.sparkContext._jsc)
        return jvm.org.apache.hudi.client.SparkRDDWriteClient(context, config)

    def _client_rollback(self, instant: str) -> None:
        """The write client's rollback of ``instant``. The client answers false, rolling back nothing, when the
        timeline has no such instant to roll back: that is ``InstantNotFound``, as the procedure reports it."""
        client = self.write_client()
        try:
            if not client.rollback(instant):
                raise InstantNotFound(f"Apache Hudi rolled back nothing: no instant {instant} to roll back",
                                      hint="name a write on the timeline")
        finally:
            client.close()

    def _client_archive(self) -> None:
        """The write client's archival of the table's timeline, by the table's settings."""
        client = self.write_client()
        try:
            client.archive()
        finally:
            client.close()

    def _concurrent(self, op: Concurrent, action: SparkAction) -> None:
        """The member writes started in member order, each held at its gate until its turn of the commit order
        (``HeldHudiWrite``); a service runs at its turn. Each member's outcome is Hudi's: it committed, or its
        writer failed with ``HoodieWriteConflictException`` (``write_conflict``)."""
        from spec.model.concurrency import check_outcomes

        held: dict[int, HeldHudiWrite] = {}
        try:
            for i, member in enumerate(action.members):
                if member.kind == "write":
                    self.gates += 1
                    gate = Path(self.workdir) / f"gate-{self.gates}"
                    held[i] = HeldHudiWrite(self.spark, self._write, member, gate, i).start()
            outcomes = ["ok"] * len(op.members)
            for i in op.commit_order:
                if i in held:
                    outcomes[i] = held[i].commit()
                else:
                    self._procedure(action.members[i])
        finally:
            for h in held.values():
                h.release()
        check_outcomes(op, outcomes)

    def _procedure(self, action: SparkAction) -> None:
        """A SQL procedure on the registered table, with the table's write options (and the action's own) as
        ``hoodie.*`` session settings: Hudi's procedures build their write client from the table's config and
        the session's ``hoodie.*`` settings (``HoodieCLIUtils.createHoodieWriteClient``), so the table version
        and the service settings are the case's, not Hudi's defaults (which would upgrade a version 6 table)."""
        self._register()
        settings = hudi_options(self.config, action.options)
        for key, value in settings.items():
            self.spark.conf.set(key, value)
        try:
            self.spark.sql(action.sql).collect()
        finally:
            for key in settings:
                self.spark.conf.unset(key)

    def _write(self, action: SparkAction) -> None:
        import pyarrow as pa

        from reference.engines.spark_arrow import arrow_to_spark

        records = [dict(r) for r in action.records]
        table = pa.Table.from_pylist(records)
        # a column all null in this batch takes the type earlier batches gave it (Spark's NullType is no
        # column type Hudi writes), as a Spark user's DataFrame would have it
        table = table.cast(pa.schema([f.with_type(self.types.get(f.name, f.type)) if pa.types.is_null(f.type) else f
                                      for f in table.schema]))
        self.types.update({f.name: f.type for f in table.schema if not pa.types.is_null(f.type)})
        df = (arrow_to_spark(self.spark, table) if records else self.spark.createDataFrame([], "id long"))
        # a case's batch is one input partition, the input the spec's bulk insert takes
        # (``spec.write.bulk_insert.bulk_insert_files`` with one input): with more, Hudi's bulk insert writes a
        # file per input partition and partition path (sort modes NONE and PARTITION_SORT, bulk-insert-none-cow-v6)
        df.coalesce(1).write.format("hudi").options(**action.options).mode("append").save(self.path)

    def _crashed_write(self, action: SparkAction) -> None:
        """The write stopped where the armed crash says (``hudi_spark_crash.stopped_write``)."""
        after, self.crash_after = self.crash_after, None
        assert after is not None
        stopped_write(Path(self.path), after, lambda extra: self._write(
            SparkAction("write", {**action.options, **extra}, action.records)), self._pending_writes)

    def _pending_writes(self) -> list[str]:
        return [r for r, action, state, _ in self.timeline()
                if state != "COMPLETED" and action in ("commit", "deltacommit", "replacecommit")]

    def _register(self) -> None:
        self.spark.sql(f"CREATE TABLE IF NOT EXISTS {self.table} USING hudi LOCATION {_literal(self.path)}")

    def close(self) -> None:
        if self.spark is not None:
            self.spark.sql(f"DROP TABLE IF EXISTS {self.table}")

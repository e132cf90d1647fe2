"""hudi-rs (the ``hudi`` Python package) as a reader under test.

hudi-rs does not write tables, so this adapter lets another adapter write (by default the reference
implementation) and answers every L0 query by reading that table directory with hudi-rs: snapshot,
read-optimized, time travel and incremental. Its rows must be the ones the spec predicts. The
timeline and layout are the writer's (used for labels only): this adapter is observed in L0 alone,
its other layers are SKIPped. A query hudi-rs fails is reported as the error ``invalid_table`` with
hudi-rs's message kept in the exception chain.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from conformance.interface.adapter import Query, RawRows, ReaderOfWrittenTables
from spec.errors import InvalidTable
from spec.storage.hoodie_storage import Storage


def _reference_writer() -> Any:
    from conformance.adapters.reference_spark import ReferenceSparkAdapter

    return ReferenceSparkAdapter()


TIME_TRAVEL_SCHEMA = (
    "hudi-rs reads a time-travel query with the table's latest schema (a column added later reads as null, an "
    "evolved column in its latest type); Apache Hudi reads it with the schema of the queried instant "
    "(HoodieBaseRelation: TableSchemaResolver.getTableAvroSchema(timestamp))")

PENDING_COMPACTION_LOGS = (
    "hudi-rs bug: on a version-6 merge-on-read table it does not read the log files written while a compaction is "
    "pending (they are named by the compaction's instant, the base instant of the slice the compaction will "
    "write); its snapshot keeps the older row")

LOG_ONLY_FILE_GROUPS = (
    "hudi-rs departure: listing files through the metadata table (a new version 8 or 9 table has one by default, "
    "as in Apache Hudi 1.x) it builds file groups only from base files, so the file groups a stream writes with "
    "log files alone are left out; Apache Hudi's file system view reads them")

ARCHIVED_IN_INCREMENTAL = (
    "hudi-rs departure: its incremental query leaves out the writes archival moved off the active timeline (their "
    "rows are missing from a window that reaches back before it); Apache Hudi 1.x takes them from the archived "
    "timeline (IncrementalQueryAnalyzer: the window's archived instants, read from the latest snapshot)")

COMPACTED_IN_INCREMENTAL = (
    "hudi-rs departure: on a version 8 merge-on-read table whose compaction completed after an incremental "
    "window, its incremental query reads the window's rows from the compacted base file (naming it); Apache Hudi "
    "reads the window's own files, so a row the window's log wrote names its file group (MergeOnReadIncremental"
    "RelationV2 builds its view from the window's written files; clean-pending-compaction-mor-v8 through "
    "--impl hudi_spark)")

COMPLETED_AFTER_THE_WINDOW = (
    "hudi-rs departure: of two writes at once the later-requested completed first; hudi-rs reads an incremental "
    "window ending at that completion from the latest file slices, the files of the earlier-requested write among "
    "them though it completed after the window's end (a row names that write's base file or is missing); Apache "
    "Hudi's incremental query reads the files of the instants completed in the window, as the spec does "
    "(--impl hudi_spark_reader passes the case)")

CLEANED_IN_INCREMENTAL = (
    "hudi-rs departure: its incremental query over a window whose files a clean deleted reads the window's file "
    "groups as of the window's end, from the files still on storage; Apache Hudi 1.x on a version 8 or 9 table "
    "falls back to a full table scan of the latest slices (HoodieIncrementalRelationV2Trait.fullTableScan), so a "
    "record copied into a newer base file since names that file and a record updated since is not returned "
    "(clean-savepoint-cow-v8 through --impl hudi_spark_reader)")

HOLLOW_COMMIT_ANSWERED = (
    "hudi-rs departure: it answers an incremental query of a version 6 table while a write is pending that a "
    "completed later write leaves hollow (a write that lost conflict resolution, left inflight); Apache Hudi's "
    "version 6 incremental relations refuse every window then (TimelineUtils.handleHollowCommitIfNeeded, 'Found "
    "hollow commit'), as the spec does (concurrent-compaction-mor-v6 through --impl hudi_spark_reader)")

DEFAULT_PARTITION_VALUE = (
    "hudi-rs departure: it reads a partition column from the data file, so a record written with an empty "
    "partition value (its partition __HIVE_DEFAULT_PARTITION__) reads \"\"; Apache Hudi's Spark datasource "
    "reads partition columns from the partition path (SparkHoodieTableFileIndex), where the default partition is "
    "null (null-ordering-partition-cow-v6 through --impl hudi_spark_reader)")

KNOWN_FAILURES: dict[str, str] = {
    **{f"null-ordering-partition-{c}": DEFAULT_PARTITION_VALUE for c in ("cow-v6", "mor-v8", "mor-v9")},
    **{f"{name}-v{v}": CLEANED_IN_INCREMENTAL for name in ("archive-cow", "clean-latest-commits-cow",
                                                           "clean-savepoint-cow") for v in (8, 9)},
    **{f"{name}-cow-v{v}": CLEANED_IN_INCREMENTAL for name in ("auto-clean", "clean-file-versions") for v in (8, 9)},
    **{f"stream-buckets-mor-v{v}": LOG_ONLY_FILE_GROUPS for v in (8, 9)},
    "bucket-index-stream-mor-v9": LOG_ONLY_FILE_GROUPS,
    "bucket-index-stream-cow-v8": TIME_TRAVEL_SCHEMA,
    **{f"{name}-v{v}": COMPLETED_AFTER_THE_WINDOW for name in ("concurrent-disjoint-cow", "concurrent-compaction-mor")
       for v in (8, 9)},
    **{f"concurrent-clean-cow-v{v}": CLEANED_IN_INCREMENTAL for v in (8, 9)},
    "concurrent-compaction-mor-v6": HOLLOW_COMMIT_ANSWERED,
    **{f"{name}-mor-v{v}": COMPACTED_IN_INCREMENTAL
       for name in ("pending-compaction", "pending-compaction-logs", "clean-pending-compaction",
                    "clean-pending-compaction-logs") for v in (8, 9)},
    **{f"{name}-mor-v6": PENDING_COMPACTION_LOGS
       for name in ("pending-compaction", "pending-compaction-logs", "clean-pending-compaction",
                    "clean-pending-compaction-logs")},
    **{f"schema-add-column-{t}-v{v}": TIME_TRAVEL_SCHEMA for t in ("cow", "mor") for v in (6, 8, 9)},
    **{f"schema-change-{c}": TIME_TRAVEL_SCHEMA for c in ("cow-v6", "mor-v8", "mor-v9")},
    **{f"stream-deletes-mor-v{v}": TIME_TRAVEL_SCHEMA for v in (6, 8)},
    **{f"global-{c}": TIME_TRAVEL_SCHEMA  # a flagged delete adds _hoodie_is_deleted; version 8 cases replay at 9
       for c in ("bloom-index-stays-cow-v8", "bloom-index-stays-mor-v8", "simple-index-moves-cow-v6",
                 "simple-index-moves-cow-v8", "simple-index-moves-mor-v6", "simple-index-moves-mor-v9",
                 "bloom-index-stays-cow-v9", "bloom-index-stays-mor-v9", "simple-index-moves-cow-v9")},
    **{f"record-index-{c}": TIME_TRAVEL_SCHEMA  # the global indexes' operations
       for c in ("stays-cow-v8", "stays-cow-v9", "stays-mor-v8", "stays-mor-v9", "moves-cow-v8", "moves-mor-v8",
                 "moves-cow-v9", "moves-mor-v9")},
    **{f"compaction-after-archive-mor-v{v}": ARCHIVED_IN_INCREMENTAL for v in (6, 8, 9)},
}
"""Cases hudi-rs is known to fail (reported XFAIL), each a difference between hudi-rs and Apache Hudi:
version 8 incremental windows before a compaction completed (read from the compacted file), version-6
cases that write logs while a compaction
is pending, time travel across a schema change (a stream's deletes add ``_hoodie_is_deleted`` to the
schema: hudi-rs shows it, null, in time travel to before), version 8 streams into merge-on-read
tables (log-only file groups listed through the metadata table), incremental windows reaching
back before archived writes or over files a clean deleted, windows ending before a write requested earlier
completed (writers at once), version 6 windows with a hollow commit, and the partition column of the default
partition. The writer's
own known failures are added (the reader sees the writer's table)."""


class HudiRsAdapter(ReaderOfWrittenTables):
    """Writes with ``writer`` (an adapter that leaves a table directory at ``.path``), reads with hudi-rs."""

    name: ClassVar[str] = "hudi_rs"
    known_failures: ClassVar[dict[str, str]] = KNOWN_FAILURES

    def __init__(self, writer: Callable[[], Any] = _reference_writer) -> None:
        super().__init__(writer(), KNOWN_FAILURES)

    def rows(self, query: Query) -> RawRows:
        import hudi
        import pyarrow as pa
        from hudi import HudiQueryType, HudiReadOptions

        path = str(self.writer.path)
        if not Storage(path).exists(".hoodie/hoodie.properties"):
            return []
        try:
            table = hudi.HudiTableBuilder.from_base_uri(path).build()
            opts = HudiReadOptions()
            if query.kind == "read_optimized":
                opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
            elif query.kind == "time_travel" and query.as_of:
                opts = opts.with_as_of_timestamp(query.as_of)
            elif query.kind == "incremental":
                opts = opts.with_query_type(HudiQueryType.Incremental)
                if query.begin:
                    opts = opts.with_start_timestamp(query.begin)
                if query.end:
                    opts = opts.with_end_timestamp(query.end)
            batches = table.read(opts)
        except Exception as err:  # hudi-rs raises its own exception types
            raise InvalidTable(f"hudi-rs failed the {query.kind} query: {err}",
                               hint="a conforming reader answers this query") from err
        rows: list[dict[str, Any]] = pa.Table.from_batches(batches).to_pylist() if batches else []
        return rows

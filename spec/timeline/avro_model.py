"""Hudi's Avro model: the plan and metadata records of every non-commit timeline file.

Each record below is a frozen dataclass named as Hudi names the Avro record, with its fields in
snake_case; ``avro_name`` in a field's metadata gives Hudi's name where it is not the plain
camelCase (``RollbackRequests``; ``spec.timeline.avro_model_codec`` maps the fields). Defaults are the Avro
schema's defaults, so a record read from a file written with fewer fields equals the one Java would
resolve. Every file holds one
record in an Avro object container (``spec.timeline.avro_container``), null codec.

Which record a timeline file holds depends on its action and state (``EXPECTED_CONTENT``);
``parse_timeline_content`` reads any timeline file into the right type.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): the Avro records
``HoodieCompactionPlan``, ``HoodieCleanerPlan``, ``HoodieCleanMetadata``, ``HoodieRollbackPlan``,
``HoodieRollbackMetadata``, ``HoodieSavepointMetadata``, ``HoodieRestorePlan``,
``HoodieRestoreMetadata`` and ``HoodieIndexPlan`` (``hudi-common/src/main/avro``), read and written
by ``TimelineMetadataUtils``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from spec.errors import MetadataFormatError
from spec.timeline.avro_container import AVRO_MAGIC, read_container, write_container
from spec.timeline.avro_model_codec import MAP, MAP_OF_STRINGS, STRINGS, avro, avro_meta, from_avro, to_avro
from spec.timeline.avro_schemas import schema_for
from spec.timeline.commit_metadata import CommitMetadata, commit_metadata_from_mapping, parse_commit_metadata
from spec.timeline.instant import Action, Instant, State

# --- compaction ---------------------------------------------------------------------------------

# --8<-- [start:compaction]
@dataclass(frozen=True, kw_only=True)
class HoodieCompactionOperation:
    """One file slice to compact: its base file (*name*, or None), log file *names*, base instant."""

    base_instant_time: str | None = avro()
    delta_file_paths: tuple[str, ...] | None = avro(codec=STRINGS, default=None)
    data_file_path: str | None = avro(default=None)
    file_id: str | None = avro()
    partition_path: str | None = avro(default=None)
    metrics: Mapping[str, float] | None = avro(codec=MAP, default=None)
    bootstrap_file_path: str | None = avro(default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieCompactionStrategy:
    """The strategy of a compaction plan: the compactor class Java runs and its parameters (none written by default)."""

    compactor_class_name: str | None = avro(default=None)
    strategy_params: Mapping[str, str] | None = avro(codec=MAP, default=None)
    version: int | None = avro(default=1)


@dataclass(frozen=True, kw_only=True)
class HoodieCompactionPlan:
    """``T.compaction.requested`` / ``T.logcompaction.requested``. Hudi writes ``version`` 2."""

    RECORD: ClassVar[str] = "HoodieCompactionPlan"
    operations: tuple[HoodieCompactionOperation, ...] | None = avro(
        of=HoodieCompactionOperation, shape="records", default=None)
    extra_metadata: Mapping[str, str] | None = avro(codec=MAP, default=None)
    version: int | None = avro(default=1)
    strategy: HoodieCompactionStrategy | None = field(
        default=None, metadata=avro_meta(of=HoodieCompactionStrategy))
    preserve_hoodie_metadata: bool | None = avro(default=False)
    missing_schedule_partitions: tuple[str, ...] | None = avro(codec=STRINGS, default=None)


COMPACTION_METRICS = ("TOTAL_LOG_FILES", "TOTAL_IO_MB", "TOTAL_IO_READ_MB", "TOTAL_LOG_FILES_SIZE",
                      "TOTAL_IO_WRITE_MB")
"""The metrics Hudi's default compaction strategy records per operation."""
# --8<-- [end:compaction]


# --- clustering / replace -------------------------------------------------------------------------

# --8<-- [start:replace]
@dataclass(frozen=True, kw_only=True)
class HoodieRequestedReplaceMetadata:
    """``T.replacecommit.requested`` (and v8 ``T.clustering.requested``); all null for insert_overwrite.

    ``clustering_plan`` stays the decoded HoodieClusteringPlan record (a mapping).
    """

    RECORD: ClassVar[str] = "HoodieRequestedReplaceMetadata"
    operation_type: str | None = avro(default=None)
    clustering_plan: Mapping[str, Any] | None = avro(codec=MAP, default=None)
    extra_metadata: Mapping[str, str] | None = avro(codec=MAP, default=None)
    version: int | None = avro(default=1)
# --8<-- [end:replace]


# --- clean -------------------------------------------------------------------------------------------

# --8<-- [start:clean]
@dataclass(frozen=True, kw_only=True)
class HoodieActionInstant:
    """An instant as plans and metadata name it (e.g. the earliest instant a clean retains): requested time, action and
    state."""

    timestamp: str = avro()
    action: str = avro()
    state: str = avro()


@dataclass(frozen=True, kw_only=True)
class HoodieCleanFileInfo:
    """One file a clean plan deletes: its absolute path and whether it is a bootstrap base file."""

    file_path: str | None = avro(default=None)
    is_bootstrap_base_file: bool | None = avro(default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieCleanerPlan:
    """``T.clean.requested`` / ``T.clean.inflight``: what a clean will delete, per partition."""

    RECORD: ClassVar[str] = "HoodieCleanerPlan"
    earliest_instant_to_retain: HoodieActionInstant | None = field(
        default=None, metadata=avro_meta(of=HoodieActionInstant))
    last_completed_commit_timestamp: str = avro(default="")
    policy: str = avro()
    files_to_be_deleted_per_partition: Mapping[str, tuple[str, ...]] | None = avro(
        codec=MAP_OF_STRINGS, default=None)  # deprecated
    version: int | None = avro(default=1)
    file_paths_to_be_deleted_per_partition: Mapping[str, tuple[HoodieCleanFileInfo, ...]] | None = avro(
        of=HoodieCleanFileInfo, shape="map_of_lists", default=None)
    partitions_to_be_deleted: tuple[str, ...] | None = avro(codec=STRINGS, default=None)
    extra_metadata: Mapping[str, str] | None = avro(codec=MAP, default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieCleanPartitionMetadata:
    """What a completed clean did in one partition: its policy, the files it deleted or failed to delete, and whether
    the partition went."""

    partition_path: str = avro()
    policy: str = avro()
    delete_path_patterns: tuple[str, ...] = avro(codec=STRINGS)
    success_delete_files: tuple[str, ...] = avro(codec=STRINGS)
    failed_delete_files: tuple[str, ...] = avro(codec=STRINGS)
    is_partition_deleted: bool | None = avro(default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieCleanMetadata:
    """Completed ``T.clean``: what the clean deleted."""

    RECORD: ClassVar[str] = "HoodieCleanMetadata"
    start_clean_time: str = avro()
    time_taken_in_millis: int = avro()
    total_files_deleted: int = avro()
    earliest_commit_to_retain: str = avro()
    last_completed_commit_timestamp: str = avro(default="")
    partition_metadata: Mapping[str, HoodieCleanPartitionMetadata] = avro(
        of=HoodieCleanPartitionMetadata, shape="map")
    version: int | None = avro(default=1)
    bootstrap_partition_metadata: Mapping[str, HoodieCleanPartitionMetadata] | None = avro(
        of=HoodieCleanPartitionMetadata, shape="map", default=None)
    extra_metadata: Mapping[str, str] | None = avro(codec=MAP, default=None)

    @property
    def policy(self) -> str:
        """The cleaning policy, as each partition's metadata names it (Hudi 1.2.0 writes no top-level policy);
        ``""`` when the clean deleted in no partition."""
        return next((m.policy for m in self.partition_metadata.values()), "")
# --8<-- [end:clean]


# --- rollback ------------------------------------------------------------------------------------------

# --8<-- [start:rollback]
@dataclass(frozen=True, kw_only=True)
class HoodieInstantInfo:
    """An instant a rollback plan targets: its requested time and action."""

    commit_time: str = avro()
    action: str = avro()


@dataclass(frozen=True, kw_only=True)
class HoodieRollbackRequest:
    """One file group's share of a rollback: files to delete (absolute paths), log blocks to roll back."""

    partition_path: str = avro()
    file_id: str | None = avro(default=None)
    latest_base_instant: str | None = avro(default=None)
    files_to_be_deleted: tuple[str, ...] = avro(codec=STRINGS, default=())
    log_blocks_to_be_deleted: Mapping[str, int] | None = avro(codec=MAP, default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieRollbackPlan:
    """``T.rollback.requested``: the instant to roll back and the per-file-group requests."""

    RECORD: ClassVar[str] = "HoodieRollbackPlan"
    instant_to_rollback: HoodieInstantInfo | None = field(
        default=None, metadata=avro_meta(of=HoodieInstantInfo))
    rollback_requests: tuple[HoodieRollbackRequest, ...] | None = avro(
        "RollbackRequests", of=HoodieRollbackRequest, shape="records", default=None)
    version: int | None = avro(default=1)


@dataclass(frozen=True, kw_only=True)
class HoodieRollbackPartitionMetadata:
    """What a completed rollback did in one partition: files deleted or not, the log files its command blocks went to
    and the failed commit's log files (with their sizes)."""

    partition_path: str = avro()
    success_delete_files: tuple[str, ...] = avro(codec=STRINGS)
    failed_delete_files: tuple[str, ...] = avro(codec=STRINGS)
    rollback_log_files: Mapping[str, int] | None = avro(codec=MAP, default=None)
    log_files_from_failed_commit: Mapping[str, int] | None = avro(codec=MAP, default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieRollbackMetadata:
    """Completed ``T.rollback``: what was deleted, and the command-block logs written (paths absolute)."""

    RECORD: ClassVar[str] = "HoodieRollbackMetadata"
    start_rollback_time: str = avro()
    time_taken_in_millis: int = avro()
    total_files_deleted: int = avro()
    commits_rollback: tuple[str, ...] = avro(codec=STRINGS)
    partition_metadata: Mapping[str, HoodieRollbackPartitionMetadata] = avro(
        of=HoodieRollbackPartitionMetadata, shape="map")
    version: int | None = avro(default=1)
    instants_rollback: tuple[HoodieInstantInfo, ...] = avro(of=HoodieInstantInfo, shape="records", default=())
# --8<-- [end:rollback]


# --- savepoint and restore --------------------------------------------------------------------------

# --8<-- [start:savepoint_restore]
@dataclass(frozen=True, kw_only=True)
class HoodieSavepointPartitionMetadata:
    """The files of one partition a savepoint keeps: the files of its latest slices as of the savepointed instant."""

    partition_path: str = avro()
    savepoint_data_file: tuple[str, ...] = avro(codec=STRINGS)


@dataclass(frozen=True, kw_only=True)
class HoodieSavepointMetadata:
    """Completed ``T.savepoint``: the data files the savepoint keeps, per partition."""

    RECORD: ClassVar[str] = "HoodieSavepointMetadata"
    savepointed_by: str = avro()
    savepointed_at: int = avro()
    comments: str = avro()
    partition_metadata: Mapping[str, HoodieSavepointPartitionMetadata] = avro(
        of=HoodieSavepointPartitionMetadata, shape="map")


@dataclass(frozen=True, kw_only=True)
class HoodieRestorePlan:
    """``T.restore.requested``: the instants to roll back, newest first."""

    RECORD: ClassVar[str] = "HoodieRestorePlan"
    instants_to_rollback: tuple[HoodieInstantInfo, ...] = avro(
        of=HoodieInstantInfo, shape="records", default=())
    version: int | None = avro(default=2)
    savepoint_to_restore_timestamp: str | None = avro(default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieRestoreMetadata:
    """Completed ``T.restore``: the rollback metadata of each instant undone."""

    RECORD: ClassVar[str] = "HoodieRestoreMetadata"
    start_restore_time: str = avro()
    time_taken_in_millis: int = avro()
    instants_to_rollback: tuple[str, ...] = avro(codec=STRINGS)
    hoodie_restore_metadata: Mapping[str, tuple[HoodieRollbackMetadata | None, ...]] = avro(
        of=HoodieRollbackMetadata, shape="map_of_optional_lists")
    version: int | None = avro(default=1)
    restore_instant_info: tuple[HoodieInstantInfo, ...] = avro(
        of=HoodieInstantInfo, shape="records", default=())
    extra_metadata: Mapping[str, str] | None = avro(codec=MAP, default=None)
# --8<-- [end:savepoint_restore]


# --- indexing ---------------------------------------------------------------------------------------

# --8<-- [start:indexing]
@dataclass(frozen=True, kw_only=True)
class HoodieIndexPartitionInfo:
    """One metadata-table partition an indexing action builds, and the instant it is indexed up to."""

    version: int | None = avro(default=1)
    metadata_partition_path: str | None = avro(default=None)
    index_upto_instant: str | None = avro(default=None)
    extra_metadata: Mapping[str, str] | None = avro(codec=MAP, default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieIndexPlan:
    """``T.indexing.requested``: the metadata-table partitions to build, and up to which instant."""

    RECORD: ClassVar[str] = "HoodieIndexPlan"
    version: int | None = avro(default=1)
    index_partition_infos: tuple[HoodieIndexPartitionInfo, ...] | None = avro(
        of=HoodieIndexPartitionInfo, shape="records", default=None)


@dataclass(frozen=True, kw_only=True)
class HoodieIndexCommitMetadata:
    """Completed ``T.indexing``."""

    RECORD: ClassVar[str] = "HoodieIndexCommitMetadata"
    version: int | None = avro(default=1)
    operation_type: str | None = avro(default=None)
    index_partition_infos: tuple[HoodieIndexPartitionInfo, ...] | None = avro(
        of=HoodieIndexPartitionInfo, shape="records", default=None)
# --8<-- [end:indexing]


# --- reading and writing -------------------------------------------------------------------------

Plan = (HoodieCompactionPlan | HoodieRequestedReplaceMetadata | HoodieCleanerPlan | HoodieCleanMetadata
        | HoodieRollbackPlan | HoodieRollbackMetadata | HoodieSavepointMetadata | HoodieRestorePlan
        | HoodieRestoreMetadata | HoodieIndexPlan | HoodieIndexCommitMetadata)

PLAN_TYPES: dict[str, type[Any]] = {cls.RECORD: cls for cls in (
    HoodieCompactionPlan, HoodieRequestedReplaceMetadata, HoodieCleanerPlan, HoodieCleanMetadata,
    HoodieRollbackPlan, HoodieRollbackMetadata, HoodieSavepointMetadata, HoodieRestorePlan,
    HoodieRestoreMetadata, HoodieIndexPlan, HoodieIndexCommitMetadata)}
"""Plan dataclasses by Avro record name."""

P = TypeVar("P")


# --8<-- [start:parse_format]
def parse_avro_metadata(data: bytes, expect: type[P] | None = None) -> P | Any:
    """The plan or service metadata in an Avro timeline file, typed by the container's record name.

    With ``expect``, a file holding another record raises MetadataFormatError.
    """
    container = read_container(data)
    name = container.record_name
    if name in ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata"):
        parsed: Any = commit_metadata_from_mapping(container.record)
    elif name in PLAN_TYPES:
        parsed = from_avro(PLAN_TYPES[name], container.record)
    else:
        raise MetadataFormatError(f"unknown timeline record {name!r}", hint="not a Hudi timeline file")
    if expect is not None and not isinstance(parsed, expect):
        raise MetadataFormatError(f"the file holds {name}, not {expect.__name__}")
    return parsed


def format_avro_metadata(obj: Any, table_version: int, sync_marker: bytes | None = None) -> bytes:
    """The Avro timeline file of a plan or service metadata record, with the schema Hudi embeds."""
    record_name = getattr(type(obj), "RECORD", None)
    if record_name is None:
        raise MetadataFormatError(f"{type(obj).__name__} is not a timeline record",
                                  hint="commit metadata: spec.timeline.commit_metadata.format_commit_metadata")
    return write_container(schema_for(record_name, table_version), to_avro(obj), sync_marker)
# --8<-- [end:parse_format]


# --8<-- [start:dispatch]
_COMMIT = frozenset({"HoodieCommitMetadata"})
_REPLACE = frozenset({"HoodieReplaceCommitMetadata", "HoodieCommitMetadata"})
_REQUESTED_REPLACE = frozenset({"HoodieRequestedReplaceMetadata"})

EXPECTED_CONTENT: Mapping[tuple[str, State], frozenset[str]] = {
    (Action.COMMIT, State.REQUESTED): _COMMIT, (Action.COMMIT, State.INFLIGHT): _COMMIT,
    (Action.COMMIT, State.COMPLETED): _COMMIT,
    (Action.DELTA_COMMIT, State.REQUESTED): _COMMIT, (Action.DELTA_COMMIT, State.INFLIGHT): _COMMIT,
    (Action.DELTA_COMMIT, State.COMPLETED): _COMMIT,
    (Action.REPLACE_COMMIT, State.REQUESTED): _REQUESTED_REPLACE,
    (Action.REPLACE_COMMIT, State.INFLIGHT): _COMMIT | _REQUESTED_REPLACE,
    (Action.REPLACE_COMMIT, State.COMPLETED): _REPLACE,
    (Action.CLUSTERING, State.REQUESTED): _REQUESTED_REPLACE,
    (Action.CLUSTERING, State.INFLIGHT): _REQUESTED_REPLACE | _COMMIT,
    (Action.COMPACTION, State.REQUESTED): frozenset({"HoodieCompactionPlan"}),
    (Action.COMPACTION, State.INFLIGHT): frozenset({"HoodieCompactionPlan"}),
    (Action.LOG_COMPACTION, State.REQUESTED): frozenset({"HoodieCompactionPlan"}),
    (Action.LOG_COMPACTION, State.INFLIGHT): frozenset({"HoodieCompactionPlan"}),
    (Action.CLEAN, State.REQUESTED): frozenset({"HoodieCleanerPlan"}),
    (Action.CLEAN, State.INFLIGHT): frozenset({"HoodieCleanerPlan"}),
    (Action.CLEAN, State.COMPLETED): frozenset({"HoodieCleanMetadata"}),
    (Action.ROLLBACK, State.REQUESTED): frozenset({"HoodieRollbackPlan"}),
    (Action.ROLLBACK, State.INFLIGHT): frozenset({"HoodieRollbackPlan"}),
    (Action.ROLLBACK, State.COMPLETED): frozenset({"HoodieRollbackMetadata"}),
    (Action.SAVEPOINT, State.INFLIGHT): frozenset({"HoodieSavepointMetadata"}),
    (Action.SAVEPOINT, State.COMPLETED): frozenset({"HoodieSavepointMetadata"}),
    (Action.RESTORE, State.REQUESTED): frozenset({"HoodieRestorePlan"}),
    (Action.RESTORE, State.INFLIGHT): frozenset({"HoodieRestorePlan"}),
    (Action.RESTORE, State.COMPLETED): frozenset({"HoodieRestoreMetadata"}),
    (Action.INDEXING, State.REQUESTED): frozenset({"HoodieIndexPlan"}),
    (Action.INDEXING, State.INFLIGHT): frozenset({"HoodieIndexPlan"}),
    (Action.INDEXING, State.COMPLETED): frozenset({"HoodieIndexCommitMetadata"}),
}
"""What a non-empty timeline file may hold, by (action, state). Completed compactions, log
compactions and clusterings appear on the timeline as commit / deltacommit / replacecommit."""

_COMMIT_FAMILY = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})


def parse_timeline_content(instant: Instant, data: bytes) -> CommitMetadata | Plan | None:
    """The content of the timeline file of ``instant`` (in its state).

    - commit / deltacommit / replacecommit, except a requested replacecommit: commit metadata;
      an empty file is empty metadata (as Hudi reads it); v6 JSON or v8 Avro;
    - every other file: the Avro record ``EXPECTED_CONTENT`` names, or None when the file is
      empty (requested writes, inflight compactions / rollbacks / savepoints carry nothing).
    """
    commit_like = instant.action in _COMMIT_FAMILY and not (
        instant.action == Action.REPLACE_COMMIT and instant.state == State.REQUESTED)
    if not data.strip():
        return CommitMetadata() if commit_like else None
    if not data.startswith(AVRO_MAGIC):
        if commit_like:
            return parse_commit_metadata(data)
        raise MetadataFormatError(f"{instant} holds neither Avro nor commit JSON",
                                  hint="only commit-family files are JSON (table version 6)")
    expected = EXPECTED_CONTENT.get((instant.action, instant.state))
    name = read_container(data).record_name
    if expected is not None and name not in expected:
        raise MetadataFormatError(f"{instant} holds {name}, expected {' or '.join(sorted(expected))}",
                                  hint="the file belongs to another action or is damaged")
    parsed: CommitMetadata | Plan = parse_avro_metadata(data)
    return parsed
# --8<-- [end:dispatch]

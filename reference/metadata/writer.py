"""The metadata table's writer (Hudi's ``HoodieBackedTableMetadataWriter``): the metadata table kept up to date
by the writer — created, updated on every data table instant before it completes, rolled back with it, re-listed
after a restore, or deleted when ``hoodie.metadata.enable`` is false — and its own table services, run before each
data instant's deltacommit: compacted when due, then cleaned, and its timeline archived when it has grown past its
limit (``performTableServices``, ``reference.metadata.table_services``).

The records, names, properties, instants and the services' rules are ``spec.metadata.writer``'s; this module
writes them, inside the data table's transaction (under its lock), before the data instant's completed file. The
metadata partitions this writer does not maintain (column_stats, partition_stats, record_index, bloom_filters,
secondary and expression indexes) are deleted as Hudi's ``HoodieTable.deleteMetadataIndexIfNecessary`` deletes an
index its writer has turned off, and dropped from ``hoodie.table.metadata.partitions``.

The cleaner and the archiver are the data table's, run on the metadata table; Hudi's metadata writer runs them
through a write client of its own, and this one is handed them (``TableServices``) by the transaction that
records a data instant, so that it never imports the executors that record their own instants here.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Collection, Mapping
from typing import Any, Protocol

from reference.instrumentation.faults import fault_point
from reference.metadata import partitioned_record_index as pri
from reference.metadata import record_index as ri
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.actions.compaction import CompactionConfig
from spec.config.table_config import TableConfig
from spec.errors import HudiSpecError, InvalidOperation, UnsupportedTableVersion
from spec.file_group.file_naming import parse_base_file_name, parse_log_file_name
from spec.file_group.file_system_view import DataFile, list_data_files
from spec.file_group.log_file.log_format import encode_blocks
from spec.file_group.partition_metadata import PartitionMetadata
from spec.metadata.metadata_table import (
    FILES_PARTITION,
    METADATA_TABLE_PATH,
    FileInfo,
    metadata_storage,
)
from spec.metadata.record_index import RECORD_INDEX_PARTITION, Sizing, read_record_index
from spec.metadata.writer import (
    WRITE_TOKEN,
    base_file_name,
    clean_records,
    deltacommit_metadata,
    enabled_by_default,
    format_metadata_commit,
    hfile_data_block,
    index_definitions_without,
    init_instant,
    init_log_block,
    listed_at_initialization,
    listing_records,
    log_file_name,
    merged_by_compaction,
    metadata_table_config,
    partitions_to_delete,
    records_hfile,
    with_partition_inflight,
    with_partition_state,
)
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import (
    HoodieCleanMetadata,
    HoodieInstantInfo,
    HoodieRollbackMetadata,
    HoodieRollbackPartitionMetadata,
    HoodieRollbackPlan,
    HoodieRollbackRequest,
    format_avro_metadata,
    parse_avro_metadata,
)
from spec.timeline.commit_metadata import CommitMetadata
from spec.timeline.instant import Action, Instant, InstantTimeGenerator, State, new_instant
from spec.timeline.layout import format_instant_file_name, parse_instant_file_name, timeline_dir
from spec.write.writer_utils import check_table_features

Records = Mapping[str, Mapping[str, FileInfo]]


class TableServices(Protocol):
    """The data table's cleaner and archiver, which this writer runs on the metadata table (Hudi's metadata writer
    runs them through its own ``BaseHoodieWriteClient``): ``reference.executors.service_client`` hands them in.
    Both run under the data table's lock, which the caller holds."""

    def clean(self, storage: Storage, table: TableConfig, config: CleanConfig) -> Any:
        """The cleaner on the table at ``storage``, with ``config``'s retention."""
        ...

    def archive(self, storage: Storage, table: TableConfig, config: ArchiveConfig, compaction: CompactionConfig,
                retain: Collection[str]) -> Any:
        """The archiver on the table at ``storage``; the instants of ``retain`` stay on the active timeline."""
        ...


def _put_instant(mdt: Storage, inst: Instant, data: bytes = b"") -> None:
    mdt.create_if_absent(posixpath.join(timeline_dir(2), format_instant_file_name(inst, 2)), data)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _save_properties(storage: Storage, config: TableConfig) -> None:
    storage.write_atomic(".hoodie/hoodie.properties", config.to_bytes())


def delete_metadata_table(storage: Storage) -> None:
    """``HoodieTableMetadataUtil.deleteMetadataTable``: ``hoodie.table.metadata.partitions`` cleared (the table is
    listed from storage again), then the metadata table's folder deleted — in that order, so that no reader is
    ever sent to a metadata table that is gone (Hudi deletes the folder first)."""
    table = TableConfig.load(storage)
    if table.get("hoodie.table.metadata.partitions") or table.get("hoodie.table.metadata.partitions.inflight"):
        props = {k: v for k, v in table.props.items()
                 if k not in ("hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight")}
        _save_properties(storage, TableConfig(props))
    storage.delete_dir(METADATA_TABLE_PATH)


def drop_unmaintained_partitions(storage: Storage, record_index: bool = False) -> TableConfig:
    """Every metadata partition but ``files`` (and ``record_index`` when ``record_index``) deleted, and dropped from
    ``hoodie.table.metadata.partitions`` (``HoodieTable.deleteMetadataIndexIfNecessary`` for indexes the writer has
    off)."""
    table = TableConfig.load(storage)
    drop = [p for p in partitions_to_delete(table) if not (record_index and p == RECORD_INDEX_PARTITION)]
    for name in drop:
        storage.delete_dir(posixpath.join(METADATA_TABLE_PATH, name))
        table = with_partition_state(table, name, False)
        _save_properties(storage, table)
    defs = table.get("hoodie.table.index.defs.path")
    if drop and defs and storage.exists(defs):
        storage.write_atomic(defs, index_definitions_without(storage.read(defs).decode(), drop).encode())
    return table


def _completed_files(storage: Storage, timeline: Timeline) -> list[DataFile]:
    out = []
    for f in list_data_files(storage, cdc=True):  # CDC logs are files of the partition too
        try:
            instant = (parse_base_file_name(f.name).instant if not f.name.startswith(".")
                       else parse_log_file_name(f.name).instant)
        except HudiSpecError:
            continue
        if listed_at_initialization(instant, timeline):
            out.append(f)
    return out


def mark_rebuilding(storage: Storage) -> None:
    """Before a change that the metadata table cannot follow record by record (a restore): ``files`` marked as
    being built (``with_partition_inflight``), so that every reader lists storage from now on, then the
    metadata table's folder deleted. The table is listed anew by ``initialize`` afterwards; a process killed in
    between leaves a table every reader lists from storage, and a restore finishing it rebuilds the metadata
    table."""
    table = TableConfig.load(storage)
    if FILES_PARTITION in table.metadata_partitions:
        record_index = RECORD_INDEX_PARTITION in table.metadata_partitions
        table = with_partition_inflight(table, FILES_PARTITION)
        if record_index:  # rebuilt with files (``initialize``)
            table = with_partition_inflight(table, RECORD_INDEX_PARTITION)
        _save_properties(storage, table)
    if FILES_PARTITION in table.metadata_partitions_inflight:
        storage.delete_dir(METADATA_TABLE_PATH)


def initialize(storage: Storage, gen: InstantTimeGenerator, sizing: Sizing | None = None) -> None:
    """``initializeFromFilesystem``: ``files`` marked as being built (no reader lists through the metadata table
    while it is), the metadata table created and its files partition filled from a listing of the files
    completed instants wrote; ``files`` then named in ``hoodie.table.metadata.partitions``, last. A process
    killed half way leaves a table readers list from storage, and the next ``initialize`` starts over."""
    table = TableConfig.load(storage)
    had_record_index = RECORD_INDEX_PARTITION in table.metadata_partitions + table.metadata_partitions_inflight
    if had_record_index:
        table = with_partition_state(table, RECORD_INDEX_PARTITION, False)
    _save_properties(storage, with_partition_inflight(table, FILES_PARTITION))
    storage.delete_dir(METADATA_TABLE_PATH)
    mdt = metadata_storage(storage)
    cfg = metadata_table_config(table)
    mdt.write_atomic(".hoodie/hoodie.properties", cfg.to_bytes())
    mdt.mkdirs(timeline_dir(2))
    instant = init_instant(())
    requested = new_instant(instant, Action.DELTA_COMMIT)
    _put_instant(mdt, requested)
    inflight = requested.transition(State.INFLIGHT)
    _put_instant(mdt, inflight)
    mdt.write_atomic(f"{FILES_PARTITION}/.hoodie_partition_metadata", PartitionMetadata(instant, 1).format())
    fault_point("mid_metadata_init")  # the metadata table half built: its properties and timeline, no files yet
    records = listing_records(_completed_files(storage, Timeline.load(storage, table.timeline_layout)))
    log_name = log_file_name(instant, WRITE_TOKEN)
    log_bytes = encode_blocks([init_log_block(instant)])
    mdt.create_if_absent(f"{FILES_PARTITION}/{log_name}", log_bytes)
    base_name = base_file_name(instant, WRITE_TOKEN)
    base = records_hfile(records, _now_ms(), base_file=True, table_version=cfg.table_version)
    mdt.create_if_absent(f"{FILES_PARTITION}/{base_name}", base)
    md = deltacommit_metadata([(log_name, len(log_bytes)), (base_name, len(base))], len(records), "BULK_INSERT_PREPPED")
    _put_instant(mdt, inflight.transition(State.COMPLETED, completed=gen.next()),
                 format_metadata_commit(md, cfg.table_version))
    _save_properties(storage, with_partition_state(TableConfig.load(storage), FILES_PARTITION, True))
    if had_record_index:
        initialize_record_index(storage, gen, sizing=sizing)


def initialize_record_index(storage: Storage, gen: InstantTimeGenerator, partitioned: bool | None = None,
                            sizing: Sizing | None = None) -> None:
    """``initializeFromFilesystem`` for the record index: ``record_index`` marked as being built, a deltacommit at the
    next free ``00000000000000000``-plus instant writing its file groups from the table's keys
    (``reference.metadata.record_index.initialization_files``, or the partitioned form's when ``partitioned``:
    ``reference.metadata.partitioned_record_index``; None: the form the table's definition names; ``sizing`` counts
    its file groups, Hudi's defaults when None), then ``record_index`` named complete and its index definition
    written. A pending initialization a killed writer left is discarded first (its files and instant)."""
    table = TableConfig.load(storage)
    if partitioned is None:
        partitioned = ri.defined_form(storage, table) is True
    _save_properties(storage, with_partition_inflight(table, RECORD_INDEX_PARTITION))
    mdt = metadata_storage(storage)
    cfg = TableConfig.load(mdt)
    for pending in Timeline.load(mdt, 2).instants:  # an initialization a killed writer left half done
        if not pending.is_completed and pending.requested < "00000000000001000":
            discard(storage, pending.requested)
    mdt.delete_dir(RECORD_INDEX_PARTITION)
    instant = init_instant(i.requested for i in Timeline.load(mdt, 2).instants)
    requested = new_instant(instant, Action.DELTA_COMMIT)
    _put_instant(mdt, requested)
    inflight = requested.transition(State.INFLIGHT)
    _put_instant(mdt, inflight)
    fault_point("mid_record_index_init")  # the deltacommit pending, no files yet
    files, _ = (pri.initialization_files if partitioned else ri.initialization_files)(storage, instant, _now_ms(),
                                                                                       sizing)
    md = CommitMetadata({RECORD_INDEX_PARTITION: tuple(ri.write_stats(files))},
                        operation_type="BULK_INSERT_PREPPED")
    _put_instant(mdt, inflight.transition(State.COMPLETED, completed=gen.next()),
                 format_metadata_commit(md, cfg.table_version))
    table = ri.add_definition(storage, TableConfig.load(storage), partitioned)
    _save_properties(storage, with_partition_state(table, RECORD_INDEX_PARTITION, True))


def append_deltacommit(storage: Storage, instant: str, records: Records, gen: InstantTimeGenerator,
                       data_md: CommitMetadata | None = None) -> None:
    """One metadata deltacommit at the data instant's time: its records as one HFILE data block in a new log
    file of ``files-0000-0``, completed before the data instant. A metadata instant already there for the same
    time (the data instant is re-attempted, e.g. a compaction run again after a crash) is removed first, as
    Hudi's ``commitInternal`` rolls back a re-attempted commit. A table with a record index gets the changes of
    the data commit ``data_md`` in log files of its file groups in the same deltacommit
    (``reference.metadata.record_index``)."""
    discard(storage, instant)
    mdt = metadata_storage(storage)
    table_version = TableConfig.load(mdt).table_version
    index_files: list[ri.WrittenFile] = []
    data_table = TableConfig.load(storage)
    if data_md is not None and ri.partitioned(storage, data_table):
        p_upserts, p_deletes = pri.commit_changes(storage, data_md, instant, pri.held_locations(storage))
        index_files = pri.change_files(mdt, data_table, instant, p_upserts, p_deletes, table_version, _now_ms())
    elif data_md is not None and RECORD_INDEX_PARTITION in data_table.metadata_partitions:
        held = {k: (loc.partition_path, loc.file_id) for k, loc in read_record_index(storage).items()}
        upserts, deletes = ri.commit_changes(storage, data_md, instant, held)
        index_files = ri.change_files(mdt, data_table, instant, upserts, deletes, ri.file_group_count(mdt),
                                      table_version, _now_ms())
    requested = new_instant(instant, Action.DELTA_COMMIT)
    _put_instant(mdt, requested)
    inflight = requested.transition(State.INFLIGHT)
    _put_instant(mdt, inflight)
    name = log_file_name(instant, WRITE_TOKEN)
    data = encode_blocks([hfile_data_block(instant, records, _now_ms(), table_version)])
    mdt.write_atomic(f"{FILES_PARTITION}/{name}", data)
    md = deltacommit_metadata([(name, len(data))], len(records))
    if index_files:
        md = CommitMetadata({**md.partition_to_write_stats, RECORD_INDEX_PARTITION: tuple(ri.write_stats(index_files))},
                            operation_type=md.operation_type)
    _put_instant(mdt, inflight.transition(State.COMPLETED, completed=gen.next()),
                 format_metadata_commit(md, table_version))


def wanted(table: TableConfig, enable: bool | None, new: bool) -> bool:
    """Whether the table is to have a metadata table after this instant: ``hoodie.metadata.enable`` when given;
    unset, a table keeps its metadata table as it is, and a ``new`` one (no completed instant yet) gets one as
    Hudi's default says for its version (``spec.metadata.writer.enabled_by_default``: versions 8 and 9 yes,
    6 no)."""
    if enable is not None:
        return enable
    if FILES_PARTITION in table.metadata_partitions or FILES_PARTITION in table.metadata_partitions_inflight:
        return True  # a metadata table, or one being rebuilt (a restore or an initialization was killed)
    return new and enabled_by_default(table.table_version)


def prepare(storage: Storage, gen: InstantTimeGenerator, enable: bool | None, record_index: bool | None = None,
            partitioned: bool = False, sizing: Sizing | None = None) -> bool:
    """Before a data instant completes: the metadata table deleted when it is turned off, created when it is
    turned on and missing, its unmaintained partitions dropped — the record index kept when ``record_index`` is
    true, or None and the table has one, and created when true and missing (the partitioned form when
    ``partitioned``; its file groups counted by ``sizing``, Hudi's defaults when None). Whether the instant is to
    be recorded in it."""
    table = TableConfig.load(storage)
    new = Timeline.load(storage, table.timeline_layout).latest_completed() is None
    if not wanted(table, enable, new):
        if table.metadata_partitions or table.metadata_partitions_inflight or storage.exists(METADATA_TABLE_PATH):
            delete_metadata_table(storage)
        return False
    if table.table_version < 8:
        raise UnsupportedTableVersion(
            f"this writer keeps the metadata table of table versions 8 and 9, not of version {table.table_version}",
            hint="write with hoodie.metadata.enable=false (which deletes the metadata table), or upgrade the table")
    keep_index = record_index if record_index is not None else RECORD_INDEX_PARTITION in table.metadata_partitions
    table = drop_unmaintained_partitions(storage, keep_index)
    if FILES_PARTITION not in table.metadata_partitions or not whole(storage):
        initialize(storage, gen, sizing)
    if keep_index and RECORD_INDEX_PARTITION not in TableConfig.load(storage).metadata_partitions:
        initialize_record_index(storage, gen, partitioned, sizing)
    return True


def whole(storage: Storage) -> bool:
    """Whether the metadata table the data table names is there: its ``hoodie.properties`` exists. A table an
    earlier version of this writer left with ``files`` named complete and the metadata table half rebuilt is
    not; the next instant lists it anew."""
    return storage.exists(METADATA_TABLE_PATH + "/.hoodie/hoodie.properties")


def rollback_instant(storage: Storage, target: str, rollback_time: str, gen: InstantTimeGenerator) -> None:
    """The metadata table's instant of a rolled-back data instant undone: its files deleted and its instant
    files removed, recorded as a rollback at the data rollback's time (as Hudi 1.x does for table version 8+).
    An instant a metadata compaction has already merged into a base file cannot be taken out so (Hudi refuses
    it in ``validateRollback``): the metadata table is listed anew instead."""
    mdt = metadata_storage(storage)
    table_version = TableConfig.load(mdt).table_version
    timeline = Timeline.load(mdt, 2)
    names = timeline.files_of(target)
    if not names:
        return
    if merged_by_compaction(timeline, target):
        initialize(storage, gen)
        return
    deleted = _instant_files(mdt, target)
    target_instant = timeline.get(target)
    info = HoodieInstantInfo(commit_time=target,
                             action=target_instant.action if target_instant else Action.DELTA_COMMIT)
    plan = HoodieRollbackPlan(instant_to_rollback=info, rollback_requests=tuple(
        HoodieRollbackRequest(partition_path=p, file_id="", latest_base_instant="", files_to_be_deleted=(mdt.full(f),),
                              log_blocks_to_be_deleted={}) for p, fs in deleted.items() for f in fs))
    requested = new_instant(rollback_time, Action.ROLLBACK)
    _put_instant(mdt, requested, format_avro_metadata(plan, table_version))
    inflight = requested.transition(State.INFLIGHT)
    _put_instant(mdt, inflight)
    for fs in deleted.values():
        for f in fs:
            mdt.delete(f)
    for name in sorted(names, key=lambda n: parse_instant_file_name(n, 2).state, reverse=True):
        mdt.delete(posixpath.join(timeline_dir(2), name))
    md = HoodieRollbackMetadata(
        start_rollback_time=rollback_time, time_taken_in_millis=0, total_files_deleted=sum(map(len, deleted.values())),
        commits_rollback=(target,), partition_metadata={
            p: HoodieRollbackPartitionMetadata(partition_path=p, success_delete_files=tuple(mdt.full(f) for f in fs),
                                               failed_delete_files=(), rollback_log_files={},
                                               log_files_from_failed_commit={})
            for p, fs in deleted.items()}, instants_rollback=(info,))
    _put_instant(mdt, inflight.transition(State.COMPLETED, completed=gen.next()),
                 format_avro_metadata(md, table_version))


def _instant_files(mdt: Storage, target: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in mdt.list("", recursive=False):
        if not part.is_dir or part.name == ".hoodie":
            continue
        for f in mdt.list(part.name):
            try:
                inst = (parse_log_file_name(f.name).instant if f.name.startswith(".")
                        else parse_base_file_name(f.name).instant)
            except HudiSpecError:
                continue
            if inst == target:
                out.setdefault(part.name, []).append(f.path)
    return out


def discard(storage: Storage, instant: str) -> None:
    """A data write undone on the spot (it failed in this process): its metadata deltacommit, if any, removed
    with its files, so the metadata table is as it was."""
    if not storage.exists(METADATA_TABLE_PATH + "/.hoodie/hoodie.properties"):
        return
    mdt = metadata_storage(storage)
    names = Timeline.load(mdt, 2).files_of(instant)
    if not names:
        return
    for paths in _instant_files(mdt, instant).values():
        for path in paths:
            mdt.delete(path)
    for name in sorted(names, key=lambda n: parse_instant_file_name(n, 2).state, reverse=True):
        mdt.delete(posixpath.join(timeline_dir(2), name))


def check_service_keeps_it(table: TableConfig, service: str) -> None:
    """A table service (clean, rollback, restore, compaction) runs only where this writer keeps the metadata
    table: on a table of version 6 that has one (written by Apache Hudi 0.x), the service would change the
    table's files and leave the metadata table's listing stale, so it is refused before anything is written; so is
    one on a table that asks for work this writer does not do (``spec.write.writer_utils.check_table_features``)."""
    check_table_features(table.props, action=service)
    if table.metadata_partitions and table.table_version < 8:
        raise InvalidOperation(
            f"cannot {service}: the table has a version {table.table_version} metadata table "
            f"({', '.join(table.metadata_partitions)}) that this writer does not maintain, and the {service} would "
            "leave it stale for Java readers; nothing was changed",
            hint="write once with hoodie.metadata.enable=false (which deletes the metadata table as Apache Hudi "
                 "does), or run the service with Apache Hudi")


def on_service_complete(storage: Storage, inst: Instant, data: bytes, gen: InstantTimeGenerator) -> None:
    """A clean, rollback or restore about to complete, recorded in the metadata table when the table has one:
    a clean's deleted files as tombstones (``update(HoodieCleanMetadata)``); a rollback as the rollback of the
    metadata table's instant of each rolled-back instant; a restore by listing the table anew (the metadata table
    re-initialized, as Hudi re-bootstraps one out of step with its data table)."""
    table = TableConfig.load(storage)
    if inst.action == Action.RESTORE and FILES_PARTITION in table.metadata_partitions_inflight:
        initialize(storage, gen)  # marked as being rebuilt when the restore began
        return
    if FILES_PARTITION not in table.metadata_partitions or table.table_version < 8:
        return
    if not whole(storage):
        initialize(storage, gen)  # listed anew: its records would have nothing to go to
        return
    if inst.action == Action.CLEAN:
        drop_unmaintained_partitions(storage, RECORD_INDEX_PARTITION in table.metadata_partitions)
        append_deltacommit(storage, inst.requested, clean_records(parse_avro_metadata(data, HoodieCleanMetadata)),
                           gen)
    elif inst.action == Action.ROLLBACK:
        md = parse_avro_metadata(data, HoodieRollbackMetadata)
        for target in md.commits_rollback:
            rollback_instant(storage, target, inst.requested, gen)
    elif inst.action == Action.RESTORE:
        initialize(storage, gen)


__all__ = [
    "TableServices",
    "append_deltacommit",
    "check_service_keeps_it",
    "delete_metadata_table",
    "discard",
    "drop_unmaintained_partitions",
    "initialize",
    "initialize_record_index",
    "mark_rebuilding",
    "on_service_complete",
    "prepare",
    "rollback_instant",
    "whole",
]

"""The oracle's writes: what each write operation leaves in the table.

One write at instant T, given prepared records (keyed, validated):

1. **prepare** — versions of a key within the batch are combined (as log versions combine; ties
   to the later record) when the operation's combine option is on (``combines``: by default
   ``upsert`` and ``delete`` do, ``insert``, ``bulk_insert`` and the overwrites do not, and write
   every record, duplicates included); ``insert``, ``bulk_insert`` and the overwrites look up no index;
2. **tag** — ``upsert`` and ``delete`` find each key's file group as the index does: in the latest
   base files (a MOR key deleted by a log block is still found there); a delete's unknown keys are dropped
   (an upsert's ``_hoodie_is_deleted`` of a new key is routed as an insert, then counted, not written); a bucket
   index (``spec.index.bucket_index``) tags ``insert`` too, each record with the group of its key's bucket,
   held or not, and builds the buckets of ``spec.write.bucket_index_partitioner`` (no small files);
3. **bucket** — ``spec.write.partitioner``: updates go to their group's bucket; inserts fill small
   files first (COW: every base file under the limit; MOR: the smallest base-only slice not under
   compaction), then new groups, routed by the MD5 of the record key; ``bulk_insert`` builds no
   workload profile: it writes a new group per partition path of each input partition
   (``spec.write.bulk_insert``; the model takes a write's batch as one input partition); the
   overwrites use no small files and replace the partition's (or the table's) groups;
4. **write** — COW and MOR small-file buckets merge into a new base file at T; MOR updates and
   deletes append log blocks (data block, then one delete block) to a new log file (v6: named by
   the slice's base instant, next version; v8: named by T); new groups get a base file at T.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``HoodieWriteHelper.deduplicateRecords`` (combining a batch), ``BaseSparkCommitActionExecutor``
(tag, profile, partition, write) and, through ``spec.write.partitioner``, ``UpsertPartitioner``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from spec.errors import InvalidRecord, SchemaMismatch
from spec.index.bucket_identifier import bucket_id
from spec.index.bucket_index import INDEXED_OPERATIONS, locate
from spec.keygen.key_generators import key_generator_from_config
from spec.model.bucketing import bucket_groups, commit_totals, model_bucket_index
from spec.model.deduplicate import dedupe
from spec.model.files import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    IS_DELETED,
    META_COLUMNS,
    MODEL_WRITE_TOKEN,
    PARTITION_PATH,
    RECORD_KEY,
    BaseFile,
    Incoming,
    LogFile,
    ModelFileGroup,
    ModelLogBlock,
    Row,
    Scalar,
)
from spec.model.global_tagging import model_global_index, tag_global
from spec.model.queries import index_locations, merge_rule, ordering_type, view
from spec.model.state import Env, TableState, json_type
from spec.read.merge import Version, merge_handle_keeps_stored
from spec.schema.evolution import reconcile_type
from spec.write.append_handle import AppendHandleConfig, LogRecordOp, first_log_file, plan_appends, plan_log_files
from spec.write.bucket_index_partitioner import assign_bucket_index, route_bucket
from spec.write.bulk_insert import DEFAULT_SORT_MODE, bulk_insert_files
from spec.write.partitioner import (
    SmallFile,
    SmallFileCandidate,
    WorkloadProfile,
    assign_buckets,
    average_record_size,
    route,
    select_small_files,
)
from spec.write.service_configs import partitioner_config

OVERWRITES = ("insert_overwrite", "insert_overwrite_table")
INSERTING = ("insert", "bulk_insert", *OVERWRITES)
"""The operations ``hoodie.combine.before.insert`` governs."""
COMBINE_OPTIONS = {"upsert": ("hoodie.combine.before.upsert", "true"),
                   "delete": ("hoodie.combine.before.delete", "true"),
                   **{op: ("hoodie.combine.before.insert", "false") for op in INSERTING}}
"""Per operation, the option that says whether a batch's versions of one key are combined before
writing, and its default (``HoodieWriteConfig.COMBINE_BEFORE_UPSERT`` / ``COMBINE_BEFORE_DELETE``
true, ``COMBINE_BEFORE_INSERT`` false: hudi-client/hudi-client-common/src/main/java/org/apache/hudi/
config/HoodieWriteConfig.java, 0.15.x and 1.0.x alike; the Spark datasource sets
``hoodie.combine.before.insert`` from ``hoodie.datasource.write.insert.drop.duplicates``, default
false, in ``DataSourceUtils.createHoodieConfig``)."""
ALLOW_DUPLICATE_ON_INSERTS = ("hoodie.merge.allow.duplicate.on.inserts", "true")
"""``HoodieWriteConfig.MERGE_ALLOW_DUPLICATE_ON_INSERTS_ENABLE``: true since 0.15.0 (HUDI-6089), so
an ``insert`` routed to a small file goes through ``HoodieConcatHandle``, not the merge handle."""


def combines(config: Any, operation: str) -> bool:
    """Whether ``operation`` combines versions of a key within its batch (``COMBINE_OPTIONS``): the
    write helpers (``HoodieWriteHelper.write`` → ``combineOnCondition``, ``SparkBulkInsertHelper``,
    ``HoodieDeleteHelper``) dedupe only when the option is on; with it off every record is written,
    duplicates included."""
    key, default = COMBINE_OPTIONS[operation]
    return str(dict(config.options).get(key, default)).lower() == "true"


def concatenates(config: Any, operation: str) -> bool:
    """Whether a small file taking this operation's inserts keeps its rows and appends every
    incoming record without merging by key: ``insert`` with ``ALLOW_DUPLICATE_ON_INSERTS`` on
    (``BaseSparkCommitActionExecutor.getUpdateHandle`` picks ``HoodieConcatHandle`` when the
    operation does not change records, ``WriteOperationType.isChangingRecords``)."""
    key, default = ALLOW_DUPLICATE_ON_INSERTS
    return operation == "insert" and str(config.option(key, default)).lower() == "true"


# =================================================================================================
# keys (the record key and partition path rules of spec.keygen.key_generators)
# =================================================================================================

def key_of(config: Any, rec: Mapping[str, Scalar]) -> tuple[str, str]:
    """(partition path, record key) of a record by ``spec.keygen.key_generators``, or InvalidRecord naming what is
    wrong."""
    gen = key_generator_from_config(key_props(config))
    return gen.partition_path(rec), gen.record_key(rec)


def key_props(config: Any) -> dict[str, str]:
    """The hoodie.properties key-generator settings of a model table."""
    props = {
        "hoodie.table.recordkey.fields": ",".join(config.record_key_fields),
        "hoodie.table.partition.fields": ",".join(config.partition_fields),
        "hoodie.table.keygenerator.type": config.resolved_key_generator,
        "hoodie.datasource.write.hive_style_partitioning": str(config.hive_style).lower(),
        "hoodie.datasource.write.partitionpath.urlencode": "false",
    }
    props.update(dict(config.options))
    return props


# =================================================================================================
# preparing a batch: validation and schema
# =================================================================================================

def evolve_schema(schema: tuple[tuple[str, str], ...], records: Sequence[Mapping[str, Scalar]]
                  ) -> tuple[tuple[str, str], ...]:
    """The table schema after a batch: every record of a batch has the same fields; a batch may add
    fields (read as null in older rows) but not drop any; a field's type changes by
    ``spec.schema.evolution.reconcile_type`` (a promotable change evolves the column or is written as
    the table's type; any other is refused)."""
    if not records:
        return schema
    names = list(records[0])
    for r in records:
        if list(r) != names and set(r) != set(names):
            raise SchemaMismatch("the records of one batch have different fields",
                                 hint="a batch is one DataFrame: give every record the same fields")
    types = dict(schema)
    missing = [f for f in types if f not in names]
    if missing:
        raise SchemaMismatch(f"the batch drops column(s) {', '.join(missing)} of the table",
                             hint="write every table column (null where unknown)")
    for f in names:
        if f in META_COLUMNS:
            raise SchemaMismatch(f"{f} is a meta column; records may not set it", hint="drop the column")
        seen = {t for r in records if (t := json_type(r[f])) is not None}
        if len(seen - {"long", "double"}) + (1 if seen & {"long", "double"} else 0) > 1:
            raise SchemaMismatch(f"column {f} has values of types {sorted(seen)} in one batch",
                                 hint="give a column one type")
        old = types.get(f)
        new = "double" if {"long", "double"} & seen == {"long", "double"} else (next(iter(seen)) if seen else None)
        if old is not None and new is not None:
            types[f] = reconcile_type(f, old, new)
        elif old is None:
            types[f] = new or "string"
    order = [f for f, _ in schema] + [f for f in names if f not in dict(schema)]
    return tuple((f, types[f]) for f in order)


def prepare(state: TableState, operation: str, records: Sequence[Mapping[str, Scalar]]) -> list[Incoming]:
    """Keyed, validated records; raises InvalidRecord / SchemaMismatch before anything is written.

    A null ordering value is refused only where the write reads it, which is where it combines
    (``combines``): Hudi's Spark writer reads the ordering value of each record only when the write
    combines, and then with ``HoodieAvroUtils.getNestedFieldVal(record, field, returnNullIfNotFound =
    false, ...)``, which throws on a null ("The value of ts can not be null") before anything is
    written (``HoodieCreateRecordUtils.createHoodieRecordRdd``, hudi-spark-datasource/hudi-spark-common/
    src/main/scala/org/apache/hudi/HoodieCreateRecordUtils.scala, 0.15.x and 1.0.x). A write that does
    not combine (``insert`` by default) stores the null; a later merge lets any version win over a
    stored null (``DefaultHoodieRecordPayload.needUpdatingPersistedRecord``)."""
    cfg = state.config
    out = []
    for i, rec in enumerate(records):
        try:
            partition, key = key_of(cfg, rec)
        except InvalidRecord as err:
            raise InvalidRecord(f"record {i}: {err.message}", hint=err.hint) from err
        if operation == "delete":
            out.append(Incoming(partition, key, None))
            continue
        ordering = rec.get(cfg.ordering_field) if cfg.ordering_field else None
        if cfg.ordering_field and ordering is None and combines(cfg, operation):
            raise InvalidRecord(f"record {i} (key {key!r}) has no value for the ordering field {cfg.ordering_field!r}",
                                hint=f"a {operation} combines records by their ordering value: give every record "
                                     "one (or turn the operation's hoodie.combine.before.* option off)")
        if rec.get(IS_DELETED) is True:
            out.append(Incoming(partition, key, None, ordering))
        else:
            out.append(Incoming(partition, key, dict(rec), ordering))
    return out


# =================================================================================================
# bucketing (UpsertPartitioner: small files, insert buckets, MD5 routing; spec.model.bucketing)
# =================================================================================================

def small_files(state: TableState, partition: str) -> list[SmallFile]:
    """The partition's small files, by ``spec.write.partitioner.select_small_files`` (COW and MOR rules)."""
    cfg = state.config
    sizes = {(g.partition, b.name): b.size for g in state.groups for b in g.base_files}
    pending = {(op.partition_path, op.file_id) for t, p in state.compaction_plans if state.pending_instant(t)
               for op in p.operations}
    candidates = [SmallFileCandidate(g.file_id, sizes[(partition, sl.base_file.name)] if sl.base_file else None,
                                     bool(sl.log_files), (g.partition_path, g.file_id) in pending)
                  for g in view(state) if g.partition_path == partition and (sl := g.latest_slice) is not None]
    return select_small_files(candidates, cfg.small_file_limit, cfg.is_mor)


# =================================================================================================
# writing files
# =================================================================================================

@dataclass(frozen=True)
class WritePlan:
    """The files a write produces, in the order a writer writes them, and the groups it replaces."""

    files: tuple[tuple[str, str, BaseFile | LogFile], ...]
    replaced: frozenset[tuple[str, str]] = frozenset()
    appended: tuple[tuple[str, str, str], ...] = ()


def _meta(row: Mapping[str, Scalar], t: str, seq: str, key: str, partition: str, file_name: str) -> Row:
    return {COMMIT_TIME: t, COMMIT_SEQNO: seq, RECORD_KEY: key, PARTITION_PATH: partition, FILE_NAME: file_name,
            **{k: v for k, v in row.items() if k not in META_COLUMNS}}


def writer_merge(state: TableState, stored: Row, incoming: Incoming) -> Row | None:
    """A merge handle's rule (``spec.read.merge.merge_handle_keeps_stored``): the stored row, or the incoming
    version (a row, or None for a delete)."""
    version = Version(incoming.data, incoming.ordering, ordering_type(state), natural=incoming.ordering is None)
    return stored if merge_handle_keeps_stored(stored, version, merge_rule(state.config)) else incoming.data


def _merge_base(state: TableState, old_rows: Sequence[Row], incoming: Sequence[Incoming], t: str, task: int,
                file_id: str, partition: str, env: Env, concat: bool = False) -> BaseFile:
    """A merge (or create) handle: old rows combined with incoming versions; new rows stamped with T,
    rows kept as they were keep their commit time and sequence number.

    A create handle (no old rows) writes every incoming record, two versions of one key included
    (``HoodieCreateHandle`` writes what it is given); a concat handle (``concat``:
    ``HoodieConcatHandle``) keeps every old row and appends every incoming record; a merge handle
    (``HoodieMergeHandle``) holds the incoming records in a map by key, so of two versions of one key
    the later in the batch is the one merged with the stored row."""
    name = BaseFile(file_id, t, ()).name
    if not old_rows or concat:
        fresh = [r for r in incoming if r.data is not None]
        by_key: dict[str, Incoming] = {}
    else:
        fresh = []
        by_key = {r.key: r for r in incoming}
    rows: list[Row] = []
    seq = 0
    for old in old_rows:
        key = str(old[RECORD_KEY])
        r = by_key.pop(key, None)
        result = old if r is None else writer_merge(state, old, r)
        if result is None:
            continue
        if result is old:
            rows.append({**old, FILE_NAME: name})
        else:
            rows.append(_meta(result, t, f"{t}_{task}_{seq}", key, partition, name))
            seq += 1
    for r in [*sorted(by_key.values(), key=lambda r: r.key), *fresh]:
        if r.data is not None:
            rows.append(_meta(r.data, t, f"{t}_{task}_{seq}", r.key, partition, name))
            seq += 1
    rows.sort(key=lambda row: str(row[RECORD_KEY]))
    held = {str(o[RECORD_KEY]) for o in old_rows}  # the deletes of keys no stored row held: counted, not written
    return BaseFile(file_id, t, tuple(rows), observed_size(state, env, partition, file_id, t, len(rows)),
                    absent_deletes=tuple(sorted(r.key for r in incoming if r.data is None and r.key not in held)))


def observed_size(state: TableState, env: Env, partition: str, file_id: str, t: str, rows: int) -> int:
    """The size the implementation wrote for this base file, else ``rows × record_size_estimate``."""
    size = env.base_file_size(partition, file_id, t, rows)
    return size if size is not None else rows * int(state.config.record_size_estimate)


def _log_files(state: TableState, group: ModelFileGroup, incoming: Sequence[Incoming], t: str, task: int
               ) -> list[LogFile]:
    """An append handle: data rows then one delete block, in a new log file (rolling over by size).

    The slice it appends to (its base instant, in a v6 log name): a pending compaction's instant,
    else the latest committed base file's, else — a log-only group — the instant of its first log."""
    cfg = state.config
    pending = state.pending_compaction_of(group.partition, group.file_id)
    committed = [b.instant for b in group.base_files if state.completion_time(b.instant) is not None]
    first_log = min((lf.instant for lf in group.log_files), default=t)
    base_instant = pending or max(committed, default=first_log)
    first = first_log_file(group.file_id, base_instant, t, [lf.log_name for lf in group.log_files],
                           MODEL_WRITE_TOKEN, state.table_version)
    recs = sorted(incoming, key=lambda r: r.key)
    ops = [LogRecordOp(r.key, r.data is None, cfg.record_size_estimate) for r in recs]
    hc = AppendHandleConfig(cfg.log_block_size, cfg.log_file_size, state.table_version)
    appends = plan_appends(ops, hc)
    planned = plan_log_files(appends, first, lambda a: sum(len(b.records) for b in a) * cfg.record_size_estimate, hc)
    out = []
    seq = 0
    for pf in planned:
        blocks = []
        for pb in pf.blocks:
            chosen = [recs[i] for i in pb.records]
            if pb.kind == "data":
                rows = []
                for r in chosen:
                    assert r.data is not None
                    rows.append(_meta(r.data, t, f"{t}_{task}_{seq}", r.key, group.partition, group.file_id))
                    seq += 1
                blocks.append(ModelLogBlock("data", t, tuple(rows)))
            else:
                blocks.append(ModelLogBlock("delete", t, deletes=tuple((r.key, r.ordering) for r in chosen)))
        n = pf.name
        out.append(LogFile(n.file_id, n.instant, n.version, tuple(blocks), t))
    return out


# --8<-- [start:plan_write]
def plan_write(state: TableState, env: Env, operation: str, recs: Sequence[Incoming], t: str) -> WritePlan:
    """The files a write at ``t`` produces (see the module rules), in bucket order."""
    cfg = state.config
    bucket_index = model_bucket_index(cfg, operation)
    global_index = model_global_index(cfg)
    if combines(cfg, operation):
        recs = dedupe(state, recs, by_key=global_index is not None)
    tagged_globally = global_index is not None and operation in ("upsert", "delete")
    where = index_locations(state) if operation in ("upsert", "delete") and bucket_index is None else {}
    buckets = bucket_groups(state) if bucket_index is not None and operation in INDEXED_OPERATIONS else {}
    located: list[tuple[Incoming, str | None]] = []
    for r, fid in tag_global(state, global_index, recs) if global_index is not None and tagged_globally else []:
        if fid or operation == "upsert":  # spec.index.global_index; a delete of a key held nowhere is dropped
            located.append((r, fid))
    for r in () if tagged_globally else recs:
        if bucket_index is not None:
            fid = locate(bucket_index, buckets.get(r.partition, {}), r.key)
        else:
            loc = where.get((r.partition, r.key))
            fid = loc[0] if loc else None
        if fid or (r.data is not None and operation != "delete") or operation in ("upsert", "insert"):
            located.append((r, fid))  # an upsert's delete of a new key is routed, written nowhere, counted
    order = {(g.partition, g.file_id): i for i, g in enumerate(state.groups)}
    counts: dict[tuple[str, str | None], int] = {}
    for r, fid in sorted(located, key=lambda x: (x[1] is None, order.get((x[0].partition, x[1] or ""), 0))):
        counts[(r.partition, fid)] = counts.get((r.partition, fid), 0) + 1
    profile = WorkloadProfile.from_counts(counts)
    pcfg = partitioner_config(cfg)
    small = {p: small_files(state, p) for p, stat in profile.partitions.items()
             if stat.inserts > 0 and operation in ("upsert", "insert") and bucket_index is None}  # where inserts go
    # spec.write.bulk_insert: the batch is one input partition, a file per partition path
    if operation == "bulk_insert":
        mode = dict(cfg.options).get("hoodie.bulkinsert.sort.mode", DEFAULT_SORT_MODE).upper()
        planned = bulk_insert_files([[r.partition for r, _ in located]], mode)
        profile = WorkloadProfile.from_counts({(f.partition_path, None): 1 for f in planned})
    if bucket_index is not None:  # spec.write.bucket_index_partitioner
        assignment = assign_bucket_index(
            {p: tuple(stat.updates) for p, stat in profile.partitions.items()},
            {(r.partition, bucket_id(r.key, bucket_index.hash_fields, bucket_index.num_buckets)) for r, fid in located
             if fid is None}, env.next_file_id_prefix)
    else:
        assignment = assign_buckets(profile, small, pcfg, average_record_size(commit_totals(state), pcfg),
                                    env.next_file_id_prefix)
    routed: dict[int, list[Incoming]] = {}
    for r, fid in located:
        if bucket_index is not None:
            b = route_bucket(bucket_index, r.key, r.partition, assignment)
        elif operation == "bulk_insert":
            b = assignment.insert_buckets[r.partition][0].bucket
        else:
            b = route(r.key, r.partition, fid, assignment)
        routed.setdefault(b, []).append(r)
    replaced: frozenset[tuple[str, str]] = frozenset()
    if operation in OVERWRITES:
        parts = set(profile.partitions) if operation == "insert_overwrite" else {g.partition_path
                                                                               for g in view(state)}
        replaced = frozenset((g.partition_path, g.file_id) for g in view(state) if g.partition_path in parts)
    groups = {(g.partition, g.file_id): g for g in state.groups}
    latest = {(vg.partition_path, vg.file_id): vg.latest_slice for vg in view(state)}
    small_ids = {sf.file_id for sfs in small.values() for sf in sfs}
    files: list[tuple[str, str, BaseFile | LogFile]] = []
    appended: list[tuple[str, str, str]] = []
    for bucket in assignment.buckets:
        records = routed.get(bucket.number, [])
        if not records:
            continue
        if bucket.kind == "INSERT":
            fid = f"{bucket.file_id}-0"
            files.append((bucket.partition, fid, _merge_base(state, (), records, t, bucket.number, fid,
                                                             bucket.partition, env)))
            continue
        g = groups[(bucket.partition, bucket.file_id)]
        sl = latest.get((bucket.partition, bucket.file_id))
        if not cfg.is_mor or bucket.file_id in small_ids:
            old = next(x.rows for x in g.base_files if sl is not None and sl.base_file is not None
                       and x.name == sl.base_file.name)
            files.append((bucket.partition, bucket.file_id, _merge_base(state, old, records, t, bucket.number,
                                                                        bucket.file_id, bucket.partition, env,
                                                                        concatenates(cfg, operation))))
        else:
            for lf in _log_files(state, g, records, t, bucket.number):
                files.append((bucket.partition, bucket.file_id, lf))
                appended.append((bucket.partition, bucket.file_id, lf.name))
    return WritePlan(tuple(files), replaced, tuple(appended))
# --8<-- [end:plan_write]


def plan_stream_checkpoint(state: TableState, env: Env, t: str,
                           buckets: Mapping[tuple[str, str], Sequence[Incoming]]) -> WritePlan:
    """The files of one streaming checkpoint: per bucket (in assignment order), COW a create or merge
    handle's base file, MOR an append handle's log files (a new group starts log-only)."""
    groups = {(g.partition, g.file_id): g for g in state.groups}
    latest = {(vg.partition_path, vg.file_id): vg.latest_slice for vg in view(state)}
    files: list[tuple[str, str, BaseFile | LogFile]] = []
    appended: list[tuple[str, str, str]] = []
    for task, ((partition, fid), records) in enumerate(buckets.items()):
        g = groups.get((partition, fid), ModelFileGroup(partition, fid))
        if state.config.is_mor:
            for lf in _log_files(state, g, records, t, task):
                files.append((partition, fid, lf))
                appended.append((partition, fid, lf.name))
            continue
        sl = latest.get((partition, fid))
        old = next((b.rows for b in g.base_files if sl is not None and sl.base_file is not None
                    and b.name == sl.base_file.name), ())
        files.append((partition, fid, _merge_base(state, old, records, t, task, fid, partition, env)))
    return WritePlan(tuple(files), frozenset(), tuple(appended))


def apply_files(state: TableState, files: Sequence[tuple[str, str, BaseFile | LogFile]], t: str) -> TableState:
    """The state with the files added (new groups appended in the order they are first written)."""
    groups = list(state.groups)
    index = {(g.partition, g.file_id): i for i, g in enumerate(groups)}
    for partition, fid, f in files:
        i = index.get((partition, fid))
        if i is None:
            index[(partition, fid)] = len(groups)
            groups.append(ModelFileGroup(partition, fid, created_by=t))
            i = len(groups) - 1
        groups[i] = groups[i].with_base(f) if isinstance(f, BaseFile) else groups[i].with_log(f)
    parts = tuple(dict.fromkeys((*state.partitions, *(p for p, _, _ in files))))
    return replace(state, groups=tuple(groups), partitions=parts)


def mark_replaced(state: TableState, replaced: frozenset[tuple[str, str]], t: str) -> TableState:
    """Mark the file groups ``replaced`` as replaced by replacecommit ``t``."""
    return replace(state, groups=tuple(replace(g, replaced_by=t) if (g.partition, g.file_id) in replaced else g
                                       for g in state.groups))


"""What the oracle predicts a reader returns: rows per query type, and the layout it sees.

The model reads its in-memory table with the reader's own rules: slices from
``spec.file_group.file_system_view.build_file_groups`` (over the model's file names), blocks from
``spec.file_group.log_file.scanner.blocks_to_apply`` (over the model's block headers), versions combined with
``spec.read.merge``. Queries:

- **snapshot** — the latest visible slice of every visible file group, its applied log versions
  merged onto its base rows; **time travel as of t** — the same over the files and blocks of
  instants requested at or before t;
- **read-optimized** — the latest visible slices' base files as they are;
- **incremental (b, e]** — as the spec reader windows it (``spec.read.query_plan.IncrementalWindow``): the
  completed writes whose completion time lies in (b, e]; the latest slices as of the last of them over the
  files those writes wrote alone (a base file only if one of them wrote it: ``spec.read.query_plan.window_view``),
  merged from the log blocks of those instants only, the rows whose commit time is one of them. So on
  merge-on-read a log record of the window that lost its merge to a base row written before the window
  is returned, as Apache Hudi returns it. A window holding an archived write, or a file a clean deleted, is
  read on table versions 8 and 9 as Hudi's full table scan reads it: the table's latest slices as a snapshot
  reads them, the rows whose commit time is the window's; on version 6 from the window's files, refused when
  it needs a cleaned one (``spec.read.query_plan``).

The instants a query names are checked as every reader checks them (``spec.read.query_plan.check_query``).

Source: no Hudi class — the oracle's reads apply ``spec.file_group.file_system_view``,
``spec.file_group.log_file.scanner`` and
``spec.read.merge`` (``AbstractTableFileSystemView``, ``BaseHoodieLogRecordReader``,
``HoodieFileGroupReader``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from spec.config.table_config import COMMIT_TIME_ORDERING
from spec.file_group.file_system_view import FileGroup, FileSlice, build_file_groups
from spec.file_group.log_file.scanner import blocks_to_apply
from spec.keygen.partition_path import default_partition_columns
from spec.model.files import (
    COMMIT_TIME,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
    BaseFile,
    LogFile,
    ModelFileGroup,
    ModelLogBlock,
    Row,
    Scalar,
    listing,
    scan_records,
)
from spec.model.state import TableState
from spec.read.merge import MergeMode, MergeRule, Version, as_version, delete_version, merge_with_base
from spec.read.query_plan import (
    IncrementalWindow,
    Write,
    check_query,
    hollow_commit,
    latest_write,
    refuse_hollow,
    refuse_window,
    write_times,
)
from spec.read.slice_merge import fold_log_versions
from spec.read.time_travel import time_travel_refusal
from spec.timeline.instant import DATA_WRITES, Action

JAVA_TYPES = {"long": "long", "double": "double", "string": "string", "boolean": "boolean"}


def merge_rule(config: Any) -> MergeRule:
    """The reader's merge rule for a model table (what ``MergeRule.from_config`` derives from the
    hoodie.properties a conforming writer writes for this configuration)."""
    if config.table_version >= 8:
        mode = MergeMode(config.merge_mode)
        return MergeRule(mode, config.ordering_field, mode == MergeMode.COMMIT_TIME_ORDERING, config.table_version)
    event = config.ordering_field is not None
    return MergeRule(MergeMode.EVENT_TIME_ORDERING if event else MergeMode.COMMIT_TIME_ORDERING,
                     config.ordering_field, config.merge_mode == COMMIT_TIME_ORDERING or not event, 6)


def ordering_type(state: TableState) -> str | None:
    """The Java type of the ordering field (as a delete record's ordering value is tagged), or None."""
    f = state.config.ordering_field
    return JAVA_TYPES.get(dict(state.schema).get(f, "")) if f else None


def replaced_groups(state: TableState, as_of: str | None) -> set[tuple[str, str]]:
    """Groups replaced by a completed replacecommit requested at or before ``as_of``."""
    return {(g.partition, g.file_id) for g in state.groups
            if g.replaced_by is not None and state.completion_time(g.replaced_by) is not None
            and (as_of is None or g.replaced_by <= as_of)}


def view(state: TableState, as_of: str | None = None, written: frozenset[str] | None = None) -> list[FileGroup]:
    """The file groups and slices a reader sees as of ``as_of`` (the reader's rules, the model's files); over
    the files the instants ``written`` names wrote alone, when given (an incremental read's window: a base
    file those instants wrote, a log file holding a block of theirs)."""
    pending = [i.requested for i in state.timeline if i.action == Action.COMPACTION and not i.is_completed]
    groups = state.groups if written is None else tuple(
        replace(g, base_files=tuple(b for b in g.base_files if b.instant in written),
                log_files=tuple(lf for lf in g.log_files if any(blk.instant in written for blk in lf.blocks)))
        for g in state.groups)
    return build_file_groups(listing(groups), state.timeline_view(), state.table_version, as_of,
                             replaced_groups(state, as_of), pending)


def _files(state: TableState) -> tuple[dict[tuple[str, str], BaseFile], dict[tuple[str, str], LogFile]]:
    bases = {(g.partition, b.name): b for g in state.groups for b in g.base_files}
    logs = {(g.partition, lf.name): lf for g in state.groups for lf in g.log_files}
    return bases, logs


# --8<-- [start:merge_slice]
def merge_slice(base_rows: Sequence[Row], blocks: Sequence[ModelLogBlock], rule: MergeRule,
                otype: str | None) -> tuple[Row, ...]:
    """A slice's rows: log versions folded in block order (``spec.read.slice_merge.fold_log_versions``), then each
    base row
    of a key with a log version merged with it (``merge_with_base``), the others kept; log
    versions of keys not in the base file are appended."""
    def versions() -> Iterator[tuple[str, Version]]:
        for b in blocks:
            if b.kind == "data":
                yield from ((str(r[RECORD_KEY]), as_version(r, rule, otype)) for r in b.rows)
            else:
                yield from ((k, delete_version(o, otype, rule)) for k, o in b.deletes)

    logs = fold_log_versions(versions(), rule)
    out: list[Row] = []
    for row in base_rows:
        key = str(row[RECORD_KEY])
        if key not in logs:
            out.append(row)
            continue
        result = merge_with_base(as_version(row, rule, otype), logs.pop(key), rule)
        if result.row is not None:
            out.append(result.row)
    out += [v.row for v in logs.values() if v.row is not None]
    return tuple(out)
# --8<-- [end:merge_slice]


def merge_files(state: TableState, base: BaseFile | None, logs: Sequence[LogFile],
                as_of: str | None, only: frozenset[str] | None = None) -> tuple[Row, ...]:
    """Base rows with the applicable blocks of the log files (in read order) merged on top; only the blocks
    of the instants ``only`` names, when given (an incremental read's window)."""
    base_rows = base.rows if base is not None else ()
    if not logs:
        return base_rows
    records, back = scan_records(tuple(logs))
    applied, _ = blocks_to_apply(records, state.timeline_view(), as_of)
    if only is not None:
        applied = [b for b in applied if (b.instant_time or "") in only]
    return merge_slice(base_rows, [back[id(b)] for b in applied], merge_rule(state.config), ordering_type(state))


def read_slice(state: TableState, sl: FileSlice, as_of: str | None, with_logs: bool = True) -> tuple[Row, ...]:
    """The rows of a slice of the reader's view: its base file, merged with its logs unless read-optimized."""
    bases, logs = _files(state)
    base = bases[(sl.partition_path, sl.base_file.name)] if sl.base_file is not None else None
    log_files = [logs[(sl.partition_path, f.name)] for f in sl.log_files] if with_logs else []
    return merge_files(state, base, log_files, as_of)


# --- queries ------------------------------------------------------------------------------------

def columns(state: TableState) -> tuple[str, ...]:
    """The columns a read returns: the five meta columns, then the table's data columns in schema order."""
    return META_COLUMNS + tuple(f for f, _ in state.schema)


def as_type(value: Scalar, avro_type: str | None) -> Scalar:
    """A stored value read as its column's type in the read schema (an evolved column: a long read as
    a double, a number read as a string, as ``Long.toString`` / ``Double.toString`` give it)."""
    if value is None or isinstance(value, bool):
        return value
    if avro_type == "string" and isinstance(value, int | float):
        return str(value)
    if avro_type == "double" and isinstance(value, int):
        return float(value)
    return value


def _table(rows: list[Row], cols: tuple[str, ...], types: Mapping[str, str] | None = None) -> tuple[Row, ...]:
    """Rows with every table column (columns added later read as null) in the read schema's types,
    sorted by (partition, key)."""
    types = types or {}
    full = [{c: as_type(r.get(c), types.get(c)) for c in cols} for r in rows]
    return tuple(sorted(full, key=lambda r: (str(r[PARTITION_PATH]), str(r[RECORD_KEY]), str(r[COMMIT_TIME]))))


def partition_values(state: TableState, rows: list[Row]) -> list[Row]:
    """Rows with the partition columns their partition path reads as null set to null, as a reader reads them
    (``spec.read.reader.TableReader.partition_values``: ``__HIVE_DEFAULT_PARTITION__`` folders)."""
    config = state.config
    fields = tuple(f.split(":")[0] for f in config.partition_fields)
    if not fields or config.resolved_key_generator == "TIMESTAMP" or any(
            f.lower().endswith(":timestamp") for f in config.partition_fields):
        return rows
    nulls: dict[str, tuple[str, ...]] = {}
    out = []
    for r in rows:
        path = str(r[PARTITION_PATH])
        if path not in nulls:
            nulls[path] = default_partition_columns(path, fields, config.hive_style)
        out.append({**r, **dict.fromkeys(nulls[path])} if nulls[path] else r)
    return out


def schema_at(state: TableState, as_of: str) -> tuple[tuple[str, str], ...]:
    """The table schema a time-travel read as of ``as_of`` returns: the schema of the latest completed
    commit at or before it (Hudi's ``HoodieBaseRelation`` resolves a time-travel query's schema with
    ``TableSchemaResolver.getTableAvroSchema(timestamp)``, hudi-spark-datasource/hudi-spark-common/
    src/main/scala/org/apache/hudi/HoodieBaseRelation.scala, 0.15.x and 1.0.x); every other query
    reads with the latest schema."""
    done = {i.requested for i in state.timeline if i.is_completed}
    at = [schema for t, schema in state.schema_log if t in done and t <= as_of]
    return at[-1] if at else state.schema


def snapshot(state: TableState, as_of: str | None = None, read_optimized: bool = False,
             latest_schema: bool = False) -> tuple[Row, ...]:
    """Snapshot rows (time travel when ``as_of`` is given, with the schema then unless
    ``latest_schema``; base files only when read-optimized)."""
    check_query("read_optimized" if read_optimized else "snapshot", as_of, None, None)
    if as_of is not None and not any(i.is_completed for i in state.timeline):
        return ()
    out: list[Row] = []
    for g in view(state, as_of):
        sl = g.latest_slice
        if sl is None or (read_optimized and sl.base_file is None):
            continue
        out += read_slice(state, sl, as_of, with_logs=not read_optimized)
    schema = state.schema if as_of is None or latest_schema else schema_at(state, as_of)
    return _table(partition_values(state, out), META_COLUMNS + tuple(f for f, _ in schema), dict(schema))


def read_optimized(state: TableState) -> tuple[Row, ...]:
    """Read-optimized rows: the base files of the latest slices, log files ignored."""
    return snapshot(state, None, read_optimized=True)


def _writes(state: TableState) -> tuple[Write, ...]:
    """Completed data-writing instants (compactions included): (requested, completion)."""
    return write_times(i for i in state.timeline if i.action in DATA_WRITES)


def _all_writes(state: TableState) -> tuple[Write, ...]:
    """Completed data-writing instants of the archived and the active timeline: (requested, completion)."""
    return write_times(i for i in (*state.archived, *state.timeline) if i.action in DATA_WRITES)


def incremental(state: TableState, begin: str | None, end: str | None) -> tuple[Row, ...]:
    """Rows written by the completed writes whose completion time is in (``begin``, ``end``] — archived writes
    included, as Hudi's ``IncrementalQueryAnalyzer`` includes them."""
    check_query("incremental", None, begin, end)
    window = IncrementalWindow(begin, end)
    if state.table_version < 8 and (pending := hollow_commit(state.timeline)) is not None:
        refuse_hollow(window, pending)  # version 6: spec.read.query_plan.check_hollow_commits
    writes = _all_writes(state)
    instants = set(window.instants(writes))
    if not instants:
        return ()
    as_of = window.snapshot_as_of(writes)
    archived_in = bool(instants & {i.requested for i in state.archived})
    cleaned = _window_files_cleaned(state, instants)
    only = frozenset(instants)
    full_scan = (archived_in or cleaned) and state.table_version >= 8
    if full_scan:  # the table's latest slices, read as a snapshot
        as_of, groups = latest_write(writes), view(state)
    elif cleaned:
        groups = _window_slices_present(state, as_of, only, window)
    else:
        groups = view(state, as_of, None if archived_in else only)
    bases, logs = _files(state)
    out: list[Row] = []
    for g in groups:
        sl = g.latest_slice
        if sl is None:
            continue
        base = bases[(sl.partition_path, sl.base_file.name)] if sl.base_file is not None else None
        out += merge_files(state, base, [logs[(sl.partition_path, f.name)] for f in sl.log_files], as_of,
                           None if full_scan else only)
    return _table(partition_values(state, [r for r in out if str(r[COMMIT_TIME]) in instants]), columns(state),
                  dict(state.schema))


def _window_slices_present(state: TableState, as_of: str | None, only: frozenset[str],
                           window: IncrementalWindow) -> list[FileGroup]:
    """Timeline layout 1, a window some of whose files were cleaned: the window view over every file its writes
    wrote (the cleaned ones too, as Hudi lists them from the commit metadata), refused
    (``spec.read.query_plan.check_window_files``) when a latest slice needs a cleaned file."""
    gone = {(g.partition, n) for g in state.cleaned
            for n in (*(b.name for b in g.base_files), *(lf.name for lf in g.log_files))}
    whole = replace(state, groups=restore_files(state.groups, state.cleaned))
    groups = view(whole, as_of, only)
    for g in groups:
        sl = g.latest_slice
        names = ([sl.base_file.name] if sl and sl.base_file else []) + [f.name for f in sl.log_files] if sl else []
        cleaned = [n for n in names if (g.partition_path, n) in gone]
        if cleaned:
            path = f"{g.partition_path}/{cleaned[0]}" if g.partition_path else cleaned[0]
            refuse_window(window, path)
    return groups


def _window_files_cleaned(state: TableState, instants: set[str]) -> bool:
    """Whether a clean removed a file one of the window's writes wrote (on timeline layout 2 Hudi then scans the
    table's latest slices whole: ``HoodieIncrementalRelationV2Trait.fullTableScan``; on layout 1 it reads the
    window's files all the same: ``spec.read.query_plan.check_window_files``)."""
    return any(b.instant in instants for g in state.cleaned for b in g.base_files) or any(
        blk.instant in instants for g in state.cleaned for lf in g.log_files for blk in lf.blocks)


def query_instants(state: TableState) -> tuple[str, ...]:
    """Completed writes whose time-travel read the model predicts: those whose files all survive."""
    return tuple(t for t, _ in _writes(state) if answerable(state, t))


def time_travel_instants(state: TableState) -> tuple[str, ...]:
    """The instants of ``query_instants`` a time-travel query may name (``spec.read.time_travel``: not before the
    latest clean's earliest retained commit, not at or after a pending write)."""
    cleans = [i.requested for i in state.timeline if i.action == Action.CLEAN and i.is_completed]
    retained = dict(state.clean_retained).get(cleans[-1], "") if cleans else None
    timeline = state.timeline_view()
    return tuple(t for t in query_instants(state) if time_travel_refusal(timeline, t, retained) is None)


def answerable(state: TableState, as_of: str) -> bool:
    """True when no file a time-travel read as of ``as_of`` needs was cleaned (the read is planned
    with the cleaned files put back, and must not touch any of them)."""
    if not state.cleaned:
        return True
    gone = {(g.partition, n) for g in state.cleaned
            for n in (*(b.name for b in g.base_files), *(lf.name for lf in g.log_files))}
    whole = replace(state, groups=restore_files(state.groups, state.cleaned))
    for g in view(whole, as_of):
        sl = g.latest_slice
        if sl is None:
            continue
        names = ([sl.base_file.name] if sl.base_file else []) + [f.name for f in sl.log_files]
        if any((sl.partition_path, n) in gone for n in names):
            return False
    return True


def restore_files(groups: tuple[ModelFileGroup, ...],
                  removed: tuple[ModelFileGroup, ...]) -> tuple[ModelFileGroup, ...]:
    """The groups with removed files put back (groups that lost every file come back too)."""
    extra: dict[tuple[str, str], ModelFileGroup] = {}
    for r in removed:
        key = (r.partition, r.file_id)
        old = extra.get(key)
        extra[key] = r if old is None else replace(old, base_files=(*old.base_files, *r.base_files),
                                                   log_files=(*old.log_files, *r.log_files))
    out = []
    for g in groups:
        back = extra.pop((g.partition, g.file_id), g)
        out.append(g if back is g else replace(g, base_files=(*g.base_files, *back.base_files),
                                               log_files=(*g.log_files, *back.log_files)))
    return (*out, *extra.values())


# --- layout -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SliceLayout:
    """A slice as layouts compare it: base instant, whether it has a base file, its log file versions."""

    base_instant: str
    has_base: bool
    log_versions: tuple[int, ...]


@dataclass(frozen=True)
class GroupLayout:
    """A visible file group: its id, slices oldest first, and the record keys its snapshot holds."""

    file_id: str
    slices: tuple[SliceLayout, ...]
    keys: tuple[str, ...]


def layout(state: TableState) -> Mapping[str, tuple[GroupLayout, ...]]:
    """Per partition: its visible file groups in creation order, their slices and keys."""
    order = {(g.partition, g.file_id): i for i, g in enumerate(state.groups)}
    out: dict[str, list[tuple[int, GroupLayout]]] = {}
    for g in view(state):
        sl = g.latest_slice
        keys = tuple(sorted(str(r[RECORD_KEY]) for r in read_slice(state, sl, None))) if sl else ()
        slices = tuple(SliceLayout(s.base_instant, s.base_file is not None,
                                   tuple(lf.version for lf in s.log_file_names)) for s in g.slices)
        out.setdefault(g.partition_path, []).append(
            (order[(g.partition_path, g.file_id)], GroupLayout(g.file_id, slices, keys)))
    ordered = sorted(out.items(), key=lambda kv: min(i for i, _ in kv[1]))
    return {p: tuple(gl for _, gl in sorted(gs, key=lambda x: x[0])) for p, gs in ordered}


def index_locations(state: TableState) -> Mapping[tuple[str, str], tuple[str, ...]]:
    """Where the writer's index finds each key: the visible groups whose latest base file holds it.

    Bloom and simple indexes look keys up in base files only (they cannot index log files), so on
    MOR a key deleted by a log block is still found in its group — the re-insert becomes an update."""
    bases, _ = _files(state)
    where: dict[tuple[str, str], list[str]] = {}
    for g in view(state):
        sl = g.latest_slice
        if sl is not None and sl.base_file is not None:
            for k in bases[(sl.partition_path, sl.base_file.name)].record_keys():
                where.setdefault((g.partition_path, k), []).append(g.file_id)
    return {k: tuple(v) for k, v in where.items()}


def key_locations(state: TableState) -> Mapping[tuple[str, str], tuple[str, ...]]:
    """(partition, record key) → the visible file groups whose latest slice holds it."""
    where: dict[tuple[str, str], list[str]] = {}
    for p, groups in layout(state).items():
        for g in groups:
            for k in g.keys:
                where.setdefault((p, k), []).append(g.file_id)
    return {k: tuple(v) for k, v in where.items()}

"""File groups and file slices: which files a reader sees, as of which instant.

Files are grouped by (partition path, file id) into **file groups**; each group is a sequence
of **file slices**, one per base instant: a base file and the log files written on top of it.
A reader reads the latest slice of each group that is visible as of its query instant.

The rules differ by table version, side by side below:

- v6: a base file forms slice ``T`` (the instant in its name); a log file joins the slice whose
  base instant is the greatest one ≤ the instant in its name (that name holds the slice's base
  instant). Log files are not filtered by name; their blocks are filtered when scanned.
- v8: a log file's name holds the deltacommit that wrote it; it joins the slice whose base
  instant is the greatest one ≤ that deltacommit's **completion** time — from the active
  timeline, or from the archived timeline once archival has moved the deltacommit off it
  (``Timeline.completion_time``). A visible log whose completion time is known nowhere joins the
  latest slice, as Hudi's ``HoodieFileGroup.getBaseInstantTime`` puts a log it takes for pending.
  Base and log files of instants that are not completed are invisible.

In both, base files of instants that did not complete are invisible (unless older than the
active timeline), file groups replaced by a completed replacecommit are gone, and a slice
whose base instant is a pending compaction is read together with the slice before it.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``AbstractTableFileSystemView`` (``buildFileGroups``, ``getLatestFileSlices``), ``HoodieFileGroup``
and ``FileSlice``; v8: ``CompletionTimeQueryView``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spec.config.table_config import TableConfig
from spec.errors import HudiSpecError, MetadataFormatError
from spec.file_group.file_naming import (
    BaseFileName,
    LogFileName,
    is_base_file_name,
    is_log_file_name,
    log_file_sort_key,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.file_group.partition_metadata import PARTITION_METADATA_FILE
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action
from spec.timeline.layout import read_instant_content

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage


@dataclass(frozen=True)
class DataFile:
    """A base or log file found by listing: its partition, name and size."""

    partition_path: str
    name: str
    size: int = 0

    @property
    def path(self) -> str:
        """The path relative to the table's base path (``partition/name``, or ``name`` when unpartitioned)."""
        return posixpath.join(self.partition_path, self.name) if self.partition_path else self.name


@dataclass(frozen=True)
class FileSlice:
    """A base instant's slice of a file group: the base file (if any) and its log files, in read order."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: DataFile | None = None
    log_files: tuple[DataFile, ...] = ()

    @property
    def base_file_name(self) -> BaseFileName | None:
        """The base file's parsed name, or None when the slice has only log files."""
        return parse_base_file_name(self.base_file.name) if self.base_file else None

    @property
    def log_file_names(self) -> tuple[LogFileName, ...]:
        """The log files' parsed names, in read order."""
        return tuple(parse_log_file_name(f.name) for f in self.log_files)

    def with_logs(self, logs: Iterable[DataFile]) -> FileSlice:
        """The slice with ``logs`` added, all log files in read order (instant, version, write token)."""
        ordered = sorted({*self.log_files, *logs},
                         key=lambda f: log_file_sort_key(parse_log_file_name(f.name)))
        return FileSlice(self.partition_path, self.file_id, self.base_instant, self.base_file, tuple(ordered))


@dataclass(frozen=True)
class FileGroup:
    """A file group: its slices ordered by base instant."""

    partition_path: str
    file_id: str
    slices: tuple[FileSlice, ...]

    @property
    def latest_slice(self) -> FileSlice | None:
        """The slice with the greatest base instant, or None for a group with no visible slice."""
        return self.slices[-1] if self.slices else None


def list_data_files(storage: Storage, cdc: bool = False) -> list[DataFile]:
    """Every base and log file of the table (all folders but ``.hoodie``), by partition path; ``cdc``: the CDC logs
    too (``.cdc``: no file slice reads them, the rollback, restore and cleaner delete them with their instant or
    slice)."""
    out = []
    for f in storage.list("", recursive=True):
        if f.is_dir or f.path.startswith(".hoodie/") or f.path == ".hoodie":
            continue
        if "/.hoodie/" in f"/{f.path}":
            continue
        partition, _, name = f.path.rpartition("/")
        if name.startswith(PARTITION_METADATA_FILE):
            continue
        if is_base_file_name(name) or (is_log_file_name(name) and (cdc or not parse_log_file_name(name).suffix)):
            out.append(DataFile(partition, name, f.size))
    return out


def file_group_replacements(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) of every group a completed replacecommit replaced, with that instant."""
    out: dict[tuple[str, str], str] = {}
    for inst in timeline.completed().filter_actions(Action.REPLACE_COMMIT).instants:
        md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))
        for key in md.replaced_file_ids():
            out.setdefault(key, inst.requested)
    return out


def replaced_as_of(replacements: Mapping[tuple[str, str], str], as_of: str | None) -> set[tuple[str, str]]:
    """The groups replaced by replacecommits at or before ``as_of`` (all of them if None)."""
    return {k for k, t in replacements.items() if as_of is None or t <= as_of}


def replaced_file_groups(storage: Storage, timeline: Timeline,
                         as_of: str | None = None) -> set[tuple[str, str]]:
    """(partition, file id) of groups replaced by completed replacecommits at or before ``as_of``."""
    return replaced_as_of(file_group_replacements(storage, timeline), as_of)


# --8<-- [start:visibility]
def base_file_visible(instant: str, timeline: Timeline, as_of: str | None) -> bool:
    """A base file is visible when its instant completed (or predates the active timeline), ≤ as_of."""
    if as_of is not None and instant > as_of:
        return False
    return timeline.contains_or_before_start(instant)


def log_file_visible(log: LogFileName, timeline: Timeline, table_version: int, as_of: str | None) -> bool:
    """v8: a log file is visible when its deltacommit completed, ≤ as_of; v6: always (blocks decide)."""
    if table_version < 8:
        return True
    if as_of is not None and log.instant > as_of:
        return False
    return timeline.contains_or_before_start(log.instant)
# --8<-- [end:visibility]


# --8<-- [start:slices]
def build_file_groups(files: Sequence[DataFile], timeline: Timeline, table_version: int,
                      as_of: str | None = None, replaced: set[tuple[str, str]] | None = None,
                      pending_compactions: Iterable[str] = ()) -> list[FileGroup]:
    """Group visible files into file groups and slices, as of ``as_of`` (the latest instant if None)."""
    replaced = replaced or set()
    pending = set(pending_compactions)
    bases: dict[tuple[str, str], dict[str, DataFile]] = {}
    logs: dict[tuple[str, str], list[tuple[LogFileName, DataFile]]] = {}
    for f in files:
        if is_base_file_name(f.name):
            b = parse_base_file_name(f.name)
            if base_file_visible(b.instant, timeline, None):  # as_of applies to slices, below
                bases.setdefault((f.partition_path, b.file_id), {})[b.instant] = f
        else:
            lg = parse_log_file_name(f.name)
            if log_file_visible(lg, timeline, table_version, as_of):
                logs.setdefault((f.partition_path, lg.file_id), []).append((lg, f))
    groups = []
    for key in sorted(set(bases) | set(logs)):
        if key in replaced:
            continue
        partition, file_id = key
        all_bases = dict(bases.get(key, {}))
        instants = set(all_bases)  # slices are keyed by every committed base, then cut at as_of
        slice_bases = {t: f for t, f in all_bases.items() if as_of is None or t <= as_of}
        members: dict[str, list[DataFile]] = {}

        def anchor(item: tuple[LogFileName, DataFile]) -> str | None:
            """v6: the instant in the log's name; v8: its deltacommit's completion time, None when unknown."""
            lg = item[0]
            return lg.instant if table_version < 8 else timeline.completion_time(lg.instant)

        # logs in anchor order, so that a log-only group's later logs join the slice its first log opened
        for lg, f in sorted(logs.get(key, []), key=lambda item: (anchor(item) or item[0].instant, item[0].instant)):
            at = anchor((lg, f))
            opened = instants | pending | set(members)
            if at is None:  # completion unknown: the latest slice (HoodieFileGroup.getBaseInstantTime)
                base_instant = max(opened) if opened else lg.instant
            else:
                candidates = [t for t in opened if t <= at]
                base_instant = max(candidates) if candidates else lg.instant
            if as_of is not None and base_instant > as_of:
                continue  # a slice that starts after the query instant is not part of its view
            members.setdefault(base_instant, []).append(f)
        slice_keys = sorted(t for t in set(slice_bases) | set(members) if as_of is None or t <= as_of)
        slices = [FileSlice(partition, file_id, t, slice_bases.get(t)).with_logs(members.get(t, []))
                  for t in slice_keys]
        # a slice of a pending compaction has no base file yet: read it together with the slice before it
        merged: list[FileSlice] = []
        for s in slices:
            if s.base_instant in pending and s.base_file is None and merged:
                merged[-1] = merged[-1].with_logs(s.log_files)
            else:
                merged.append(s)
        if merged:
            groups.append(FileGroup(partition, file_id, tuple(merged)))
    return groups
# --8<-- [end:slices]


# --8<-- [start:view]
@dataclass(frozen=True)
class FileSystemView:
    """The file groups of a table as of an instant, with the listing they were built from."""

    config: TableConfig
    timeline: Timeline
    groups: tuple[FileGroup, ...] = field(default_factory=tuple)
    as_of: str | None = None
    listing: tuple[DataFile, ...] = ()
    replacements: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @staticmethod
    def build(listing: Sequence[DataFile], timeline: Timeline, table_config: TableConfig,
              as_of: str | None = None,
              replacements: Mapping[tuple[str, str], str] | None = None) -> FileSystemView:
        """The view of a listing (pure). ``replacements`` maps replaced (partition, file id) pairs to the
        replacecommit that replaced them (``file_group_replacements`` reads them from the timeline)."""
        repl = dict(replacements or {})
        pending = [i.requested for i in timeline.pending_compactions().instants]
        groups = build_file_groups(listing, timeline, table_config.table_version, as_of,
                                   replaced_as_of(repl, as_of), pending)
        return FileSystemView(table_config, timeline, tuple(groups), as_of, tuple(listing), repl)

    @staticmethod
    def load(storage: Storage, config: TableConfig | None = None, timeline: Timeline | None = None,
             as_of: str | None = None, files: Sequence[DataFile] | None = None) -> FileSystemView:
        """List the table (unless ``files`` is given), read its replacecommits and build the view."""
        cfg = config or TableConfig.load(storage)
        tl = timeline or Timeline.load(storage, cfg.timeline_layout)
        listing = list_data_files(storage) if files is None else files
        return FileSystemView.build(listing, tl, cfg, as_of, file_group_replacements(storage, tl))

    def partitions(self) -> list[str]:
        """The partition paths that hold a visible file group, sorted."""
        return sorted({g.partition_path for g in self.groups})

    def all_file_groups(self, partition_path: str | None = None) -> list[FileGroup]:
        """Every visible file group (optionally of one partition), by partition then file id."""
        return [g for g in self.groups if partition_path is None or g.partition_path == partition_path]

    def latest_slices(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        """The latest visible slice of every file group (optionally only in ``partitions``)."""
        wanted = None if partitions is None else set(partitions)
        return [s for g in self.groups if (wanted is None or g.partition_path in wanted)
                and (s := g.latest_slice) is not None]

    def latest_file_slices(self, partition_path: str, as_of: str | None = None) -> list[FileSlice]:
        """The latest slice of each group of one partition, as of ``as_of`` (the view's instant if None):
        the same view rebuilt from the listing of that partition at that instant."""
        if as_of is None or as_of == self.as_of:
            return self.latest_slices([partition_path])
        files = [f for f in self.listing if f.partition_path == partition_path]
        view = FileSystemView.build(files, self.timeline, self.config, as_of, self.replacements)
        return view.latest_slices()

    def latest_base_files(self, partition_path: str | None = None) -> list[DataFile]:
        """The base file of every group's latest slice that has one (what read-optimized queries read)."""
        slices = self.latest_slices(None if partition_path is None else [partition_path])
        return [s.base_file for s in slices if s.base_file is not None]
# --8<-- [end:view]

    def group(self, partition_path: str, file_id: str) -> FileGroup | None:
        """The visible file group ``file_id`` of ``partition_path``, or None."""
        for g in self.groups:
            if g.partition_path == partition_path and g.file_id == file_id:
                return g
        return None

    def layout(self) -> Mapping[str, list[tuple[str, list[tuple[str, str | None, int]]]]]:
        """Per partition: (file id, [(base instant, base file name, number of log files)])."""
        out: dict[str, list[tuple[str, list[tuple[str, str | None, int]]]]] = {}
        for g in self.groups:
            slices = [(s.base_instant, s.base_file.name if s.base_file else None, len(s.log_files))
                      for s in g.slices]
            out.setdefault(g.partition_path, []).append((g.file_id, slices))
        return out


def check_single_base_per_instant(files: Sequence[DataFile]) -> None:
    """A file group holds at most one base file per instant (hudi-rs fails otherwise)."""
    seen: dict[tuple[str, str, str], str] = {}
    for f in files:
        if is_base_file_name(f.name):
            b = parse_base_file_name(f.name)
            key = (f.partition_path, b.file_id, b.instant)
            if key in seen:
                raise HudiSpecError(f"file group {b.file_id} has two base files for instant {b.instant}: "
                                    f"{seen[key]} and {f.name}", hint="delete the one no commit lists")
            seen[key] = f.name


# --8<-- [start:missing]
def missing_latest_files(storage: Storage, timeline: Timeline,
                         listing: Sequence[DataFile]) -> list[tuple[str, str]]:
    """(instant, path) of every file a file group's latest slice needs, by the write stats of the
    completed instants, that the listing lacks: per group not replaced by a completed replacecommit,
    the base file its latest base-writing instant wrote, and the latest log file written after
    that base (instants taken in requested-time order).

    The cleaner never deletes a group's latest slice (``CleanPlanner`` keeps it whatever the
    policy), and a rollback or restore removes the instant that named the file from the
    completed timeline first, so such a file is gone only by damage. A writer that went on would
    write a second copy of the keys it held. Every completed instant's metadata is decoded, so a
    damaged instant file stops the caller too (``MetadataFormatError``)."""
    base: dict[tuple[str, str], tuple[str, str]] = {}
    log: dict[tuple[str, str], tuple[str, str]] = {}
    for inst in timeline.commits_timeline().completed().instants:
        try:
            md = parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))
        except MetadataFormatError as err:
            raise MetadataFormatError(f"the completed {inst.action} {inst.requested}: {err.message}",
                                      hint="put the instant file back from a backup, or roll the instant back "
                                           f"(`hudi-spec rollback TABLE {inst.requested}`)") from err
        for stat in md.all_write_stats():
            if not stat.path or stat.file_id is None:
                continue
            group = (stat.partition_path or "", stat.file_id)
            name = posixpath.basename(stat.path)
            if is_base_file_name(name):
                base[group] = (inst.requested, stat.path)
                log.pop(group, None)
            elif is_log_file_name(name):
                log[group] = (inst.requested, stat.path)
    replaced = set(file_group_replacements(storage, timeline))
    present = {f.path for f in listing}
    needed = [v for g, v in (*base.items(), *log.items()) if g not in replaced]
    return sorted((t, path) for t, path in needed if path not in present)
# --8<-- [end:missing]


# --8<-- [start:missing_slices]
def missing_slice_files(storage: Storage, view: FileSystemView, with_logs: bool = True) -> list[tuple[str, str]]:
    """(instant, path) of every file a completed instant wrote for a file group's latest slice of ``view``,
    or for a slice newer than it, that the view's listing lacks — each a file the timeline says holds the
    group's current rows, gone by damage (``missing_latest_files`` states why the cleaner, a rollback or a
    restore never leave such a gap). A reader that went on would return older rows, or rows a delete
    block removed. Without ``with_logs`` (a read-optimized query, which reads no log file) only base
    files count.

    Cheap: only the commit metadata of the completed instants requested at or after the oldest base
    instant of the view's latest slices (at most ``as_of``) is decoded — the instants that wrote the
    latest slices (a writer's last commit, which the reader reads for its schema too) and any after them —
    not the whole timeline. A group replaced by a replacecommit is skipped. A group whose only files
    are all gone is found when an instant in that range wrote it; ``missing_latest_files`` (the writer's
    check, and ``hudi-conformance check``) reads every instant."""
    latest = {(sl.partition_path, sl.file_id): sl for sl in view.latest_slices()}
    since = min((sl.base_instant for sl in latest.values()), default=None)
    present = {f.path for f in view.listing}
    replaced = replaced_as_of(view.replacements, view.as_of)
    missing: list[tuple[str, str]] = []
    for inst in view.timeline.commits_timeline().completed().instants:
        if (since is not None and inst.requested < since) or (view.as_of is not None and inst.requested > view.as_of):
            continue
        md = parse_commit_metadata(read_instant_content(storage, inst, view.timeline.layout))
        for stat in md.all_write_stats():
            if not stat.path or stat.file_id is None:
                continue
            group = (stat.partition_path or "", stat.file_id)
            sl = latest.get(group)
            if group in replaced or (sl is not None and inst.requested < sl.base_instant):
                continue
            if not with_logs and not is_base_file_name(posixpath.basename(stat.path)):
                continue
            if stat.path not in present:
                missing.append((inst.requested, stat.path))
    return sorted(set(missing))
# --8<-- [end:missing_slices]


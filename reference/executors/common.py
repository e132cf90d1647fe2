"""What every executor does to a table's storage: open it, load its timeline, write instant files, read
the plan records on the timeline, turn plan paths into table paths, and list the file groups and
pending compactions the planners of ``spec.actions`` look at.

Paths in plans and metadata are absolute, as Hudi writes them; every function takes the table's
storage and config explicitly so that the write client can call it.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from spec.actions.clustering import clustering_file_groups, is_clustering
from spec.actions.compaction import CompactionPlan, compaction_plan_of, groups_under_compaction
from spec.actions.file_refs import GroupRef, SliceRef
from spec.config.table_config import TableConfig
from spec.errors import InvalidTable
from spec.file_group.file_system_view import DataFile, build_file_groups, file_group_replacements, list_data_files
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import (
    HoodieCompactionPlan,
    HoodieRequestedReplaceMetadata,
    HoodieSavepointMetadata,
    parse_avro_metadata,
)
from spec.timeline.instant import Action, Instant, InstantTimeGenerator, State
from spec.timeline.layout import instant_file_path, parse_instant_file_name, read_instant_content, timeline_dir

Clock = Callable[[], float]
"""Seconds since the epoch (``time.time``); injectable so tests replay exact instant times."""

R = TypeVar("R")


def load_table(path: str) -> tuple[Storage, TableConfig]:
    """Storage and config of the table at ``path`` (InvalidTable when there is none)."""
    storage = Storage(path)
    return storage, TableConfig.load(storage)


def timeline_of(storage: Storage, table: TableConfig) -> Timeline:
    """The table's active timeline as it is on storage now."""
    return Timeline.load(storage, table.timeline_layout)


def instant_times(timeline: Timeline, clock: Clock | None, after: str | None = None) -> InstantTimeGenerator:
    """New instant times after every time on the timeline (requested and completion times) and ``after``."""
    last = max([i.completed or i.requested for i in timeline.instants] + ([after] if after else []), default=None)
    return InstantTimeGenerator(clock or time.time, last)


def now_millis(clock: Clock | None) -> int:
    """The clock's time in milliseconds (the system clock when None)."""
    return int((clock or time.time)() * 1000)


def write_instant(storage: Storage, inst: Instant, layout: int, data: bytes = b"") -> None:
    """Create an instant file; timeline files are never overwritten (a second writer fails)."""
    storage.create_if_absent(instant_file_path(inst, layout), data)


def complete_instant(storage: Storage, table: TableConfig, inst: Instant, gen: InstantTimeGenerator,
                     data: bytes) -> Instant:
    """Move an inflight instant to COMPLETED (layout 2: with a completion time from the generator); the metadata
    table records a clean, rollback or restore first (``reference.metadata_writer.on_service_complete``)."""
    from reference import metadata_writer
    metadata_writer.on_service_complete(storage, inst, data, gen)
    done = inst.transition(State.COMPLETED, completed=gen.next() if table.timeline_layout >= 2 else None)
    write_instant(storage, done, table.timeline_layout, data)
    return done


def remove_instant(storage: Storage, timeline: Timeline, inst: Instant) -> None:
    """Delete every file of an instant from the active timeline, the completed file first (un-publish)."""
    layout = timeline.layout
    for n in sorted(timeline.files_of(inst), key=lambda n: parse_instant_file_name(n, layout).state, reverse=True):
        storage.delete(posixpath.join(timeline_dir(layout), n))


def absolute(storage: Storage, rel: str) -> str:
    """The absolute path Hudi writes into plans and metadata for a file relative to the base path."""
    return storage.full(rel)


def relative(storage: Storage, path: str) -> str:
    """The path relative to the base path of an absolute path from a plan (``file:`` scheme allowed)."""
    text = path.removeprefix("file://").removeprefix("file:")
    root = storage.root.rstrip("/") + "/"
    if text.startswith(root):
        return text[len(root):]
    if "://" not in text and not text.startswith("/"):
        return text
    raise InvalidTable(f"{path} is not inside the table at {storage.root}",
                       hint="the plan belongs to another table; remove the pending instant by hand")


def in_partition(partition: str, name: str) -> str:
    """The path of file ``name`` of ``partition`` relative to the base path."""
    return posixpath.join(partition, name) if partition else name


def read_record(storage: Storage, inst: Instant | str, layout: int, expect: type[R]) -> R:
    """The Avro record a timeline file holds, which must be an ``expect``."""
    record: R = parse_avro_metadata(read_instant_content(storage, inst, layout), expect)
    return record


def savepointed_files(storage: Storage, timeline: Timeline) -> frozenset[str]:
    """The file names every completed savepoint keeps (its HoodieSavepointMetadata)."""
    names: set[str] = set()
    for inst in timeline.instants:
        if inst.action == Action.SAVEPOINT and inst.is_completed:
            md = read_record(storage, inst, timeline.layout, HoodieSavepointMetadata)
            for pm in md.partition_metadata.values():
                names.update(pm.savepoint_data_file)
    return frozenset(names)


def compaction_plan(storage: Storage, instant_time: str, layout: int) -> CompactionPlan:
    """The plan of the compaction requested at ``instant_time`` (in any state), read from its requested
    file, where the plan lives."""
    return compaction_plan_of(instant_time, read_record(storage, f"{instant_time}.compaction.requested", layout,
                                                        HoodieCompactionPlan))


def pending_compaction_plans(storage: Storage, timeline: Timeline) -> list[CompactionPlan]:
    """The plans of the pending (requested or inflight) compactions, read from their requested files."""
    return [compaction_plan(storage, inst.requested, timeline.layout)
            for inst in timeline.pending_compactions().instants]


def group_refs(storage: Storage, table: TableConfig, timeline: Timeline,
               listing: Sequence[DataFile] | None = None) -> list[GroupRef]:
    """Every file group with its committed slices, replaced groups included and marked with the
    replacecommit that replaced them: what the cleaner plans over."""
    files = list_data_files(storage) if listing is None else listing
    pending = [i.requested for i in timeline.pending_compactions().instants]
    replacements = file_group_replacements(storage, timeline)
    return [GroupRef(g.partition_path, g.file_id, tuple(SliceRef.of(s) for s in g.slices),
                     replacements.get((g.partition_path, g.file_id)))
            for g in build_file_groups(files, timeline, table.table_version, None, set(), pending)]


__all__ = [
    "Clock", "absolute", "clustering_groups", "clustering_plan", "complete_instant", "group_refs", "in_partition",
    "instant_times", "load_table", "now_millis", "pending_clustering_groups", "pending_clusterings",
    "pending_compaction_plans", "read_record", "relative", "remove_instant", "savepointed_files", "timeline_of",
    "write_instant",
]


def clustering_plan(storage: Storage, inst: Instant, layout: int) -> Mapping[str, Any] | None:
    """The clustering plan in the requested file of the clustering or replacecommit ``inst`` (None when it has
    none: an insert overwrite)."""
    content = read_instant_content(storage, Instant(inst.requested, inst.action, State.REQUESTED), layout)
    return parse_avro_metadata(content, HoodieRequestedReplaceMetadata).clustering_plan if content else None


def clustering_groups(storage: Storage, inst: Instant, layout: int) -> tuple[tuple[str, str], ...]:
    """The file groups the clustering (or replacecommit) ``inst`` plans to rewrite (``spec.actions.clustering``);
    none for a replacecommit without a clustering plan."""
    return clustering_file_groups(clustering_plan(storage, inst, layout))


def pending_clusterings(storage: Storage, timeline: Timeline) -> list[Instant]:
    """The pending clusterings: ``clustering`` instants, and replacecommits that plan one (``is_clustering``)."""
    return [i for i in timeline.instants
            if not i.is_completed and i.action in (Action.CLUSTERING, Action.REPLACE_COMMIT)
            and is_clustering(i.action, clustering_plan(storage, i, timeline.layout))]


def pending_clustering_groups(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → the pending clustering whose plan holds the group: a compaction leaves it out, a
    write may not update it."""
    return {g: inst.requested for inst in pending_clusterings(storage, timeline)
            for g in clustering_groups(storage, inst, timeline.layout)}


def pending_compaction_groups(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → the pending compaction (requested or inflight) whose plan holds the group
    (Hudi's ``fgIdToPendingCompaction``): a write appends to the slice that compaction opens, and a new
    compaction plan leaves the group out (``spec.actions.compaction.groups_under_compaction``)."""
    return groups_under_compaction(pending_compaction_plans(storage, timeline))

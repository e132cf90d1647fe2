"""What every executor does to a table's storage: open it, load its timeline, write instant files, read
the plan records on the timeline, turn plan paths into table paths, and list the file groups and
pending compactions the planners of ``spec.actions`` look at.

Paths in plans and metadata are absolute, as Hudi writes them; every function takes the table's
storage and config explicitly so that the write client can call it.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from reference.metadata.writer import on_service_complete
from spec.actions.compaction import (
    groups_under_compaction,
    pending_compaction_plans,
)
from spec.actions.file_refs import GroupRef, SliceRef
from spec.config.table_config import TableConfig
from spec.errors import InvalidTable
from spec.file_group.file_system_view import DataFile, build_file_groups, file_group_replacements, list_data_files
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import (
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


def now_millis(clock: Clock | None) -> int:
    """The clock's time in milliseconds (the system clock when None)."""
    return int((clock or time.time)() * 1000)


def write_instant(storage: Storage, inst: Instant, layout: int, data: bytes = b"") -> None:
    """Create an instant file; timeline files are never overwritten (a second writer fails)."""
    storage.create_if_absent(instant_file_path(inst, layout), data)


def complete_instant(storage: Storage, table: TableConfig, inst: Instant, gen: InstantTimeGenerator,
                     data: bytes) -> Instant:
    """Move an inflight instant to COMPLETED (layout 2: with a completion time from the generator); the metadata
    table records a clean, rollback or restore first (``reference.metadata.writer.on_service_complete``)."""
    on_service_complete(storage, inst, data, gen)
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


def group_refs(storage: Storage, table: TableConfig, timeline: Timeline,
               listing: Sequence[DataFile] | None = None) -> list[GroupRef]:
    """Every file group with its committed slices, replaced groups included and marked with the
    replacecommit that replaced them: what the cleaner plans over."""
    files = list_data_files(storage, cdc=True) if listing is None else listing  # a slice's CDC logs go with it
    pending = [i.requested for i in timeline.pending_compactions().instants]
    replacements = file_group_replacements(storage, timeline)
    return [GroupRef(g.partition_path, g.file_id, tuple(SliceRef.of(s) for s in g.slices),
                     replacements.get((g.partition_path, g.file_id)))
            for g in build_file_groups(files, timeline, table.table_version, None, set(), pending)]


__all__ = [
    "Clock",
    "absolute",
    "complete_instant",
    "group_refs",
    "in_partition",
    "load_table",
    "now_millis",
    "pending_compaction_plans",
    "read_record",
    "relative",
    "remove_instant",
    "savepointed_files",
    "timeline_of",
    "write_instant",
]


def pending_compaction_groups(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → the pending compaction (requested or inflight) whose plan holds the group
    (Hudi's ``fgIdToPendingCompaction``): a write appends to the slice that compaction opens, and a new
    compaction plan leaves the group out (``spec.actions.compaction.groups_under_compaction``)."""
    return groups_under_compaction(pending_compaction_plans(storage, timeline))

"""Shared loading for the table-inspecting commands: config, timeline, commit metadata and the Avro
records of the other instant files (plans, service metadata)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import parse_avro_metadata
from spec.timeline.commit_metadata import CommitMetadata, parse_commit_metadata
from spec.timeline.instant import Instant, State
from spec.timeline.layout import parse_instant_file_name, read_instant_content, timeline_dir

if TYPE_CHECKING:  # storage (pyarrow) is imported by the command that runs, not by ``--help``
    from spec.config.table_config import TableConfig
    from spec.storage.hoodie_storage import Storage


def open_table(path: str) -> tuple[Storage, TableConfig, Timeline]:
    """Storage, config and active timeline of the table at ``path`` (InvalidTable when there is none)."""
    from reference.executors.common import load_table, timeline_of

    storage, cfg = load_table(path)
    return storage, cfg, timeline_of(storage, cfg)


def commit_metadata(storage: Storage, timeline: Timeline, inst: Instant) -> CommitMetadata:
    return parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))


R = TypeVar("R")


def instant_record(storage: Storage, timeline: Timeline, instant: Instant | str, record: type[R]) -> R:
    """The Avro record an instant file (an Instant in its state, or a file name) holds: a completed clean's,
    rollback's or savepoint's metadata, a plan."""
    data: R = parse_avro_metadata(read_instant_content(storage, instant, timeline.layout), record)
    return data


def requested_plan(storage: Storage, timeline: Timeline, inst: Instant, record: type[R]) -> R:
    """The plan in an instant's requested file (a clean, rollback or compaction plan), in any state."""
    return instant_record(storage, timeline, Instant(inst.requested, inst.action, State.REQUESTED), record)


def timeline_mtimes(storage: Storage, timeline: Timeline) -> dict[str, int]:
    """Modification time (ms) of every file of the timeline folder, by name: one listing per command."""
    return {f.name: f.mtime_ms for f in storage.list(timeline_dir(timeline.layout)) if not f.is_dir}


def state_transition_time(timeline: Timeline, inst: Instant, mtimes: dict[str, int]) -> str | None:
    """The ``state_transition_time`` of Hudi's ``CALL show_commits`` / ``show_compaction`` / ``show_cleans``:
    ``HoodieInstant.getCompletionTime``. Layout 2 names it in the completed file (``T_C.action``; None while
    pending). Layout 1 has none in its names, and Hudi's ``InstantGeneratorV1.createNewInstant`` takes the
    modification time of the instant's file in its current state, formatted as an instant time in the
    machine's time zone (``HoodieInstantTimeGenerator.formatDate``)."""
    if timeline.layout == 2:
        return inst.completed
    for name in timeline.files_of(inst):
        if parse_instant_file_name(name, timeline.layout).state == inst.state and name in mtimes:
            local = datetime.fromtimestamp(mtimes[name] / 1000)  # local time, as Hudi formats it
            return local.strftime("%Y%m%d%H%M%S") + f"{local.microsecond // 1000:03d}"
    return None

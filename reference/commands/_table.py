"""Shared loading for the table-inspecting commands: config, timeline and commit metadata."""

from __future__ import annotations

import posixpath

from spec.commit_metadata import CommitMetadata, parse_commit_metadata
from spec.storage import Storage
from spec.table_config import TableConfig
from spec.timeline import Instant, Timeline, format_instant_file_name, timeline_dir


def open_table(path: str) -> tuple[Storage, TableConfig, Timeline]:
    storage = Storage(path)
    cfg = TableConfig.load(storage)
    return storage, cfg, Timeline.load(storage, cfg.timeline_layout)


def commit_metadata(storage: Storage, timeline: Timeline, inst: Instant) -> CommitMetadata:
    name = format_instant_file_name(inst, timeline.layout)
    return parse_commit_metadata(storage.read(posixpath.join(timeline_dir(timeline.layout), name)))

"""Shared loading for the table-inspecting commands: config, timeline and commit metadata."""

from __future__ import annotations

from spec.commit_metadata import CommitMetadata, parse_commit_metadata
from spec.storage import Storage
from spec.table_config import TableConfig
from spec.timeline import Instant, Timeline, read_instant_content


def open_table(path: str) -> tuple[Storage, TableConfig, Timeline]:
    storage = Storage(path)
    cfg = TableConfig.load(storage)
    return storage, cfg, Timeline.load(storage, cfg.timeline_layout)


def commit_metadata(storage: Storage, timeline: Timeline, inst: Instant) -> CommitMetadata:
    return parse_commit_metadata(read_instant_content(storage, inst, timeline.layout))

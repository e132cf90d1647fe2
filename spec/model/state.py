"""The oracle's state: an immutable table (timeline + file groups) and the environment it runs in.

``TableState`` is a frozen value; every operation of ``spec.model`` returns a new one. What the
model cannot know by itself comes from ``Env``: the clock (instant times), the generator of new
file ids, and the sizes of the base files the implementation under test actually wrote (sizes are
observations, not predictions: small-file routing depends on them).

Source: no Hudi class — this project's immutable state of the oracle (what ``HoodieTableMetaClient``
and the table's files are to Hudi).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Protocol

from spec.actions.compaction import CompactionPlan
from spec.config.table_config import layout_for_table_version
from spec.model.files import ModelFileGroup, Scalar
from spec.model.metadata_timeline import MetadataTimeline
from spec.timeline.active_timeline import Timeline
from spec.timeline.archived_completions import NO_ARCHIVE, ArchivedCompletions
from spec.timeline.instant import Action, Instant, State, format_instant_time, parse_instant_time


class TableSettings(Protocol):
    """The table configuration the model reads (``conformance.interface.ops.CreateTable`` has these)."""

    table_name: str
    table_type: str
    table_version: int
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    ordering_field: str | None
    hive_style: bool
    merge_mode: str
    options: tuple[tuple[str, str], ...]
    small_file_limit: int
    max_file_size: int
    insert_split_size: int
    record_size_estimate: int
    log_block_size: int
    log_file_size: int
    inline_compact: bool
    compact_max_delta_commits: int
    auto_clean: bool
    clean_policy: str
    clean_commits_retained: int
    clean_file_versions_retained: int
    clean_hours_retained: int
    auto_archive: bool
    keep_min_commits: int
    keep_max_commits: int

    @property
    def is_mor(self) -> bool:
        """Whether the table is merge-on-read."""
        ...

    @property
    def resolved_key_generator(self) -> str:
        """The key generator type, inferred from the fields when the case does not name one."""
        ...


# --8<-- [start:env]
@dataclass(frozen=True)
class Env:
    """The model's inputs from outside: ``next_instant()`` (a clock of instant times),
    ``next_file_id_prefix()`` (a new file group's id is ``<prefix>-0``), ``base_file_size(partition,
    file_id, instant, rows)`` (the size the implementation wrote, or None to estimate
    ``rows × record_size_estimate``) and ``now()`` (the current time, for KEEP_LATEST_BY_HOURS)."""

    next_instant: Callable[[], str]
    next_file_id_prefix: Callable[[], str]
    base_file_size: Callable[[str, str, str, int], int | None] = lambda p, f, t, n: None
    now: Callable[[], str] | None = None

    @staticmethod
    def deterministic(start: str = "20240101000000000", step_ms: int = 1000,
                      sizes: Mapping[tuple[str, str, str], int] | None = None) -> Env:
        """A replayable environment: instants ``step_ms`` apart from ``start``, file id prefixes
        ``00000000-0000-4000-8000-<n:012d>``, sizes from ``sizes`` keyed (partition, file id, instant)."""
        base = parse_instant_time(start)
        ticks = itertools.count()
        ids = itertools.count(1)
        last: list[str] = [start]

        def next_instant() -> str:
            last[0] = format_instant_time(base + timedelta(milliseconds=step_ms * next(ticks)))
            return last[0]

        known = dict(sizes or {})
        return Env(next_instant, lambda: f"00000000-0000-4000-8000-{next(ids):012d}",
                   lambda p, f, t, n: known.get((p, f, t)), lambda: last[0])
# --8<-- [end:env]


@dataclass(frozen=True)
class TableState:
    """A table at one moment: its active (and archived) timeline, its file groups in creation
    order, the compaction plans, savepoints (instant → savepointed file names), the table schema
    (field → JSON type name), the partitions created, and pending test directives."""

    config: TableSettings
    timeline: tuple[Instant, ...] = ()
    archived: tuple[Instant, ...] = ()
    groups: tuple[ModelFileGroup, ...] = ()
    compaction_plans: tuple[tuple[str, CompactionPlan], ...] = ()
    clusterings: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), compare=False)
    """Per clustering: its instant and the partitions its plan left out (``missingSchedulePartitions``)."""
    savepoints: tuple[tuple[str, frozenset[str]], ...] = ()
    schema: tuple[tuple[str, str], ...] = ()
    schema_log: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    """The schema each completed write left (the table schema is the latest write's)."""
    partitions: tuple[str, ...] = ()
    cleaned: tuple[ModelFileGroup, ...] = ()
    """Files the cleaner deleted (kept aside so the model knows which time-travel reads lost their files)."""
    crash_after: int | None = None
    expect_error: str | None = None
    appended_logs: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = field(default=(), compare=False)
    """Per data-writing instant: the (partition, file id, log file name) it appended to (its write
    stats; a v6 rollback needs them, log names there carry the base instant, not the writer)."""
    operations: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    clean_plans: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = field(default=(), compare=False)
    """Per clean instant: the (partition, file name) pairs its ``HoodieCleanerPlan`` deletes."""
    clean_retained: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    """Per clean instant: the earliest commit its plan retained ("" when none), as its metadata records."""
    metadata: MetadataTimeline | None = field(default=None, compare=False)
    """The table's metadata table, as far as archival depends on it (``spec.model.metadata_timeline``); None
    when it keeps none."""
    """Per data-writing instant: the ``WriteOperationType`` its commit metadata names."""

    # --- timeline queries ----------------------------------------------------------------------

    @property
    def table_version(self) -> int:
        """The table version (6 or 8)."""
        return self.config.table_version

    def timeline_view(self) -> Timeline:
        """The model's instants as a spec Timeline, in the table version's layout, its archived instants'
        completion times at hand (``Timeline.completion_time``) as a table's archived timeline holds them."""
        layout = layout_for_table_version(self.table_version)
        archived = {i.requested: i.completed or i.requested for i in self.archived if i.is_completed}
        return Timeline(self.timeline, layout, archived=ArchivedCompletions(archived) if archived else NO_ARCHIVE)

    def instant(self, t: str) -> Instant | None:
        """The instant requested at t (not a savepoint: a savepoint shares its commit's time)."""
        return next((i for i in self.timeline if i.requested == t and i.action != Action.SAVEPOINT), None)

    def completion_time(self, t: str) -> str | None:
        """When t completed (its requested time in v6; archived instants count as completed)."""
        inst = self.instant(t)
        if inst is None:
            arch = next((i for i in self.archived if i.requested == t), None)
            return None if arch is None else (arch.completed or arch.requested)
        if not inst.is_completed:
            return None
        return inst.completed or inst.requested

    def pending_instant(self, t: str) -> bool:
        """Whether instant ``t`` is on the timeline and not completed."""
        inst = self.instant(t)
        return inst is not None and not inst.is_completed

    def latest_instant_time(self) -> str | None:
        """The latest requested or completion time on the active or archived timeline, or None."""
        times = [i.requested for i in (*self.archived, *self.timeline)]
        times += [i.completed for i in (*self.archived, *self.timeline) if i.completed]
        return max(times) if times else None

    def pending_compaction_of(self, partition: str, file_id: str) -> str | None:
        """The instant of the pending compaction whose plan includes this file group, if any."""
        for t, plan in self.compaction_plans:
            if self.pending_instant(t) and (partition, file_id) in plan.group_ids():
                return t
        return None

    def plan(self, t: str) -> CompactionPlan | None:
        """The compaction plan of instant ``t``, or None."""
        return dict(self.compaction_plans).get(t)

    def savepointed_files(self) -> frozenset[str]:
        """Every file name a savepoint keeps (the cleaner must not delete them)."""
        return frozenset(f for _, files in self.savepoints for f in files)

    # --- builders ------------------------------------------------------------------------------

    def with_instant(self, instant: Instant) -> TableState:
        """Add or move an instant, keeping the timeline in time order. One instant per requested time,
        except a savepoint, which carries the time of the commit it protects."""
        sp = instant.action == Action.SAVEPOINT
        rest = [i for i in self.timeline
                if not (i.requested == instant.requested and (i.action == Action.SAVEPOINT) == sp)]
        return replace(self, timeline=tuple(sorted([*rest, instant],
                                                   key=lambda i: (i.requested, i.action == Action.SAVEPOINT))))

    def without_instants(self, times: Iterable[str]) -> TableState:
        """The state without the (non-savepoint) instants at ``times`` and what is recorded for them."""
        drop = set(times)
        return replace(self, timeline=tuple(i for i in self.timeline
                                            if i.requested not in drop or i.action == Action.SAVEPOINT),
                       compaction_plans=tuple((t, p) for t, p in self.compaction_plans if t not in drop),
                       appended_logs=tuple((t, v) for t, v in self.appended_logs if t not in drop))

    def with_groups(self, groups: Sequence[ModelFileGroup]) -> TableState:
        """The state with these file groups."""
        return replace(self, groups=tuple(groups))


def start_instant(action: str, t: str) -> Instant:
    """An instant entering the timeline: REQUESTED (savepoints start INFLIGHT)."""
    return Instant(t, action, State.INFLIGHT if action == Action.SAVEPOINT else State.REQUESTED)


def complete(instant: Instant, completion: str | None, table_version: int) -> Instant:
    """The instant completed; v8 keeps the completion time, v6 has none on disk."""
    inst = instant
    if inst.state == State.REQUESTED:
        inst = inst.transition(State.INFLIGHT)
    return inst.transition(State.COMPLETED, completion if table_version >= 8 else None)


JSON_TYPES: Mapping[type, str] = {bool: "boolean", int: "long", float: "double", str: "string"}


def json_type(v: Scalar) -> str | None:
    """The Avro primitive type of a value (boolean, long, double or string), or None for null."""
    return None if v is None else JSON_TYPES[type(v)]

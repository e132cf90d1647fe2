"""The timeline: a table's instants at their latest states, and the queries Hudi's readers and writers ask of it.

The active timeline holds one instant per requested time and action family, at the highest state
it reached; it is read by listing the timeline folder (``spec.timeline.layout`` names the files,
``spec.timeline.instant`` states what an instant is). Its queries are Hudi's: the completed instants, the
pending ones, the commits timeline, the instants in a time range, the last completed write.

When an instant completed is a question for the archived timeline too: from table version 8 on, a
log file joins a file slice and a compaction takes it by its deltacommit's *completion* time, and
archival may have moved that deltacommit off the active timeline while its log file is still live.
``completion_time`` answers as Hudi's ``CompletionTimeQueryViewV2.getCompletionTime`` does: the active
timeline's completed instants first, then, for an instant not on it, the archived timeline
(``spec.timeline.lsm_timeline``, read once, on the first such question:
``spec.timeline.archived_completions``).
An instant neither completed on the active timeline nor archived has no completion time: it is pending.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieTimeline``,
``HoodieDefaultTimeline`` and ``HoodieActiveTimeline`` (0.15.x), ``BaseTimelineV2`` and
``ActiveTimelineV2`` (1.x).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spec.config.table_config import LAYOUT_V1
from spec.timeline.archived_completions import NO_ARCHIVE, ArchivedCompletions
from spec.timeline.instant import STATE_ORDER, WRITE_ACTIONS, Action, Instant, InstantTimeGenerator, State
from spec.timeline.layout import is_instant_file_name, parse_instant_file_name, timeline_dir

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage


@dataclass(frozen=True)
class Timeline:
    """The active timeline: one Instant per (requested time, action family), at its highest state.

    Built from the names of the files in the timeline folder, as Hudi's active timeline is:
    the requested, inflight and completed files of one instant collapse into one instant.
    ``files`` keeps every timeline file name per requested time so writers and rollback know
    what an instant left behind. ``archived`` answers for the instants archival moved off it
    (``completion_time``): the table's LSM history when loaded from a table of version 8 or 9.
    """

    instants: tuple[Instant, ...]
    layout: int
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    origin_actions: Mapping[str, str] = field(default_factory=dict, compare=False)
    archived: ArchivedCompletions = field(default=NO_ARCHIVE, compare=False, repr=False)

    # --8<-- [start:collapse]
    @staticmethod
    def from_file_names(names: Iterable[str], layout: int) -> Timeline:
        """Collapse instant files into instants; names that are not instant files are ignored.

        Files are grouped by requested time and action family (compaction, log compaction
        and clustering belong to the family of the action they complete as); per group the
        file with the highest state wins. A ``compaction.requested`` whose completed file is
        ``T.commit`` is therefore one instant, shown as a completed ``commit``.
        """
        best: dict[tuple[str, str], Instant] = {}
        files: dict[str, list[str]] = {}
        origin: dict[str, str] = {}
        for name in names:
            if not is_instant_file_name(name, layout):
                continue
            inst = parse_instant_file_name(name, layout)
            files.setdefault(inst.requested, []).append(name)
            if inst.state != State.COMPLETED and (inst.action != Action.COMMIT or inst.requested not in origin):
                origin[inst.requested] = inst.action
            key = (inst.requested, inst.family)
            cur = best.get(key)
            if cur is None or STATE_ORDER[inst.state] > STATE_ORDER[cur.state]:
                best[key] = inst
        for inst in best.values():
            origin.setdefault(inst.requested, inst.action)
        return Timeline(tuple(sorted(best.values())), layout, {t: tuple(sorted(v)) for t, v in files.items()}, origin)
    # --8<-- [end:collapse]

    @staticmethod
    def load(storage: Storage | str, layout: int | None = None) -> Timeline:
        """The active timeline of the table at ``storage`` (layout from hoodie.properties if None), with its
        archived timeline's completion times at hand (layout 2: read on the first question that needs them)."""
        from spec.storage.hoodie_storage import Storage as _Storage

        st = storage if isinstance(storage, _Storage) else _Storage(storage)
        if layout is None:
            from spec.config.table_config import TableConfig

            layout = TableConfig.load(st).timeline_layout
        names = [f.name for f in st.list(timeline_dir(layout)) if not f.is_dir]
        active = Timeline.from_file_names(names, layout)
        if layout == LAYOUT_V1:
            return active
        return active.with_archived(ArchivedCompletions.of_storage(st))

    def with_archived(self, archived: ArchivedCompletions) -> Timeline:
        """This timeline, its archived instants' completion times answered by ``archived``."""
        return Timeline(self.instants, self.layout, self.files, self.origin_actions, archived)

    # --- queries readers need -------------------------------------------------------------

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    @functools.cached_property
    def _by_time(self) -> Mapping[str, tuple[Instant, ...]]:
        index: dict[str, list[Instant]] = {}
        for inst in self.instants:
            index.setdefault(inst.requested, []).append(inst)
        return {t: tuple(v) for t, v in index.items()}

    def get(self, requested: str) -> Instant | None:
        """The instant with this requested time (the completed one if several families share it)."""
        found = self._by_time.get(requested, ())
        return next((i for i in found if i.is_completed), found[0] if found else None)

    def origin_action(self, requested: str) -> str | None:
        """The action an instant was requested as (``compaction`` for a completed compaction)."""
        return self.origin_actions.get(requested)

    def filter(self, pred: Callable[[Instant], bool]) -> Timeline:
        """The instants ``pred`` keeps, with their files and origin actions."""
        kept = tuple(i for i in self.instants if pred(i))
        keep = {i.requested for i in kept}
        return Timeline(kept, self.layout, {t: f for t, f in self.files.items() if t in keep},
                        {t: a for t, a in self.origin_actions.items() if t in keep}, self.archived)

    def filter_actions(self, *actions: str) -> Timeline:
        """The instants of the given actions."""
        return self.filter(lambda i: i.action in actions)

    def completed(self) -> Timeline:
        """The completed instants."""
        return self.filter(lambda i: i.is_completed)

    def pending(self) -> Timeline:
        """The instants not yet completed (requested or inflight)."""
        return self.filter(lambda i: not i.is_completed)

    def commits_timeline(self) -> Timeline:
        """Completed instants that wrote data: commit, deltacommit, replacecommit (compaction included)."""
        return self.filter(
            lambda i: i.is_completed and i.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
        )

    def pending_compactions(self) -> Timeline:
        """Compactions scheduled or running, not yet completed."""
        return self.filter(lambda i: i.action == Action.COMPACTION and not i.is_completed)

    def pending_writes(self) -> Timeline:
        """Data-writing instants that did not complete (candidates for rollback when not compactions)."""
        return self.filter(lambda i: not i.is_completed and i.action in WRITE_ACTIONS)

    def latest_completed(self) -> Instant | None:
        """The last completed instant in timeline order, or None."""
        done = [i for i in self.instants if i.is_completed]
        return done[-1] if done else None

    def first_instant(self) -> Instant | None:
        """The first instant in timeline order, or None."""
        return self.instants[0] if self.instants else None

    def is_completed(self, t: str) -> bool:
        """Whether instant ``t`` is on the timeline and completed."""
        inst = self.get(t)
        return inst is not None and inst.is_completed

    # --8<-- [start:completion_time]
    def completion_time(self, t: str) -> str | None:
        """When instant ``t`` completed (``CompletionTimeQueryViewV2.getCompletionTime``): a completed instant's
        completion time (layout 1: its requested time, which stands in); for an instant not on this timeline,
        the archived timeline's (``archived``); None for a pending instant or one neither here nor archived."""
        inst = self.get(t)
        if inst is not None:
            return (inst.completed or inst.requested) if inst.is_completed else None
        return self.archived.completion_time(t)

    def is_completed_before(self, base: str, t: str) -> bool:
        """``CompletionTimeQueryViewV2.isCompletedBefore``: instant ``t`` completed (on the active or the
        archived timeline) before ``base`` — what a compaction at ``base`` asks of a log file's deltacommit."""
        done = self.completion_time(t)
        return done is not None and done < base
    # --8<-- [end:completion_time]

    # --8<-- [start:before_start]
    def contains_or_before_start(self, t: str) -> bool:
        """Hudi's ``containsOrBeforeTimelineStarts`` on the completed write timeline, as its readers
        call it: ``t`` is a completed commit, deltacommit or replacecommit (compaction included),
        or is older than the first of them, and so taken as committed and archived. An empty
        write timeline contains nothing and starts nowhere."""
        writes = self.commits_timeline()
        if writes.get(t) is not None:
            return True
        first = writes.first_instant()
        return first is not None and t < first.requested
    # --8<-- [end:before_start]

    def in_range(self, begin_exclusive: str | None, end_inclusive: str | None) -> Timeline:
        """Instants with ``begin < requested <= end`` (an open end where None)."""
        return self.filter(
            lambda i: (begin_exclusive is None or i.requested > begin_exclusive)
            and (end_inclusive is None or i.requested <= end_inclusive)
        )

    def files_of(self, instant: Instant | str) -> tuple[str, ...]:
        """The timeline file names an instant left (requested, inflight, completed).

        Given a requested time, every file with that time; given an Instant, only the files of
        its action family.
        """
        if isinstance(instant, str):
            return self.files.get(instant, ())
        return tuple(n for n in self.files.get(instant.requested, ())
                     if parse_instant_file_name(n, self.layout).family == instant.family)


def instant_times(timeline: Timeline, clock: Callable[[], float] | None = None,
                  after: str | None = None) -> InstantTimeGenerator:
    """New instant times after every time on ``timeline`` (requested and completion times) and ``after``, by
    ``clock`` (the system's when None): Hudi hands out each new instant time greater than any the timeline holds
    (``HoodieInstantTimeGenerator.createNewInstantTime``)."""
    last = max([i.completed or i.requested for i in timeline.instants] + ([after] if after else []), default=None)
    return InstantTimeGenerator(clock or time.time, last)

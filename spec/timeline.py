"""The timeline: instants, their actions and states, and the names of their files.

A Hudi table's history is a sequence of *instants*. Each instant has a requested time
(``yyyyMMddHHmmssSSS``), an action (``commit``, ``deltacommit``, ...) and a state
(``REQUESTED`` → ``INFLIGHT`` → ``COMPLETED``). Every state an instant reaches leaves a
file in the timeline folder, and the files are never rewritten: the timeline is read by
listing them.

Two layouts exist, side by side below:

- layout 1 (table version 6): files in ``.hoodie/``, completed file ``T.action``;
- layout 2 (table version 8): files in ``.hoodie/timeline/``, completed file ``T_C.action``
  where ``C`` is the completion time.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieInstant``,
``HoodieTimeline`` (actions), ``HoodieActiveTimeline`` (0.15.x), ``ActiveTimelineV2`` and
``InstantFileNameGeneratorV2`` (1.x), and ``HoodieInstantTimeGenerator``.
"""

from __future__ import annotations

import functools
import posixpath
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING

from spec.errors import IllegalStateTransition, InvalidInstantTime, InvalidName, InvalidTable

if TYPE_CHECKING:
    from spec.storage import Storage

# --8<-- [start:instant_time]
INSTANT_TIME_FORMAT = "%Y%m%d%H%M%S"
"""Instant times are ``yyyyMMddHHmmssSSS`` (17 digits); legacy ``yyyyMMddHHmmss`` (14) still parse.
They are compared as strings: lexicographic order is time order."""

INIT_INSTANT_TIME = "00000000000000"
METADATA_BOOTSTRAP_INSTANT_TIME = "00000000000001"
FULL_BOOTSTRAP_INSTANT_TIME = "00000000000002"
INVALID_INSTANT_TIME = "0"

_INSTANT_TIME_RE = re.compile(r"\d{14}(\d{3})?", re.ASCII)
_TIMELINE_TIME_RE = re.compile(r"\d{14}(\d{3}){0,2}", re.ASCII)


def validate_instant_time(t: str, metadata_suffix: bool = False) -> str:
    """Return ``t`` if it is 14 or 17 digits, else raise InvalidInstantTime.

    With ``metadata_suffix`` a 17-digit time may carry a 3-digit operation suffix (20 digits):
    the metadata table names its compaction, clean, rollback and index-init instants after a
    data-table instant time plus such a suffix, and its first instants are all zeros
    (``00000000000000000``, ``...001``). Both are valid instant *file* times, not dates.
    """
    pattern = _TIMELINE_TIME_RE if metadata_suffix else _INSTANT_TIME_RE
    if not isinstance(t, str) or not pattern.fullmatch(t):
        raise InvalidInstantTime(
            f"{t!r} is not an instant time",
            hint="instant times are 17 digits yyyyMMddHHmmssSSS (14 digits in legacy tables"
            + ("; 20 with a metadata-table suffix)" if metadata_suffix else ")"),
        )
    return t


def format_instant_time(dt: datetime) -> str:
    """An instant time for ``dt`` in UTC, millisecond precision."""
    dt = dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC)
    return dt.strftime(INSTANT_TIME_FORMAT) + f"{dt.microsecond // 1000:03d}"


def parse_instant_time(t: str) -> datetime:
    """The UTC datetime of an instant time (14-digit times have millisecond 0)."""
    validate_instant_time(t)
    try:
        base = datetime.strptime(t[:14], INSTANT_TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError as err:
        raise InvalidInstantTime(f"{t!r} is not a valid date-time", hint="check month, day and hour") from err
    millis = int(t[14:]) if len(t) == 17 else 0
    return base.replace(microsecond=millis * 1000)
# --8<-- [end:instant_time]


_ONE_MS = timedelta(milliseconds=1)


class InstantTimeGenerator:
    """Generates strictly increasing instant times from a clock (injectable for replay).

    Hudi forces every new instant time to be greater than the last one it handed out; so
    does this generator, by bumping the millisecond when the clock has not moved on.
    """

    def __init__(self, clock: Callable[[], float] = time.time, last: str | None = None) -> None:
        self._clock = clock
        self._last = last

    def next(self) -> str:
        """The next instant time: the clock's time in milliseconds, bumped one millisecond past the last time given so
        times strictly increase."""
        candidate = format_instant_time(datetime.fromtimestamp(self._clock(), UTC))
        if self._last is not None and candidate <= self._last:
            candidate = format_instant_time(parse_instant_time(self._last) + _ONE_MS)
        self._last = candidate
        return candidate


# --8<-- [start:actions]
class Action(StrEnum):
    """Timeline actions, spelled as they appear in file names."""

    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    RESTORE = "restore"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"
    CLUSTERING = "clustering"


class State(StrEnum):
    """States of an instant, in the order an instant passes through them."""

    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"


STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}

COMPLETED_ACTION: Mapping[str, str] = {
    Action.COMPACTION: Action.COMMIT,
    Action.LOG_COMPACTION: Action.DELTA_COMMIT,
    Action.CLUSTERING: Action.REPLACE_COMMIT,
}
"""Actions whose completed file carries another action's name: a completed compaction is a
``commit``, a completed log compaction a ``deltacommit``, a completed clustering a
``replacecommit``. The timeline shows the completed instant under that name, as Hudi does."""

WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION,
                           Action.LOG_COMPACTION, Action.CLUSTERING})
"""Actions that write data files (the commits timeline, pending ones included)."""

DATA_WRITES = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
"""Completed instants of these actions hold data a query reads (a completed compaction is a commit)."""
# --8<-- [end:actions]


# --8<-- [start:transitions]
_REQUESTED_FIRST: Mapping[State | None, State] = MappingProxyType(
    {None: State.REQUESTED, State.REQUESTED: State.INFLIGHT, State.INFLIGHT: State.COMPLETED})
_INFLIGHT_FIRST: Mapping[State | None, State] = MappingProxyType(
    {None: State.INFLIGHT, State.INFLIGHT: State.COMPLETED})

TRANSITIONS: Mapping[str, Mapping[State | None, State]] = MappingProxyType({
    Action.COMMIT: _REQUESTED_FIRST,
    Action.DELTA_COMMIT: _REQUESTED_FIRST,
    Action.CLEAN: _REQUESTED_FIRST,
    Action.ROLLBACK: _REQUESTED_FIRST,
    Action.SAVEPOINT: _INFLIGHT_FIRST,
    Action.REPLACE_COMMIT: _REQUESTED_FIRST,
    Action.COMPACTION: _REQUESTED_FIRST,
    Action.LOG_COMPACTION: _REQUESTED_FIRST,
    Action.RESTORE: _REQUESTED_FIRST,
    Action.INDEXING: _REQUESTED_FIRST,
    Action.SCHEMA_COMMIT: _REQUESTED_FIRST,
    Action.CLUSTERING: _REQUESTED_FIRST,
})
"""The forward moves of each action: from a state (None = not on the timeline) to the next.
Every action goes REQUESTED → INFLIGHT → COMPLETED one step at a time, but savepoints, which
have no requested file and start INFLIGHT. Nothing moves on from COMPLETED."""

_UNPUBLISH: Mapping[State, State] = MappingProxyType({State.COMPLETED: State.INFLIGHT})
_BACK_TO_PLAN: Mapping[State, State] = MappingProxyType({State.INFLIGHT: State.REQUESTED})

REVERSIONS: Mapping[str, Mapping[State, State]] = MappingProxyType({
    Action.COMMIT: _UNPUBLISH,
    Action.DELTA_COMMIT: _UNPUBLISH,
    Action.SAVEPOINT: _UNPUBLISH,
    Action.REPLACE_COMMIT: MappingProxyType({**_UNPUBLISH, **_BACK_TO_PLAN}),
    Action.COMPACTION: _BACK_TO_PLAN,
    Action.LOG_COMPACTION: _BACK_TO_PLAN,
    Action.CLUSTERING: _BACK_TO_PLAN,
})
"""Hudi's only backward moves, each the first step of undoing an instant (actions not listed have none):

- COMPLETED → INFLIGHT ("un-publish"): rolling back a completed commit, deltacommit or
  replacecommit deletes its completed file first; deleting a savepoint does the same
  before deleting its inflight file.
- INFLIGHT → REQUESTED ("back to its plan"): a failed compaction, log compaction or clustering
  (v6 clustering is a replacecommit) is rolled back to its plan and retried later (the inflight
  file goes, the requested file stays).

Everything else that goes backwards is illegal; an instant otherwise leaves the timeline only
when a rollback or restore deletes all its files."""


def legal_transitions(action: str) -> Mapping[State | None, State]:
    """The forward moves of ``action`` in ``TRANSITIONS`` (an action it does not name starts REQUESTED)."""
    return TRANSITIONS.get(action, _REQUESTED_FIRST)


def check_transition(action: str, from_state: State | None, to_state: State) -> None:
    """Raise IllegalStateTransition unless ``from_state → to_state`` is legal for ``action``."""
    if legal_transitions(action).get(from_state) != to_state:
        raise IllegalStateTransition(
            f"a {action} instant cannot move from {from_state or 'nothing'} to {to_state}",
            hint="instants move REQUESTED → INFLIGHT → COMPLETED one step at a time (savepoints start INFLIGHT)",
        )


PLANNED_ACTIONS = frozenset(a for a, moves in REVERSIONS.items() if moves.get(State.INFLIGHT) == State.REQUESTED)
"""Table services whose requested file holds a plan they can be retried from (v6 clustering is a replacecommit)."""

UNPUBLISHABLE_ACTIONS = frozenset(a for a, moves in REVERSIONS.items() if State.COMPLETED in moves)
"""Completed actions Hudi may un-publish (a completed compaction or clustering is one of these)."""


def legal_reversions(action: str) -> Mapping[State, State]:
    """The backward moves of ``action`` in ``REVERSIONS`` (none for an action it does not name)."""
    return REVERSIONS.get(action, MappingProxyType({}))


def check_reversion(action: str, from_state: State, to_state: State) -> None:
    """Raise IllegalStateTransition unless ``from_state → to_state`` is one of Hudi's reversions."""
    if legal_reversions(action).get(from_state) != to_state:
        raise IllegalStateTransition(
            f"a {action} instant cannot be reverted from {from_state} to {to_state}",
            hint="only rollback un-publishes (COMPLETED → INFLIGHT) and only planned table services "
            "return to their plan (INFLIGHT → REQUESTED)",
        )
# --8<-- [end:transitions]


# --8<-- [start:instant]
@functools.total_ordering
@dataclass(frozen=True)
class Instant:
    """One instant: requested time, action, state and (layout 2, completed) completion time.

    A completed compaction / log compaction / clustering is shown with the action of its
    completed file (``commit`` / ``deltacommit`` / ``replacecommit``), as Hudi's timeline does;
    ``Timeline.origin_action`` still tells what it was requested as.

    Two instants are equal when requested time, action and state are (the completion time is
    not compared, as in Hudi's ``HoodieInstant.equals``). They sort as Hudi's instant
    comparator does: by requested time, then action with compaction-like actions taken as the
    action they complete as, then state in lifecycle order (REQUESTED, INFLIGHT, COMPLETED).
    """

    requested: str
    action: str
    state: State
    completed: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        validate_instant_time(self.requested, metadata_suffix=True)
        if self.state == State.COMPLETED and self.action in COMPLETED_ACTION:
            raise IllegalStateTransition(
                f"{self.requested}: a completed {self.action} is a completed {COMPLETED_ACTION[self.action]}",
                hint="complete it with Instant.transition, which renames the action")
        if self.state == State.REQUESTED and legal_transitions(self.action)[None] != State.REQUESTED:
            raise IllegalStateTransition(f"{self.requested}: a {self.action} is never REQUESTED",
                                         hint="savepoints start INFLIGHT")
        if self.completed is not None:
            validate_instant_time(self.completed, metadata_suffix=True)
            if self.state != State.COMPLETED:
                raise IllegalStateTransition(
                    f"{self.requested} {self.action} is {self.state} but has a completion time",
                    hint="only COMPLETED instants carry a completion time")

    @property
    def sort_key(self) -> tuple[str, str, int]:
        """The order of instants: requested time, then action (compaction-like actions as the action they complete as),
        then state in lifecycle order."""
        return (self.requested, COMPLETED_ACTION.get(self.action, self.action), STATE_ORDER[self.state])

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Instant):
            return NotImplemented
        return self.sort_key < other.sort_key
# --8<-- [end:instant]

    @property
    def is_completed(self) -> bool:
        """Whether the instant is completed."""
        return self.state == State.COMPLETED

    @property
    def is_requested(self) -> bool:
        """Whether the instant is only requested."""
        return self.state == State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        """Whether the instant is inflight."""
        return self.state == State.INFLIGHT

    @property
    def family(self) -> str:
        """The action this instant is known by in every state (compaction → commit, ...)."""
        return COMPLETED_ACTION.get(self.action, self.action)

    def transition(self, to_state: State, completed: str | None = None) -> Instant:
        """The same instant in its next state; completing renames compaction-like actions."""
        check_transition(self.action, self.state, to_state)
        action = COMPLETED_ACTION.get(self.action, self.action) if to_state == State.COMPLETED else self.action
        return Instant(self.requested, action, to_state, completed if to_state == State.COMPLETED else None)

    def revert(self, to_state: State, as_action: str | None = None) -> Instant:
        """The same instant one state back, by one of Hudi's reversions (``legal_reversions``).

        Un-publishing a completed ``commit`` that was a compaction yields a ``compaction``
        inflight instant (a completed ``replacecommit`` that was a clustering, a ``clustering``
        one in layout 2): pass that action as ``as_action``; it must be of the same family.
        """
        check_reversion(self.action, self.state, to_state)
        action = as_action or self.action
        if COMPLETED_ACTION.get(action, action) != self.family:
            raise IllegalStateTransition(f"{self} cannot be reverted as a {action}",
                                         hint=f"use an action completing as {self.family}")
        return Instant(self.requested, action, to_state)

    def __str__(self) -> str:
        done = f"_{self.completed}" if self.completed else ""
        return f"[{self.requested}{done}__{self.action}__{self.state}]"


def new_instant(requested: str, action: str) -> Instant:
    """An instant in its first state (REQUESTED; INFLIGHT for savepoints)."""
    return Instant(requested, action, legal_transitions(action)[None])


# --8<-- [start:layouts]
LAYOUT_V1 = 1
LAYOUT_V2 = 2

TIMELINE_DIRS = {LAYOUT_V1: ".hoodie", LAYOUT_V2: ".hoodie/timeline"}
HISTORY_DIRS = {LAYOUT_V1: ".hoodie/archived", LAYOUT_V2: ".hoodie/timeline/history"}


def layout_for_table_version(table_version: int) -> int:
    """Timeline layout 1 for table versions below 8, layout 2 from 8 on."""
    return LAYOUT_V2 if table_version >= 8 else LAYOUT_V1


LAYOUT_ACTIONS: Mapping[int, frozenset[str]] = {
    LAYOUT_V1: frozenset(a.value for a in Action if a != Action.CLUSTERING),
    LAYOUT_V2: frozenset(a.value for a in Action),
}
"""Actions each layout has files for: ``clustering`` exists only in layout 2 (v6 clusters as a replacecommit)."""


def timeline_dir(layout: int) -> str:
    """Where the active timeline's files live, relative to the base path."""
    try:
        return TIMELINE_DIRS[layout]
    except KeyError as err:
        raise InvalidTable(f"unknown timeline layout {layout}", hint="layouts are 1 (v6) and 2 (v8)") from err
# --8<-- [end:layouts]


# --8<-- [start:file_names]
# layout 1: T.action[.state]; layout 2: T[_C].action[.state]  (Hudi's parsing regexes, ASCII classes as in
# Java, matched against the whole name)
_NAME_V1 = re.compile(r"(\d+)(\.\w+)(\.\D+)?", re.ASCII)
_NAME_V2 = re.compile(r"(\d+(?:_\d+)?)(\.\w+)(\.\D+)?", re.ASCII)
_STATE_SUFFIX = {".requested": State.REQUESTED, ".inflight": State.INFLIGHT}


def format_instant_file_name(instant: Instant, layout: int) -> str:
    """The file an instant in its state leaves on the timeline.

    - REQUESTED: ``T.action.requested``;
    - INFLIGHT: ``T.action.inflight``, except a COW ``commit`` whose inflight file is ``T.inflight``;
    - COMPLETED: ``T.action`` (layout 1) or ``T_C.action`` (layout 2), with compaction written as
      ``commit``, log compaction as ``deltacommit`` and clustering as ``replacecommit``.
    """
    t, action = instant.requested, instant.action
    if action not in LAYOUT_ACTIONS.get(layout, ()):
        raise InvalidName(f"timeline layout {layout} has no {action!r} files",
                          hint="clustering exists from layout 2 on; table version 6 writes it as a replacecommit")
    if instant.state == State.REQUESTED:
        return f"{t}.{action}.requested"
    if instant.state == State.INFLIGHT:
        return f"{t}.inflight" if action == Action.COMMIT else f"{t}.{action}.inflight"
    action = COMPLETED_ACTION.get(action, action)
    if layout == LAYOUT_V2 and instant.completed is not None:
        return f"{t}_{instant.completed}.{action}"
    return f"{t}.{action}"


def parse_instant_file_name(name: str, layout: int) -> Instant:
    """The instant a timeline file name stands for (inverse of ``format_instant_file_name``).

    Only the names Hudi writes (its valid active-timeline extensions) are accepted, so that
    parse and format are exact inverses: ``T.commit.inflight``, ``T.compaction`` (a completed
    compaction is ``T.commit``) or ``T.savepoint.requested`` raise InvalidName.
    In layout 2 a completed file without ``_C`` is a legacy file: its completion time is
    unknown here (Hudi takes the file's modification time) and ``completed`` is None.
    """
    m = (_NAME_V2 if layout == LAYOUT_V2 else _NAME_V1).fullmatch(name)
    if not m:
        raise InvalidName(
            f"{name!r} is not an instant file name (layout {layout})",
            hint="instant files are T.action[.requested|.inflight]" + (" or T_C.action" if layout == 2 else ""),
        )
    times, action_part, state_part = m.group(1), m.group(2)[1:], m.group(3)
    requested, _, completed = times.partition("_")
    if completed and (state_part is not None or action_part == "inflight"):
        raise InvalidName(f"{name!r}: only completed instant files carry a completion time",
                          hint="requested and inflight files are named T.action.requested / T.action.inflight")
    if action_part == "inflight" and state_part is None:
        return Instant(requested, Action.COMMIT, State.INFLIGHT)
    if action_part not in LAYOUT_ACTIONS.get(layout, ()):
        raise InvalidName(f"{name!r}: no action {action_part!r} in timeline layout {layout}",
                          hint="actions are " + ", ".join(sorted(LAYOUT_ACTIONS.get(layout, ()))))
    if state_part is None:
        if completed and layout != LAYOUT_V2:
            raise InvalidName(f"{name!r}: completion times appear only in layout 2", hint="check the layout")
        if action_part in COMPLETED_ACTION:
            raise InvalidName(f"{name!r}: a completed {action_part} is written as {COMPLETED_ACTION[action_part]}",
                              hint=f"name it {times}.{COMPLETED_ACTION[action_part]}")
        return Instant(requested, action_part, State.COMPLETED, completed or None)
    if action_part == Action.COMMIT and state_part == ".inflight":
        raise InvalidName(f"{name!r}: the inflight file of a commit is T.inflight",
                          hint=f"name it {requested}.inflight (Hudi ignores {name})")
    if state_part not in _STATE_SUFFIX:
        raise InvalidName(f"{name!r}: unknown state suffix {state_part!r}", hint="use .requested or .inflight")
    state = _STATE_SUFFIX[state_part]
    if state == State.REQUESTED and legal_transitions(action_part)[None] != State.REQUESTED:
        raise InvalidName(f"{name!r}: a {action_part} has no requested file",
                          hint=f"it starts as {requested}.{action_part}.inflight")
    return Instant(requested, action_part, state)
# --8<-- [end:file_names]


# --8<-- [start:name_table]
def instant_file_name_table() -> list[tuple[str, str, str, str, str]]:
    """Per action: its requested, inflight, completed (layout 1) and completed (layout 2) file,
    with ``T`` for the requested and ``C`` for the completion time; ``—`` where there is none.
    Pending files are named alike in both layouts."""
    t, c = "20000101000000000", "20000101000000999"

    def name(action: str, inst: Instant, layout: int) -> str:
        if action not in LAYOUT_ACTIONS[layout]:
            return "—"
        return format_instant_file_name(inst, layout).replace(c, "C").replace(t, "T")

    rows = []
    for action in Action:
        inflight = Instant(t, action, State.INFLIGHT)
        requested = "—" if legal_transitions(action)[None] != State.REQUESTED else name(
            action, Instant(t, action, State.REQUESTED), LAYOUT_V2)
        rows.append((action.value, requested, name(action, inflight, LAYOUT_V2),
                     name(action, inflight.transition(State.COMPLETED), LAYOUT_V1),
                     name(action, inflight.transition(State.COMPLETED, c), LAYOUT_V2)))
    return rows
# --8<-- [end:name_table]


def is_instant_file_name(name: str, layout: int) -> bool:
    """True when ``name`` parses as an instant file of ``layout``."""
    try:
        parse_instant_file_name(name, layout)
    except InvalidName:
        return False
    return True


@dataclass(frozen=True)
class Timeline:
    """The active timeline: one Instant per (requested time, action family), at its highest state.

    Built from the names of the files in the timeline folder, as Hudi's active timeline is:
    the requested, inflight and completed files of one instant collapse into one instant.
    ``files`` keeps every timeline file name per requested time so writers and rollback know
    what an instant left behind.
    """

    instants: tuple[Instant, ...]
    layout: int
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    origin_actions: Mapping[str, str] = field(default_factory=dict, compare=False)

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
        """The active timeline of the table at ``storage`` (layout from hoodie.properties if None)."""
        from spec.storage import Storage as _Storage

        st = storage if isinstance(storage, _Storage) else _Storage(storage)
        if layout is None:
            from spec.table_config import TableConfig

            layout = TableConfig.load(st).timeline_layout
        names = [f.name for f in st.list(timeline_dir(layout)) if not f.is_dir]
        return Timeline.from_file_names(names, layout)

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
                        {t: a for t, a in self.origin_actions.items() if t in keep})

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

    def completion_time(self, t: str) -> str | None:
        """The completion time of a completed instant (layout 2); its requested time in layout 1."""
        inst = self.get(t)
        if inst is None or not inst.is_completed:
            return None
        return inst.completed or inst.requested

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


# --8<-- [start:content]
def instant_file_path(instant: Instant, layout: int) -> str:
    """Path of an instant's file (in its state) relative to the base path."""
    return posixpath.join(timeline_dir(layout), format_instant_file_name(instant, layout))


def read_instant_content(storage: Storage, instant: Instant | str, layout: int) -> bytes:
    """The bytes of an instant file (an Instant in its state, or a file name in the timeline folder).

    Requested compaction/clustering files hold Avro plans, completed write files hold commit
    metadata (JSON in layout 1, Avro in layout 2); many requested and inflight files are empty.
    """
    name = instant if isinstance(instant, str) else format_instant_file_name(instant, layout)
    return storage.read(posixpath.join(timeline_dir(layout), name))
# --8<-- [end:content]

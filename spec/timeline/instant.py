"""Instants: their times, actions and states, and the moves between states.

A Hudi table's history is a sequence of *instants*. Each instant has a requested time
(``yyyyMMddHHmmssSSS``), an action (``commit``, ``deltacommit``, ...) and a state
(``REQUESTED`` → ``INFLIGHT`` → ``COMPLETED``); a completed instant of table version 8 or 9 also
has a completion time. An instant moves forward through its states (``TRANSITIONS``) and back
only by the few reversions that start undoing it (``REVERSIONS``). The files each state leaves on
the timeline are named by ``spec.timeline.layout``; the timeline's queries are ``spec.timeline.active_timeline``.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieInstant``
(states, ordering, ``equals``), ``HoodieTimeline`` (the action names), ``HoodieInstantTimeGenerator``
and the state moves of ``HoodieActiveTimeline`` (0.15.x) and ``ActiveTimelineV2`` (1.x).
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from types import MappingProxyType

from spec.errors import IllegalStateTransition, InvalidInstantTime

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


QUERY_INSTANT_FORMS = ("yyyyMMddHHmmss[SSS]", "yyyy-MM-dd HH:mm:ss[.SSS]", "yyyy-MM-dd")
"""The forms a time-travel query's instant may take (``as.of.instant``)."""


def format_query_instant(text: str) -> str:
    """The instant time a time-travel query names, from any form ``QUERY_INSTANT_FORMS`` lists.

    Rule (Hudi's ``HoodieSqlCommonUtils.formatQueryInstant``): an instant time (14 or 17 digits) is taken as
    it is, once it is shown to be a valid date; ``yyyy-MM-dd HH:mm:ss[.SSS]`` becomes ``yyyyMMddHHmmssSSS``
    (``HoodieInstantTimeGenerator.getInstantForDateString``, milliseconds ``000`` when absent);
    ``yyyy-MM-dd`` becomes the start of that day, ``yyyyMMdd000000000``. The date and time are taken as
    written, as Hudi reformats them (no time-zone conversion). Anything else is an InvalidInstantTime."""
    forms = {10: "%Y-%m-%d", 19: "%Y-%m-%d %H:%M:%S", 23: "%Y-%m-%d %H:%M:%S.%f"}
    try:
        if _INSTANT_TIME_RE.fullmatch(text):
            datetime.strptime(text[:14], INSTANT_TIME_FORMAT)
            if len(text) == 17:
                datetime.strptime(text[14:], "%f")
            return text
        if len(text) in forms and text.isascii():
            parsed = datetime.strptime(text, forms[len(text)])
            return parsed.strftime(INSTANT_TIME_FORMAT) + f"{parsed.microsecond // 1000:03d}"
    except ValueError:
        pass
    raise InvalidInstantTime(f"{text!r} is not an instant time or a date a query takes",
                             hint=f"give one of {', '.join(QUERY_INSTANT_FORMS)}, as Apache Hudi's as.of.instant takes")


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

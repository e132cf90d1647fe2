"""Timeline layouts: where each table version keeps its timeline, and the names of instant files.

Two layouts exist, side by side below:

- layout 1 (table version 6): files in ``.hoodie/``, completed file ``T.action``;
- layout 2 (table versions 8 and 9): files in ``.hoodie/timeline/``, completed file ``T_C.action``
  where ``C`` is the completion time.

Every state an instant reaches leaves one file, never rewritten: the timeline is read by listing
them, and ``parse_instant_file_name`` is the exact inverse of ``format_instant_file_name``.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``TimelineLayout``,
``HoodieInstant.getFileName`` and ``HoodieInstant``'s name pattern (0.15.x), ``InstantFileNameGeneratorV1``,
``InstantFileNameGeneratorV2`` and ``InstantFileNameParserV2`` (1.x), ``HoodieActiveTimeline.readDataFromPath``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from spec.config.table_config import LAYOUT_V1, LAYOUT_V2
from spec.errors import InvalidName, InvalidTable
from spec.timeline.instant import COMPLETED_ACTION, Action, Instant, State, legal_transitions

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage


# --8<-- [start:layouts]
TIMELINE_DIRS = {LAYOUT_V1: ".hoodie", LAYOUT_V2: ".hoodie/timeline"}
HISTORY_DIRS = {LAYOUT_V1: ".hoodie/archived", LAYOUT_V2: ".hoodie/timeline/history"}


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

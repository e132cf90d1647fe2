"""The timeline's state machine, per table version, drawn from ``spec.timeline.instant.TRANSITIONS`` and ``REVERSIONS``.

One row per action the table version's timeline layout has files for. Each state is a box naming the
file the state leaves on the timeline (``format_instant_file_name``); forward moves are arrows to the
right, Hudi's backward moves (un-publish, back to the plan) arcs beneath. Pass another transition
table to draw another rule: the picture is of the table given, else of ``spec.timeline.instant``'s tables as
they are when drawn (the ones ``check_transition`` and ``check_reversion`` read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import spec.timeline.instant as rules
from reference.diagrams.svg import (
    BLUE,
    BLUE_FILL,
    GREEN_FILL,
    GREY_FILL,
    INK,
    MUTED,
    ORANGE,
    Canvas,
)
from spec.config.table_config import layout_for_table_version
from spec.errors import HudiSpecError
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import LAYOUT_ACTIONS, format_instant_file_name

TABLE_VERSIONS = (6, 8)
"""The table versions whose state machines the site draws (one timeline layout each)."""
STATES = (State.REQUESTED, State.INFLIGHT, State.COMPLETED)
_T, _C = "20000101000000000", "20000101000000999"

Transitions = Mapping[str, Mapping[State | None, State]]
Reversions = Mapping[str, Mapping[State, State]]


@dataclass(frozen=True)
class Move:
    """One move of an action's instant: from a state (None: not on the timeline yet) to another."""

    action: str
    src: State | None
    dst: State
    kind: str  # "start", "forward", "un-publish", "back to plan" or "back"


def moves(action: str, transitions: Transitions | None = None, reversions: Reversions | None = None) -> list[Move]:
    """The moves of ``action`` in the given tables (the spec's if None), forward ones first, in lifecycle order."""
    transitions = rules.TRANSITIONS if transitions is None else transitions
    reversions = rules.REVERSIONS if reversions is None else reversions
    out = [Move(action, src, dst, "start" if src is None else "forward")
           for src, dst in sorted(transitions.get(action, {}).items(), key=lambda m: -1 if m[0] is None
                                  else STATES.index(m[0]))]
    for src, dst in sorted(reversions.get(action, {}).items(), key=lambda m: STATES.index(m[0])):
        kind = {(State.COMPLETED, State.INFLIGHT): "un-publish",
                (State.INFLIGHT, State.REQUESTED): "back to plan"}.get((src, dst), "back")
        out.append(Move(action, src, dst, kind))
    return out


def actions_of(table_version: int, transitions: Transitions | None = None) -> list[str]:
    """The actions drawn for a table version: those of ``Action`` (then any other the table names) that the
    version's timeline layout has files for."""
    transitions = rules.TRANSITIONS if transitions is None else transitions
    layout_actions = LAYOUT_ACTIONS[layout_for_table_version(table_version)]
    named = [a.value for a in Action] + sorted(set(map(str, transitions)) - {a.value for a in Action})
    return [a for a in named if a in layout_actions and a in transitions]


def state_file(action: str, state: State, table_version: int) -> str:
    """The timeline file ``action`` leaves in ``state`` (``T`` requested time, ``C`` completion time), or the
    state's name when the spec's rules give the action no such file."""
    layout = layout_for_table_version(table_version)
    try:
        inst = Instant(_T, action, State.INFLIGHT).transition(state, _C) if state == State.COMPLETED \
            else Instant(_T, action, state)
        return format_instant_file_name(inst, layout).replace(_C, "C").replace(_T, "T")
    except HudiSpecError:
        return state.value


def states_of(action_moves: list[Move]) -> list[State]:
    """The states the moves touch, in lifecycle order."""
    seen = {m.dst for m in action_moves} | {m.src for m in action_moves if m.src is not None}
    return [s for s in STATES if s in seen]


def _id(action: str, state: State) -> str:
    return f"{action}_{state.value}"


def state_machine_mermaid(table_version: int, transitions: Transitions | None = None,
                          reversions: Reversions | None = None) -> str:
    """A Mermaid ``stateDiagram-v2`` of every action's states and moves for ``table_version``."""
    lines = ["stateDiagram-v2", "    direction LR"]
    for action in actions_of(table_version, transitions):
        action_moves = moves(action, transitions, reversions)
        lines += [f'    state "{action}" as {action} {{', "        direction LR"]
        for s in states_of(action_moves):
            lines.append(f'        state "{s.value}<br/>{state_file(action, s, table_version)}" as {_id(action, s)}')
        for m in action_moves:
            src = "[*]" if m.src is None else _id(action, m.src)
            label = "" if m.kind in ("start", "forward") else f": {m.kind}"
            lines.append(f"        {src} --> {_id(action, m.dst)}{label}")
        lines.append("    }")
    return "\n".join(lines) + "\n"


_LEFT, _BOX_W, _BOX_H, _GAP, _ROW_H, _TOP = 120, 190, 42, 56, 92, 34


def _box_x(state: State) -> float:
    return _LEFT + _GAP + STATES.index(state) * (_BOX_W + _GAP)


def state_machine_svg(table_version: int, transitions: Transitions | None = None,
                      reversions: Reversions | None = None) -> str:
    """The state machine of ``table_version`` as an SVG picture, one row per action."""
    actions = actions_of(table_version, transitions)
    layout = layout_for_table_version(table_version)
    width = _box_x(State.COMPLETED) + _BOX_W + 20
    canvas = Canvas(width, _TOP + len(actions) * _ROW_H + 10,
                    f"Instant states of table version {table_version} (timeline layout {layout})")
    canvas.text(10, 20, f"table version {table_version} · timeline layout {layout}", size=14, bold=True)
    canvas.text(width - 10, 20, "→ forward   ⤺ backward (undo)", size=12, anchor="end", fill=MUTED)
    fills = {State.REQUESTED: GREY_FILL, State.INFLIGHT: BLUE_FILL, State.COMPLETED: GREEN_FILL}
    for row, action in enumerate(actions):
        y = _TOP + row * _ROW_H + 6
        mid = y + _BOX_H / 2
        action_moves = moves(action, transitions, reversions)
        canvas.text(10, mid + 4, action, size=13, bold=True, mono=True)
        finals = {s for s in states_of(action_moves)} - {m.src for m in action_moves
                                                        if m.kind in ("start", "forward")}
        for s in states_of(action_moves):
            x = _box_x(s)
            canvas.rect(x, y, _BOX_W, _BOX_H, fill=fills[s], stroke=INK, stroke_width=2.2 if s in finals else 1.2,
                        tip=f"{action} {s.value}")
            canvas.text(x + _BOX_W / 2, y + 16, s.value, size=10, anchor="middle", fill=MUTED, bold=True)
            canvas.text(x + _BOX_W / 2, y + 33, state_file(action, s, table_version), size=11.5,
                        anchor="middle", mono=True)
        for m in action_moves:
            _draw_move(canvas, m, y, mid)
    return canvas.render()


def _draw_move(canvas: Canvas, m: Move, y: float, mid: float) -> None:
    dst_x = _box_x(m.dst)
    if m.src is None:
        canvas.circle(dst_x - 30, mid, 6, fill=INK)
        canvas.line(dst_x - 24, mid, dst_x - 2, mid, arrow=True)
        return
    src_x = _box_x(m.src)
    if m.kind == "forward" and dst_x > src_x:
        if STATES.index(m.dst) - STATES.index(m.src) == 1:
            canvas.line(src_x + _BOX_W, mid, dst_x - 2, mid, arrow=True, stroke=BLUE, width=1.6)
        else:  # a skip over a state: an arc above the row
            a, b = src_x + _BOX_W / 2, dst_x + _BOX_W / 2
            canvas.path(f"M{a:.1f},{y:.1f} C{a:.1f},{y - 26:.1f} {b:.1f},{y - 26:.1f} {b:.1f},{y - 2:.1f}",
                        stroke=BLUE, width=1.6, arrow=True)
        return
    shift = 16 if dst_x < src_x else -16  # leave a box's bottom apart from the arcs that arrive at it
    a, b = src_x + _BOX_W / 2 - shift, dst_x + _BOX_W / 2 + shift
    bottom = y + _BOX_H
    canvas.path(f"M{a:.1f},{bottom:.1f} C{a:.1f},{bottom + 30:.1f} {b:.1f},{bottom + 30:.1f} {b:.1f},"
                f"{bottom + 2:.1f}", stroke=ORANGE, width=1.6, arrow=True, dash="5 3")
    canvas.text((a + b) / 2, bottom + 33, m.kind, size=11, anchor="middle", fill=ORANGE, italic=True)

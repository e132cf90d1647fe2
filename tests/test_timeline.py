"""Timeline rules: instant times, file names per layout, state transitions, collapsing files."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import IllegalStateTransition, InvalidInstantTime, InvalidName
from spec.timeline import (
    Action,
    Instant,
    InstantTimeGenerator,
    State,
    Timeline,
    check_transition,
    format_instant_file_name,
    format_instant_time,
    legal_transitions,
    new_instant,
    parse_instant_file_name,
    parse_instant_time,
    validate_instant_time,
)
from tests.strategies import instant_times, instants


@given(instant_times())
def test_instant_time_round_trip(t: str) -> None:
    dt = parse_instant_time(t)
    assert format_instant_time(dt) == (t if len(t) == 17 else t + "000")


@given(st.text(max_size=20))
def test_invalid_instant_times_raise_typed_error(text: str) -> None:
    if text.isascii() and text.isdigit() and len(text) in (14, 17):
        validate_instant_time(text)
    else:
        with pytest.raises(InvalidInstantTime):
            validate_instant_time(text)


def test_generator_is_strictly_increasing_with_a_stuck_clock() -> None:
    gen = InstantTimeGenerator(clock=lambda: 1_700_000_000.0)
    times = [gen.next() for _ in range(5)]
    assert times == sorted(set(times))
    assert times[0] == "20231114221320000" and times[1] == "20231114221320001"


@pytest.mark.parametrize("layout", [1, 2])
@given(data=st.data())
def test_instant_file_name_round_trip(layout: int, data: st.DataObject) -> None:
    inst = data.draw(instants(layout))
    name = format_instant_file_name(inst, layout)
    back = parse_instant_file_name(name, layout)
    assert (back.requested, back.action, back.state, back.completed) == (
        inst.requested, inst.action, inst.state, inst.completed)
    assert format_instant_file_name(back, layout) == name


@pytest.mark.parametrize(
    ("name", "layout", "expected"),
    [
        ("20240418173213674.commit.requested", 1, ("20240418173213674", "commit", State.REQUESTED, None)),
        ("20240418173213674.inflight", 1, ("20240418173213674", "commit", State.INFLIGHT, None)),
        ("20240418173213674.commit", 1, ("20240418173213674", "commit", State.COMPLETED, None)),
        ("20250126040823628.deltacommit.inflight", 1, ("20250126040823628", "deltacommit", State.INFLIGHT, None)),
        ("20250713010535797_20250713010536200.commit", 2,
         ("20250713010535797", "commit", State.COMPLETED, "20250713010536200")),
        ("20251220210108078.compaction.requested", 2, ("20251220210108078", "compaction", State.REQUESTED, None)),
        ("20250713010535797.commit", 2, ("20250713010535797", "commit", State.COMPLETED, None)),  # legacy v8
    ],
)
def test_known_names(name: str, layout: int, expected: tuple[object, ...]) -> None:
    inst = parse_instant_file_name(name, layout)
    assert (inst.requested, inst.action, inst.state, inst.completed) == expected


@pytest.mark.parametrize(
    ("name", "layout"),
    [("hoodie.properties", 1), ("2024.commit", 1), ("20240418173213674_20240418173213999.commit", 1),
     ("20240418173213674_1.commit.requested", 2), ("20240418173213674.commit.bogus", 1), ("", 2), (".aux", 1)],
)
def test_invalid_names_raise_typed_error(name: str, layout: int) -> None:
    with pytest.raises(InvalidName):
        parse_instant_file_name(name, layout)


ALL_STATES: list[State | None] = [None, *State]


@given(st.sampled_from(list(Action)), st.sampled_from(ALL_STATES), st.sampled_from(list(State)))
def test_only_legal_transitions_pass(action: Action, src: State | None, dst: State) -> None:
    order = [None, State.REQUESTED, State.INFLIGHT, State.COMPLETED]
    start = State.INFLIGHT if action == Action.SAVEPOINT else State.REQUESTED
    legal = (src is None and dst == start) or (src is not None and order.index(dst) == order.index(src) + 1
                                               and not (action == Action.SAVEPOINT and src == State.REQUESTED))
    if legal:
        check_transition(action, src, dst)
    else:
        with pytest.raises(IllegalStateTransition):
            check_transition(action, src, dst)


def test_transition_walk_and_completed_is_terminal() -> None:
    inst = new_instant("20240101000000000", Action.COMPACTION)
    inst = inst.transition(State.INFLIGHT).transition(State.COMPLETED, completed="20240101000001000")
    assert inst.action == Action.COMMIT and inst.completed == "20240101000001000"
    for dst in State:
        with pytest.raises(IllegalStateTransition):
            inst.transition(dst)
    assert legal_transitions(Action.SAVEPOINT)[None] == State.INFLIGHT


def test_collapse_keeps_highest_state_and_origin() -> None:
    names = ["001.commit.requested", "001.inflight", "001.commit", "002.deltacommit.requested",
             "003.compaction.requested", "003.compaction.inflight", "003.commit", "hoodie.properties"]
    names = [n.replace("001", "20240101000000001").replace("002", "20240101000000002")
             .replace("003", "20240101000000003") for n in names]
    tl = Timeline.from_file_names(names, 1)
    assert [(i.requested[-3:], i.action, i.state) for i in tl.instants] == [
        ("001", "commit", State.COMPLETED), ("002", "deltacommit", State.REQUESTED),
        ("003", "commit", State.COMPLETED)]
    assert tl.origin_action("20240101000000003") == "compaction"
    assert len(tl.files_of("20240101000000001")) == 3
    assert tl.pending_writes().instants == (Instant("20240101000000002", "deltacommit", State.REQUESTED),)
    assert tl.contains_or_before_start("20231231000000000") and not tl.contains_or_before_start("20240101000000002")
    assert [i.requested[-3:] for i in tl.in_range("20240101000000001", None).instants] == ["002", "003"]


def test_file_name_order_is_irrelevant() -> None:
    names = ["20240101000000001.commit.requested", "20240101000000001.inflight", "20240101000000001.commit"]
    results = {Timeline.from_file_names(p, 1).instants for p in itertools.permutations(names)}
    assert len(results) == 1

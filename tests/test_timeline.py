"""Timeline rules: instant times, file names per layout, state transitions, collapsing files."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import IllegalStateTransition, InvalidInstantTime, InvalidName
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import (
    STATE_ORDER,
    Action,
    Instant,
    InstantTimeGenerator,
    State,
    check_reversion,
    check_transition,
    format_instant_time,
    legal_transitions,
    new_instant,
    parse_instant_time,
    validate_instant_time,
)
from spec.timeline.layout import format_instant_file_name, instant_file_name_table, parse_instant_file_name
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


def test_metadata_table_times() -> None:
    # metadata-table instants: all-zero init times and data instant + 3-digit operation suffix
    assert validate_instant_time("00000000000000000") == "00000000000000000"
    with pytest.raises(InvalidInstantTime):
        parse_instant_time("00000000000000000")  # a valid file time, but not a date
    with pytest.raises(InvalidInstantTime):
        validate_instant_time("20250618054711154001")
    assert validate_instant_time("20250618054711154001", metadata_suffix=True)
    inst = parse_instant_file_name("20250618054711154001.compaction.requested", 1)
    assert (inst.requested, inst.action, inst.state) == ("20250618054711154001", "compaction", State.REQUESTED)
    with pytest.raises(InvalidInstantTime):
        validate_instant_time("202506180547111540012", metadata_suffix=True)


def test_generator_never_goes_back_when_the_clock_does() -> None:
    ticks = iter([1_700_000_010.0, 1_700_000_000.0, 1_700_000_020.5])
    gen = InstantTimeGenerator(clock=lambda: next(ticks))
    assert [gen.next() for _ in range(3)] == ["20231114221330000", "20231114221330001", "20231114221340500"]
    resumed = InstantTimeGenerator(clock=lambda: 0.0, last="20231114221340500")
    assert resumed.next() == "20231114221340501"


def test_inflight_and_requested_files_never_carry_a_completion_time() -> None:
    for name in ("20240101000000000_20240101000000001.inflight",
                 "20240101000000000_20240101000000001.deltacommit.inflight",
                 "20240101000000000_20240101000000001.clean.requested"):
        with pytest.raises(InvalidName):
            parse_instant_file_name(name, 2)
    with pytest.raises(IllegalStateTransition):
        Instant("20240101000000000", "commit", State.INFLIGHT, "20240101000000001")


_NAME_PARTS = st.tuples(
    st.sampled_from(["20240101000000000", "20240101000000", "2024", "", "2024010100000000x"]),
    st.sampled_from(["", "_20240101000000009", "_x", "_"]),
    st.sampled_from([".commit", ".deltacommit", ".compaction", ".clustering", ".savepoint", ".inflight", ".requested",
                     ".foo", "commit", ""]),
    st.sampled_from(["", ".requested", ".inflight", ".completed", ".crc", ".requested.crc", ".1"]),
)


@pytest.mark.parametrize("layout", [1, 2])
@given(parts=_NAME_PARTS)
def test_near_miss_names_are_rejected_or_round_trip(layout: int, parts: tuple[str, str, str, str]) -> None:
    """An independent grammar of instant file names decides which composed names are valid."""
    t, c, action, state = parts
    name = "".join(parts)
    if action == "":  # the state part then stands where the action goes
        action, state = state, ""
    valid_time = len(t) in (14, 17) and t.isdigit()
    valid_c = c == "" or (layout == 2 and c[1:].isdigit() and len(c) == 18 and state == "" and action != ".inflight")
    if action == ".inflight":  # the COW inflight file ``T.inflight``, nothing may follow
        valid_action = state == ""
    else:
        valid_action = action in (".commit", ".deltacommit", ".compaction", ".clustering", ".savepoint") and state in (
            "", ".requested", ".inflight")
        # Hudi writes T.inflight for a commit, completes compaction/clustering under another action,
        # and never requests a savepoint
        if (action, state) in ((".commit", ".inflight"), (".compaction", ""), (".clustering", ""),
                               (".savepoint", ".requested")) or (action == ".clustering" and layout == 1):
            valid_action = False  # ... and has clustering files only in layout 2
    if valid_time and valid_c and valid_action:
        inst = parse_instant_file_name(name, layout)
        assert inst.requested == t and inst.completed == (c[1:] or None)
        assert format_instant_file_name(inst, layout) == name
    else:
        with pytest.raises(InvalidName):
            parse_instant_file_name(name, layout)


@given(st.lists(instants(1), min_size=2, max_size=8))
def test_instants_sort_as_hudi_compares_them(items: list[Instant]) -> None:
    family = {"compaction": "commit", "logcompaction": "deltacommit", "clustering": "replacecommit"}
    expected = sorted(items, key=lambda i: (i.requested, family.get(i.action, i.action), STATE_ORDER[i.state]))
    assert [i.sort_key for i in sorted(items)] == [i.sort_key for i in expected]
    for a in items:
        for b in items:
            assert (a == b) == ((a.requested, a.action, a.state) == (b.requested, b.action, b.state))


def test_equality_sees_state_not_completion_time() -> None:
    t = "20240101000000000"
    assert Instant(t, "commit", State.REQUESTED) != Instant(t, "commit", State.COMPLETED)
    assert Instant(t, "commit", State.COMPLETED, "20240101000000005") == Instant(t, "commit", State.COMPLETED)
    assert Instant(t, "compaction", State.INFLIGHT) < Instant(t, "commit", State.COMPLETED)
    assert Instant(t, "commit", State.COMPLETED) < Instant(t, "deltacommit", State.REQUESTED)


def test_two_families_at_one_time_stay_two_instants() -> None:
    t = "20240101000000000"
    names = [f"{t}.deltacommit.requested", f"{t}.deltacommit.inflight", f"{t}_20240101000000500.deltacommit",
             f"{t}.compaction.requested"]
    tl = Timeline.from_file_names(names, 2)
    assert [(i.action, i.state) for i in tl.instants] == [("compaction", State.REQUESTED),
                                                          ("deltacommit", State.COMPLETED)]
    assert tl.get(t) == tl.instants[1] and tl.is_completed(t)
    assert tl.files_of(tl.instants[0]) == (f"{t}.compaction.requested",)
    assert len(tl.files_of(tl.instants[1])) == 3 and len(tl.files_of(t)) == 4
    assert tl.pending_compactions().instants == (tl.instants[0],)


@given(st.sampled_from(list(Action)), st.sampled_from(list(State)), st.sampled_from(list(State)))
def test_only_hudis_reversions_pass(action: Action, src: State, dst: State) -> None:
    # Hudi's reversions (docs/spec/timeline.md): rollback un-publishes completed writes (and savepoint
    # deletion its savepoint);
    # failed compaction / log compaction / clustering (v6: replacecommit) go back to their plan
    unpublish = src == State.COMPLETED and dst == State.INFLIGHT and action in (
        "commit", "deltacommit", "replacecommit", "savepoint")
    to_plan = src == State.INFLIGHT and dst == State.REQUESTED and action in (
        "compaction", "logcompaction", "clustering", "replacecommit")
    if unpublish or to_plan:
        check_reversion(action, src, dst)
    else:
        with pytest.raises(IllegalStateTransition):
            check_reversion(action, src, dst)


def test_revert_of_a_completed_compaction_names_the_compaction() -> None:
    done = new_instant("20240101000000000", Action.COMPACTION).transition(State.INFLIGHT).transition(
        State.COMPLETED, "20240101000000100")
    back = done.revert(State.INFLIGHT, as_action=Action.COMPACTION)
    assert back == Instant("20240101000000000", "compaction", State.INFLIGHT)
    assert back.revert(State.REQUESTED).is_requested
    with pytest.raises(IllegalStateTransition):
        done.revert(State.INFLIGHT, as_action=Action.CLUSTERING)
    with pytest.raises(IllegalStateTransition):
        Instant("20240101000000000", "clean", State.COMPLETED).revert(State.INFLIGHT)
    with pytest.raises(IllegalStateTransition):
        Instant("20240101000000000", "compaction", State.COMPLETED)
    with pytest.raises(IllegalStateTransition):
        Instant("20240101000000000", "savepoint", State.REQUESTED)


def _doc_table(page: str, marker: str) -> list[tuple[str, ...]]:
    text = (Path(__file__).resolve().parent.parent / "docs" / "spec" / page).read_text()
    block = text.split(f"<!-- {marker}:start -->")[1].split(f"<!-- {marker}:end -->")[0]
    rows = [line.strip().strip("|").split("|") for line in block.strip().splitlines()[2:]]
    return [tuple(cell.strip().strip("`") for cell in row) for row in rows]


def test_the_docs_name_table_is_what_the_code_produces() -> None:
    assert _doc_table("timeline.md", "instant-file-names") == instant_file_name_table()


def test_the_name_table_agrees_with_the_format_reference() -> None:
    # Hudi's timeline file names (HoodieInstant, InstantFileNameGeneratorV2), copied by hand
    reference = {
        "commit": ("T.commit.requested", "T.inflight", "T.commit", "T_C.commit"),
        "deltacommit": ("T.deltacommit.requested", "T.deltacommit.inflight", "T.deltacommit", "T_C.deltacommit"),
        "compaction": ("T.compaction.requested", "T.compaction.inflight", "T.commit", "T_C.commit"),
        "logcompaction": ("T.logcompaction.requested", "T.logcompaction.inflight", "T.deltacommit",
                          "T_C.deltacommit"),
        "replacecommit": ("T.replacecommit.requested", "T.replacecommit.inflight", "T.replacecommit",
                          "T_C.replacecommit"),
        "clustering": ("T.clustering.requested", "T.clustering.inflight", "—", "T_C.replacecommit"),
        "savepoint": ("—", "T.savepoint.inflight", "T.savepoint", "T_C.savepoint"),
        **{a: (f"T.{a}.requested", f"T.{a}.inflight", f"T.{a}", f"T_C.{a}")
           for a in ("clean", "rollback", "restore", "indexing")},
    }
    table = {row[0]: row[1:] for row in instant_file_name_table()}
    for action, names in reference.items():
        assert table[action] == names, action


def test_timeline_starts_at_the_first_completed_write() -> None:
    # Hudi's readers call containsOrBeforeTimelineStarts on the completed commits timeline:
    # a clean or a pending write older than the first completed write does not move the start
    t = [f"2024010100000000{i}" for i in range(8)]
    names = [f"{t[1]}.clean.requested", f"{t[1]}.clean.inflight", f"{t[1]}.clean",
             f"{t[2]}.deltacommit.requested", f"{t[5]}.deltacommit.requested", f"{t[5]}.deltacommit.inflight",
             f"{t[5]}.deltacommit", f"{t[7]}.deltacommit.requested"]
    tl = Timeline.from_file_names(names, 1)
    assert [tl.contains_or_before_start(x) for x in t] == [True, True, True, True, True, True, False, False]
    assert not Timeline.from_file_names(names[:4], 1).contains_or_before_start(t[0])  # no completed write

"""Hypothesis strategies for names and values of the format, shared by the tests."""

from __future__ import annotations

from hypothesis import strategies as st

from spec.timeline.instant import Action, Instant, State

digits = "0123456789"


@st.composite
def instant_times(draw: st.DrawFn) -> str:
    """Valid 17-digit instant times (and, rarely, legacy 14-digit ones)."""
    year = draw(st.integers(2000, 2099))
    month = draw(st.integers(1, 12))
    day = draw(st.integers(1, 28))
    hh, mm, ss = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    base = f"{year:04d}{month:02d}{day:02d}{hh:02d}{mm:02d}{ss:02d}"
    if draw(st.integers(0, 9)) == 0:
        return base
    return base + f"{draw(st.integers(0, 999)):03d}"


file_ids = st.builds(lambda u, n: f"{u}-{n}", st.uuids(version=4).map(str), st.integers(0, 20))
write_tokens = st.builds(lambda a, b, c: f"{a}-{b}-{c}", st.integers(0, 10**6), st.integers(0, 10**6),
                         st.integers(0, 10**6))
actions = st.sampled_from(list(Action))


@st.composite
def instants(draw: st.DrawFn, layout: int) -> Instant:
    """Instants as they can appear in a timeline of ``layout``."""
    action = draw(actions.filter(lambda a: layout == 2 or a != Action.CLUSTERING))  # clustering: layout 2 only
    state = draw(st.sampled_from([s for s in State if not (action == Action.SAVEPOINT and s == State.REQUESTED)]))
    t = draw(instant_times())
    if state == State.COMPLETED:
        completed_as = {Action.COMPACTION: Action.COMMIT, Action.LOG_COMPACTION: Action.DELTA_COMMIT,
                        Action.CLUSTERING: Action.REPLACE_COMMIT}.get(action, action)
        c = draw(instant_times()) if layout == 2 else None
        return Instant(t, completed_as, state, c)
    return Instant(t, action, state)

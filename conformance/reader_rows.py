"""Reader rows of the conformance matrix: a reader reads the table a case leaves, every query the spec model
answers on it.

``read_final_table`` runs a case on a reader adapter (one that writes with a writer and answers L0 itself,
e.g. ``conformance.adapters.hudi_spark_reader``): at every step it observes only the timeline and the layout,
which label the instants and file groups exactly as the runner does, and once the case is done it asks the
reader the final step's L0 queries — snapshot, read-optimized, time travel to every completed write the model
keeps, and the incremental windows ``final_plan`` picks — and compares them with the model's (the fixture's
last expected step, or the model's, computed live). A reader over a Spark engine pays a second a query: so
one table per case, not one per step.

``cross_read`` is the other direction: a writer (e.g. Apache Hudi's own, ``hudi_spark``) writes a case's table
and two readers (e.g. the spec's and Hudi's) read it; the second's rows must equal the first's.

``run_reader_rows`` runs many cases and returns a ``RunResult``: what the matrix keeps per implementation.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.diff import diff_step, render_step
from conformance.interface.adapter import Query, RawLayout, RawRows, RawTimeline, TableUnderTest, missing_capabilities
from conformance.observe import (
    Normalizer,
    Observation,
    QueryPlan,
    adapter_plan,
    fixed_times,
    observe_rows,
    plan_of,
    window_name,
)
from conformance.runner import CaseResult, FixtureCase, LayerResult, RunResult, Verdict, execute, expected_steps


def final_plan(plan: QueryPlan) -> QueryPlan:
    """The queries asked of a case's final table: time travel to every instant of ``plan``, and of its
    incremental windows those from the start of the table to the latest write and those between two
    consecutive writes (each write's changes alone, and all of them at once: every record of the windows
    ``plan`` holds is in one of these)."""
    travel, windows = plan
    ends = sorted({e for _, e in windows}, key=_order)
    keep: set[tuple[str | None, str]] = {(None, ends[-1])} if ends else set()
    keep |= set(itertools.pairwise(ends))
    return travel, tuple(w for w in windows if w in keep)


def _order(label: str) -> tuple[int, str]:
    return (int(label[1:]), "") if label[:1] == "t" and label[1:].isdigit() else (10**9, label)


def _select(l0: Mapping[str, Any], plan: QueryPlan) -> dict[str, Any]:
    """The part of an L0 observation that answers ``plan``."""
    names = {window_name(b, e) for b, e in plan[1]}
    return {"snapshot": l0.get("snapshot"), "read_optimized": l0.get("read_optimized"),
            "time_travel": {t: v for t, v in l0.get("time_travel", {}).items() if t in plan[0]},
            "incremental": {w: v for w, v in l0.get("incremental", {}).items() if w in names}}


def _result(fixture: FixtureCase, diff: Any, step: int, op: Any, failure: str,
            known: str | None) -> CaseResult:
    if diff.ok and not failure:
        return CaseResult(fixture.case.id, fixture.suite, Verdict.PASS, "", (LayerResult("L0", Verdict.PASS),))
    text = "\n".join(t for t in (failure, render_step(step, op, {"L0": diff})) if t)
    verdict = Verdict.XFAIL if known else Verdict.FAIL
    return CaseResult(fixture.case.id, fixture.suite, verdict, known or "",
                      (LayerResult("L0", Verdict.FAIL, step, text),), step, text, {"L0": diff})


def _skip(fixture: FixtureCase, adapter: TableUnderTest) -> CaseResult | None:
    missing = missing_capabilities(fixture.case, adapter.capabilities)
    if not missing and not adapter.unavailable:
        return None
    reason = (f"{adapter.name}: {adapter.unavailable}" if adapter.unavailable
              else f"{adapter.name} lacks {', '.join(missing)}")
    return CaseResult(fixture.case.id, fixture.suite, Verdict.SKIP, reason, (LayerResult("L0", Verdict.SKIP,
                                                                                          detail=reason),))


def read_final_table(fixture: FixtureCase, factory: Callable[[], TableUnderTest], workdir: Path | None = None,
                     known: Mapping[str, str] | None = None) -> CaseResult:
    """The case on a fresh reader adapter; its L0 on the final table against the model's (``final_plan`` of
    the final expected step). ``known`` adds known failures (case id → reason) to the adapter's.
    ``workdir`` keeps the table."""
    adapter = factory()
    skipped = _skip(fixture, adapter)
    if skipped is not None:
        return skipped
    case = fixture.case
    expected = (fixture.expected[-1] if fixture.expected is not None
                else expected_steps(case, ("L0", "L1"))[-1])
    full = plan_of(expected)
    if full is None:
        raise ValueError(f"{case.id}: the expected last step holds no L0")
    plan = final_plan(full)
    norm = Normalizer(fixed_times(case))
    reason = (known or {}).get(case.id) or adapter.known_failures.get(case.id)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        try:
            failure, last = "", 0
            for done in execute(adapter, case, ("L1",), root, norm=norm):
                last = done.number
                if done.stop:
                    failure = f"step {done.number}: {done.outcome}"
                    break
            observed = observe_rows(adapter, norm, plan)
        finally:
            adapter.close()
    diff = diff_step({"L0": _select(expected["L0"], plan)}, {"L0": observed}, ["L0"])["L0"]
    return _result(fixture, diff, last, expected.get("op") or {}, failure, reason)


class _Reads(TableUnderTest):
    """A written table seen through ``rows`` (a reader), its timeline and layout the writer's."""

    def __init__(self, writer: TableUnderTest, rows: Callable[[str, Query], RawRows]) -> None:
        self.writer, self.read = writer, rows

    def timeline(self) -> RawTimeline:
        return self.writer.timeline()

    def layout(self) -> RawLayout:
        return self.writer.layout()

    def rows(self, query: Query) -> RawRows:
        return self.read(str(getattr(self.writer, "path")), query)  # noqa: B009  # adapters set it in create


def cross_read(fixture: FixtureCase, writer: Callable[[], TableUnderTest], theirs: Callable[[str, Query], RawRows],
               ours: Callable[[str, Query], RawRows], workdir: Path | None = None,
               known: Mapping[str, str] | None = None) -> CaseResult:
    """The case written by ``writer``; its final table read by ``theirs`` (the expected rows) and by ``ours``,
    every query ``final_plan`` picks from the writer's own timeline (``default_plan``). A writer that stops
    early leaves a table all the same: it is read as it is."""
    adapter = writer()
    skipped = _skip(fixture, adapter)
    if skipped is not None:
        return skipped
    case = fixture.case
    norm = Normalizer(fixed_times(case))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        try:
            last, op = 0, None
            for done in execute(adapter, case, ("L1",), root, norm=norm):
                last, op = done.number, done.op
            plan = final_plan(adapter_plan(adapter))
            labelled = (tuple(str(norm.instant(t)) for t in plan[0]),
                        tuple((norm.instant(b), str(norm.instant(e))) for b, e in plan[1]))
            expected: Observation = {"L0": observe_rows(_Reads(adapter, theirs), norm, labelled)}
            observed = observe_rows(_Reads(adapter, ours), norm, labelled)
        finally:
            adapter.close()
    diff = diff_step(expected, {"L0": observed}, ["L0"])["L0"]
    from conformance.observe import describe_op

    return _result(fixture, diff, last, describe_op(op) if op is not None else {}, "",
                   (known or {}).get(case.id))


def run_reader_rows(name: str, cases: Sequence[FixtureCase], run: Callable[[FixtureCase], CaseResult],
                    progress: Callable[[CaseResult], None] | None = None) -> RunResult:
    """Every case through ``run`` (``read_final_table`` or ``cross_read`` with their arguments bound): the
    row ``name`` of the matrix (``conformance.report``'s per-implementation entry is made from it)."""
    results = []
    for fc in cases:
        results.append(run(fc))
        if progress is not None:
            progress(results[-1])
    return RunResult(name, tuple(results))


__all__ = ["cross_read", "final_plan", "read_final_table", "run_reader_rows"]

"""Runs conformance cases against an adapter and reports a verdict per case and layer.

Per case: a case needing a capability the adapter lacks is ``SKIP`` (the reason names what is
missing). Otherwise the adapter creates the table and applies the operations one by one; after
every step the harness observes the table (``conformance.observe``) and diffs it against the
expected observation (``conformance.diff``) — the stored fixture, or the spec model's, computed
live. Verdicts per layer: ``PASS``, ``FAIL`` (with the first diverging step and its diff), ``SKIP``
(a layer the adapter cannot be observed in); a case ``FAIL`` on the adapter's list of known
failures is ``XFAIL``. An operation that raises when it should not ends the case as a failure.

``expect_error`` is the harness's: it arms, and the next operation must raise that error kind
(a ``spec.errors`` class or subclass); the step's outcome says what happened.

A run in which no case executed fails: nothing was shown to conform.
"""

from __future__ import annotations

import json
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from conformance.diff import LayerDiff, diff_step, render_step
from conformance.interface.adapter import DEFAULT_LAYERS, LAYERS, TableUnderTest, missing_capabilities
from conformance.interface.ops import Case, CreateTable, Op, case_from_json
from conformance.observe import Normalizer, Observation, QueryPlan, describe_op, fixed_times, observe, plan_of
from spec.errors import ERROR_KINDS, HudiSpecError, InvalidOperation
from spec.model.operations import Clean, Compact, DeletePartition, ExpectError, Restore, Rollback, Savepoint, Write


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"
    XFAIL = "XFAIL"


@dataclass(frozen=True)
class Step:
    """One executed step: its number (1-based), operation, outcome and observation."""

    number: int
    op: Op
    outcome: str
    observation: Observation
    stop: bool = False


def _kind_of(err: HudiSpecError) -> str:
    return err.kind


def execute(adapter: TableUnderTest, case: Case, layers: Sequence[str], workdir: Path,
            plans: Sequence[QueryPlan | None] | None = None, norm: Normalizer | None = None) -> Iterator[Step]:
    """Create the case's table on the adapter, apply each operation and observe after it. ``plans``
    (per step) names the L0 queries to make (labels); without it the adapter's own plan is used.
    ``norm`` (optional) is the normalizer to label with, so a caller can keep the labels.
    Stops after a step whose operation raised unexpectedly (``Step.stop``)."""
    norm = norm if norm is not None else Normalizer(fixed_times(case))
    adapter.create(case.config, workdir)
    armed: str | None = None
    for n, op in enumerate(case.ops, 1):
        if isinstance(op, ExpectError):
            armed, outcome, stop = op.kind, "ok", False
        elif adapter.chooses_instant_times:
            (outcome, stop), armed = apply_choosing_times(adapter, op, armed, norm), None
        else:
            (outcome, stop), armed = apply_op(adapter, op, armed), None
        plan = plans[n - 1] if plans is not None and n - 1 < len(plans) else None
        try:
            observation = observe(adapter, norm, layers, plan, outcome)
        except Exception as err:  # the implementation failed to answer a read: reported, never hidden
            yield Step(n, op, f"crashed {type(err).__name__} while observed: {err}", {}, True)
            return
        yield Step(n, op, outcome, observation, stop)
        if stop:
            return


def apply_op(adapter: TableUnderTest, op: Op, expecting: str | None, with_message: bool = True) -> tuple[str, bool]:
    """Apply one operation; the step's outcome, and whether it raised unexpectedly (the case stops).
    Outcomes: ``ok``; ``raised <kind>`` (the expected error, or any error with ``with_message`` off);
    ``no error (expected <kind>)``; ``raised <kind> (expected <kind>)``; ``raised <kind>: <message>``;
    ``crashed <exception type>: <message>`` for an exception outside ``spec.errors``."""
    try:
        if isinstance(op, CreateTable):  # Case refuses it in ops; a caller building steps by hand might not
            raise InvalidOperation("create_table is a case's config, not an operation to apply",
                                   hint="put it in the case's config")
        adapter.apply(op)
    except HudiSpecError as err:
        if expecting is not None and isinstance(err, ERROR_KINDS[expecting]):
            return f"raised {expecting}", False
        if expecting is not None:
            return f"raised {_kind_of(err)} (expected {expecting})", False
        return (f"raised {_kind_of(err)}: {err}" if with_message else f"raised {_kind_of(err)}"), True
    except Exception as err:  # an implementation's own failure: reported, never hidden
        return f"crashed {type(err).__name__}: {err}", True
    return ("ok" if expecting is None else f"no error (expected {expecting})"), False


CREATED_AT: Final = {Write: "instant_time", DeletePartition: "instant_time", Clean: "instant_time"}
"""The operations whose named instant is the time they write at (a compaction's too, when it schedules one)."""

REFERS_TO: Final = {Rollback: "instant_time", Savepoint: "instant_time", Restore: "savepoint_time"}
"""The operations whose named instant is one written before (a compaction's too, when it runs a planned one)."""


def apply_choosing_times(adapter: TableUnderTest, op: Op, expecting: str | None, norm: Normalizer) -> tuple[str, bool]:
    """``apply_op`` for an implementation that chooses its own instant times (Apache Hudi's datasource): an
    operation the case gives a time to write at runs at the implementation's time, which is then shown as the
    case's (``Normalizer.bind``); an operation naming an instant written before gets the implementation's time of
    it. Instants are so mapped by order, and no case is skipped for naming one. A named instant nothing was
    written at (a rollback of an instant that never was) is passed on as it is. A ``concurrent`` step names no
    instant (its members take theirs as they start): the implementation's are labelled in time order like any
    other, which is the members' start order, since each starts once the one before holds its written files."""
    field_name = CREATED_AT.get(type(op)) or REFERS_TO.get(type(op))
    if isinstance(op, Compact):
        field_name = "instant_time"
    named = getattr(op, field_name, None) if field_name else None
    if named is None:
        return apply_op(adapter, op, expecting)
    creates = type(op) in CREATED_AT or (isinstance(op, Compact) and op.mode != "run")
    if not creates:
        return apply_op(adapter, replace(op, **{field_name: norm.actual(named) or named}), expecting)  # type: ignore[arg-type]
    before = {i[0] for i in adapter.timeline()}
    result = apply_op(adapter, replace(op, **{field_name: None}), expecting)  # type: ignore[arg-type]
    new = sorted(i[0] for i in adapter.timeline() if i[0] not in before)
    if new:
        norm.bind(named, new[-1])
    return result


class Lockstep:
    """An adapter and the spec model driven side by side: ``step(op)`` applies the operation to both
    and returns the diff of their observations (the model's plan of queries is asked of the
    adapter). Operations the model refuses are fine as long as the adapter refuses them with the
    same error kind: both tables stay as they were. Used by property tests over the vocabulary."""

    def __init__(self, adapter: TableUnderTest, config: CreateTable, workdir: Path,
                 layers: Sequence[str] = DEFAULT_LAYERS) -> None:
        from conformance.adapters.spec_model import SpecModelAdapter

        self.model: TableUnderTest = SpecModelAdapter()
        self.adapter = adapter
        self.config = config
        self.layers = [layer for layer in layers if layer in adapter.layers]
        self.norms = (Normalizer(), Normalizer())
        self.ops: list[Op] = []
        (workdir / "model").mkdir(parents=True, exist_ok=True)
        (workdir / "impl").mkdir(parents=True, exist_ok=True)
        self.model.create(config, workdir / "model")
        adapter.create(config, workdir / "impl")
        self.armed: str | None = None

    def step(self, op: Op) -> dict[str, LayerDiff]:
        self.ops.append(op)
        if isinstance(op, ExpectError):
            self.armed = op.kind
            return {}
        expecting, self.armed = self.armed, None
        mine, refused = apply_op(self.model, op, expecting, with_message=False)
        theirs, _ = apply_op(self.adapter, op, expecting, with_message=False)
        if refused and mine.startswith("raised "):  # recorded as expected, so the sequence replays as a case
            self.ops.insert(len(self.ops) - 1, ExpectError(mine.removeprefix("raised ")))
        expected = observe(self.model, self.norms[0], self.layers, None, mine)
        observed = observe(self.adapter, self.norms[1], self.layers, plan_of(expected), theirs)
        return diff_step(expected, observed, self.layers)

    def as_case(self, case_id: str, description: str = "") -> Case:
        """The operations so far as a case (for ``conformance.generate.write_regression``)."""
        return Case(case_id, description, ("hypothesis",), "hypothesis", self.config, tuple(self.ops))


def expected_steps(case: Case, layers: Sequence[str] = LAYERS) -> list[Observation]:
    """The spec model's observation after every step (what ``generate`` writes to
    ``expected/step-<n>.json``). A case the model cannot run raises ``InvalidOperation``."""
    from conformance.adapters.spec_model import SpecModelAdapter

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for step in execute(SpecModelAdapter(), case, layers, Path(tmp)):
            if step.stop:
                raise InvalidOperation(f"case {case.id}: the spec model fails step {step.number}: {step.outcome}",
                                       hint="fix the case: the model must run every step")
            out.append({"step": step.number, "op": describe_op(step.op), **step.observation})
    return out


# --- results ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LayerResult:
    layer: str
    verdict: Verdict
    step: int | None = None
    """The first step where the layer diverged (FAIL)."""
    detail: str = ""


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    suite: str
    verdict: Verdict
    reason: str = ""
    layers: tuple[LayerResult, ...] = ()
    first_divergence: int | None = None
    diff: str = ""
    diffs: Mapping[str, LayerDiff] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case_id, "suite": self.suite, "verdict": str(self.verdict), "reason": self.reason,
                "first_divergence": self.first_divergence, "diff": self.diff,
                "layers": [{"layer": r.layer, "verdict": str(r.verdict), "step": r.step, "detail": r.detail}
                           for r in self.layers]}


@dataclass(frozen=True)
class RunResult:
    adapter: str
    cases: tuple[CaseResult, ...]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for c in self.cases if c.verdict == verdict)

    @property
    def executed(self) -> int:
        return sum(1 for c in self.cases if c.verdict != Verdict.SKIP)

    @property
    def ok(self) -> bool:
        """No case failed and at least one case executed."""
        return self.executed > 0 and self.count(Verdict.FAIL) == 0

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


@dataclass(frozen=True)
class FixtureCase:
    """A case with where it came from and, for fixtures, its expected observations."""

    case: Case
    suite: str = "adhoc"
    expected: tuple[Observation, ...] | None = None


def run_case(fixture: FixtureCase, adapter_factory: Callable[[], TableUnderTest],
             layers: Sequence[str] = DEFAULT_LAYERS, workdir: Path | None = None,
             norm: Normalizer | None = None) -> CaseResult:
    """One case against a fresh adapter; expected observations from the fixture or the live model.
    ``workdir`` keeps the table the adapter wrote, ``norm`` the labels its observations used."""
    case = fixture.case
    adapter = adapter_factory()
    missing = missing_capabilities(case, adapter.capabilities)
    if missing or adapter.unavailable:
        reason = f"{adapter.name}: {adapter.unavailable}" if adapter.unavailable else \
            f"{adapter.name} lacks {', '.join(missing)}"
        return CaseResult(case.id, fixture.suite, Verdict.SKIP, reason,
                          tuple(LayerResult(layer, Verdict.SKIP, detail=reason) for layer in layers))
    expected = list(fixture.expected) if fixture.expected is not None else expected_steps(case, layers)
    observed_layers = [layer for layer in layers if layer in adapter.layers]
    first: dict[str, tuple[int, LayerDiff, Mapping[str, Any]]] = {}
    failure_text = ""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        try:
            steps = execute(adapter, case, observed_layers, root, [plan_of(e) for e in expected], norm)
            executed = 0
            for done in steps:
                executed = done.number
                exp = expected[done.number - 1] if done.number - 1 < len(expected) else {}
                diffs = diff_step(exp, done.observation, observed_layers)
                for layer, d in diffs.items():
                    if not d.ok and layer not in first:
                        first[layer] = (done.number, d, exp.get("op") or {})
                if done.stop:
                    failure_text = f"step {done.number}: {done.outcome}"
                    for layer in observed_layers:
                        first.setdefault(layer, (done.number, LayerDiff(layer, changed=(done.outcome,)), {}))
                    break
            if executed < len(case.ops) and not failure_text:
                failure_text = f"stopped after step {executed} of {len(case.ops)}"
        finally:
            adapter.close()
    results = []
    for layer in layers:
        if layer not in adapter.layers:
            results.append(LayerResult(layer, Verdict.SKIP, detail=adapter.unobserved.get(
                layer, f"{adapter.name} is not observed in {layer}")))
        elif layer in first:
            n, d, op = first[layer]
            results.append(LayerResult(layer, Verdict.FAIL, n, render_step(n, op, {layer: d})))
        else:
            results.append(LayerResult(layer, Verdict.PASS))
    failed = [r for r in results if r.verdict == Verdict.FAIL]
    if not failed:
        verdict = Verdict.PASS if any(r.verdict == Verdict.PASS for r in results) else Verdict.SKIP
        reason = "" if verdict == Verdict.PASS else f"{adapter.name} is observed in none of {', '.join(layers)}"
        return CaseResult(case.id, fixture.suite, verdict, reason, tuple(results))
    step = min(r.step or 0 for r in failed)
    at_step = {layer: d for layer, (n, d, _) in first.items() if n == step}
    op = next(o for n, _, o in first.values() if n == step)
    text = failure_text or render_step(step, op, at_step)
    if failure_text:
        text = f"{failure_text}\n{render_step(step, op, at_step)}"
    known = adapter.known_failures.get(case.id)
    verdict = Verdict.XFAIL if known else Verdict.FAIL
    return CaseResult(case.id, fixture.suite, verdict, known or "", tuple(results), step, text, at_step)


def run_cases(cases: Sequence[FixtureCase], adapter_factory: Callable[[], TableUnderTest],
              layers: Sequence[str] = DEFAULT_LAYERS, progress: Callable[[CaseResult], None] | None = None
              ) -> RunResult:
    """Every case against a fresh adapter each."""
    results = []
    name = adapter_factory().name
    for fc in cases:
        result = run_case(fc, adapter_factory, layers)
        results.append(result)
        if progress is not None:
            progress(result)
    return RunResult(name, tuple(results))


# --- loading fixtures ---------------------------------------------------------------------------

def load_cases(root: str | Path, suite: str | None = None, with_expected: bool = True) -> list[FixtureCase]:
    """The cases under ``<root>/cases/<suite>/<case>/case.json`` (all suites, or one), sorted by suite
    and id, each with its ``expected/step-<n>.json`` observations."""
    base = Path(root) / "cases"
    if not base.is_dir():
        raise InvalidOperation(f"{base} holds no cases", hint="point --fixtures at a folder with cases/<suite>/<case>")
    suites = [base / suite] if suite else sorted(p for p in base.iterdir() if p.is_dir())
    if suite and not suites[0].is_dir():
        known = ", ".join(sorted(p.name for p in base.iterdir() if p.is_dir()))
        raise InvalidOperation(f"no suite {suite!r}", hint=f"the suites are: {known}")
    out = []
    for s in suites:
        for folder in sorted(p for p in s.iterdir() if (p / "case.json").is_file()):
            case = case_from_json(json.loads((folder / "case.json").read_text()))
            expected = None
            if with_expected:
                files = sorted((folder / "expected").glob("step-*.json"), key=lambda p: int(p.stem.split("-")[1]))
                expected = tuple(json.loads(p.read_text()) for p in files)
                if len(expected) != len(case.ops):
                    raise InvalidOperation(f"{folder.name}: {len(expected)} expected steps for {len(case.ops)} ops",
                                           hint="regenerate the fixtures with `hudi-conformance generate`")
            out.append(FixtureCase(case, s.name, expected))
    return out


# --- reports ------------------------------------------------------------------------------------

def render_text(run: RunResult, verbose: bool = False) -> str:
    lines = []
    for c in run.cases:
        tail = f" — {c.reason}" if c.reason else ""
        lines.append(f"{c.verdict:5} {c.suite}/{c.case_id}{tail}")
        if c.verdict in (Verdict.FAIL, Verdict.XFAIL) and (verbose or c.verdict == Verdict.FAIL):
            lines += ["    " + ln for ln in c.diff.splitlines()]
    counts = ", ".join(f"{run.count(v)} {v}" for v in Verdict)
    lines.append(f"{run.adapter}: {len(run.cases)} cases: {counts}")
    if run.executed == 0:
        lines.append("no case executed: the run fails (nothing was shown to conform)")
    return "\n".join(lines)


def render_json(run: RunResult) -> str:
    return json.dumps({"adapter": run.adapter, "ok": run.ok, "executed": run.executed,
                       "counts": {str(v): run.count(v) for v in Verdict},
                       "cases": [c.to_json() for c in run.cases]}, indent=2)


def render_junit(run: RunResult) -> str:
    """JUnit XML: one testcase per case and layer (classname ``<suite>.<case>``, name the layer)."""
    cases = [(c, r) for c in run.cases for r in c.layers]
    suite = ET.Element("testsuite", name=f"hudi-conformance[{run.adapter}]", tests=str(len(cases)),
                       failures=str(sum(1 for c, r in cases if r.verdict == Verdict.FAIL
                                        and c.verdict != Verdict.XFAIL)),
                       skipped=str(sum(1 for c, r in cases if r.verdict == Verdict.SKIP
                                       or (c.verdict == Verdict.XFAIL and r.verdict == Verdict.FAIL))),
                       errors="0")
    for c, r in cases:
        tc = ET.SubElement(suite, "testcase", classname=f"{c.suite}.{c.case_id}", name=r.layer)
        if r.verdict == Verdict.SKIP:
            ET.SubElement(tc, "skipped", message=r.detail or c.reason)
        elif r.verdict == Verdict.FAIL and c.verdict == Verdict.XFAIL:
            ET.SubElement(tc, "skipped", message=f"XFAIL: {c.reason}")
        elif r.verdict == Verdict.FAIL:
            el = ET.SubElement(tc, "failure", message=f"first divergence at step {r.step}")
            el.text = r.detail
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)

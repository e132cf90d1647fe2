"""Writers at once in the case language (``concurrent``): the model's outcome by Hudi's conflict resolution, what
it refuses, and the corpus's concurrency cases on the model and the reference's local engine (Spark and Apache
Hudi run them in ``make ci-slow``: tests/test_conformance_reference.py, tests/test_conformance_hudi_spark.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.case_kit import COW, MOR, config, rec, w
from conformance.cases_concurrency import CASES, concurrency_cases
from conformance.runner import Verdict, load_cases, run_cases
from spec.errors import InvalidOperation
from spec.model import Env, TableModel
from spec.model.operations import Clean, Compact, Concurrent, Crash, Write
from spec.timeline.instant import State

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _model(tt: str = COW, v: int = 8, **kw: object) -> TableModel:
    model = TableModel(config(tt, v, **kw), Env.deterministic())  # type: ignore[arg-type]
    model.apply(w("insert", rec(1, 1), rec(2, 1), rec(3, 1, "b")))
    return model


def _two(first: Write, second: Write, order: tuple[int, int], outcomes: tuple[str, str]) -> Concurrent:
    return Concurrent((first, second), order, outcomes)


def _rows(model: TableModel) -> dict[object, object]:
    from spec.model.queries import snapshot

    return {r["id"]: r["v"] for r in snapshot(model.state)}


@pytest.mark.parametrize(("order", "outcomes"), [((0, 1), ("ok", "write_conflict")),
                                                 ((1, 0), ("write_conflict", "ok"))])
@pytest.mark.parametrize(("tt", "v"), [(COW, 6), (MOR, 8), (COW, 9)])
def test_of_two_writes_to_one_file_group_the_later_to_commit_aborts(tt: str, v: int, order: tuple[int, int],
                                                                    outcomes: tuple[str, str]) -> None:
    model = _model(tt, v)
    a, b = w("upsert", rec(1, 2, v="A")), w("upsert", rec(2, 2, v="B"))
    model.apply(_two(a, b, order, outcomes))
    winner = "A" if outcomes[0] == "ok" else "B"
    assert _rows(model) == {1: "A" if winner == "A" else "v1@1", 2: "B" if winner == "B" else "v2@1", 3: "v3@1"}
    pending = [i for i in model.state.timeline if not i.is_completed]
    assert [i.state for i in pending] == [State.INFLIGHT]  # the loser: a failed write, left inflight
    loser = pending[0].requested
    assert any(b.instant == loser for g in model.state.groups for b in g.base_files) or any(
        lf.instant == loser or any(blk.instant == loser for blk in lf.blocks)
        for g in model.state.groups for lf in g.log_files)  # its files written
    model.apply(w("upsert", rec(3, 5, "b")))  # the next writer rolls it back
    assert all(i.is_completed for i in model.state.timeline)
    assert loser not in {i.requested for i in model.state.timeline if i.action != "rollback"}


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_writes_to_disjoint_file_groups_both_commit(order: tuple[int, int]) -> None:
    model = _model(MOR, 6)
    model.apply(_two(w("upsert", rec(1, 2, v="A")), w("upsert", rec(3, 2, "b", v="B")), order, ("ok", "ok")))
    assert _rows(model) == {1: "A", 2: "v2@1", 3: "B"}
    assert all(i.is_completed for i in model.state.timeline)


@pytest.mark.parametrize(("v", "outcome"), [(6, "write_conflict"), (8, "ok"), (9, "ok")])
def test_a_compaction_completed_beside_an_upsert_conflicts_before_version_8_only(v: int, outcome: str) -> None:
    model = _model(MOR, v, small_file_limit=0)
    model.apply(w("upsert", rec(1, 2)))
    model.apply(Concurrent((w("upsert", rec(2, 3, v="beside")), Compact()), (1, 0), (outcome, "ok")))
    assert _rows(model)[2] == ("beside" if outcome == "ok" else "v2@1")


def test_the_cases_outcomes_must_be_the_models() -> None:
    model = _model()
    before = model.state
    with pytest.raises(InvalidOperation, match=r"expects \['ok', 'ok'\]"):
        model.apply(_two(w("upsert", rec(1, 2)), w("upsert", rec(2, 2)), (0, 1), ("ok", "ok")))
    assert model.state is before


def test_concurrent_writers_need_a_table_no_armed_crash_and_the_tables_options() -> None:
    pair = _two(w("upsert", rec(1, 2)), w("upsert", rec(3, 2, "b")), (0, 1), ("ok", "ok"))
    with pytest.raises(InvalidOperation, match="need a table"):
        TableModel(config(COW, 8), Env.deterministic()).apply(pair)  # type: ignore[arg-type]
    armed = _model()
    armed.apply(Crash(0))
    with pytest.raises(InvalidOperation, match="crash is armed"):
        armed.apply(pair)
    with pytest.raises(InvalidOperation, match="write options of its own"):
        _model().apply(_two(Write("upsert", (rec(1, 2),), options=(("hoodie.x", "1"),)), w("upsert", rec(3, 2, "b")),
                            (0, 1), ("ok", "ok")))


def test_a_clean_beside_a_pending_write_completes_and_so_does_the_write() -> None:
    model = _model(COW, 8, clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3)
    model.apply(w("upsert", rec(1, 2)))
    model.apply(w("upsert", rec(1, 3)))
    model.apply(Concurrent((w("upsert", rec(2, 4, v="beside")), Clean()), (1, 0), ("ok", "ok")))
    assert [i.action for i in model.state.timeline][-2:] == ["commit", "clean"]
    assert all(i.is_completed for i in model.state.timeline) and _rows(model)[2] == "beside"


def test_the_suite_covers_each_rule_on_both_table_types_and_every_version() -> None:
    cases = concurrency_cases()
    assert len(cases) == len(CASES) and 6 <= len(cases) <= 16
    assert {c.config.table_type for c in cases} == {COW, MOR}
    assert {c.config.table_version for c in cases} == {6, 8, 9}
    tags = {t for c in cases for t in c.tags}
    assert {"conflict:common-file-group", "conflict:disjoint-file-groups", "conflict:compaction", "clean",
            "compact"} <= tags


def test_the_concurrency_cases_pass_on_the_model_and_the_local_engine() -> None:
    fixtures = load_cases(FIXTURES, "concurrency")
    assert {fc.case.id for fc in fixtures} == {c.id for c in concurrency_cases()}
    for factory in (SpecModelAdapter, ReferenceLocalAdapter):
        run = run_cases(fixtures, factory)
        assert run.count(Verdict.PASS) == len(fixtures), [c.diff for c in run.cases if c.verdict != Verdict.PASS]


def test_a_member_ending_otherwise_than_the_case_says_fails_the_step() -> None:
    """An implementation whose members end otherwise than ``outcomes`` fails the step (here the local engine on a
    case whose outcomes were turned round): it is compared on the outcome, not only on the table."""
    from dataclasses import replace

    (fc,) = [f for f in load_cases(FIXTURES, "concurrency") if f.case.id == "concurrent-same-group-cow-v6"]
    op = fc.case.ops[1]
    assert isinstance(op, Concurrent)
    turned = replace(fc, case=replace(fc.case, ops=(fc.case.ops[0], replace(op, outcomes=("write_conflict", "ok")))))
    (result,) = run_cases([turned], ReferenceLocalAdapter).cases
    assert result.verdict == Verdict.FAIL and "the case expects ['write_conflict', 'ok']" in result.diff


@pytest.mark.spark
def test_a_concurrency_case_passes_on_the_spark_engine(spark: object) -> None:
    from conformance.adapters.reference_spark import ReferenceSparkAdapter

    fixtures = [f for f in load_cases(FIXTURES, "concurrency") if f.case.id == "concurrent-same-group-mor-v8"]
    (result,) = run_cases(fixtures, lambda: ReferenceSparkAdapter(spark)).cases
    assert result.verdict == Verdict.PASS, result.diff


def test_three_writers_at_once_on_the_model_and_the_local_engine() -> None:
    """Three writes start together; the last to start commits first, then the one to another partition, then
    the first, which shares a file group with the first to commit and aborts."""
    from conformance.interface.ops import Case
    from conformance.runner import FixtureCase

    three = Concurrent((w("upsert", rec(1, 2, v="A")), w("upsert", rec(3, 2, "b", v="B")),
                        w("upsert", rec(2, 2, v="C"))), (2, 1, 0), ("write_conflict", "ok", "ok"))
    case = Case("three-writers", config=config(MOR, 8), ops=(w("insert", rec(1, 1), rec(2, 1), rec(3, 1, "b")), three))
    model = _model(MOR, 8)
    model.apply(three)
    assert _rows(model) == {1: "v1@1", 2: "C", 3: "B"}
    (result,) = run_cases([FixtureCase(case)], ReferenceLocalAdapter).cases  # expected: the live model's
    assert result.verdict == Verdict.PASS, result.diff

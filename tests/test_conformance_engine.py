"""The conformance engine without Spark: the spec model passes the whole corpus through the same
code path as any adapter; the corpus is reproducible byte for byte and covers the vocabulary; the
runner's verdicts, its refusal of an empty run, its reports; the CLI and the pytest plugin."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.adapters import resolve_impl
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.cli import main
from conformance.diff import diff_l1, diff_rows
from conformance.generate import corpus, generate, write_regression
from conformance.interface.adapter import DEFAULT_LAYERS, LAYERS, Query, RawRows
from conformance.interface.ops import OP_NAMES, Case, CreateTable, Op
from conformance.observe import Normalizer
from conformance.runner import (
    FixtureCase,
    Verdict,
    load_cases,
    render_json,
    render_junit,
    render_text,
    run_case,
    run_cases,
)
from spec.errors import InvalidConfig, InvalidOperation
from spec.model.operations import WRITE_OPERATIONS, ExpectError, Rollback, Write
from tests import processes

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@pytest.fixture(scope="module")
def all_cases() -> list[FixtureCase]:
    return load_cases(FIXTURES)


# --- the corpus -----------------------------------------------------------------------------------

def test_spec_model_passes_every_fixture_case_in_every_layer(all_cases: list[FixtureCase]) -> None:
    result = run_cases(all_cases, SpecModelAdapter, LAYERS)
    assert len(result.cases) >= 60
    failed = [c for c in result.cases if c.verdict != Verdict.PASS]
    assert not failed, render_text(result)
    assert result.ok and result.exit_code == 0
    assert all(r.verdict == Verdict.PASS for c in result.cases for r in c.layers)


def test_corpus_covers_the_vocabulary_and_the_bug_classes(all_cases: list[FixtureCase]) -> None:
    used = {type(op).__name__ for fc in all_cases for op in fc.case.ops}
    vocabulary = {cls.__name__ for name, cls in OP_NAMES.items() if name != "create_table"}
    assert vocabulary <= used, f"no case uses {vocabulary - used}"
    writes = {op.operation for fc in all_cases for op in fc.case.ops if isinstance(op, Write)}
    assert set(WRITE_OPERATIONS) <= writes
    grid = {(fc.case.config.table_type, fc.case.config.table_version) for fc in all_cases}
    assert grid == {(t, v) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for v in (6, 8, 9)}
    # version 9's selection of its own uses the whole vocabulary too
    v9 = {type(op).__name__ for fc in all_cases if fc.case.config.table_version == 9 for op in fc.case.ops}
    assert vocabulary <= v9, f"no version 9 case uses {vocabulary - v9}"
    tags = {t for fc in all_cases for t in fc.case.tags}
    for bug in ("duplicates-after-upsert", "ordering-field-ignored", "rollback-command-blocks",
                "uncommitted-log-blocks", "compaction-drops-log-updates", "deleted-rows-reappear",
                "cleaner-removes-needed-files", "slice-visibility-pending-compaction",
                "small-file-routing-pending-compaction", "incremental-out-of-order-completion"):
        assert f"bug:{bug}" in tags


def test_out_of_order_completion_is_in_the_expected_timeline() -> None:
    """v8 pending compaction: the compaction requested before a write completes after it."""
    step = json.loads((FIXTURES / "cases/services/pending-compaction-mor-v8/expected/step-7.json").read_text())
    timeline = step["L1"]["timeline"]
    compaction = next(i for i in timeline if i[0] == "t5")
    later_write = next(i for i in timeline if i[0] == "t6")
    assert compaction[1] == "commit" and later_write[1] == "deltacommit"
    assert int(compaction[3][1:]) > int(later_write[3][1:])


def test_regenerating_reproduces_the_fixtures_byte_for_byte(tmp_path: Path) -> None:
    import shutil

    # golden tables are written by the reference (``hudi-conformance tables``), kept and hashed by generate
    shutil.copytree(FIXTURES / "tables", tmp_path / "out" / "tables")
    counts = generate(tmp_path / "out")
    assert sum(counts.values()) >= 60
    ours = sorted(p.relative_to(tmp_path / "out") for p in (tmp_path / "out").rglob("*") if p.is_file())
    stored = sorted(p.relative_to(FIXTURES) for p in FIXTURES.rglob("*") if p.is_file())
    assert ours == stored
    for rel in ours:
        assert (tmp_path / "out" / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel
    again = generate(tmp_path / "out")
    assert again == counts
    assert (tmp_path / "out/MANIFEST.json").read_bytes() == (FIXTURES / "MANIFEST.json").read_bytes()


def test_manifest_hashes_every_file() -> None:
    manifest = json.loads((FIXTURES / "MANIFEST.json").read_text())
    files = {p.relative_to(FIXTURES).as_posix() for folder in ("cases", "tables")
             for p in (FIXTURES / folder).rglob("*") if p.is_file()}
    assert set(manifest["files"]) == files
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((FIXTURES / rel).read_bytes()).hexdigest() == digest
    assert manifest["cases"] == sum(len(v) for v in corpus().values())


def test_case_ids_are_unique_and_round_trip(all_cases: list[FixtureCase]) -> None:
    ids = [fc.case.id for fc in all_cases]
    assert len(ids) == len(set(ids))
    built = {c.id: c for cases in corpus().values() for c in cases}
    for fc in all_cases:
        assert fc.case == built[fc.case.id]
        assert len(fc.expected or ()) == len(fc.case.ops)


# --- the runner -----------------------------------------------------------------------------------

class CowOnly(SpecModelAdapter):
    name: ClassVar[str] = "cow-only"
    capabilities: ClassVar[frozenset[str]] = frozenset(
        {"COPY_ON_WRITE", "v6", "v8", "write:insert", "write:upsert", "write:delete", "keygen:SIMPLE",
         "merge:EVENT_TIME_ORDERING"})


class NothingAdapter(SpecModelAdapter):
    name: ClassVar[str] = "nothing"
    capabilities: ClassVar[frozenset[str]] = frozenset()


class DropsARow(SpecModelAdapter):
    """A reader that loses the last row of every snapshot."""

    name: ClassVar[str] = "drops-a-row"

    def rows(self, query: Query) -> RawRows:
        rows = list(super().rows(query))
        return rows[:-1] if query.kind == "snapshot" else rows


def _case(cid: str) -> FixtureCase:
    return next(fc for fc in load_cases(FIXTURES) if fc.case.id == cid)


def test_a_run_that_executes_no_case_fails(all_cases: list[FixtureCase]) -> None:
    empty = run_cases([], SpecModelAdapter)
    assert not empty.ok and empty.exit_code == 1
    skipped = run_cases(all_cases[:5], NothingAdapter)
    assert skipped.executed == 0 and skipped.count(Verdict.SKIP) == 5
    assert skipped.exit_code == 1
    assert "no case executed" in render_text(skipped)


def test_a_case_outside_the_capabilities_is_skipped_with_the_reason() -> None:
    result = run_case(_case("compaction-mor-v6"), CowOnly)
    assert result.verdict == Verdict.SKIP
    assert "MERGE_ON_READ" in result.reason and "compact" in result.reason
    assert all(r.verdict == Verdict.SKIP for r in result.layers)
    assert run_case(_case("insert-upsert-delete-cow-v6"), CowOnly).verdict == Verdict.PASS


def test_a_failure_names_the_first_diverging_step_and_the_missing_key() -> None:
    result = run_case(_case("insert-upsert-delete-cow-v8"), DropsARow)
    assert result.verdict == Verdict.FAIL and result.first_divergence == 1
    verdicts = {r.layer: r.verdict for r in result.layers}
    assert verdicts == {"L0": Verdict.FAIL, "L1": Verdict.PASS, "L2": Verdict.PASS, "L4": Verdict.PASS}
    assert "step 1" in result.diff and "missing" in result.diff and "snapshot 'b'/'3'" in result.diff


def test_known_failures_are_xfail_and_do_not_fail_the_run() -> None:
    class KnownDrop(DropsARow):
        known_failures: ClassVar[dict[str, str]] = {"insert-upsert-delete-cow-v8": "drops rows, known"}

    run = run_cases([_case("insert-upsert-delete-cow-v8"), _case("insert-upsert-delete-cow-v6")], KnownDrop)
    assert [c.verdict for c in run.cases] == [Verdict.XFAIL, Verdict.FAIL]
    assert run.cases[0].reason == "drops rows, known"
    assert not run.ok


def test_expect_error_checks_the_error_kind() -> None:
    class NeverRaises(SpecModelAdapter):
        def apply(self, op: Op) -> None:
            if isinstance(op, Rollback) and op.instant_time == "20000101000000000":
                return
            super().apply(op)

    fc = _case("expect-errors-cow-v6")
    assert run_case(fc, SpecModelAdapter).verdict == Verdict.PASS
    result = run_case(fc, NeverRaises)
    assert result.verdict == Verdict.FAIL and result.first_divergence == 5
    assert "no error (expected instant_not_found)" in result.diff


def test_an_adapter_that_crashes_fails_at_that_step_and_stops() -> None:
    class Crashes(SpecModelAdapter):
        calls = 0

        def apply(self, op: Op) -> None:
            Crashes.calls += 1
            if Crashes.calls == 2:
                raise RuntimeError("boom")
            super().apply(op)

    result = run_case(_case("delete-reinsert-cow-v6"), Crashes)
    assert result.verdict == Verdict.FAIL and result.first_divergence == 2
    assert "crashed RuntimeError: boom" in result.diff
    assert Crashes.calls == 2  # the case stopped


def test_json_and_junit_reports_parse(all_cases: list[FixtureCase]) -> None:
    cases = [_case("insert-upsert-delete-cow-v8"), _case("compaction-mor-v6"), _case("delete-reinsert-cow-v6")]
    run = run_cases(cases, type("Mixed", (CowOnly, DropsARow), {}))
    data = json.loads(render_json(run))
    assert data["counts"] == {"PASS": 0, "FAIL": 2, "SKIP": 1, "XFAIL": 0}
    assert data["ok"] is False and data["executed"] == 2
    assert data["cases"][0]["first_divergence"] == 1
    root = ET.fromstring(render_junit(run))
    suite = root.find("testsuite")
    assert suite is not None
    testcases = suite.findall("testcase")
    assert len(testcases) == 3 * len(DEFAULT_LAYERS)
    assert suite.get("failures") == "2" and suite.get("skipped") == str(len(DEFAULT_LAYERS))
    failing = [tc for tc in testcases if tc.find("failure") is not None]
    assert {(tc.get("classname"), tc.get("name")) for tc in failing} == {
        ("writes.insert-upsert-delete-cow-v8", "L0"), ("writes.delete-reinsert-cow-v6", "L0")}


# --- observations and diffs -----------------------------------------------------------------------

def test_normalizer_labels_instants_and_groups_in_order_and_keeps_fixed_times() -> None:
    norm = Normalizer(fixed=["20240601000000000"])
    norm.learn_instants(["20240101000002000", "20240101000001000", None, "20240601000000000"])
    assert norm.instant("20240101000001000") == "t1" and norm.instant("20240101000002000") == "t2"
    assert norm.instant("20240601000000000") == "20240601000000000"
    assert norm.actual("t2") == "20240101000002000" and norm.actual("t9") is None
    norm.learn_groups([(("20240101000002000", ("k",)), "fid-b"), (("20240101000001000", ("z",)), "fid-a")])
    assert norm.group("fid-a") == "g1" and norm.group("fid-b") == "g2"
    assert norm.file_name("fid-b_3-10-2_20240101000001000.parquet") == "g2_t1.parquet"
    assert norm.file_name(".fid-a_20240101000002000.log.2_0-1-0") == ".g1_t2.log.2"
    row = norm.row({"_hoodie_commit_time": "20240101000002000", "_hoodie_commit_seqno": "20240101000002000_3_7",
                    "_hoodie_file_name": "fid-a", "v": b"\x01"})
    assert row == {"_hoodie_commit_time": "t2", "_hoodie_commit_seqno": "t2", "_hoodie_file_name": "g1", "v": "01"}


def test_row_diff_reports_missing_extra_changed_and_duplicates() -> None:
    def r(k: str, v: Any) -> dict[str, Any]:
        return {"_hoodie_partition_path": "p", "_hoodie_record_key": k, "v": v}

    d = diff_rows("snapshot", [r("1", 1), r("2", 2), r("3", 3)], [r("2", 20), r("3", 3), r("3", 3), r("4", 4)])
    assert d.missing == ("snapshot 'p'/'1'",)
    assert len(d.extra) == 1 and d.extra[0].startswith("snapshot 'p'/'4'")
    assert d.changed == ("snapshot 'p'/'2': v: 2 → 20", "snapshot 'p'/'3': 1 row(s) expected, 2 observed")
    assert not d.ok and "missing snapshot 'p'/'1'" in d.render()
    assert diff_rows("q", [r("1", 1)], {"error": "invalid_table"}).changed
    t = [["t1", "commit", "COMPLETED", None], ["t2", "commit", "COMPLETED", None]]
    assert diff_l1({"outcome": "ok", "timeline": t}, {"outcome": "ok", "timeline": t[::-1]}).changed
    assert diff_l1({"outcome": "ok", "timeline": t}, {"outcome": "ok", "timeline": t[:1]}).missing


# --- regressions, CLI, plugin ---------------------------------------------------------------------

def test_write_regression_adds_a_case_that_runs(tmp_path: Path) -> None:
    case = Case("machine", "found by hypothesis", ("hypothesis",), "hypothesis",
                CreateTable(table_type="MERGE_ON_READ"),
                (Write("insert", ({"id": 1, "ts": 1, "v": "a"},)), ExpectError("instant_not_found"),
                 Rollback("20000101000000000")))
    folder = write_regression(tmp_path, case, "lost a log block")
    assert folder.parent.name == "regressions" and (folder / "expected/step-3.json").is_file()
    assert write_regression(tmp_path, case, "lost a log block") == folder  # same ops, same id
    (loaded,) = load_cases(tmp_path, "regressions")
    assert loaded.case.provenance == "hypothesis: lost a log block" and loaded.case.ops == case.ops
    assert run_case(loaded, SpecModelAdapter).verdict == Verdict.PASS
    manifest = json.loads((tmp_path / "MANIFEST.json").read_text())
    assert f"cases/regressions/{folder.name}/case.json" in manifest["files"]
    generate(tmp_path, ["regressions"])  # regeneration keeps the regression
    assert (folder / "case.json").is_file()


def test_cli_run_generate_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "report.xml"
    assert main(["run", "--impl", "spec", "--fixtures", str(FIXTURES), "--suite", "stream",
                 "--junitxml", str(junit), "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["counts"]["PASS"] == len(corpus()["stream"])
    assert ET.parse(junit).getroot().tag == "testsuites"
    assert main(["run", "--impl", "spec", "--fixtures", str(FIXTURES), "--suite", "stream", "--examples", "5",
                 "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cases"][-1]["case"] == "lockstep" and data["cases"][-1]["verdict"] == "PASS"
    assert main(["run", "--impl", "spec", "--fixtures", str(FIXTURES), "--case", "no-such-case"]) == 1
    assert main(["run", "--impl", "nope", "--fixtures", str(FIXTURES)]) == 2
    assert "neither a built-in adapter nor module:Class" in capsys.readouterr().err
    assert main(["generate", "--out", str(tmp_path / "fx"), "--suite", "stream"]) == 0
    assert (tmp_path / "fx/cases/stream").is_dir() and (tmp_path / "fx/MANIFEST.json").is_file()
    assert main(["generate", "--out", str(tmp_path / "fx"), "--suite", "nope"]) == 2


def test_resolve_impl() -> None:
    assert resolve_impl("spec") is SpecModelAdapter
    assert resolve_impl("conformance.adapters.spec_model:SpecModelAdapter") is SpecModelAdapter
    with pytest.raises(InvalidConfig, match="not a TableUnderTest"):
        resolve_impl("conformance.interface.ops:Case")
    with pytest.raises(InvalidConfig, match="cannot import"):
        resolve_impl("no_such_module:X")
    with pytest.raises(InvalidOperation, match="no suite"):
        load_cases(FIXTURES, "no-such-suite")


def _pytest(*args: str) -> processes.Ended:
    return processes.run(processes.python("-m", "pytest", "-q", "-p", "no:cacheprovider", *args), cwd=ROOT)


def test_pytest_plugin_collects_one_test_per_case_and_layer() -> None:
    done = _pytest("--hudi-impl", "spec", "--hudi-suite", "stream", "fixtures/MANIFEST.json")
    n = len(corpus()["stream"])
    done.expect(0)
    assert f"{n * len(DEFAULT_LAYERS)} passed" in done.stdout, done.report(f"expected {n * len(DEFAULT_LAYERS)} passed")
    bad = _pytest("--hudi-impl", "tests.test_conformance_engine:DropsARow", "--hudi-suite", "writes",
                  "fixtures/MANIFEST.json", "-k", "insert-upsert-delete-cow-v6")
    bad.expect(1, "the adapter that drops a row fails")
    assert f"1 failed, {len(DEFAULT_LAYERS) - 1} passed" in bad.stdout, bad.report("expected 1 failed")
    assert "diverges from the specification" in bad.stdout, bad.report("expected the divergence named")
    none = _pytest("--hudi-impl", "tests.test_conformance_engine:NothingAdapter", "--hudi-suite", "stream",
                   "fixtures/MANIFEST.json")
    none.expect(1, "an adapter that can do nothing")
    assert "skipped" in none.stdout, none.report("expected skipped cases")


def test_plugin_is_dormant_without_the_option() -> None:
    done = _pytest("fixtures/MANIFEST.json")
    done.expect(4, "a usage error: without --hudi-impl the corpus is no test file")
    assert "no match" in done.stdout + done.stderr, done.report("expected 'no match'")

"""``hudi-conformance report``: the matrix of implementations x cases, and the page built from it."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.adapters.hudi_rs import HudiRsAdapter
from conformance.adapters.hudi_spark import BUNDLE_ENV, HudiSparkAdapter
from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.adapters.spec_reader import OWN_READERS, OWN_READERS_KNOWN_FAILURES, spec_rows
from conformance.cli import main
from conformance.departures import reader_departures
from conformance.interface.adapter import Query, RawRows, ReaderOfWrittenTables
from conformance.report import factory_for, merge_matrices, reader_row, render_matrix, run_matrix
from conformance.runner import FixtureCase, load_cases
from spec.errors import InvalidOperation
from tests.test_conformance_exec import HUDI_RS_CMD, REFERENCE_CMD

ROOT = Path(__file__).resolve().parents[1]


def test_report_runs_each_implementation_and_renders_the_matrix(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUNDLE_ENV, str(tmp_path / "no-bundle.jar"))  # no bundle, whatever the cache holds
    out = tmp_path / "m.json"
    md = tmp_path / "m.md"
    assert main(["report", "--impl", "spec", "--impl", "hudi_spark", "--case", "insert-upsert-delete-cow",
                 "--fixtures", str(ROOT / "fixtures"), "--json", str(out), "--markdown", str(md)]) == 0
    matrix = json.loads(out.read_text())
    assert matrix["cases"] == [f"writes/insert-upsert-delete-cow-v{v}" for v in (6, 8, 9)]
    spec, spark = matrix["implementations"]
    assert spec["counts"]["PASS"] == 3 and spark["counts"]["SKIP"] == 3
    assert BUNDLE_ENV in spark["cases"]["writes/insert-upsert-delete-cow-v6"]["reason"]
    page = md.read_text()
    assert "| `writes/insert-upsert-delete-cow-v6` | pass | skip |" in page and BUNDLE_ENV in page


def test_failures_and_known_failures_are_listed_with_their_reasons() -> None:
    matrix = {"corpus_version": 7, "date": "2026-01-01", "writer": "reference", "cases": ["s/a", "s/b"],
              "implementations": [{"impl": "x", "name": "x", "counts": {"PASS": 0, "FAIL": 1, "SKIP": 0, "XFAIL": 1},
                                   "cases": {"s/a": {"verdict": "FAIL", "reason": "step 2 | rows"},
                                             "s/b": {"verdict": "XFAIL", "reason": "a known bug"}}}]}
    page = render_matrix(matrix)
    assert "Corpus version **7**" in page
    assert "- `x` — `s/a` — **FAIL**: step 2 \\| rows" in page
    assert "- `x` — `s/b` — known failure: a known bug" in page
    assert "| `s/a` | **FAIL** |" in page


def test_layers_not_observed_and_departures_are_on_the_page() -> None:
    matrix = {"corpus_version": 3, "date": "2026-01-01", "writer": "reference", "cases": ["s/a"],
              "implementations": [{"impl": "x", "name": "x", "counts": {"PASS": 1, "FAIL": 0, "SKIP": 0, "XFAIL": 0},
                                   "cases": {"s/a": {"verdict": "PASS", "reason": ""}},
                                   "layers": {"L0": "", "L1": "", "L2": "not supported by x: no layout"}}],
              "departures": {"reader": "hudi_rs", "export": "hudi-conformance export OUT --departures",
                             "tables": [{"table": "departures/c-to-step-2", "queries": ["incremental-start-1"],
                                         "reason": "a bug"}]}}
    page = render_matrix(matrix)
    assert "| `x` | L0, L1 | L2: not supported by x: no layout |" in page
    assert "| `departures/c-to-step-2` | `incremental-start-1` | a bug |" in page


def _export_of_one_query(folder: Path, rows: list[dict[str, object]]) -> None:
    (folder / "t" / "expected").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "t" / "expected" / "snapshot.parquet")
    (folder / "t" / "index.json").write_text(json.dumps({"table": "table", "queries": [
        {"name": "snapshot", "kind": "snapshot", "expected": "expected/snapshot.parquet", "row_count": len(rows)},
        {"name": "gone", "kind": "time_travel", "expect_error": "instant_not_found"}]}))
    (folder / "index.json").write_text(json.dumps({"tables": [{"name": "t", "index": "t/index.json"}]}))


def test_a_reader_is_checked_against_an_export_alone(tmp_path: Path) -> None:
    rows = [{"_hoodie_record_key": "1", "v": 1.5}, {"_hoodie_record_key": "2", "v": None}]
    _export_of_one_query(tmp_path, rows)
    asked: list[tuple[str, str]] = []

    def right(table: str, q: dict[str, object]) -> pa.Table:
        asked.append((table, str(q["name"])))
        return pa.Table.from_pylist(rows[::-1])

    assert reader_departures(tmp_path, right) == []
    assert asked == [(str(tmp_path / "t" / "table"), "snapshot")]
    found = reader_departures(tmp_path, lambda t, q: pa.Table.from_pylist(rows[:1]))
    assert found == [{"table": "t", "queries": ["snapshot"], "reason": ""}]
    assert reader_departures(tmp_path, lambda t, q: None) == found  # no rows


def test_runs_merge_only_when_they_are_of_the_same_corpus() -> None:
    def run(name: str, version: int = 3, date: str = "2026-01-01") -> dict[str, object]:
        return {"corpus_version": version, "date": date, "writer": "w", "cases": ["s/a"],
                "implementations": [{"name": name}]}

    merged = merge_matrices([run("a"), run("b", date="2026-01-02")])
    assert [e["name"] for e in merged["implementations"]] == ["a", "b"] and merged["date"] == "2026-01-02"
    for bad in ([run("a"), run("b", version=2)], [run("a"), run("a")]):
        with pytest.raises(InvalidOperation):
            merge_matrices(bad)


def test_a_reader_writes_with_the_writer_given() -> None:
    adapter = factory_for("hudi_rs", "reference_local")()
    assert isinstance(adapter, HudiRsAdapter) and isinstance(adapter.writer, ReferenceLocalAdapter)


HUDI_UNDECIDED: tuple[str, ...] = ()
"""Cases Apache Hudi's row fails, each difference measured and listed in docs/conformance.md, the model not yet
changed (none: every difference of the run is decided)."""


def test_the_site_shows_a_committed_real_run() -> None:
    matrix = json.loads((ROOT / "docs" / "conformance-matrix.json").read_text())
    manifest = json.loads((ROOT / "fixtures" / "MANIFEST.json").read_text())
    assert matrix["corpus_version"] == manifest["corpus_version"]  # a run of the corpus as it is now
    assert matrix["cases"] == [f"{fc.suite}/{fc.case.id}" for fc in load_cases(ROOT / "fixtures", with_expected=False)]
    names = {e["name"] for e in matrix["implementations"]}
    assert {"spec", "reference", "reference_local", "reference_local_exec", "reference_local_exec_rows_v1",
            "hudi_rs", "hudi_rs_exec", "hudi_spark"} <= names
    for e in matrix["implementations"]:
        assert sum(e["counts"].values()) == len(matrix["cases"]) == len(e["cases"])
        if e["name"] != "hudi_spark":
            assert e["counts"]["PASS"] > 0 and e["counts"]["FAIL"] == 0
    by_name = {e["name"]: e for e in matrix["implementations"]}
    assert by_name["hudi_rs"]["cases"] == by_name["hudi_rs_exec"]["cases"]  # the same through the protocol
    assert by_name["reference_local"]["cases"] == by_name["reference_local_exec"]["cases"]
    hudi = by_name["hudi_spark"]  # Apache Hudi itself, from a real run of the whole corpus
    assert hudi["counts"]["PASS"] > 0.8 * len(matrix["cases"])
    for case, entry in hudi["cases"].items():
        case_id = case.rsplit("/", 1)[1]
        if entry["verdict"] == "XFAIL":  # Hudi's bug, with its reproducer
            assert entry["reason"] == HudiSparkAdapter.known_failures[case_id]
        elif entry["verdict"] == "SKIP":  # what Hudi's Spark datasource cannot be asked to do
            assert case.startswith("stream/") or "crash" in entry["reason"], (case, entry["reason"])
        elif entry["verdict"] == "FAIL":  # measured and documented, the model not yet changed
            assert case_id in HUDI_UNDECIDED, (case, entry["reason"])
    assert "protocol 1" in by_name["reference_local_exec_rows_v1"]["layers"]["L2"]  # not supported, not a crash
    departures = {t["table"]: t["queries"] for t in matrix["departures"]["tables"]}
    assert {"departures/pending-compaction-mor-v8-to-step-6", "departures/pending-compaction-mor-v6-to-step-4"} \
        <= set(departures)
    assert all(departures.values())
    page = (ROOT / "docs" / "conformance-matrix.md").read_text()
    assert "<!-- hudi-spec:matrix -->" in page
    spec = importlib.util.spec_from_file_location("hudi_spec_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    built = hooks.on_page_markdown(page, None, None, None)  # what the site build shows
    assert "<!-- hudi-spec:matrix -->" not in built
    assert f"Corpus version **{manifest['corpus_version']}**" in built
    assert "| `departures/pending-compaction-mor-v6-to-step-4` |" in built


# --- reader rows ---------------------------------------------------------------------------------------


class FinalTableReader(ReaderOfWrittenTables):
    """A reader whose queries count as costly: the spec's reads, each noting how many instants the table had."""

    name: ClassVar[str] = "final_table_reader"
    reads_final_table: ClassVar[bool] = True
    seen: ClassVar[list[int]] = []

    def __init__(self, writer: Callable[[], Any] = ReferenceLocalAdapter) -> None:
        super().__init__(writer(), {})

    def rows(self, query: Query) -> RawRows:
        FinalTableReader.seen.append(len(self.writer.timeline()))
        return spec_rows(self.path, query)


def drops_a_row(path: str, query: Query) -> RawRows:
    """An own reader that differs from the spec reader: the first row of every answer is gone."""
    rows = list(spec_rows(path, query))
    return rows[1:]


ONE_CASE = "insert-upsert-delete-cow-v8"


def _case(case_id: str = ONE_CASE) -> list[FixtureCase]:
    return [fc for fc in load_cases(ROOT / "fixtures") if fc.case.id == case_id]


def test_a_costly_reader_reads_each_cases_final_table_once_against_the_model() -> None:
    impl = f"{__name__}:FinalTableReader"
    assert reader_row("spec", "reference_local") is None and reader_row("hudi_rs", "reference_local") is None
    assert reader_row(impl, "reference_local") is not None
    FinalTableReader.seen.clear()
    matrix = run_matrix([impl], _case(), 4, writer="reference_local")
    (entry,) = matrix["implementations"]
    assert entry["name"] == "final_table_reader" and entry["writer"] == "reference_local"
    assert entry["counts"]["PASS"] == 1 and entry["layers"] == {"L0": ""}
    # every query on the final table (its 4 writes), none before
    assert len(FinalTableReader.seen) > 4 and set(FinalTableReader.seen) == {4}


def test_the_spec_reader_on_a_writers_tables_is_compared_with_the_writers_own_reader(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer with a reader of its own (``OWN_READERS``): the spec reader's rows on its tables are compared
    with that reader's, not with the model's; a difference fails, a known one is a known failure."""
    own = f"{__name__}:drops_a_row"
    monkeypatch.setitem(OWN_READERS, "reference_local", own)
    monkeypatch.setitem(OWN_READERS_KNOWN_FAILURES, "reference_local", f"{__name__}:NO_KNOWN_FAILURE")
    (entry,) = run_matrix(["spec_reader"], _case(), 4, writer="reference_local")["implementations"]
    assert entry["name"] == "spec_reader" and entry["writer"] == "reference_local"
    result = entry["cases"][f"writes/{ONE_CASE}"]
    assert result["verdict"] == "FAIL" and "extra" in result["reason"]
    monkeypatch.setitem(OWN_READERS_KNOWN_FAILURES, "reference_local", f"{__name__}:ONE_KNOWN_FAILURE")
    (entry,) = run_matrix(["spec_reader"], _case(), 4, writer="reference_local")["implementations"]
    assert entry["cases"][f"writes/{ONE_CASE}"] == {"verdict": "XFAIL", "reason": "a reader that drops a row"}
    monkeypatch.setitem(OWN_READERS, "reference_local", "conformance.adapters.spec_reader:spec_rows")
    (entry,) = run_matrix(["spec_reader"], _case(), 4, writer="reference_local")["implementations"]
    assert entry["counts"]["PASS"] == 1


NO_KNOWN_FAILURE: dict[str, str] = {}
ONE_KNOWN_FAILURE = {ONE_CASE: "a reader that drops a row"}


def test_without_an_own_reader_the_spec_reader_runs_step_by_step_against_the_model() -> None:
    assert reader_row("spec_reader", "reference_local") is None
    (entry,) = run_matrix(["spec_reader"], _case(), 4, writer="reference_local")["implementations"]
    assert entry["counts"]["PASS"] == 1 and entry["writer"] == "reference_local"
    (spec,) = run_matrix(["spec"], _case(), 4, writer="reference_local")["implementations"]
    assert spec["writer"] is None  # the model writes its own tables


def test_apache_hudis_reader_rows_skip_without_a_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUNDLE_ENV, str(tmp_path / "no-bundle.jar"))
    out = tmp_path / "r.json"
    assert main(["report", "--impl", "spec_reader", "--writer", "hudi_spark", "--case", ONE_CASE,
                 "--fixtures", str(ROOT / "fixtures"), "--json", str(out), "--markdown", str(tmp_path / "r.md")]) == 0
    (entry,) = json.loads(out.read_text())["implementations"]
    assert (entry["name"], entry["writer"], entry["counts"]["SKIP"]) == ("spec_reader", "hudi_spark", 1)
    assert BUNDLE_ENV in entry["cases"][f"writes/{ONE_CASE}"]["reason"]
    assert main(["report", "--impl", "hudi_spark_reader", "--writer", "reference_local", "--case", ONE_CASE,
                 "--fixtures", str(ROOT / "fixtures"), "--json", str(out), "--markdown", str(tmp_path / "r.md")]) == 0
    (entry,) = json.loads(out.read_text())["implementations"]
    assert (entry["name"], entry["writer"], entry["counts"]["SKIP"]) == ("hudi_spark_reader", "reference_local", 1)
    assert "make apache-hudi" in entry["cases"][f"writes/{ONE_CASE}"]["reason"]


def _run(writer: str, *entries: tuple[str, str | None]) -> dict[str, Any]:
    return {"corpus_version": 4, "date": "2026-01-01", "writer": writer, "cases": ["s/a"],
            "implementations": [{"name": n, "writer": w, "counts": {"PASS": 1, "FAIL": 0, "SKIP": 0, "XFAIL": 0},
                                 "cases": {"s/a": {"verdict": "PASS", "reason": ""}}} for n, w in entries]}


def test_runs_with_different_writers_merge_and_each_reader_names_its_writer() -> None:
    local = _run("reference_local", ("spec", None), ("hudi_rs", "reference_local"),
                 ("spec_reader", "reference_local"))
    hudi = _run("hudi_spark", ("spec_reader", "hudi_spark"), ("hudi_spark", None))
    merged = merge_matrices([local, hudi])
    assert merged["writer"] == "reference_local"
    page = render_matrix(merged)
    assert "| `hudi_rs` | `reference_local` | 1 |" in page and "| `spec` | itself | 1 |" in page
    assert "| `spec_reader on hudi_spark` | `hudi_spark` | 1 |" in page
    assert "| case | `spec` | `hudi_rs` | `spec_reader` | `spec_reader on hudi_spark` | `hudi_spark` |" in page
    with pytest.raises(InvalidOperation):  # the same reader of the same writer's tables twice
        merge_matrices([local, _run("hudi_spark", ("spec_reader", "reference_local"))])
    before = _run("hudi_spark", ("hudi_rs_exec", None))
    del before["implementations"][0]["writer"]  # a run made before entries named their writer
    with pytest.raises(InvalidOperation):
        merge_matrices([local, before])
    merged = merge_matrices([local, {**before, "writer": "reference_local"}])
    assert len(merged["implementations"]) == 4
    assert "| `hudi_rs_exec` | — | 1 |" in render_matrix(merged)  # whose tables it read, that run did not say


def test_a_program_is_a_reader_of_the_writers_tables_when_its_hello_says_so() -> None:
    writer = run_matrix([f"exec:{REFERENCE_CMD}"], _case(), 4, writer="reference_local")["implementations"][0]
    reader = run_matrix([f"exec:{HUDI_RS_CMD}"], _case(), 4, writer="reference_local")["implementations"][0]
    assert (writer["writer"], writer["counts"]["PASS"]) == (None, 1)
    assert (reader["writer"], reader["counts"]["PASS"]) == ("reference_local", 1)


def test_a_run_with_apache_hudi_starts_its_session_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's one Spark session is started with Hudi's bundle before any implementation runs, when one of
    the run needs Hudi: a session the reference on Spark (or a writer) started first would lack Hudi's classes."""
    from conformance.adapters import hudi_spark
    from conformance.report import start_hudi_first

    started: list[str] = []
    monkeypatch.setattr(hudi_spark, "hudi_session", started.append)
    monkeypatch.setattr(hudi_spark, "bundle", lambda: "hudi.jar")
    assert not start_hudi_first(["spec", "reference", "hudi_rs"], "reference_local") and started == []
    assert start_hudi_first(["spec", "hudi_spark"], "reference_local") and started == ["hudi.jar"]
    assert start_hudi_first(["spec_reader"], "hudi_spark") and len(started) == 2
    monkeypatch.setattr(hudi_spark, "bundle", lambda: None)  # no bundle: nothing started, the Hudi rows skip
    assert not start_hudi_first(["hudi_spark"], "reference_local") and len(started) == 2


def test_a_rerun_of_some_cases_replaces_their_verdicts_and_nothing_else() -> None:
    """``report --rerun``: cases whose expectations changed, run again, replace those cases' verdicts of each
    implementation the rerun ran; the counts are counted again; a rerun of another corpus or of an implementation
    the matrix lacks is refused."""
    from conformance.report import apply_reruns
    from spec.errors import InvalidOperation

    def entry(name: str, verdicts: dict[str, str]) -> dict[str, Any]:
        return {"impl": name, "name": name, "writer": None, "layers": {},
                "counts": {v: list(verdicts.values()).count(v) for v in ("PASS", "FAIL", "SKIP", "XFAIL")},
                "cases": {c: {"verdict": v, "reason": ""} for c, v in verdicts.items()}}

    matrix = {"corpus_version": 4, "date": "2026-11-26", "writer": "reference_local", "cases": ["a/x", "a/y"],
              "implementations": [entry("one", {"a/x": "PASS", "a/y": "FAIL"}), entry("two", {"a/x": "PASS",
                                                                                              "a/y": "PASS"})]}
    rerun = {"corpus_version": 4, "date": "2026-11-27", "writer": "reference_local", "cases": ["a/y"],
             "implementations": [entry("one", {"a/y": "PASS"})]}
    out = apply_reruns(matrix, [rerun])
    by_name = {e["name"]: e for e in out["implementations"]}
    assert by_name["one"]["cases"]["a/y"]["verdict"] == "PASS" and by_name["one"]["counts"]["PASS"] == 2
    assert by_name["one"]["counts"]["FAIL"] == 0 and by_name["two"] == matrix["implementations"][1]
    assert out["date"] == "2026-11-27" and matrix["implementations"][0]["counts"]["FAIL"] == 1  # a copy
    with pytest.raises(InvalidOperation, match="corpus version"):
        apply_reruns(matrix, [{**rerun, "corpus_version": 3}])
    with pytest.raises(InvalidOperation, match="not in the matrix"):
        apply_reruns(matrix, [{**rerun, "implementations": [entry("three", {"a/y": "PASS"})]}])


def test_a_rerun_of_a_later_corpus_adds_its_new_cases_only_when_every_implementation_ran_them() -> None:
    """A corpus that gained cases: the reruns of its new cases (on every implementation of the matrix, in one run
    or several) add them, and the matrix takes the new corpus version; a new case some implementation did not run
    is refused, as is a case a rerun of the same version does not have."""
    from conformance.report import apply_reruns
    from spec.errors import InvalidOperation

    def entry(name: str, verdicts: dict[str, str], writer: str | None = None) -> dict[str, Any]:
        return {"impl": name, "name": name, "writer": writer, "layers": {}, "counts": {},
                "cases": {c: {"verdict": v, "reason": ""} for c, v in verdicts.items()}}

    matrix = {"corpus_version": 4, "date": "2026-11-26", "writer": "reference_local", "cases": ["a/x"],
              "implementations": [entry("one", {"a/x": "PASS"}), entry("two", {"a/x": "PASS"})]}
    first = {"corpus_version": 5, "date": "2026-11-27", "writer": "reference_local", "cases": ["a/z"],
             "implementations": [entry("one", {"a/z": "PASS"})]}
    second = {**first, "implementations": [entry("two", {"a/z": "XFAIL"})]}
    out = apply_reruns(matrix, [first, second])
    assert out["corpus_version"] == 5 and out["cases"] == ["a/x", "a/z"]
    assert {e["name"]: e["counts"] for e in out["implementations"]} == {
        "one": {"PASS": 2, "FAIL": 0, "SKIP": 0, "XFAIL": 0}, "two": {"PASS": 1, "FAIL": 0, "SKIP": 0, "XFAIL": 1}}
    with pytest.raises(InvalidOperation, match="without a verdict: two: a/z"):
        apply_reruns(matrix, [first])
    with pytest.raises(InvalidOperation, match="corpus version"):
        apply_reruns(matrix, [{**first, "corpus_version": 4}])
    # reruns of one later version, each with cases of its own (the corpus grew twice before the matrix was merged)
    both = [{**first, "cases": ["a/z"],
             "implementations": [entry("one", {"a/z": "PASS"}), entry("two", {"a/z": "PASS"})]},
            {**first, "cases": ["a/w"],
             "implementations": [entry("one", {"a/w": "PASS"}), entry("two", {"a/w": "FAIL"})]}]
    grown = apply_reruns(matrix, both)
    assert grown["corpus_version"] == 5 and grown["cases"] == ["a/w", "a/x", "a/z"]

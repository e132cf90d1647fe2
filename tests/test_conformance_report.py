"""``hudi-conformance report``: the matrix of implementations x cases, and the page built from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.adapters.hudi_rs import HudiRsAdapter
from conformance.adapters.hudi_spark import BUNDLE_ENV
from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.cli import main
from conformance.report import factory_for, render_matrix

ROOT = Path(__file__).resolve().parents[1]


def test_report_runs_each_implementation_and_renders_the_matrix(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BUNDLE_ENV, raising=False)
    out = tmp_path / "m.json"
    md = tmp_path / "m.md"
    assert main(["report", "--impl", "spec", "--impl", "hudi_spark", "--case", "insert-upsert-delete-cow",
                 "--fixtures", str(ROOT / "fixtures"), "--json", str(out), "--markdown", str(md)]) == 0
    matrix = json.loads(out.read_text())
    assert matrix["cases"] == ["writes/insert-upsert-delete-cow-v6", "writes/insert-upsert-delete-cow-v8"]
    spec, spark = matrix["implementations"]
    assert spec["counts"]["PASS"] == 2 and spark["counts"]["SKIP"] == 2
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


def test_a_reader_writes_with_the_writer_given() -> None:
    adapter = factory_for("hudi_rs", "reference_local")()
    assert isinstance(adapter, HudiRsAdapter) and isinstance(adapter.writer, ReferenceLocalAdapter)


def test_the_site_shows_a_committed_real_run() -> None:
    matrix = json.loads((ROOT / "docs" / "conformance-matrix.json").read_text())
    names = {e["name"] for e in matrix["implementations"]}
    assert {"spec", "reference_local", "reference_local_exec", "hudi_rs", "hudi_rs_exec", "hudi_spark"} <= names
    for e in matrix["implementations"]:
        assert sum(e["counts"].values()) == len(matrix["cases"]) == len(e["cases"])
        if e["name"] != "hudi_spark":
            assert e["counts"]["PASS"] > 0
    by_name = {e["name"]: e["cases"] for e in matrix["implementations"]}
    assert by_name["hudi_rs"] == by_name["hudi_rs_exec"]  # the same results through the process protocol
    assert by_name["reference_local"] == by_name["reference_local_exec"]
    page = (ROOT / "docs" / "conformance-matrix.md").read_text()
    assert "<!-- hudi-spec:matrix -->" in page

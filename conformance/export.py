"""A DAT-style export: golden tables with the expected rows of every query, for readers in any language.

    hudi-conformance export OUT [--fixtures fixtures] [--real-tables DIR ...]

writes a self-contained folder::

    OUT/index.json                         format, corpus version, every table and its index
    OUT/golden/<case id>/table/            the golden table (a copy of fixtures/tables/<case id>/table)
    OUT/golden/<case id>/index.json        the table's queries: kind, parameters, expected rows file,
                                           row count and schema
    OUT/golden/<case id>/expected/*.parquet  the expected rows of each query
    OUT/real/<name>/...                    with --real-tables: Apache Hudi's tables, with the row counts
                                           and columns hudi-rs was verified to read (no rows files)
    OUT/departures/<case>-to-step-<n>/...  with --departures: a reader's known departures, each as a
                                           conforming table cut at the step where the reader first
                                           departs, laid out like a golden table

Per golden table the queries are those its case's expected observation holds after the last step:
snapshot, read-optimized, time travel to each write, incremental over each window. Parameters are
the table's own instant times (the labels of the observation mapped back through the table's
``labels.json``). The expected rows are the spec reader's rows of the table, exported only after
``conformance.golden.check_golden`` has shown they normalize to the spec model's expected
observation: they are the model's prediction in the table's own times, file names and sequence
numbers. A reader compares its rows with a query's file as multisets (sort by partition path and
record key); nothing of this project is needed to do so.
"""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.golden import Golden, check_golden, expected_last_step, load_goldens, write_golden
from conformance.observe import parse_window
from conformance.runner import FixtureCase, load_cases, run_case
from spec.errors import InvalidOperation

FORMAT: Final = "hudi-conformance-export"
FORMAT_VERSION: Final = 1
SORT_BY: Final = ("_hoodie_partition_path", "_hoodie_record_key")
BASELINE: Final = "BASELINE_hudi-py-0.5.0.json"
DEPARTURE_CASES: Final = ("pending-compaction-mor-v8", "pending-compaction-mor-v6")
"""Minimal cases of hudi-rs's two known departures: an incremental read keeping a log record that lost
the merge, and version-6 logs named by a pending compaction's instant left unread."""


@dataclass(frozen=True)
class ExportQuery:
    """One query of an exported table, in the table's own instant times."""

    name: str
    kind: str
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "as_of": self.as_of, "begin": self.begin, "end": self.end}


def golden_queries(expected: Mapping[str, Any], golden: Golden) -> list[tuple[ExportQuery, Any]]:
    """The queries of an expected observation's L0, each with its expected value (rows or an error),
    labels mapped back to the table's instant times."""
    actual = {label: t for t, label in golden.labels.get("instants", {}).items()}

    def time(label: str | None) -> str | None:
        return None if label is None else actual.get(label, label)

    l0 = expected.get("L0") or {}
    out = [(ExportQuery("snapshot", "snapshot"), l0.get("snapshot")),
           (ExportQuery("read_optimized", "read_optimized"), l0.get("read_optimized"))]
    for label, value in l0.get("time_travel", {}).items():
        out.append((ExportQuery(f"time_travel-{time(label)}", "time_travel", as_of=time(label)), value))
    for window, value in l0.get("incremental", {}).items():
        b, e = parse_window(window)
        out.append((ExportQuery(f"incremental-{time(b) or 'start'}-{time(e)}", "incremental", begin=time(b),
                                end=time(e)), value))
    return out


def _schema(table: Any) -> list[list[str]]:
    return [[f.name, str(f.type)] for f in table.schema]


def export_golden(golden: Golden, expected: Mapping[str, Any], folder: Path) -> dict[str, Any]:
    """One golden table into ``folder``: the table, its expected rows per query and its index."""
    import pyarrow.parquet as pq

    from spec.read.reader import read_table

    diffs = check_golden(golden, expected)
    wrong = {layer: d.render() for layer, d in diffs.items() if not d.ok}
    if wrong:
        raise InvalidOperation(f"golden table {golden.case.id} does not read as its case predicts: {wrong}",
                               hint="rewrite it with `hudi-conformance tables`")
    shutil.copytree(golden.table, folder / "table")
    (folder / "expected").mkdir()
    queries = []
    for q, value in golden_queries(expected, golden):
        entry = q.params()
        if isinstance(value, Mapping) and "error" in value:
            entry["expect_error"] = value["error"]
            queries.append(entry)
            continue
        kind = "snapshot" if q.kind == "time_travel" else q.kind
        rows = read_table(str(golden.table), kind, as_of=q.as_of, begin=q.begin, end=q.end)
        if rows.num_columns:
            rows = rows.sort_by([(c, "ascending") for c in SORT_BY])
        if rows.num_rows != len(value or []):
            raise InvalidOperation(f"{golden.case.id} {q.name}: {rows.num_rows} rows, expected {len(value or [])}")
        pq.write_table(rows, folder / "expected" / f"{q.name}.parquet")
        queries.append({**entry, "expected": f"expected/{q.name}.parquet", "row_count": rows.num_rows,
                        "schema": _schema(rows)})
    c = golden.case.config
    index = {"name": golden.case.id, "source": "golden", "description": golden.case.description,
             "table": "table", "table_type": c.table_type, "table_version": c.table_version,
             "record_key_fields": list(c.record_key_fields), "partition_fields": list(c.partition_fields),
             "compare": {"sort_by": list(SORT_BY), "as": "multiset of rows, every column"}, "queries": queries}
    _write_json(folder / "index.json", index)
    return index


def export_real(source: Path, out: Path) -> list[dict[str, Any]]:
    """The real tables under ``source`` (zips listed in its MANIFEST.tsv), each with the row counts (and
    columns, where the baseline has them) that hudi-rs read from it."""
    lines = [ln for ln in (source / "MANIFEST.tsv").read_text().splitlines() if ln and not ln.startswith("#")]
    baseline = json.loads((source / BASELINE).read_text()) if (source / BASELINE).is_file() else {}
    out_rows = []
    for row in csv.DictReader(lines, delimiter="\t"):
        name = row["zip"].removesuffix(".zip").replace("/", "__")
        folder = out / name
        with zipfile.ZipFile(source / row["zip"]) as zf:
            zf.extractall(folder / "unzipped", [m for m in zf.namelist() if not m.startswith("__MACOSX/")])
        (inner,) = [p for p in (folder / "unzipped").iterdir() if p.is_dir()]
        inner.rename(folder / "table")
        (folder / "unzipped").rmdir()
        base = baseline.get(row["zip"], {})
        queries = [{"name": "snapshot", "kind": "snapshot", "row_count": int(row["hudirs050_snapshot_rows"])}]
        if row.get("hudirs050_ro_rows", "").isdigit():
            queries.append({"name": "read_optimized", "kind": "read_optimized",
                            "row_count": int(row["hudirs050_ro_rows"])})
        for q in queries:
            if base.get("columns"):
                q["columns"] = base["columns"]
        index = {"name": name, "source": "real", "table": "table", "table_type": row["type"],
                 "table_version": int(row["table_version"]), "verified_by": "hudi-rs (PyPI hudi 0.5.0)",
                 "queries": queries}
        _write_json(folder / "index.json", index)
        out_rows.append(index)
    return out_rows


def export_departures(out: Path, fixtures: str | Path, reader: str = "hudi_rs", writer: str = "reference_local",
                      case_ids: Sequence[str] = DEPARTURE_CASES) -> list[dict[str, Any]]:
    """Each case the ``reader`` departs on, cut at its first diverging step, written by ``writer`` and
    exported like a golden table (with what the reader is known to do wrong)."""
    import tempfile
    from dataclasses import replace

    from conformance.adapters import resolve_impl
    from conformance.report import factory_for

    fixtures_by_id = {fc.case.id: fc for fc in load_cases(fixtures)}
    out_rows = []
    for case_id in case_ids:
        fc = fixtures_by_id[case_id]
        result = run_case(fc, factory_for(reader, writer))
        n = result.first_divergence
        if n is None or fc.expected is None:
            continue  # the reader no longer departs here
        cut = FixtureCase(replace(fc.case, id=f"{case_id}-to-step-{n}", ops=fc.case.ops[:n]), fc.suite,
                          fc.expected[:n])
        with tempfile.TemporaryDirectory() as tmp:
            write_golden(tmp, cut, resolve_impl(writer))
            (golden,) = load_goldens(tmp)
            folder = out / cut.case.id
            folder.mkdir(parents=True)
            index = export_golden(golden, cut.expected[-1] if cut.expected else {}, folder)
        index["departure"] = {"reader": reader, "case": case_id, "step": n, "verdict": str(result.verdict),
                              "reason": result.reason, "diff": result.diff}
        _write_json(folder / "index.json", index)
        out_rows.append(index)
    return out_rows


def export(out: str | Path, fixtures: str | Path, real_tables: Sequence[str | Path] = (),
           departures: bool = False) -> dict[str, Any]:
    """Write the export under ``out`` (which must not exist, or be empty); return its top index."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise InvalidOperation(f"{out} is not empty", hint="export into a new folder")
    manifest = json.loads((Path(fixtures) / "MANIFEST.json").read_text())
    tables = []
    for golden in load_goldens(fixtures):
        folder = out / "golden" / golden.case.id
        folder.mkdir(parents=True)
        index = export_golden(golden, expected_last_step(fixtures, golden), folder)
        tables.append({"name": golden.case.id, "source": "golden", "index": f"golden/{golden.case.id}/index.json",
                       "queries": len(index["queries"])})
    for source in real_tables:
        for index in export_real(Path(source), out / "real"):
            tables.append({"name": index["name"], "source": "real", "index": f"real/{index['name']}/index.json",
                           "queries": len(index["queries"])})
    if departures:
        for index in export_departures(out / "departures", fixtures):
            tables.append({"name": index["name"], "source": "departure", "index": f"departures/{index['name']}/"
                           "index.json", "queries": len(index["queries"]), "departure": index["departure"]["reason"]})
    top = {"format": FORMAT, "format_version": FORMAT_VERSION, "corpus_version": manifest.get("corpus_version"),
           "generator_version": manifest.get("generator_version"), "tables": tables}
    _write_json(out / "index.json", top)
    return top


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")

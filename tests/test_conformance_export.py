"""The DAT-style export (``hudi-conformance export``): a folder any reader can check itself against.

The checker here uses nothing but ``json`` and ``pyarrow`` on the exported files — no project code —
as a reader in another language would. The spec's reader passes every query; a reader that loses a
row is caught; hudi-rs passes every query but its two known departures (incremental reads of
merge-on-read tables keeping a log record that lost the merge; version-6 logs written while a
compaction is pending left unread), which the export also holds as minimal tables. With the real Apache Hudi tables,
their exported row counts are the ones hudi-rs reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.cli import main
from conformance.export import export

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
Reader = Callable[[str, dict[str, Any]], pa.Table]


# --- a checker that knows only the export's format --------------------------------------------------

def _multiset(table: pa.Table) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in table.to_pylist())


def check_reader(folder: Path, read: Reader) -> dict[str, list[str]]:
    """Per exported table, the queries whose rows (or row count) the reader gets wrong."""
    top = json.loads((folder / "index.json").read_text())
    assert top["format"] == "hudi-conformance-export" and top["format_version"] == 1
    wrong: dict[str, list[str]] = {}
    for entry in top["tables"]:
        index = json.loads((folder / entry["index"]).read_text())
        base = (folder / entry["index"]).parent
        for q in index["queries"]:
            if "expect_error" in q:
                continue
            got = read(str(base / index["table"]), q)
            if "expected" in q:
                want = pq.read_table(base / q["expected"])
                assert want.num_rows == q["row_count"]
                ok = _multiset(got) == _multiset(want) if got.num_rows or want.num_rows else True
            else:
                columns = q.get("columns") if got.num_rows else None  # no rows: a reader may give no schema
                ok = got.num_rows == q["row_count"] and (not columns or got.column_names == columns)
            if not ok:
                wrong.setdefault(entry["name"], []).append(q["name"])
    return wrong


# --- readers ----------------------------------------------------------------------------------------

def spec_reader(table: str, q: dict[str, Any]) -> pa.Table:
    from spec.read.reader import read_table

    kind = "snapshot" if q["kind"] == "time_travel" else q["kind"]
    return read_table(table, kind, as_of=q.get("as_of"), begin=q.get("begin"), end=q.get("end"))


def hudi_rs_reader(table: str, q: dict[str, Any]) -> pa.Table:
    import hudi
    from hudi import HudiQueryType, HudiReadOptions

    opts = HudiReadOptions()
    if q["kind"] == "read_optimized":
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    elif q["kind"] == "time_travel":
        opts = opts.with_as_of_timestamp(q["as_of"])
    elif q["kind"] == "incremental":
        opts = opts.with_query_type(HudiQueryType.Incremental)
        if q.get("begin"):
            opts = opts.with_start_timestamp(q["begin"])
        opts = opts.with_end_timestamp(q["end"])
    batches = hudi.HudiTableBuilder.from_base_uri(table).build().read(opts)
    return pa.Table.from_batches(batches) if batches else pa.table({})


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "out"
    assert main(["export", str(out), "--fixtures", str(FIXTURES), "--departures"]) == 0
    return out


def test_the_export_indexes_every_golden_table_and_query(exported: Path) -> None:
    top = json.loads((exported / "index.json").read_text())
    manifest = json.loads((FIXTURES / "MANIFEST.json").read_text())
    assert top["corpus_version"] == manifest["corpus_version"]
    names = {t["name"] for t in top["tables"] if t["source"] == "golden"}
    assert names == {p.name for p in (FIXTURES / "tables").iterdir() if (p / "case.json").is_file()}
    index = json.loads((exported / "golden" / "compaction-logs-mor-v8" / "index.json").read_text())
    kinds = {q["kind"] for q in index["queries"]}
    assert kinds == {"snapshot", "read_optimized", "time_travel", "incremental"}
    assert all(len(q["begin"] or "start") >= 5 and q["end"].isdigit() for q in index["queries"]
               if q["kind"] == "incremental")  # the table's own times, not labels


def test_the_spec_reader_passes_the_export(exported: Path) -> None:
    assert check_reader(exported, spec_reader) == {}


def test_a_reader_losing_a_row_is_caught(exported: Path) -> None:
    def lossy(table: str, q: dict[str, Any]) -> pa.Table:
        rows = spec_reader(table, q)
        return rows.slice(1) if q["kind"] == "snapshot" and rows.num_rows else rows

    wrong = check_reader(exported, lossy)
    assert set(wrong) and all(qs == ["snapshot"] for qs in wrong.values())


def test_hudi_rs_against_the_export_shows_only_its_known_departures(exported: Path) -> None:
    wrong = check_reader(exported, hudi_rs_reader)
    assert set(wrong) == {"pending-compaction-mor-v8-to-step-6", "pending-compaction-mor-v6-to-step-4"}
    # the window before the compaction completed: read from the compacted file
    assert all(q.startswith("incremental-") for q in wrong["pending-compaction-mor-v8-to-step-6"])
    assert "snapshot" in wrong["pending-compaction-mor-v6-to-step-4"]  # the log written under the plan is unread


def test_each_departure_is_a_minimal_table_with_its_reason(exported: Path) -> None:
    top = json.loads((exported / "index.json").read_text())
    departures = {t["name"]: t for t in top["tables"] if t["source"] == "departure"}
    assert set(departures) == {"pending-compaction-mor-v8-to-step-6", "pending-compaction-mor-v6-to-step-4"}
    index = json.loads((exported / departures["pending-compaction-mor-v6-to-step-4"]["index"]).read_text())
    assert index["departure"]["step"] == 4 and "pending" in index["departure"]["reason"]
    assert (exported / "departures" / index["name"] / "table" / ".hoodie").is_dir()


def test_an_export_needs_a_new_folder(exported: Path) -> None:
    from spec.errors import InvalidOperation

    with pytest.raises(InvalidOperation, match="not empty"):
        export(exported, FIXTURES)


@pytest.mark.external
def test_real_tables_export_with_what_hudi_rs_read(required_tables_source: Path, tmp_path: Path) -> None:
    real_tables_source = required_tables_source
    out = tmp_path / "out"
    top = export(out, FIXTURES, [real_tables_source])
    real = [t for t in top["tables"] if t["source"] == "real"]
    assert len(real) == len([ln for ln in (real_tables_source / "MANIFEST.tsv").read_text().splitlines()
                             if ln and not ln.startswith(("#", "zip\t"))])
    assert not (check_reader(out, hudi_rs_reader).keys() & {t["name"] for t in real})

"""``hudi-spec read`` in every output format and query type, on real tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from reference.cli import main
from spec.read.reader import read_table
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset

TRIPS_V6 = "v6_trips_8i1u"
TRIPS_V8 = "v8_trips_8i3u1d"
COW_V6 = "v6_nonpartitioned"


def _path(tables: list[RealTable], suffix: str) -> str:
    return str(next(t for t in tables if t.name.endswith(suffix)).path)


def test_read_json_equals_the_reader(any_real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(any_real_table.path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    expected = read_table(str(any_real_table.path)).to_pylist()
    canon = sorted(json.dumps(r, sort_keys=True) for r in rows)
    assert canon == sorted(json.dumps(r, sort_keys=True, default=_as_cli_writes) for r in expected)


def _as_cli_writes(value: object) -> str:
    """The JSON form of a value JSON has no type for: bytes as hex, others (dates, decimals) as str."""
    return value.hex() if isinstance(value, bytes) else str(value)


def test_read_text_table(real_tables: list[RealTable], capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(real_tables, TRIPS_V6)
    assert main(["read", path, "--columns", "uuid", "fare", "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "8 rows (snapshot)" in out
    header = next(line for line in out.splitlines() if "uuid" in line)
    assert "fare" in header and "rider" not in header
    uuids = [r["uuid"] for r in read_table(path).to_pylist()]
    assert sum(u in out for u in uuids) == 3  # --limit 3


def test_read_parquet_and_json_files(real_tables: list[RealTable], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(real_tables, TRIPS_V6)
    target = tmp_path / "rows.parquet"
    assert main(["read", path, "--query", "read_optimized", "--format", "parquet", "--out", str(target)]) == 0
    assert as_multiset(pq.read_table(target)) == as_multiset(read_table(path, "read_optimized"))
    assert "wrote 8 rows" in capsys.readouterr().err
    out = tmp_path / "rows.json"
    assert main(["read", path, "--json", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert len(json.loads(out.read_text())) == 8


def test_every_query_option(real_tables: list[RealTable], capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(real_tables, TRIPS_V8)
    first = "20251220210108078"  # the 8 inserts; later deltacommits update and delete
    assert main(["read", path, "--as-of", first, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 8
    first_done = "20251220210109593"  # v8 windows incremental queries by completion time
    assert main(["read", path, "--query", "incremental", "--begin", first_done, "--output", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["_hoodie_commit_time"] > first for r in rows)
    assert main(["read", path, "--query", "incremental", "--begin", first, "--output", "json"]) == 0
    assert {r["_hoodie_commit_time"] for r in json.loads(capsys.readouterr().out)} >= {first}
    assert main(["read", path, "--partition", "city=chennai", "--partition", "city=sao_paulo", "--json",
                 "--engine", "spec"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["city"] for r in rows} == {"chennai", "sao_paulo"}
    assert len(rows) == read_table(path, partition_filter=["city=chennai", "city=sao_paulo"]).num_rows


def test_bad_arguments_exit_2_with_a_message(real_tables: list[RealTable],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(real_tables, COW_V6)
    assert main(["read", path, "--as-of", "yesterday"]) == 2
    assert "not an instant time" in capsys.readouterr().err
    assert main(["read", path, "--format", "parquet"]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["read", path, "--begin", "20240418173550988"]) == 2
    assert "incremental" in capsys.readouterr().err
    assert main(["read", path, "--columns", "nope"]) == 2
    assert "no column" in capsys.readouterr().err

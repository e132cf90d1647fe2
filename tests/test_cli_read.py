"""``hudi-spec read`` in every output format, on real tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from reference.cli import main
from spec.reader import read_table
from tests.conftest import RealTable


def test_read_json_lines_equal_the_reader(real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["read", str(real_table.path), "--format", "json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == read_table(str(real_table.path)).num_rows


def test_read_table_text_and_parquet(real_tables: list[RealTable], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    table = next(t for t in real_tables if t.name.endswith("v6_trips_8i1u"))
    assert main(["read", str(table.path), "--columns", "uuid", "fare", "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert "uuid" in out and "fare" in out and "8 rows" in out
    target = tmp_path / "rows.parquet"
    assert main(["read", str(table.path), "--query", "read_optimized", "--format", "parquet",
                 "--out", str(target)]) == 0
    assert pq.read_table(target).num_rows == 8


def test_incremental_and_bad_arguments(real_tables: list[RealTable], capsys: pytest.CaptureFixture[str]) -> None:
    table = next(t for t in real_tables if t.name.endswith("v6_nonpartitioned"))
    assert main(["read", str(table.path), "--query", "incremental", "--begin", "20240418173550988", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rows and all(r["_hoodie_commit_time"] > "20240418173550988" for r in rows)
    assert main(["read", str(table.path), "--as-of", "yesterday"]) == 2
    assert "not an instant time" in capsys.readouterr().err
    assert main(["read", str(table.path), "--format", "parquet"]) == 2

"""``make demo`` builds a table from the spec's rules and hudi-rs reads it exactly as the spec reader does."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.checker import check_table
from reference.demo import main


@pytest.mark.parametrize("version", [6, 8])
def test_demo_table_reads_the_same_in_hudi_rs(version: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "trips"
    assert main(["--path", str(path), "--table-version", str(version), "--no-spark"]) == 0
    out = capsys.readouterr().out
    assert out.count("[hudi-rs agrees]") == 4
    assert check_table(str(path)).ok


@pytest.mark.spark
def test_demo_with_the_spark_writer(spark: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--path", str(tmp_path / "trips")]) == 0
    out = capsys.readouterr().out
    assert out.count("[hudi-rs agrees]") == 7 and "DIFFERS" not in out
    assert check_table(str(tmp_path / "trips_cow")).ok

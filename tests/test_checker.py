"""``hudi-conformance check``: every real table passes; each kind of damage in a copy is reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.checker import check_table
from conformance.cli import main
from spec.timeline import Timeline
from tests.conftest import RealTable


def test_every_real_table_passes(real_table: RealTable) -> None:
    report = check_table(str(real_table.path))
    assert report.ok, [f for f in report.errors]


def _copy(tables: list[RealTable], name: str, factory: object) -> Path:
    return factory(next(t for t in tables if t.name == name))  # type: ignore[operator, no-any-return]


def test_missing_instant_file(real_tables: list[RealTable], real_table_copy: object) -> None:
    path = _copy(real_tables, "sample_table/cow/v6_nonpartitioned", real_table_copy)
    inst = Timeline.load(str(path)).instants[-1]
    (path / ".hoodie" / f"{inst.requested}.inflight").unlink()
    assert "timeline-state" in check_table(str(path)).codes()


def test_truncated_log_block(real_tables: list[RealTable], real_table_copy: object) -> None:
    path = _copy(real_tables, "quickstart_trips_table/mor/avro/v6_trips_8i1u", real_table_copy)
    log = next(p for p in path.rglob(".*.log.*"))
    log.write_bytes(log.read_bytes()[:-10])
    assert "log-block" in check_table(str(path)).codes()


def test_duplicate_key_across_groups(real_tables: list[RealTable], real_table_copy: object) -> None:
    path = _copy(real_tables, "sample_table/cow/v6_nonpartitioned", real_table_copy)
    base = sorted(path.glob("*.parquet"))[-1]
    fid, token, instant = base.stem.split("_")
    shutil.copy(base, path / f"{fid[:-1]}9_{token}_{instant}.parquet")  # same rows, a second file group
    assert "duplicate-key" in check_table(str(path)).codes()


def test_bad_checksum(real_tables: list[RealTable], real_table_copy: object) -> None:
    path = _copy(real_tables, "sample_table/cow/v8_nonpartitioned", real_table_copy)
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    props.write_text("\n".join("hoodie.table.checksum=1" if ln.startswith("hoodie.table.checksum") else ln
                               for ln in text.splitlines()) + "\n")
    assert check_table(str(path)).codes() == {"table-config"}


def test_orphan_base_file(real_tables: list[RealTable], real_table_copy: object) -> None:
    path = _copy(real_tables, "sample_table/cow/v6_nonpartitioned", real_table_copy)
    base = sorted(path.glob("*.parquet"))[-1]
    fid, token, _ = base.stem.split("_")
    shutil.copy(base, path / f"{fid}_{token}_20990101000000000.parquet")
    assert "orphan-file" in check_table(str(path)).codes()


def test_cli_text_json_and_exit_codes(real_tables: list[RealTable], real_table_copy: object,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    good = next(t for t in real_tables if t.name == "sample_table/cow/v6_nonpartitioned")
    assert main(["check", str(good.path)]) == 0
    assert capsys.readouterr().out.startswith("PASS")
    bad = _copy(real_tables, "quickstart_trips_table/mor/avro/v6_trips_8i1u", real_table_copy)
    log = next(p for p in bad.rglob(".*.log.*"))
    log.write_bytes(log.read_bytes()[:-10])
    assert main(["check", str(bad), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data[0]["ok"] is False and any(f["code"] == "log-block" for f in data[0]["findings"])

"""``hudi-conformance check``: every real table passes; each kind of damage in a copy is reported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.checker import check_table
from conformance.cli import main
from conformance.cli_check import EXIT_UNSUPPORTED
from spec.timeline.active_timeline import Timeline
from tests.conftest import RealTable


def test_every_real_table_passes(any_real_table: RealTable) -> None:
    report = check_table(str(any_real_table.path))
    assert report.ok and report.status == "PASS", [f for f in report.errors]


def test_a_key_hudi_inserted_twice_is_a_warning_with_the_reason(real_tables_v9: list[RealTable]) -> None:
    """Two inserts put TXN-002 in two file groups: Apache Hudi's insert does not look up existing keys."""
    table = next(t for t in real_tables_v9 if t.name.endswith("v9_nonpartitioned_rollback"))
    report = check_table(str(table.path))
    (dup,) = [f for f in report.findings if f.code == "duplicate-key"]
    assert report.ok and dup.level == "warning" and "'TXN-002'" in dup.message
    assert "written again by INSERT" in dup.message and "do not look up existing keys" in dup.message
    assert main(["check", str(table.path), "--strict"]) == 1


def test_the_files_partition_must_list_the_live_files(real_tables_v9: list[RealTable],
                                                       real_table_copy: object) -> None:
    table = next(t for t in real_tables_v9 if t.name.endswith("v9_txns_simple_overwrite"))
    path = real_table_copy(table)  # type: ignore[operator]
    assert check_table(str(path)).ok
    base = max(path.rglob("*.parquet"), key=lambda p: p.stem.rsplit("_", 1)[1])  # of the latest commit: live
    fid, token, instant = base.stem.split("_")
    extra = base.with_name(f"{fid[:-1]}9_{token}_{instant}.parquet")  # a new group of a completed commit
    shutil.copy(base, extra)
    found = [f for f in check_table(str(path)).errors if f.code == "metadata-files"]
    assert [(f.path.rpartition("/")[2], "not listed by the metadata table" in f.message) for f in found] == [
        (extra.name, True)]
    extra.unlink()
    base.unlink()  # listed by the metadata table, gone from storage
    found = [f for f in check_table(str(path)).errors if f.code == "metadata-files"]
    assert [f.path.rpartition("/")[2] for f in found] == [base.name] and "not a live file" in found[0].message


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


@pytest.mark.parametrize("change", [{"hoodie.table.base.file.format": "LANCE"}, {"hoodie.table.version": "5"}])
def test_uncovered_tables_are_unsupported_not_invalid(real_tables: list[RealTable], real_table_copy: object,
                                                      capsys: pytest.CaptureFixture[str],
                                                      change: dict[str, str]) -> None:
    path = _copy(real_tables, "sample_table/cow/v8_nonpartitioned", real_table_copy)
    props = path / ".hoodie" / "hoodie.properties"
    key, value = next(iter(change.items()))
    lines = [ln for ln in props.read_text().splitlines() if not ln.startswith(key + "=")]
    props.write_text("\n".join([*lines, f"{key}={value}"]) + "\n")
    report = check_table(str(path))
    assert report.status == "UNSUPPORTED" and not report.ok and not report.errors
    assert main(["check", str(path)]) == EXIT_UNSUPPORTED
    assert capsys.readouterr().out.startswith("UNSUPPORTED")
    good = next(t for t in real_tables if t.name == "sample_table/cow/v6_nonpartitioned")
    assert main(["check", str(good.path), str(path), "--json"]) == EXIT_UNSUPPORTED
    assert [r["status"] for r in json.loads(capsys.readouterr().out)] == ["PASS", "UNSUPPORTED"]


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

"""``hudi-spec logfile`` on real log files and on a file with a torn block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference.cli import main
from spec.file_group.log_file.log_format import read_blocks
from tests.conftest import RealTable


def _logs(table: RealTable) -> list[Path]:
    return sorted(p for p in table.path.rglob(".*.log.*") if ".hoodie" not in p.relative_to(table.path).parts)


def _first_log(table: RealTable) -> Path | None:
    logs = _logs(table)
    return logs[0] if logs else None


def test_logfile_json_and_text(real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    logs = _logs(real_table)
    assert len(logs) == int(real_table.manifest["n_log_files"])
    for log in logs:
        _check_logfile_command(log, capsys)


def _check_logfile_command(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logfile", str(log), "--records", "2", "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    blocks = [r.block for r in read_blocks(log.read_bytes())]
    assert [b["block_type"] for b in data["blocks"]] == [b.block_type.name for b in blocks if b]
    assert data["corrupt_blocks"] == 0 and data["size"] == log.stat().st_size
    assert [b["offset"] for b in data["blocks"]] == [r.offset for r in read_blocks(log.read_bytes())]
    shown = [rec for b in data["blocks"] for rec in b.get("records", [])]
    has_records = any(b["record_count"] for b in data["blocks"])
    assert 0 < len(shown) <= 2 if has_records else shown == []
    for b in data["blocks"]:
        if b["block_type"] == "COMMAND_BLOCK":
            assert b["target_instant_time"] and b["record_count"] == 0
    assert main(["logfile", str(log)]) == 0
    out = capsys.readouterr().out
    assert blocks[0] is not None and blocks[0].block_type.name in out
    assert blocks[0].instant_time is not None and blocks[0].instant_time in out


def test_logfile_reports_corruption_with_exit_code(real_tables: list[RealTable], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = next(p for t in real_tables if (p := _first_log(t)))
    torn = tmp_path / log.name
    data = log.read_bytes()
    torn.write_bytes(data + data[: len(data) // 2])
    assert main(["logfile", str(torn), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["corrupt_blocks"] == 1 and out["blocks"][-1]["block_type"] == "CORRUPT_BLOCK"

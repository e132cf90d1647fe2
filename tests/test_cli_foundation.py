"""``hudi-spec desc`` and ``hudi-spec timeline`` on every real table (and its metadata table), text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference.cli import main
from spec.config.table_config import TableConfig
from tests.conftest import RealTable


def _tables_in(root: Path) -> list[Path]:
    mdt = root / ".hoodie" / "metadata"
    return [root, mdt] if (mdt / ".hoodie" / "hoodie.properties").is_file() else [root]


def _listing(table: Path) -> dict[str, list[str]]:
    """requested time -> timeline file names, read straight from the folder (independent of
    spec.timeline.active_timeline)."""
    layout = int(TableConfig.load(str(table)).props["hoodie.timeline.layout.version"])
    folder = table / ".hoodie" / ("timeline" if layout == 2 else "")
    out: dict[str, list[str]] = {}
    for p in folder.iterdir():
        if p.is_file() and p.name[0].isdigit():
            out.setdefault(p.name.split(".")[0].split("_")[0], []).append(p.name)
    return out


def test_desc_json_and_text(any_real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    for table in _tables_in(any_real_table.path):
        props_text = (table / ".hoodie" / "hoodie.properties").read_text()
        assert main(["desc", str(table), "--output", "json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["tableVersion"] == any_real_table.table_version
        assert data["timelineLayoutVersion"] == (2 if any_real_table.table_version >= 8 else 1)
        assert data["tableName"] == data["properties"]["hoodie.table.name"]
        assert data["metaPath"].rstrip("/").endswith(".hoodie") and data["metaPath"].startswith(data["basePath"])
        assert f"hoodie.table.name={data['tableName']}" in props_text
        assert len(data["properties"]) == sum(1 for line in props_text.splitlines() if line and line[0] != "#")
        assert main(["desc", str(table)]) == 0
        text = capsys.readouterr().out
        assert "hoodie.table.name" in text and data["tableName"] in text
    data_props = (any_real_table.path / ".hoodie" / "hoodie.properties").read_text().splitlines()
    assert f"hoodie.table.name={json.loads(_run_json(['desc', str(any_real_table.path)], capsys))['tableName']}" in (
        data_props)


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*argv, "--json"]) == 0
    return capsys.readouterr().out


def test_timeline_json_and_text(any_real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    for table in _tables_in(any_real_table.path):
        listing = _listing(table)
        data = json.loads(_run_json(["timeline", str(table), "--all"], capsys))
        assert data["total_instants"] == len(listing) == len(data["instants"])
        assert [r["instant_time"] for r in data["instants"]] == sorted(listing)
        for row in data["instants"]:
            names = listing[row["instant_time"]]
            assert sorted(row["files"]) == sorted(names)
            completed = [n for n in names if n.count(".") == 1 and not n.endswith(".inflight")]
            assert (row["state"] == "COMPLETED") == bool(completed)
            if completed:
                assert row["action"] == completed[0].split(".")[1] and row["completed_time"]
                assert row["completion_time"] == (completed[0].split(".")[0].partition("_")[2] or None)
            assert (row["requested_time"] is not None) == any(n.endswith(".requested") for n in names)
        default = json.loads(_run_json(["timeline", str(table)], capsys))
        assert default["instants"] == data["instants"][-20:]
        assert main(["timeline", str(table), "--all"]) == 0
        text = capsys.readouterr().out
        for t in listing:
            assert t in text


def test_timeline_limit_pending_and_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = TableConfig.create("t", record_key_fields=("id",))
    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / "hoodie.properties").write_bytes(cfg.to_bytes())
    times = [f"2024010100000{i:04d}" for i in range(25)]
    for t in times:
        for suffix in (".commit.requested", ".inflight", ".commit"):
            (tmp_path / ".hoodie" / f"{t}{suffix}").write_bytes(b"")
    (tmp_path / ".hoodie" / "20240102000000000.commit.requested").write_bytes(b"")
    rows = json.loads(_run_json(["timeline", str(tmp_path)], capsys))["instants"]
    assert [r["instant_time"] for r in rows] == [*times[-19:], "20240102000000000"]
    rows = json.loads(_run_json(["timeline", str(tmp_path), "--limit", "2"], capsys))["instants"]
    assert [r["instant_time"] for r in rows] == [times[-1], "20240102000000000"]
    rows = json.loads(_run_json(["timeline", str(tmp_path), "--pending"], capsys))["instants"]
    assert [(r["instant_time"], r["state"], r["completed_time"]) for r in rows] == [
        ("20240102000000000", "REQUESTED", None)]
    assert len(json.loads(_run_json(["timeline", str(tmp_path), "--all"], capsys))["instants"]) == 26


def test_bad_path_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["desc", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hudi-spec desc: InvalidTable:") and "\n" not in err
    assert main(["timeline", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("hudi-spec timeline: InvalidTable:")

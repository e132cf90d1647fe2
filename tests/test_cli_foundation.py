"""``hudi-spec desc`` and ``hudi-spec timeline`` on every real table, text and JSON."""

from __future__ import annotations

import json

import pytest

from reference.cli import main
from spec.timeline import Timeline
from tests.conftest import RealTable


def test_desc_json_and_text(real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["desc", str(real_table.path), "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tableVersion"] == real_table.table_version
    assert data["properties"]["hoodie.table.name"] == real_table.path.name
    assert main(["desc", str(real_table.path)]) == 0
    text = capsys.readouterr().out
    assert "hoodie.table.name" in text and real_table.path.name in text


def test_timeline_json_and_text(real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["timeline", str(real_table.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    tl = Timeline.load(str(real_table.path))
    assert [(r["instant_time"], r["action"], r["state"]) for r in data["instants"]] == [
        (i.requested, i.action, i.state.value) for i in tl.instants]
    assert main(["timeline", str(real_table.path)]) == 0
    text = capsys.readouterr().out
    for inst in tl.instants:
        assert inst.requested in text


def test_bad_path_is_one_line_error(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["desc", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hudi-spec desc: InvalidTable:") and "\n" not in err

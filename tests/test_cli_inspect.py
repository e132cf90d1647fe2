"""``hudi-spec commits | commit-files | fsview | stats`` on every real table, text and JSON."""

from __future__ import annotations

import json
import time

import pytest

from reference.cli import main
from spec.file_group.file_system_view import FileSystemView
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Instant
from spec.timeline.layout import format_instant_file_name, timeline_dir
from tests.conftest import RealTable


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _transition_time(table: RealTable, timeline: Timeline, inst: Instant) -> str:
    """Hudi's ``HoodieInstant.getCompletionTime``: the completion time in the file name (layout 2), or the completed
    file's modification time as an instant time in local time (layout 1), read here with os.stat."""
    if timeline.layout == 2:
        assert inst.completed is not None
        return inst.completed
    stat = (table.path / timeline_dir(timeline.layout) / format_instant_file_name(inst, timeline.layout)).stat()
    return time.strftime("%Y%m%d%H%M%S", time.localtime(stat.st_mtime)) + f"{stat.st_mtime_ns // 1_000_000 % 1000:03d}"


def test_commits_and_commit_files(any_real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(any_real_table.path)
    timeline = Timeline.load(path)
    commits = _json(capsys, ["commits", path])
    done = list(reversed(timeline.commits_timeline().instants))  # newest first, as show_commits lists them
    assert [c["commit_time"] for c in commits] == [i.requested for i in done]
    assert [c["state_transition_time"] for c in commits] == [
        _transition_time(any_real_table, timeline, i) for i in done]
    assert _json(capsys, ["commits", path, "--limit", "1"]) == commits[:1]
    for inst in timeline.commits_timeline().instants:
        data = _json(capsys, ["commit-files", path, inst.requested])
        md = parse_commit_metadata((any_real_table.path / timeline_dir(timeline.layout)
                                    / format_instant_file_name(inst, timeline.layout)).read_bytes())
        assert sorted(f["path"] for f in data["files"]) == sorted(s.path for s in md.all_write_stats())
    assert main(["commits", path]) == 0 and main(["stats", path]) == 0
    capsys.readouterr()


def test_fsview_matches_the_view(any_real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(any_real_table.path)
    rows = _json(capsys, ["fsview", path, "--latest"])
    view = FileSystemView.load(Storage(path))
    assert len(rows) == len(view.latest_slices())
    assert len({(r["partition"], r["file_id"]) for r in rows}) == len(rows)
    for r in rows:
        if r["data_file"]:
            assert (any_real_table.path / r["partition"] / r["data_file"]).stat().st_size == r["data_file_size"]
    assert main(["fsview", path]) == 0
    capsys.readouterr()
    assert _json(capsys, ["fsview", path, "--list-file-system"]) == _json(capsys, ["fsview", path])


def test_commit_files_unknown_instant(real_tables: list[RealTable], capsys: pytest.CaptureFixture[str]) -> None:
    table = real_tables[0]
    assert main(["commit-files", str(table.path), "20000101000000000"]) == 2
    assert "InstantNotFound" in capsys.readouterr().err

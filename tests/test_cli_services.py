"""``hudi-spec cleans | rollbacks | savepoints | compactions | archived`` on every real table (and its
metadata table), and ``clean | rollback | savepoint create | savepoint restore | archived --run`` on
tables built from the spec's rules: JSON output, text output, one-line typed errors, exit codes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reference.cli import main
from reference.sample_tables import INSERT_T, UPDATE_T, build_table
from spec.config.table_config import COPY_ON_WRITE, TableConfig
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata
from spec.timeline.instant import Action, format_instant_time
from tests.conftest import RealTable


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    assert main([*argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    return err


def _tables(real_table: RealTable) -> list[Path]:
    """The data table and, when it has one, its metadata table (which has cleans and compactions)."""
    meta = real_table.path / ".hoodie" / "metadata"
    return [real_table.path] + ([meta] if (meta / ".hoodie" / "hoodie.properties").exists() else [])


def test_list_commands_parse_every_real_table(real_table: RealTable, capsys: pytest.CaptureFixture[str]) -> None:
    for path in _tables(real_table):
        timeline = Timeline.load(str(path))
        cleans = _json(capsys, ["cleans", str(path)])
        done = [i for i in reversed(timeline.instants) if i.action == Action.CLEAN and i.is_completed]
        assert [r["clean_time"] for r in cleans] == [i.requested for i in done]
        assert all(r["start_clean_time"] == r["clean_time"] and r["total_files_deleted"] >= 0 for r in cleans)
        rollbacks = _json(capsys, ["rollbacks", str(path)])
        done = [i for i in reversed(timeline.instants) if i.action == Action.ROLLBACK and i.is_completed]
        assert sorted({r["rollback_instant"] for r in rollbacks}) == sorted(i.requested for i in done)
        assert all(timeline.get(r["instant"]) is None or r["instant"] < r["rollback_instant"] for r in rollbacks)
        savepoints = _json(capsys, ["savepoints", str(path)])
        assert len(savepoints) == len([i for i in timeline.instants if i.action == Action.SAVEPOINT
                                       and i.is_completed])
        compactions = _json(capsys, ["compactions", str(path)])
        planned = [t for t, names in timeline.files.items() if f"{t}.compaction.requested" in names]
        assert sorted(r["compaction_time"] for r in compactions) == sorted(planned)
        assert all(r["operation_size"] >= 1 and r["total_log_files"] >= r["operation_size"] for r in compactions)
        assert all(r["state"] != "COMPLETED" or r["action"] == "commit" for r in compactions)
        for command in ("cleans", "rollbacks", "savepoints", "compactions", "archived"):
            assert main([command, str(path)]) == 0
            capsys.readouterr()
        for command in ("cleans", "rollbacks"):
            assert main([command, str(path), "--pending"]) == 0
            capsys.readouterr()


def test_real_rollback_and_compaction_rows(real_tables: list[RealTable], capsys: pytest.CaptureFixture[str]) -> None:
    by_name = {t.name: t for t in real_tables}
    rollback_table = by_name["sample_table/mor/parquet/v6_nonpartitioned_rollback"].path
    (row,) = _json(capsys, ["rollbacks", str(rollback_table)])
    assert row["instant"] == "20250126040826878" and row["rollback_instant"] == "20250126040936578"
    assert row["total_files_deleted"] == 1 and row["action"] == "deltacommit" and row["total_partitions"] == 1
    assert [f.rsplit("/", 1)[1] for f in row["rollback_log_files"]] == [
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"]
    trips = by_name["quickstart_trips_table/mor/avro/v8_trips_8i3u1d"].path
    (row,) = _json(capsys, ["compactions", str(trips)])
    assert row["compaction_time"] == "20251220210129235" and row["operation_size"] == 3
    assert row["state"] == "COMPLETED" and row["action"] == "commit" and row["total_log_files"] == 4
    assert row["partitions"] == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    meta = _json(capsys, ["compactions", str(trips / ".hoodie" / "metadata")])
    assert [r["compaction_time"] for r in meta] == ["20251220210130942"]


@pytest.mark.parametrize("version", [6, 8])
def test_savepoint_rollback_restore_clean_commands(tmp_path: Path, version: int,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = str(build_table(tmp_path / "t", version))
    capsys.readouterr()
    at_insert = read_table(path, as_of=INSERT_T).num_rows
    created = _json(capsys, ["savepoint", "create", path, INSERT_T, "--comment", "before the update"])
    assert created["savepoint_time"] == INSERT_T and created["total_files"] >= 1
    (sp,) = _json(capsys, ["savepoints", path])
    assert sp["savepoint_time"] == INSERT_T and sp["comments"] == "before the update"
    assert "already savepointed" in _error(capsys, ["savepoint", "create", path, INSERT_T])
    assert "InstantNotFound" in _error(capsys, ["rollback", path, "20000101000000000"])
    rolled = _json(capsys, ["rollback", path])
    assert rolled["instant"] == UPDATE_T and rolled["action"] == "deltacommit"
    assert [c["change"] for c in rolled["changes"]] == (["rollback block"] if version == 6 else ["deleted"])
    (row,) = _json(capsys, ["rollbacks", path])
    assert row["instant"] == UPDATE_T and row["rollback_instant"] == rolled["rollback_instant"]
    assert read_table(path).num_rows == at_insert
    restored = _json(capsys, ["savepoint", "restore", path, INSERT_T])
    assert restored["savepoint_time"] == INSERT_T and restored["rolled_back"] == []  # nothing after it is left
    plan = _json(capsys, ["clean", path, "--dry-run", "--policy", "keep_latest_file_versions", "--retained", "1"])
    assert plan["dry_run"] is True and plan["clean_time"] is None and plan["policy"] == "KEEP_LATEST_FILE_VERSIONS"
    assert "InvalidConfig" in _error(capsys, ["clean", path, "--policy", "KEEP_EVERYTHING"])
    assert "InstantNotFound" in _error(capsys, ["savepoint", "restore", path, UPDATE_T])
    assert main(["savepoint", "create", str(tmp_path / "nowhere")]) == 2
    assert _json(capsys, ["savepoint", "delete", path, INSERT_T]) == {"deleted_savepoint": INSERT_T}
    assert _json(capsys, ["savepoints", path]) == []
    assert "InstantNotFound" in _error(capsys, ["savepoint", "delete", path, INSERT_T])
    for argv in (["cleans", path], ["rollbacks", path], ["savepoints", path], ["clean", path]):
        assert main(argv) == 0
    capsys.readouterr()


def _skeleton(path: Path, commits: int, version: int) -> list[tuple[str, str | None]]:
    """A copy-on-write table of ``commits`` commits, each rewriting one file group (empty files);
    (requested, completion time) per commit."""
    storage = Storage(path)
    table = TableConfig.create("s", COPY_ON_WRITE, version, ("id",), "ts", (), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"
    times: list[tuple[str, str | None]] = []
    for n in range(commits):
        t = format_instant_time(datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=n))
        c = format_instant_time(datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=n, seconds=1))
        storage.write_atomic(f"f0-0_0-0-0_{t}.parquet", b"")
        storage.create_if_absent(f"{folder}/{t}.commit.requested", b"")
        storage.create_if_absent(f"{folder}/{t}.inflight", b"")
        completed = f"{t}.commit" if version == 6 else f"{t}_{c}.commit"
        storage.create_if_absent(f"{folder}/{completed}", format_commit_metadata(CommitMetadata(), version))
        times.append((t, None if version == 6 else c))
    return times


@pytest.mark.parametrize("version", [6, 8])
def test_archived_command(tmp_path: Path, version: int, capsys: pytest.CaptureFixture[str]) -> None:
    times = _skeleton(tmp_path / "s", 5, version)
    path = str(tmp_path / "s")
    assert _json(capsys, ["archived", path]) == {"archived_now": [], "total_instants": 0, "instants": []}
    ran = _json(capsys, ["archived", path, "--run", "--keep-min", "2", "--keep-max", "4"])
    assert ran["archived_now"] == [t for t, _ in times[:3]] and ran["total_instants"] == 3
    assert [(r["instant_time"], r["action"], r["state"], r["completion_time"]) for r in ran["instants"]] == [
        (t, "commit", "COMPLETED", c) for t, c in times[:3]]
    assert [i.requested for i in Timeline.load(path).instants] == [t for t, _ in times[3:]]
    assert main(["archived", path]) == 0 and "3 instants" in capsys.readouterr().out
    # the timeline view with --archived shows them first, then the active instants
    view = _json(capsys, ["timeline", path, "--archived"])
    assert [(r["instant_time"], r["timeline_type"], r["completion_time"]) for r in view["instants"]] == [
        (t, "ARCHIVED", c) for t, c in times[:3]] + [(t, "ACTIVE", c) for t, c in times[3:]]
    assert view["total_instants"] == 5
    assert [r["instant_time"] for r in _json(capsys, ["timeline", path])["instants"]] == [t for t, _ in times[3:]]
    assert main(["timeline", path, "--archived"]) == 0 and "ARCHIVED" in capsys.readouterr().out
    cleaned = _json(capsys, ["clean", path, "--retained", "1"])
    assert cleaned["total_files_deleted"] == 3  # all but the latest slice and the one before the retained commit
    assert "InvalidConfig" in _error(capsys, ["archived", path, "--run", "--keep-min", "5", "--keep-max", "4"])

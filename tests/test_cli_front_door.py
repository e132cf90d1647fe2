"""Every ``hudi-spec`` command on the demo's merge-on-read table and on real tables written by Apache
Hudi: text output is a table under the column names of Hudi's ``CALL show_*`` procedures, and
``--output json`` parses and has the same names as keys. Errors are one line with exit code 2."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from reference import demo
from reference.cli import main
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline
from tests.conftest import RealTable

REAL = ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d", "sample_table/mor/parquet/v6_nonpartitioned_rollback")


def _rows(key: str | None) -> Callable[[Any], list[dict[str, Any]]]:
    """The rows of a command's JSON: the document itself (a list) or the list under ``key``."""
    return lambda doc: doc if key is None else doc[key]


AS_LIST = _rows(None)


# command (after TABLE) → (headers the text table shows, keys every JSON row has, where the rows are)
INSPECT: dict[str, tuple[list[str], list[str], Callable[[Any], list[dict[str, Any]]]]] = {
    "desc": (["property", "value", "meaning"], [], lambda doc: [doc]),
    "timeline": (["instant_time", "action", "state", "file_modified"],
                 ["instant_time", "action", "state", "completion_time", "files"], _rows("instants")),
    "commits": (["commit_time", "state_transition_time", "action", "total_bytes_written", "total_files_added",
                 "total_files_updated", "total_partitions_written", "total_records_written",
                 "total_update_records_written", "total_errors"],
                ["commit_time", "state_transition_time", "action", "total_bytes_written", "total_files_added",
                 "total_files_updated", "total_partitions_written", "total_records_written",
                 "total_update_records_written", "total_errors"], _rows(None)),
    "commit-files": (["action", "partition_path", "file_id", "previous_commit", "total_records_updated",
                      "total_records_written", "total_bytes_written", "total_errors", "file_size"],
                     ["action", "partition_path", "file_id", "previous_commit", "total_records_updated",
                      "total_records_written", "total_bytes_written", "total_errors", "file_size", "num_writes",
                      "num_inserts", "num_deletes", "num_update_writes", "total_log_blocks", "path"],
                     _rows("files")),
    "fsview": (["partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
                "total_delta_file_size", "delta_files"],
               ["partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
                "total_delta_file_size", "delta_files"], _rows(None)),
    "fsview --latest": (["partition", "file_id", "base_instant", "data_file_size", "num_delta_files",
                         "total_delta_file_size", "delta_size_compaction_scheduled",
                         "delta_size_compaction_unscheduled"],
                        ["partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
                         "total_delta_file_size", "delta_size_compaction_scheduled",
                         "delta_size_compaction_unscheduled", "delta_to_base_radio_compaction_scheduled",
                         "delta_to_base_radio_compaction_unscheduled", "delta_files_compaction_scheduled",
                         "delta_files_compaction_unscheduled"], _rows(None)),
    "compactions": (["compaction_time", "state_transition_time", "state", "action", "timeline_type",
                     "operation_size"],
                    ["compaction_time", "state_transition_time", "state", "action", "timeline_type",
                     "operation_size"], _rows(None)),
    "cleans": (["clean_time", "state_transition_time", "action", "start_clean_time", "time_taken_in_millis",
                "total_files_deleted", "earliest_commit_to_retain", "last_completed_commit_timestamp"],
               ["clean_time", "state_transition_time", "action", "start_clean_time", "time_taken_in_millis",
                "total_files_deleted", "earliest_commit_to_retain", "last_completed_commit_timestamp"],
               _rows(None)),
    "rollbacks": (["instant", "rollback_instant", "total_files_deleted", "time_taken_in_millis",
                   "total_partitions"],
                  ["instant", "rollback_instant", "total_files_deleted", "time_taken_in_millis", "total_partitions"],
                  _rows(None)),
    "savepoints": (["savepoint_time"], ["savepoint_time"], _rows(None)),
    "stats": (["commit_time", "min", "10th", "50th", "avg", "95th", "max", "num_files", "std_dev",
               "total_upserted", "total_written", "write_amplification_factor"],
              ["commit_time", "total_upserted", "total_written", "write_amplification_factor"],
              _rows("write_amplification")),
    "archived": (["instant_time", "action", "state", "completion_time"],
                 ["instant_time", "action", "state", "completion_time"], _rows("instants")),
    "read --limit 5": (["_hoodie_commit_time", "_hoodie_record_key"], ["_hoodie_commit_time", "_hoodie_record_key"],
                       _rows(None)),
}


def _run(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> str:
    got = main(argv)
    captured = capsys.readouterr()
    assert got == code, f"hudi-spec {' '.join(argv)} exited {got}: {captured.err}"
    return captured.out


def _check_text(out: str, headers: list[str]) -> None:
    lines = out.splitlines()
    for h in headers:
        # a column header of the table, or a field name of the one-record-per-row view
        header = re.compile(rf"(^|\s){re.escape(h)}(\s|$)")
        assert any(header.search(line) for line in lines), f"no column {h!r} in:\n{out[:2000]}"


def _check_json(out: str, keys: list[str], rows: Callable[[Any], list[dict[str, Any]]]) -> Any:
    doc = json.loads(out)
    for row in rows(doc):
        assert set(keys) <= set(row), f"missing {set(keys) - set(row)} in {row}"
    return doc


def _log_file(table: Path) -> Path:
    return next(p for p in sorted(table.rglob(".*.log.*")) if ".hoodie" not in p.parts)


def _inspect_everything(table: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    docs: dict[str, Any] = {}
    for command, (headers, keys, rows) in INSPECT.items():
        name, *extra = command.split()
        argv = [name, str(table), *extra]
        _check_text(_run(capsys, argv), headers)
        docs[command] = _check_json(_run(capsys, [*argv, "--output", "json"]), keys, rows)
    log = _log_file(table)
    _check_text(_run(capsys, ["logfile", str(log), "--records", "1"]),
                ["offset", "block_type", "instant_time", "record_count", "total_bytes", "status"])
    doc = _check_json(_run(capsys, ["logfile", str(log), "--output", "json"]),
                      ["offset", "block_type", "instant_time", "record_count", "status"], _rows("blocks"))
    assert doc["corrupt_blocks"] == 0
    return docs


@pytest.fixture(scope="module")
def demo_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's table (insert, upsert, delete, compaction, upsert, clean), built once for the module."""
    path = tmp_path_factory.mktemp("front-door") / "trips"
    demo.run(path, 6, rows=200, spark=spark)
    return path


@pytest.mark.spark
def test_inspect_commands_on_the_demo_table(demo_table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = _inspect_everything(demo_table, capsys)
    assert [c["action"] for c in docs["commits"]] == ["deltacommit", "compaction", "deltacommit", "deltacommit",
                                                      "deltacommit"]
    assert len(docs["compactions"]) == 1 and docs["compactions"][0]["state"] == "COMPLETED"
    assert len(docs["cleans"]) == 1 and docs["cleans"][0]["total_files_deleted"] > 0
    assert docs["stats"]["write_amplification"][-1]["commit_time"] == "Total"
    assert docs["stats"]["file_sizes"][-1]["commit_time"] == "ALL"
    assert any(r["delta_size_compaction_scheduled"] > 0 for r in docs["fsview --latest"])
    assert docs["desc"]["tableType"] == "MERGE_ON_READ"


@pytest.mark.spark
def test_the_demo_timeline_is_a_table_at_100_columns(demo_table: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    out = _run(capsys, ["timeline", str(demo_table), "--all"])
    assert max(len(line) for line in out.splitlines()) <= 100 and "-[ 1 ]" not in out
    assert "commit (compaction)" in out and out.count("COMPLETED") == 6


@pytest.mark.parametrize("name", REAL)
def test_inspect_commands_on_real_tables(name: str, real_tables: list[RealTable],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (table,) = [t for t in real_tables if t.name == name]
    docs = _inspect_everything(table.path, capsys)
    assert len(docs["commits"]) == len(Timeline.load(str(table.path)).commits_timeline())


@pytest.mark.spark
@pytest.mark.parametrize("output", ["text", "json"])
def test_changing_commands_on_a_copy_of_the_demo_table(demo_table: Path, output: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """write, read --engine spark, compact, clean, rollback, savepoint create / restore / delete, each once
    with text output and once with JSON, on copies of the demo's table."""
    table = tmp_path / "trips"
    shutil.copytree(demo_table, table)
    path = str(table)
    trips = demo.Trips(seed=7)
    trips.next_id = 10_000
    batch = tmp_path / "batch.parquet"
    pq.write_table(demo.Trips.table(trips.new(20, ts=9)), batch)
    text = output == "text"

    def run(argv: list[str], headers: list[str], keys: list[str] | None = None,
            rows: Callable[[Any], list[dict[str, Any]]] = AS_LIST) -> Any:
        if text:
            _check_text(_run(capsys, argv), headers)
            return None
        return _check_json(_run(capsys, [*argv, "--output", "json"]), keys or [], rows)

    sp = Timeline.load(path).commits_timeline().latest_completed()
    assert sp is not None
    run(["savepoint", "create", path], ["savepoint_time", "partition_path", "file"],
        ["savepoint_time", "partition_path", "file"], _rows("files"))
    doc = run(["write", path, "--input", str(batch), "--operation", "upsert"], ["what", "value"],
              ["instant", "action", "operation", "records_written"], lambda d: [d])
    assert doc is None or doc["action"] == "deltacommit"
    doc = run(["rollback", path], ["rollback_instant", "instant", "partition_path", "change", "file"],
              ["rollback_instant", "instant", "action", "total_files_deleted"], lambda d: [d])
    assert doc is None or doc["action"] == "deltacommit"
    run(["write", path, "--input", str(batch), "--operation", "upsert"], ["what", "value"],
        ["instant", "action"], lambda d: [d])
    run(["read", path, "--engine", "spark", "--limit", "3"], ["_hoodie_record_key", "uuid"],
        ["_hoodie_record_key", "uuid"])
    doc = run(["compact", path], ["compaction_time", "partition_path", "file_id", "num_writes",
                                  "total_log_files_compacted"],
              ["compaction_time", "partition_path", "file_id", "num_writes", "total_log_files_compacted"],
              _rows("file_groups"))
    assert doc is None or doc["state"] == "COMPLETED"
    run(["clean", path, "--dry-run", "--retained", "1"], ["clean_time", "partition_path", "file"],
        ["clean_time", "partition_path", "file"], _rows("files"))
    run(["clean", path, "--retained", "1"], ["clean_time", "partition_path", "file"],
        ["clean_time", "partition_path", "file"], _rows("files"))
    doc = run(["savepoint", "restore", path, sp.requested],
              ["restore_instant", "savepoint_time", "instant", "action", "total_files_deleted"],
              ["restore_instant", "savepoint_time", "instant", "action", "total_files_deleted"], _rows("rolled_back"))
    assert doc is None or doc["savepoint_time"] == sp.requested
    run(["savepoint", "delete", path, sp.requested], ["deleted_savepoint"], ["deleted_savepoint"], lambda d: [d])
    # after the restore the table reads as it read at the savepoint: the demo's rows
    assert read_table(path).num_rows == read_table(str(demo_table)).num_rows


@pytest.mark.spark
def test_changing_commands_on_a_real_table(real_tables: list[RealTable], real_table_copy: Any, spark: Any,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (table,) = [t for t in real_tables if t.name == REAL[0]]
    path = str(real_table_copy(table))
    _check_text(_run(capsys, ["read", path, "--engine", "spark", "--limit", "2"]), ["_hoodie_record_key"])
    doc = json.loads(_run(capsys, ["savepoint", "create", path, "--output", "json"]))
    assert doc["total_files"] > 0
    _check_text(_run(capsys, ["savepoints", path]), ["savepoint_time", "savepointed_by", "total_files"])
    _check_text(_run(capsys, ["clean", path, "--dry-run"]), ["clean_time", "partition_path", "file"])
    json.loads(_run(capsys, ["savepoint", "delete", path, doc["savepoint_time"], "--output", "json"]))


def test_errors_are_one_line_with_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nowhere = str(tmp_path / "nowhere")
    for argv in (["desc", nowhere], ["timeline", nowhere], ["commits", nowhere], ["fsview", nowhere, "--latest"],
                 ["stats", nowhere], ["compactions", nowhere], ["cleans", nowhere], ["rollbacks", nowhere],
                 ["savepoints", nowhere], ["read", nowhere], ["clean", nowhere], ["rollback", nowhere],
                 ["savepoint", "create", nowhere], ["logfile", str(tmp_path)], ["logfile", f"{nowhere}/.f.log.1_0-1-0"],
                 ["write", nowhere, "--input", f"{nowhere}.parquet"], ["read", nowhere, "--engine", "spark",
                                                                      "--as-of", "yesterday"],
                 ["fsview", nowhere, "--as-of", "2020"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"hudi-spec {argv[0]}: ") and "\n" not in err, err


def test_unexpected_failures_are_one_line_with_exit_code_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from reference.commands import desc

    def boom(args: Any) -> int:
        raise RuntimeError("something broke\nwith a second line")

    monkeypatch.setattr(desc, "run", boom)
    monkeypatch.delenv("HUDI_SPEC_DEBUG", raising=False)
    assert main(["desc", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert err == ("hudi-spec desc: unexpected RuntimeError: something broke (set HUDI_SPEC_DEBUG=1 for the "
                   "traceback)\n")

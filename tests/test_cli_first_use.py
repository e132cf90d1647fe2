"""The front door as a newcomer meets it, typed as a user types it (issue "The front door, as a newcomer
meets it"): today's Hudi defaults for a new table, writing into an existing table whose folder is not its
name, the engine each command runs on, and the basics of both command lines."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference.cli import main
from reference.commands import write as write_command
from spec.config import registry
from spec.timeline.active_timeline import Timeline

BIN = Path(sys.executable).parent


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _input(folder: Path, rows: list[dict[str, Any]], name: str = "in.parquet") -> Path:
    path = folder / name
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


ROWS = [{"id": i, "ts": 1, "city": c} for i, c in enumerate(["sf", "sf", "nyc", "la", "la"])]
NEW_TABLE = ["--record-key", "id", "--ordering-field", "ts", "--partition-field", "city"]


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to start Spark fails the test."""
    import reference.engines.spark_session

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr(reference.engines.spark_session, "get_or_create_session", refuse)


def _desc(capsys: pytest.CaptureFixture[str], table: Path) -> dict[str, Any]:
    code, out, err = _run(capsys, ["desc", str(table), "--json"])
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


# --- 1. today's Hudi defaults ------------------------------------------------------------------------


def test_a_new_table_is_version_9_with_a_metadata_table(tmp_path: Path, no_spark: None,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "trips"
    code, out, err = _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE, "--json"])
    assert code == 0, err
    assert json.loads(out)["inserts"] == 5
    desc = _desc(capsys, table)
    assert (desc["tableVersion"], desc["timelineLayoutVersion"]) == (9, 2)
    assert "files" in desc["properties"]["hoodie.table.metadata.partitions"].split(",")
    assert (table / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file()


@pytest.mark.parametrize("version, layout", [("6", 1), ("8", 2)])
def test_versions_6_and_8_by_option(tmp_path: Path, version: str, layout: int, no_spark: None,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "trips"
    code, _, err = _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE,
                                 "--table-version", version])
    assert code == 0, err
    desc = _desc(capsys, table)
    assert (desc["tableVersion"], desc["timelineLayoutVersion"]) == (int(version), layout)


def test_every_default_version_is_9(tmp_path: Path, no_spark: None) -> None:
    """The registry, the write command, the demo and the Python API choose the same version for a new table."""
    from reference import demo
    from reference.api import HudiTable
    from reference.config.options import WriteConfig, parse_options

    assert registry.default("table_version") == 9
    assert write_command.DEFAULT_TABLE_VERSION == "9"
    assert WriteConfig().table_version == parse_options({}).table_version == 9
    assert demo.run.__defaults__ is not None and demo.run.__defaults__[0] == 9
    api = HudiTable(str(tmp_path / "api"), engine="local")
    api.write(pa.Table.from_pylist(ROWS), "insert", {"hoodie.table.name": "api",
                                                     "hoodie.datasource.write.recordkey.field": "id"})
    assert api.config.table_version == 9


def test_the_help_says_which_version_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["write", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "9 (default; Apache Hudi 1.1, with a metadata table)" in text
    assert "8 (Hudi 1.0" in text and "6 (Hudi 0.14/0.15)" in text
    assert "version 9 with a metadata table, as Apache Hudi 1.1 writes" in text


# --- 2. writing into an existing table ------------------------------------------------------------------


def test_an_existing_table_keeps_its_own_name_keys_and_version(tmp_path: Path, no_spark: None,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A table whose folder is not its name takes further writes with nothing but --input."""
    table = tmp_path / "warehouse" / "trips_2025"
    first = _input(tmp_path, ROWS)
    code, _, err = _run(capsys, ["write", str(table), "--input", str(first), *NEW_TABLE, "--table-name", "trips",
                                 "--table-type", "MERGE_ON_READ", "--table-version", "8"])
    assert code == 0, err
    update = _input(tmp_path, [{"id": 0, "ts": 2, "city": "sf"}, {"id": 9, "ts": 1, "city": "nyc"}], "more.parquet")
    code, out, err = _run(capsys, ["write", str(table), "--input", str(update), "--json"])
    assert code == 0, err
    done = json.loads(out)
    assert (done["action"], done["updates"], done["inserts"]) == ("deltacommit", 1, 1)
    desc = _desc(capsys, table)
    assert (desc["tableName"], desc["tableType"], desc["tableVersion"]) == ("trips", "MERGE_ON_READ", 8)
    # the same creation options, given again, agree with the table's
    code, _, err = _run(capsys, ["write", str(table), "--input", str(update), "--table-name", "trips", *NEW_TABLE,
                                 "--table-version", "8", "--table-type", "MERGE_ON_READ"])
    assert code == 0, err


@pytest.mark.parametrize("given", [["--table-name", "trips_2025"], ["--record-key", "city"],
                                   ["--table-version", "9"], ["--partition-field", "id"]])
def test_a_conflicting_creation_option_is_refused(tmp_path: Path, given: list[str], no_spark: None,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "trips_2025"
    src = _input(tmp_path, ROWS)
    assert _run(capsys, ["write", str(table), "--input", str(src), *NEW_TABLE, "--table-name", "trips",
                         "--table-type", "MERGE_ON_READ", "--table-version", "8"])[0] == 0
    before = sorted(p.relative_to(table) for p in table.rglob("*"))
    code, out, err = _run(capsys, ["write", str(table), "--input", str(src), *given])
    assert code == 2 and not out
    assert err.startswith("hudi-spec write: ConfigConflict: ") and "\n" not in err.rstrip("\n"), err
    assert sorted(p.relative_to(table) for p in table.rglob("*")) == before


def test_another_table_type_writes_with_the_table_s(tmp_path: Path, no_spark: None,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--table-type`` (``hoodie.datasource.write.table.type``) names a new table's type only: as in Apache Hudi,
    an existing table is written with its own type, without a conflict."""
    table = tmp_path / "trips_2025"
    src = _input(tmp_path, ROWS)
    assert _run(capsys, ["write", str(table), "--input", str(src), *NEW_TABLE, "--table-name", "trips",
                         "--table-type", "MERGE_ON_READ", "--table-version", "8"])[0] == 0
    code, out, err = _run(capsys, ["write", str(table), "--input", str(src), "--table-type", "COPY_ON_WRITE",
                                   "--json"])
    assert code == 0, err
    assert json.loads(out)["action"] == "deltacommit"
    assert _desc(capsys, table)["tableType"] == "MERGE_ON_READ"


# --- 3. engines ---------------------------------------------------------------------------------------------


def test_a_small_write_runs_locally_and_says_so(tmp_path: Path, no_spark: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["write", str(tmp_path / "t"), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE,
                                   "--json"])
    assert code == 0, err
    done = json.loads(out)
    assert done["engine"] == "local" and not err
    assert done["engine_choice"].startswith("auto: the input, about ") and "fits under 512 MB" in done["engine_choice"]
    code, out, err = _run(capsys, ["write", str(tmp_path / "t"), "--input", str(_input(tmp_path, ROWS))])
    assert code == 0 and "local (auto: the input, about" in " ".join(out.split())


def test_a_big_input_goes_to_spark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Above the threshold the write takes Spark (the session it asks for is refused here, so that the test
    starts none, and nothing is written)."""
    import reference.engines.spark_session
    from spec.errors import InvalidOperation

    def no_session(*args: Any, **kwargs: Any) -> Any:
        raise InvalidOperation("no Spark in this test")

    monkeypatch.setattr(reference.engines.spark_session, "get_or_create_session", no_session)
    monkeypatch.setattr(write_command, "LOCAL_LIMIT_BYTES", 64)
    src = _input(tmp_path, ROWS)
    assert write_command.estimated_memory(str(src)) > 64
    assert write_command.choose_engine("auto", str(src)) == (
        "spark", f"auto: the input, about {write_command.estimated_memory(str(src))} bytes in memory, is over 64 bytes")
    assert write_command.choose_engine("local", str(src)) == ("local", "--engine local")
    code, _, err = _run(capsys, ["write", str(tmp_path / "t"), "--input", str(src), *NEW_TABLE])
    assert code == 2 and err == "hudi-spec write: InvalidOperation: no Spark in this test\n"
    assert not (tmp_path / "t").exists()


def test_the_help_states_the_default_engine_and_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["write", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "auto (default): local for an input whose estimated size in memory is at most 512 MB, spark above" in text


def _subparsers(parser: Any) -> dict[str, Any]:
    found = {}
    for action in parser._actions:
        if isinstance(getattr(action, "choices", None), dict):
            for name, child in action.choices.items():
                found[name] = child
                found.update({f"{name} {k}": v for k, v in _subparsers(child).items()})
    return found


WRITING = ("write", "compact", "clean", "rollback", "savepoint create", "savepoint restore", "savepoint delete",
           "archived")  # archived --run archives


def test_every_command_that_writes_takes_engine() -> None:
    from reference.cli import build_parser

    commands = _subparsers(build_parser())
    for name in WRITING:
        engine = [a for a in commands[name]._actions if "--engine" in a.option_strings]
        assert engine and "local" in engine[0].choices, name
        assert engine[0].default in ("local", "auto"), name


def test_compact_runs_locally_by_default(tmp_path: Path, no_spark: None, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t"
    src = _input(tmp_path, ROWS)
    assert _run(capsys, ["write", str(table), "--input", str(src), *NEW_TABLE, "--table-type", "MERGE_ON_READ",
                         "--option", "hoodie.parquet.small.file.limit=0"])[0] == 0
    assert _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, [{"id": 0, "ts": 5, "city": "sf"}],
                                                                          "up.parquet"))])[0] == 0
    code, out, err = _run(capsys, ["compact", str(table), "--json"])
    assert code == 0, err
    compaction = json.loads(out)
    assert compaction["state"] == "COMPLETED" and compaction["file_groups"] and compaction["engine"] == "local"
    assert Timeline.load(str(table)).get(compaction["compaction_time"]) is not None
    with pytest.raises(SystemExit) as refused:  # clean has no Spark step
        main(["clean", str(table), "--engine", "spark"])
    assert refused.value.code == 2 and "invalid choice: 'spark'" in capsys.readouterr().err


def test_every_writing_command_runs_on_the_local_engine_as_typed(tmp_path: Path, no_spark: None,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Each command that writes, typed with ``--engine local`` (or without it: local is every service command's
    default), runs without Spark: write, compact, clean, savepoint create, savepoint delete, rollback and the
    archival of ``archived --run``."""
    table = str(tmp_path / "t")
    src = str(_input(tmp_path, ROWS))
    typed = [["write", table, "--input", src, *NEW_TABLE, "--table-type", "MERGE_ON_READ", "--engine", "local",
              "--option", "hoodie.parquet.small.file.limit=0"],
             ["write", table, "--input", src, "--engine", "local"],
             ["compact", table, "--engine", "local"], ["clean", table, "--engine", "local"],
             ["rollback", table, "--engine", "local"], ["savepoint", "create", table, "--engine", "local"],
             ["archived", table, "--run", "--engine", "local"]]
    for argv in typed:
        code, _, err = _run(capsys, argv)
        assert code == 0, (argv, err)
    savepoints = json.loads(_run(capsys, ["savepoints", table, "--format", "json"])[1])
    assert len(savepoints) == 1, savepoints
    code, _, err = _run(capsys, ["savepoint", "delete", table, savepoints[0]["savepoint_time"], "--engine", "local"])
    assert code == 0, err
    assert json.loads(_run(capsys, ["savepoints", table, "--format", "json"])[1]) == []


# --- 6. the basics of both command lines ------------------------------------------------------------------

HEAVY = ("pyarrow", "pyspark", "numpy", "pandas", "fastavro", "boto3", "reference.executors", "spec.read",
         "spec.storage.hoodie_storage", "conformance.checker", "conformance.runner")


def _modules_after(program: str, argv: list[str]) -> list[str]:
    """The modules a fresh interpreter has imported once ``PROGRAM ARGV`` (in-process) has answered."""
    module = {"hudi-spec": "reference.cli", "hudi-conformance": "conformance.cli"}[program]
    code = (f"import sys, json\nfrom {module} import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


@pytest.mark.parametrize("program, argv", [("hudi-spec", ["--help"]), ("hudi-spec", []),
                                           ("hudi-spec", ["read", "--help"]), ("hudi-spec", ["write", "--help"]),
                                           ("hudi-spec", ["--version"]), ("hudi-conformance", ["--help"]),
                                           ("hudi-conformance", ["check", "--help"])])
def test_help_imports_nothing_heavy(program: str, argv: list[str]) -> None:
    """``--help`` answers quickly because it imports none of what the commands need to run: no pyarrow, no
    Spark, no reader, no storage (each command imports those when it runs)."""
    modules = _modules_after(program, argv)
    heavy = sorted(m for m in modules if m.startswith(HEAVY))
    assert heavy == [], heavy
    named = argv[0] if argv and not argv[0].startswith("-") else "read"  # a command's own, or every command's
    assert (f"reference.commands.{named}" in modules) == (program == "hudi-spec")  # the parser was built


def test_a_command_line_builds_its_commands_parser_alone() -> None:
    """``hudi-spec COMMAND ...`` imports and registers that command alone, and parses as the parser of every
    command does: the same options, defaults and help for each command; a word that names no command gets the
    whole parser (and its "invalid choice" error with the list of commands)."""
    from reference.cli import build_parser, command_module

    every = _subparsers(build_parser())
    tops = [name for name in every if " " not in name]
    assert len(tops) >= 20
    for name in tops:
        module = command_module(name)
        assert module is not None, name
        alone = _subparsers(build_parser(module))
        assert sorted(alone) == sorted(n for n in every if n == name or n.startswith(name + " ")), name
        for sub in alone:
            assert alone[sub].format_help() == every[sub].format_help(), sub
    assert command_module("no-such-command") is None and command_module("_output") is None
    assert command_module("--help") is None


@pytest.mark.parametrize("columns", [None, "57", "200", "0", "wide"])
def test_help_is_laid_out_at_argparses_width(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help formatter of every command line finds argparse's width (``shutil.get_terminal_size``'s columns
    less 2) without importing shutil: the same help, for every ``COLUMNS``."""
    import argparse

    from reference.commands import _output

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = _output.HelpFormatter("hudi-spec")
    assert ours._width == argparse.HelpFormatter("hudi-spec")._width
    assert _output.RawDescriptionHelpFormatter("p")._width == ours._width
    text = "a description\n  laid out by hand"
    assert (_output.RawDescriptionHelpFormatter("p")._fill_text(text, 70, "")
            == argparse.RawDescriptionHelpFormatter("p")._fill_text(text, 70, ""))


READ_NEEDS_NONE_OF = ("pandas", "pyarrow.dataset", "pyarrow.compute", "rich", "spec.timeline.avro_model",
                      "spec.actions.archive", "spec.read.slice_merge", "spec.read.merge", "pyspark", "fastavro",
                      "spec.timeline.lsm_timeline", "spec.timeline.archived_timeline", "pkgutil", "traceback",
                      "shutil", "fcntl", "reference.instrumentation.spark_progress",
                      "spec.file_group.log_file.corrupt_block", "pyarrow.parquet", "pyarrow.fs", "pyarrow._fs", "ssl")
NO_METADATA_TABLE_NEEDS_NONE_OF = ("spec.metadata", "spec.file_group.log_file")


@pytest.mark.parametrize("version", ["9", "8", "6"])
def test_plain_read_loads_only_what_it_reads(tmp_path: Path, version: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``read TABLE --limit 1`` of a copy-on-write table loads pyarrow's parquet reader and the spec's reader, and
    nothing a plain snapshot does not need: not ``pyarrow.parquet`` nor ``pyarrow.fs``, which imports ``ssl`` (a local
    file is listed with ``os`` and read whole by the reader ``ParquetFile`` wraps), not pandas (``pq.read_table``'s
    dataset scan imports it; one file is read alone), not pyarrow.compute (only merges and incremental windows), not
    rich (a record list is plain text), not the archive's, the LSM timeline's or the Avro model's readers (no
    incremental query, no archived instant asked about, no pending restore), not the merge rules (no log file), not
    fastavro (the few small Avro files such a read decodes are decoded by ``spec.timeline.avro_binary``), not shutil
    (argparse's help width is found without it: ``test_help_is_laid_out_at_argparses_width``), not fcntl (only writers
    lock), not the Spark jobs' progress bar (no Spark job runs), not the corrupt block's module (no log file has one).
    Versions 8 and 9 list their files through the metadata table (its HFile reader and log scanner load); version 6,
    which our writer gives no metadata table, loads neither."""
    table = tmp_path / "t"
    at = dt.datetime(2024, 5, 1, 12, 30, 1, 250, tzinfo=dt.UTC)
    rows = [{**r, "at": at} for r in ROWS]  # a UTC timestamp: pyarrow's own conversion of it imports pandas
    assert _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, rows)), *NEW_TABLE,
                         "--table-version", version])[0] == 0
    modules = _modules_after("hudi-spec", ["read", str(table), "--limit", "1"])
    assert "pyarrow._parquet" in modules and "spec.read.reader" in modules
    assert sorted(m for m in modules if m.startswith(READ_NEEDS_NONE_OF)) == []
    if version == "6":
        assert sorted(m for m in modules if m.startswith(NO_METADATA_TABLE_NEEDS_NONE_OF)) == []
    else:
        assert {"spec.metadata.metadata_table", "spec.metadata.hfile", "spec.timeline.avro_binary"} <= set(modules)


def test_python_rows_are_pyarrows_values() -> None:
    """``read``'s rows as Python values equal ``to_pylist``'s, a UTC timestamp made without pandas included."""
    from zoneinfo import ZoneInfo

    from reference.commands.read import python_rows

    utc = dt.datetime(2024, 5, 1, 12, 30, 1, 250, tzinfo=dt.UTC)
    table = pa.table({"us": pa.array([utc, None], pa.timestamp("us", tz="UTC")),
                      "ms": pa.array([utc.replace(microsecond=1000), None], pa.timestamp("ms", tz="Etc/UTC")),
                      "paris": pa.array([utc, utc], pa.timestamp("us", tz="Europe/Paris")),
                      "naive": pa.array([utc.replace(tzinfo=None)] * 2, pa.timestamp("us")), "n": [1, 2]})
    table = pa.concat_tables([table, table])  # two chunks
    assert python_rows(table) == table.to_pylist()
    assert python_rows(table)[0]["us"] == utc and python_rows(table)[0]["paris"].tzinfo == ZoneInfo("Europe/Paris")


def test_version_on_both_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    from conformance.cli import main as conformance

    for run, program in ((main, "hudi-spec"), (conformance, "hudi-conformance")):
        with pytest.raises(SystemExit) as done:
            run(["--version"])
        assert done.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{program} {version('hudi-spec')} (Apache Hudi table versions 6, 8 and 9"), out
    assert subprocess.run([str(BIN / "hudi-spec"), "--version"], capture_output=True, text=True,
                          timeout=60).stdout.startswith("hudi-spec ")


def test_a_bare_command_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import SUBCOMMANDS
    from conformance.cli import main as conformance
    from reference.cli import build_parser

    commands = _subparsers(build_parser())
    code, out, err = _run(capsys, [])
    assert code == 0 and not err
    for name in (n for n in commands if " " not in n):
        assert re.search(rf"^\s+{re.escape(name)}\b", out, re.M), name
    assert "hudi-spec COMMAND --help" in " ".join(out.split())
    assert conformance([]) == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert re.search(rf"^\s+{name}\b", out, re.M), name


@pytest.mark.parametrize("argv, command", [(["run"], "run"), (["run", "--impl", "spec", "--bogus"], "run"),
                                           (["nope"], ""), (["check"], "check")])
def test_conformance_usage_errors_are_one_line(argv: list[str], command: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main as conformance

    with pytest.raises(SystemExit) as done:
        conformance(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    prog = f"hudi-conformance {command}".strip()
    assert err.startswith(f"{prog}: usage: ") and err.endswith(f"(see {prog} --help)\n"), err
    assert "\n" not in err.rstrip("\n")


def test_check_on_a_path_that_is_not_a_table_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main as conformance

    (tmp_path / "plain").mkdir()
    for path in (tmp_path / "plain", tmp_path / "missing"):
        assert conformance(["check", str(path)]) == 2
        captured = capsys.readouterr()
        assert not captured.out
        assert captured.err == (f"hudi-conformance check: InvalidTable: {path} is not a Hudi table: it has no "
                                ".hoodie folder (give the base path of a table, the folder that holds .hoodie)\n")
    broken = tmp_path / "broken"
    (broken / ".hoodie").mkdir(parents=True)  # a table whose hoodie.properties is gone: checked, and fails
    assert conformance(["check", str(broken)]) == 1
    assert capsys.readouterr().out.startswith("FAIL ")


@pytest.mark.parametrize("where", ["choosing", "running", "printing"])
def test_ctrl_c_is_130_at_any_moment(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """An interrupt while the command line is parsed (its modules imported), while the command runs, or
    while it prints: exit code 130, one line, no traceback."""
    import reference.cli
    from conformance import cli as conformance_cli
    from reference.commands import _output
    from reference.commands import timeline as timeline_command

    def interrupt(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    table = tmp_path / "t"
    assert _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE])[0] == 0
    target = {"choosing": (reference.cli, "build_parser"), "running": (timeline_command, "run"),
              "printing": (_output, "emit_json")}[where]
    monkeypatch.setattr(*target, interrupt)
    code, out, err = _run(capsys, ["timeline", str(table), "--json"])
    assert (code, out, err) == (130, "", "hudi-spec timeline: interrupted\n")
    monkeypatch.setattr(conformance_cli, "build_parser", interrupt)
    assert conformance_cli.main(["check", str(table)]) == 130
    assert capsys.readouterr().err == "hudi-conformance check: interrupted\n"


def test_ctrl_c_in_a_running_command_line(tmp_path: Path) -> None:
    """SIGINT sent to ``hudi-spec read`` at several moments once ``main`` runs (``-X importtime`` tells when
    ``main`` has imported the progress module it runs the command with; before that the interpreter and the
    console script, which is pip's, are starting): never a traceback; exit code 130 and one line. The command
    cannot finish before the signal, however late this process sends it (a busy machine may hold it back): its
    output, larger than a pipe holds, goes to a pipe this process reads only after the signal, so the command is
    reading or printing when it comes."""
    table = tmp_path / "t"
    rows = [{"id": i, "ts": 1, "city": f"c{i % 7}"} for i in range(2000)]
    assert main(["write", str(table), "--input", str(_input(tmp_path, rows)), *NEW_TABLE]) == 0
    codes = []
    for delay in (0.0, 0.05, 0.2, 0.5, 1.0):
        # SIGINT's default disposition in the command, whatever this process inherited (a run in the background of
        # a non-interactive shell ignores SIGINT, and a Python started so never raises KeyboardInterrupt)
        proc = subprocess.Popen([sys.executable, "-X", "importtime", str(BIN / "hudi-spec"), "read", str(table),
                                 "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.rstrip().endswith("| reference.instrumentation.progress"):
                break
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=120)
        err = "".join(line for line in rest.splitlines(keepends=True) if not line.startswith("import time:"))
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert proc.returncode == 130 and err == "hudi-spec read: interrupted\n", (delay, proc.returncode, err)
        assert len(out) < 2000 * 40  # it stopped before printing every row
        codes.append(proc.returncode)
    assert codes == [130] * 5


# --- 4. time and filters as Hudi takes them ------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The sample merge-on-read table (insert 2025-01-01 08:00, update 09:00), versions 6 and 8."""
    from reference import sample_tables

    return {v: sample_tables.build_table(tmp_path_factory.mktemp(f"sample-v{v}") / "trips", v) for v in (6, 8)}


def _json_rows(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict[str, Any]]:
    code, out, err = _run(capsys, [*argv, "--format", "json"])
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _keys(rows: list[dict[str, Any]], key: str = "_hoodie_record_key") -> list[Any]:
    return sorted(r[key] for r in rows)


@pytest.mark.parametrize("version", [6, 8])
def test_as_of_takes_what_hudi_takes(sample: dict[int, Path], version: int,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    table = str(sample[version])
    after_insert = _json_rows(capsys, ["read", table, "--as-of", "20250101083000000"])
    latest = _json_rows(capsys, ["read", table])
    assert after_insert and after_insert != latest
    for form in ("20250101083000", "2025-01-01 08:30:00", "2025-01-01 08:30:00.000"):
        assert _json_rows(capsys, ["read", table, "--as-of", form]) == after_insert, form
    assert _json_rows(capsys, ["read", table, "--as-of", "2025-01-02"]) == latest  # the start of the next day
    code, out, _ = _run(capsys, ["read", table, "--as-of", "2025-01-01"])  # the start of the day: before any commit
    assert code == 0 and out.startswith("0 rows (snapshot): --as-of 20250101000000000 is before the table's first")
    for bad in ("2025-01-01T08:30:00", "yesterday", "2025-02-30", "202501010830"):
        code, out, err = _run(capsys, ["read", table, "--as-of", bad])
        assert code == 2 and not out
        assert err.startswith(f"hudi-spec read: InvalidInstantTime: {bad!r} is not an instant time or a date")
        assert "yyyyMMddHHmmss[SSS], yyyy-MM-dd HH:mm:ss[.SSS], yyyy-MM-dd" in err


def _write_trips(folder: Path, name: str, hive: bool, table_type: str = "COPY_ON_WRITE") -> Path:
    """Three inserts of six trips in three cities (fares 0-5, 100-105, 1000-1005, one null fare each),
    each into new file groups: nine file slices whose fares do not overlap between inserts."""
    table = folder / name
    for n, base in enumerate((0, 100, 1000)):
        rows = [{"id": base + i, "ts": 1, "city": ["sf", "nyc", "la"][i % 3], "day": 20 + i % 3,
                 "fare": None if i == 5 else float(base + i)} for i in range(6)]
        src = _input(folder, rows, f"{name}-{n}.parquet")
        assert main(["write", str(table), "--input", str(src), "--operation", "insert", *NEW_TABLE,
                     "--table-type", table_type, "--option", "hoodie.parquet.small.file.limit=0",
                     "--option", f"hoodie.datasource.write.hive_style_partitioning={str(hive).lower()}"]) == 0
    return table


@pytest.fixture(scope="module")
def trips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("trips")
    return {"hive": _write_trips(folder, "hive", True), "plain": _write_trips(folder, "plain", False)}


@pytest.mark.parametrize("style", ["hive", "plain"])
def test_partition_in_either_form(trips: dict[str, Path], style: str, capsys: pytest.CaptureFixture[str]) -> None:
    table = str(trips[style])
    sf = _json_rows(capsys, ["read", table, "--partition", "sf"])
    assert sf and {r["city"] for r in sf} == {"sf"}
    assert _json_rows(capsys, ["read", table, "--partition", "city=sf"]) == sf
    both = _json_rows(capsys, ["read", table, "--partition", "city=sf", "--partition", "la"])
    assert {r["city"] for r in both} == {"sf", "la"}
    code, out, err = _run(capsys, ["read", table, "--partition", "boston"])
    assert (code, out) == (2, "")
    listed = "city=la, city=nyc, city=sf" if style == "hive" else "la, nyc, sf"
    assert err == (f"hudi-spec read: InvalidOperation: no partition 'boston' in the table (the partitions are: "
                   f"{listed})\n")


def test_partition_of_a_table_without_partitions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t"
    assert main(["write", str(table), "--input", str(_input(tmp_path, ROWS)), "--record-key", "id"]) == 0
    code, _, err = _run(capsys, ["read", str(table), "--partition", "sf"])
    assert code == 2 and "the table is not partitioned" in err


def test_an_incremental_end_before_its_begin_is_an_error(sample: dict[int, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["read", str(sample[6]), "--query", "incremental", "--begin", "20250101090000000",
                                   "--end", "20250101080000000"])
    assert (code, out) == (2, "")
    assert err.startswith("hudi-spec read: InvalidOperation: --end 20250101080000000 is before --begin "
                          "20250101090000000")
    assert _json_rows(capsys, ["read", str(sample[6]), "--query", "incremental", "--begin", "20250101080000000",
                               "--end", "20250101080000000"]) == []  # an end equal to the begin: an empty window


def test_limit_works_for_every_format(trips: dict[str, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    table = str(trips["hive"])
    assert len(_json_rows(capsys, ["read", table, "--limit", "4"])) == 4
    code, out, _ = _run(capsys, ["read", table, "--limit", "4", "--format", "csv"])
    assert code == 0 and len(list(csv.reader(io.StringIO(out)))) == 1 + 4
    code, out, _ = _run(capsys, ["read", table, "--limit", "4"])
    assert code == 0 and out.startswith("18 rows (snapshot), the first 4 shown")
    out_file = tmp_path / "rows.parquet"
    assert main(["read", table, "--limit", "4", "--format", "parquet", "--out", str(out_file)]) == 0
    assert pq.read_table(out_file).num_rows == 4


def test_columns_take_a_comma_separated_list(trips: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table = str(trips["hive"])
    rows = _json_rows(capsys, ["read", table, "--columns", "id,fare"])
    assert len(rows) == 18 and all(list(r) == ["id", "fare"] for r in rows)
    assert _json_rows(capsys, ["read", table, "--columns", "id", "fare"]) == rows
    assert _json_rows(capsys, ["read", table, "--columns", "id, fare"]) == rows


WHERE = {  # filter → the rows' test in Python (SQL's: a comparison with a null is not true)
    "city = 'sf'": lambda r: r["city"] == "sf",
    "city != 'sf' AND fare >= 100": lambda r: r["city"] != "sf" and r["fare"] is not None and r["fare"] >= 100,
    "fare > 500": lambda r: r["fare"] is not None and r["fare"] > 500,
    "fare < 3 OR city IN ('la')": lambda r: (r["fare"] is not None and r["fare"] < 3) or r["city"] == "la",
    "fare IS NULL": lambda r: r["fare"] is None,
    "NOT (fare IS NOT NULL) AND city = 'nyc'": lambda r: r["fare"] is None and r["city"] == "nyc",
    "day = 21 AND id <> 1": lambda r: r["day"] == 21 and r["id"] != 1,
    "city NOT IN ('sf', 'la')": lambda r: r["city"] not in ("sf", "la"),
    "fare = 1000000": lambda r: r["fare"] == 1000000,
}


@pytest.mark.parametrize("style", ["hive", "plain"])
@pytest.mark.parametrize("where", list(WHERE))
def test_where_filters_rows_as_sql_does(trips: dict[str, Path], style: str, where: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    table = str(trips[style])
    every = _json_rows(capsys, ["read", table])
    got = _json_rows(capsys, ["read", table, "--where", where])
    assert _keys(got) == _keys([r for r in every if WHERE[where](r)])
    assert got == [r for r in every if WHERE[where](r)]  # the same rows, in the same order


def test_where_prunes_partitions_and_files(trips: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The text title says what was read: a partition filter reads one partition of three; a fare filter
    reads the file slices of one insert of three; a filter on the key reads all."""
    table = str(trips["hive"])
    for where, read in (("city = 'sf'", "1 of 3 partitions, 3 of 9 file slices"),
                        ("fare > 500", "3 of 3 partitions, 3 of 9 file slices"),
                        ("city = 'sf' AND fare > 500", "1 of 3 partitions, 1 of 9 file slices"),
                        ("fare IS NULL", "1 of 3 partitions, 3 of 9 file slices"),  # the nulls are in la
                        ("id > 0", "3 of 3 partitions, 9 of 9 file slices"),
                        ("fare = 1000000", "0 of 3 partitions, 0 of 9 file slices")):
        code, out, err = _run(capsys, ["read", table, "--where", where])
        assert code == 0, err
        assert f"(snapshot; read {read})" in " ".join(out.split()) or f"(snapshot; {read})" in out, (where, out)


def test_where_reads_every_slice_with_log_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On merge-on-read, a slice whose log files hold updates is read whatever its base file's statistics say:
    an update that moved a fare into the filter's range is found."""
    table = _write_trips(tmp_path, "mor", True, "MERGE_ON_READ")
    update = _input(tmp_path, [{"id": 1, "ts": 2, "city": "nyc", "day": 21, "fare": 5000.0}], "up.parquet")
    assert main(["write", str(table), "--input", str(update)]) == 0
    capsys.readouterr()
    rows = _json_rows(capsys, ["read", str(table), "--where", "fare > 4000"])
    assert [(r["id"], r["fare"]) for r in rows] == [(1, 5000.0)]
    assert _json_rows(capsys, ["read", str(table), "--where", "fare < 4000 AND id = 1"]) == []
    ro = _json_rows(capsys, ["read", str(table), "--query", "read_optimized", "--where", "fare > 4000"])
    assert ro == []  # read-optimized: base files only, pruned by their statistics


@pytest.mark.parametrize("where, message", [
    ("city = 5", "--where compares 'city', of type string, with 5"),
    ("nope = 1", "--where names no column of the table: 'nope'"),
    ("city = 'sf' AND", "expected name, found the end"),
    ("city ~ 'sf'", "cannot read"),
    ("", "the filter is empty")])
def test_a_bad_where_is_bad_input(trips: dict[str, Path], where: str, message: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ["read", str(trips["hive"]), "--where", where])
    assert (code, out) == (2, "")
    assert err.startswith("hudi-spec read: InvalidOperation: ") and message in err and "\n" not in err.rstrip(), err


# --- 5. output -----------------------------------------------------------------------------------------------


def _pieces(text: str) -> set[str]:
    """Every run of letters and digits in a text (what a wrap inside a word would split)."""
    return set(re.findall(r"[A-Za-z0-9]+", text))


@pytest.fixture(scope="module")
def serviced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample table (version 6, merge-on-read, deep in a long folder), savepointed and rolled back: its
    desc, fsview, savepoint and rollback output hold long paths and file names."""
    from reference import sample_tables

    path = sample_tables.build_table(tmp_path_factory.mktemp("a-rather-long-folder-name-for-paths") / "trips", 6)
    assert main(["savepoint", "create", str(path), "20250101080000000"]) == 0
    assert main(["rollback", str(path)]) == 0
    return path


@pytest.mark.parametrize("argv", [["desc"], ["fsview"], ["fsview", "--latest"], ["savepoints"], ["rollbacks"],
                                  ["commit-files"], ["timeline", "--files"]])
@pytest.mark.parametrize("width", [60, 80, 100])
def test_paths_and_file_names_are_never_cut(serviced: Path, argv: list[str], width: int,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Every word of the paths and file names a command shows (the runs of letters and digits between ``/``,
    ``_``, ``-``, ``.``) is whole on one line, at any width: each piece of the text of four or more hex digits
    (file ids, instants) is a whole piece of a value the JSON holds, and the table's folder names are whole."""
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    code, out, err = _run(capsys, [argv[0], str(serviced), *argv[1:]])
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= width
    code, doc, _ = _run(capsys, [argv[0], str(serviced), *argv[1:], "--format", "json"])
    known = _pieces(doc)
    shown = _pieces(out)
    cut = {p for p in shown if re.fullmatch(r"[0-9a-f]{4,}", p) and re.search(r"\d", p) and p not in known}
    assert not cut, (cut, out)
    if "rather" in doc:  # the command shows the table's path
        assert {"rather", "long", "folder", "name", "paths0"} <= shown, out  # pytest numbers the folder


@pytest.mark.parametrize("width", [60, 80])
def test_savepoint_and_rollback_output_keep_paths_whole(tmp_path: Path, width: int, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``savepoint create`` and ``rollback`` print the files they keep and write: each file id and instant
    whole (as the listings' JSON holds them afterwards), each folder name of the path whole."""
    from reference import sample_tables

    path = sample_tables.build_table(tmp_path / "a-rather-long-folder-name" / "trips", 6)
    monkeypatch.setenv("COLUMNS", str(width))
    outs = []
    for argv in (["savepoint", "create", str(path), "20250101080000000"], ["rollback", str(path)]):
        code, out, err = _run(capsys, argv)
        assert code == 0, err
        assert max(len(line) for line in out.splitlines()) <= width
        outs.append(out)
    known = set().union(*(_pieces(_run(capsys, [c, str(path), "--format", "json"])[1])
                          for c in ("savepoints", "rollbacks", "fsview", "timeline")))
    known |= _pieces(str(path)) | {p for f in path.rglob("*") for p in _pieces(f.name)}
    for out in outs:
        shown = _pieces(out)
        cut = {p for p in shown if re.fullmatch(r"[0-9a-f]{4,}", p) and re.search(r"\d", p) and p not in known}
        assert not cut, (cut, out)
    # rollback's table names the log file it deleted by its whole name (the full path is in its JSON and CSV)
    # (a name wider than the column goes on at the next line's indent, broken only after a separator)
    assert re.search(r"\.[0-9a-f-]+-0_\d{17}\.log\.\d+_\d+-\d+-\d+", re.sub(r"\n\s+", "", outs[1])), outs[1]
    assert str(tmp_path) not in outs[1]


def test_logfile_records_are_values(sample: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    log = next(p for p in sample[6].rglob(".*.log.*"))
    code, out, err = _run(capsys, ["logfile", str(log), "--records", "5"])
    assert code == 0, err
    assert "{'" not in out and "':" not in out  # no Python dict repr
    assert re.search(r"^\s*recordKey\s+partitionPath\s+orderingVal", out, re.M)  # the delete block's keys
    assert re.search(r"^\s*t2\s+city=san_francisco\s+2\s*$", out, re.M)
    assert re.search(r"^uuid\s+t1$|^.*\buuid\b.*$", out, re.M) and "rider-A" in out


def test_logfile_names_a_command_block_by_its_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from reference import sample_tables

    path = sample_tables.build_table(tmp_path / "trips", 6)
    assert main(["rollback", str(path)]) == 0  # a version 6 merge-on-read rollback appends a command block
    capsys.readouterr()
    logs = sorted(path.rglob(".*.log.*"))
    code, out, _ = _run(capsys, ["logfile", str(logs[-1])])
    assert code == 0 and "COMMAND_BLOCK (ROLLBACK_BLOCK)" in out
    code, out, _ = _run(capsys, ["logfile", str(logs[-1]), "--format", "json"])
    (block,) = json.loads(out)["blocks"]
    assert (block["block_type"], block["command_type"]) == ("COMMAND_BLOCK", "ROLLBACK_BLOCK")


@pytest.mark.parametrize("content", [b"PAR1 not a log", b"\x00" * 64, b"some notes\n"])
def test_a_file_that_is_not_a_log_file_is_bad_input(tmp_path: Path, content: bytes,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    code, out, err = _run(capsys, ["logfile", str(path)])
    assert (code, out) == (2, "")
    assert err == (f"hudi-spec logfile: InvalidOperation: {path} is not a Hudi log file: no log block in its "
                   f"{len(content)} bytes (give a log file, e.g. PARTITION/.FILEID_INSTANT.log.1_0-1-0; "
                   "`hudi-spec fsview TABLE` lists each file slice's log files)\n")


def test_timeline_shows_the_timelines_own_times(sample: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Layout 2: the completion times the file names hold; the modification times only under file_modified."""
    code, out, _ = _run(capsys, ["timeline", str(sample[8])])
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("instant_time"))
    assert header.split() == ["instant_time", "action", "state", "completion_time", "file_modified"]
    assert re.search(r"^20250101080000000\s+deltacommit\s+COMPLETED\s+20250101080001000\s", out, re.M)
    assert re.search(r"^20250101090000000\s+deltacommit\s+COMPLETED\s+20250101090001000\s", out, re.M)
    code, out, _ = _run(capsys, ["timeline", str(sample[6])])
    header = next(line for line in out.splitlines() if line.startswith("instant_time"))
    assert header.split() == ["instant_time", "action", "state", "file_modified"]  # layout 1 names no completion


@pytest.mark.parametrize("argv", [["desc"], ["timeline"], ["commits"], ["fsview"], ["stats"], ["schema"],
                                  ["partitions"], ["cleans"], ["read"], ["compactions"]])
def test_one_output_switch_and_the_old_ones_as_aliases(sample: dict[int, Path], argv: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    table = str(sample[8])
    outputs = {}
    for flags in (["--format", "json"], ["--output", "json"], ["--json"]):
        code, out, err = _run(capsys, [argv[0], table, *argv[1:], *flags])
        assert code == 0, err
        outputs[tuple(flags)] = json.loads(out)
    assert len({json.dumps(v, sort_keys=True) for v in outputs.values()}) == 1
    code, table_text, _ = _run(capsys, [argv[0], table, "--format", "table"])
    assert code == 0 and _run(capsys, [argv[0], table, "--output", "text"])[1] == table_text
    code, out, _ = _run(capsys, [argv[0], table, "--format", "csv"])
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows and len({len(r) for r in rows}) == 1, out  # a header and rows of as many cells


def test_the_help_calls_the_old_switches_deprecated(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["desc", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--format {table,json,csv}" in text
    assert "--output {text,json,csv} deprecated: use --format" in text
    assert "--json deprecated: use --format json" in text


def test_csv_of_rows_reads_back(trips: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table = str(trips["hive"])
    rows = _json_rows(capsys, ["read", table, "--columns", "id,city,fare"])
    out = _run(capsys, ["read", table, "--columns", "id,city,fare", "--format", "csv"])[1]
    back = list(csv.DictReader(io.StringIO(out)))
    assert [(int(r["id"]), r["city"], float(r["fare"]) if r["fare"] else None) for r in back] == [
        (r["id"], r["city"], r["fare"]) for r in rows]


# --- 7. schema, partitions, stats per partition ---------------------------------------------------------------


def test_schema_and_its_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t"
    assert main(["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE]) == 0
    wider = [{**r, "id": r["id"] + 10, "rider": "r"} for r in ROWS]  # a new column
    assert main(["write", str(table), "--input", str(_input(tmp_path, wider, "wider.parquet"))]) == 0
    assert main(["write", str(table), "--input", str(_input(tmp_path, wider[:1], "again.parquet"))]) == 0
    capsys.readouterr()
    code, out, err = _run(capsys, ["schema", str(table), "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert [c["column"] for c in doc["columns"]] == ["id", "ts", "city", "rider"]
    assert [(c["type"], c["nullable"]) for c in doc["columns"]] == [("long", True), ("long", True),
                                                                     ("string", True), ("string", True)]
    commits = [i.requested for i in Timeline.load(str(table)).commits_timeline().instants]
    assert [(h["instant_time"], h["added"], h["removed"]) for h in doc["history"]] == [
        (commits[0], ["id", "ts", "city"], []), (commits[1], ["rider"], [])]  # the third changed nothing
    assert doc["meta_columns"][0] == "_hoodie_commit_time"
    code, out, _ = _run(capsys, ["schema", str(table)])
    assert code == 0 and re.search(r"^4\s+rider\s+string\s+True\s*$", out, re.M)
    assert "Schema history" in out and re.search(rf"^{commits[1]}\s+commit\s+4\s+rider\b", out, re.M)
    code, out, _ = _run(capsys, ["schema", str(table), "--as-of", commits[0], "--format", "json"])
    assert [c["column"] for c in json.loads(out)["columns"]] == ["id", "ts", "city"]


def test_partitions_with_file_groups_and_rows(trips: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table = str(trips["hive"])
    code, out, err = _run(capsys, ["partitions", table, "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    every = _json_rows(capsys, ["read", table])
    assert [(p["partition"], p["file_groups"], p["base_files"], p["rows"]) for p in doc["items"]] == [
        (f"city={c}", 3, 3, sum(r["city"] == c for r in every)) for c in ("la", "nyc", "sf")]
    assert (doc["partitions"], doc["file_groups"], doc["rows"]) == (3, 9, len(every))
    code, out, _ = _run(capsys, ["partitions", table])
    assert out.startswith("3 partitions, 9 file groups, 18 rows") and re.search(r"^city=la\s+3\s+3\s+0\s", out, re.M)


def test_partitions_count_merged_rows(sample: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Merge-on-read: a slice with log files is counted by merging it (the sample's delete removed a row)."""
    for table in sample.values():
        doc = json.loads(_run(capsys, ["partitions", str(table), "--format", "json"])[1])
        assert [(p["partition"], p["rows"], p["log_files"]) for p in doc["items"]] == [
            ("city=san_francisco", len(_json_rows(capsys, ["read", str(table)])), 1)]
        base = next(table.rglob("*.parquet"))
        assert doc["items"][0]["rows"] != pq.ParquetFile(base).metadata.num_rows  # the delete block counted


def test_stats_per_partition(trips: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table = trips["plain"]
    code, out, err = _run(capsys, ["stats", str(table), "--format", "json"])
    assert code == 0, err
    by_partition = json.loads(out)["file_sizes_by_partition"]
    on_disk = {c: sorted(p.stat().st_size for p in (table / c).glob("*.parquet")) for c in ("la", "nyc", "sf")}
    assert [(r["partition"], r["num_files"], r["min"], r["max"], r["total_bytes"]) for r in by_partition] == [
        (c, 3, sizes[0], sizes[-1], sum(sizes)) for c, sizes in on_disk.items()]
    code, out, _ = _run(capsys, ["stats", str(table), "--partition", "city=la", "--section", "partitions",
                                 "--format", "csv"])
    assert code == 0 and list(csv.reader(io.StringIO(out)))[1][:2] == ["la", "3"]
    code, out, _ = _run(capsys, ["stats", str(table)])
    assert "File sizes (bytes) of the latest base files, by partition" in out


# --- 8. progress ------------------------------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_command_shows_its_progress_on_a_terminal(trips: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A read that runs past the threshold draws ``file slices read N/9`` with a bar and an estimate on
    standard error, and blanks it before printing its rows."""
    from reference.instrumentation import progress
    from spec.read.reader import TableReader

    terminal = _Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "POLL_SECONDS", 0.01)
    real = TableReader.read_plan

    def slow(self: Any, plan: Any, columns: Any = None) -> Any:
        for part in real(self, plan, columns):
            time.sleep(0.05)
            yield part

    monkeypatch.setattr(TableReader, "read_plan", slow)
    assert main(["read", str(trips["hive"]), "--format", "json"]) == 0
    drawn = terminal.getvalue()
    assert "\rhudi-spec read: file slices read " in drawn and "/9 " in drawn and "left" in drawn, drawn
    assert drawn.endswith("\r")  # blanked
    assert len(json.loads(capsys.readouterr().out)) == 18


@pytest.mark.parametrize("command", ["write", "desc"])
def test_every_command_shows_that_it_is_working_on_a_terminal(command: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A command with no progress of its own (a write, a listing) that runs past the threshold draws
    ``hudi-spec COMMAND: working… Ns`` on standard error on a terminal, and blanks it when it ends."""
    import importlib

    from reference.instrumentation import progress

    table = tmp_path / "t"
    assert main(["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE]) == 0
    capsys.readouterr()
    module = importlib.import_module(f"reference.commands.{command}")
    real = module.run

    def slow(args: Any) -> Any:
        time.sleep(0.3)
        return real(args)

    monkeypatch.setattr(module, "run", slow)  # registered by name when the command line is parsed
    terminal = _Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "POLL_SECONDS", 0.01)
    argv = {"write": ["write", str(table), "--input", str(_input(tmp_path, ROWS))], "desc": ["desc", str(table)]}
    assert main(argv[command]) == 0
    drawn = terminal.getvalue()
    assert f"\rhudi-spec {command}: working… " in drawn and drawn.endswith("\r"), drawn


def test_no_progress_when_not_a_terminal(trips: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from reference.instrumentation import progress

    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    assert main(["read", str(trips["hive"]), "--format", "json"]) == 0
    assert capsys.readouterr().err == ""


def test_the_progress_line() -> None:
    from reference.instrumentation.progress import activity_line

    line = activity_line("hudi-spec read", "file slices read", 3, 12, 6.0)
    assert line.startswith("hudi-spec read: file slices read 3/12 ━━━━━━") and line.endswith("6.0s, about 18.0s left")
    assert activity_line("hudi-spec write", None, 0, None, 65.0) == "hudi-spec write: working… 1m05s"
    assert len(activity_line("hudi-spec read", "x" * 200, 1, 2, 1.0, width=60)) == 60


def test_conformance_run_shows_cases_failures_and_an_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.progress import CaseProgress, progress_line
    from conformance.runner import Verdict

    assert progress_line(57, 162, 1, 80.0) == ("hudi-conformance run: 57/162 cases ━━━━━━━━──────────────── "
                                               "1 failed · 1m20s, about 2m27s left")
    terminal = _Tty()
    shown = CaseProgress(3, terminal)
    for verdict in (Verdict.PASS, Verdict.FAIL, Verdict.PASS):
        shown(type("R", (), {"verdict": verdict})())
    shown.close()
    drawn = terminal.getvalue()
    assert "\rhudi-conformance run: 1/3 cases" in drawn and "2/3 cases" in drawn and "1 failed" in drawn
    assert drawn.endswith("\r")
    plain = io.StringIO()
    shown = CaseProgress(3, plain, plain_every=0.0)
    shown(type("R", (), {"verdict": Verdict.FAIL})())
    assert plain.getvalue().startswith("hudi-conformance run: 1/3 cases, 1 failed · ")
    quiet = io.StringIO()
    shown = CaseProgress(3, quiet)  # not a terminal, a run shorter than PLAIN_EVERY: nothing
    shown(type("R", (), {"verdict": Verdict.PASS})())
    assert quiet.getvalue() == ""


def test_conformance_run_reports_progress_on_stderr(capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import progress as case_progress
    from conformance.cli import main as conformance

    monkeypatch.setattr(case_progress, "PLAIN_EVERY", 0.0)
    assert conformance(["run", "--impl", "spec", "--case", "archive-cow-v6"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^hudi-conformance run: 1/1 cases, 0 failed · ", err, re.M), err


@pytest.mark.parametrize("hive", [True, False])
def test_where_on_the_default_partition(tmp_path: Path, hive: bool, capsys: pytest.CaptureFixture[str]) -> None:
    """A null partition value goes to Hudi's default partition; a filter on the column still finds it (the
    default partition is never pruned on what its path seems to say)."""
    rows = [{"id": 1, "ts": 1, "city": None}, {"id": 2, "ts": 1, "city": "sf"}, {"id": 3, "ts": 1, "city": "default"}]
    table = tmp_path / "t"
    assert main(["write", str(table), "--input", str(_input(tmp_path, rows)), *NEW_TABLE,
                 "--option", f"hoodie.datasource.write.hive_style_partitioning={str(hive).lower()}"]) == 0
    capsys.readouterr()
    for where, ids in (("city IS NULL", [1]), ("city IS NOT NULL", [2, 3]), ("city = 'default'", [3]),
                       ("city = 'sf'", [2]), ("city != 'sf'", [3])):
        got = _json_rows(capsys, ["read", str(table), "--where", where])
        assert sorted(r["id"] for r in got) == ids, (where, got)


# --- found on a walk through the commands from a fresh shell ------------------------------------------------


def test_a_read_with_no_rows_keeps_the_tables_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Time travel to before the first commit, or a filter nothing matches: CSV prints the header of the table's
    columns (not a blank line), JSON an empty list, a table the reason."""
    table = tmp_path / "t"
    assert _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE])[0] == 0
    code, out, err = _run(capsys, ["read", str(table), "--as-of", "2001-01-01", "--format", "csv"])
    assert (code, out) == (0, "_hoodie_commit_time,_hoodie_commit_seqno,_hoodie_record_key,_hoodie_partition_path,"
                              "_hoodie_file_name,id,ts,city\n"), err
    assert _run(capsys, ["read", str(table), "--as-of", "2001-01-01", "--columns", "city,id", "--format", "csv"])[1] \
        == "city,id\n"
    assert _run(capsys, ["read", str(table), "--where", "id > 100", "--columns", "id", "--format", "csv"])[1] == "id\n"
    assert json.loads(_run(capsys, ["read", str(table), "--as-of", "2001-01-01", "--format", "json"])[1]) == []
    out = _run(capsys, ["read", str(table), "--as-of", "2001-01-01"])[1]
    assert out.startswith("0 rows (snapshot): --as-of 20010101000000000 is before the table's first commit")


def test_compact_with_nothing_to_do_says_so_in_a_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t"
    argv = ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE, "--table-type", "MERGE_ON_READ"]
    assert _run(capsys, argv)[0] == 0
    for extra in ([], ["--schedule"]):
        code, out, err = _run(capsys, ["compact", str(table), *extra])
        assert (code, out) == (0, "Nothing to compact: no latest file slice has log files, and no compaction is "
                                  "pending\n"), err
    assert json.loads(_run(capsys, ["compact", str(table), "--format", "json"])[1])["compaction_time"] is None


def test_rollback_names_files_by_name_in_its_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The table's file column holds file names (the partition is the column beside it), so a long absolute
    path is not folded over lines; CSV and JSON keep the paths Hudi's rollback metadata records."""
    table = tmp_path / "t"
    for _ in range(2):
        assert _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE])[0] == 0
    code, out, err = _run(capsys, ["rollback", str(table), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows and all(r["file"].startswith(str(table)) for r in rows), err
    assert _run(capsys, ["write", str(table), "--input", str(_input(tmp_path, ROWS)), *NEW_TABLE])[0] == 0
    code, out, err = _run(capsys, ["rollback", str(table)])
    assert code == 0 and str(tmp_path) not in out and ".parquet" in out, out

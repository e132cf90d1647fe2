"""The front door as a newcomer meets it (issue "The front door"): one test per thing a new user
tripped over. The demo's closing hints run as printed without an activated ``.venv``; text output fits
the terminal, ``COLUMNS`` or 100 characters; ``read`` refuses what Apache Hudi refuses and says why a
query is empty; ``state_transition_time`` is filled; error messages name the file, the flag and the
column; every exit code is documented once and each one is what the command returns."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference import demo, sample_tables
from reference.cli import EXIT_CODES, main
from reference.commands import _output
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Instant
from spec.timeline.layout import format_instant_file_name, timeline_dir
from tests import processes

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SCRIPT = BIN / "hudi-spec"
TRIPS_OPTIONS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
                 "hoodie.datasource.write.precombine.field": "ts",
                 "hoodie.datasource.write.partitionpath.field": "city",
                 "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.clean.automatic": "false"}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The demo's small merge-on-read table in both versions, built without Spark: two deltacommits, then
    (local engine) a compaction, an upsert and a clean."""
    from reference.api import HudiTable
    from reference.executors.clean import clean
    from reference.executors.common import load_table
    from spec.actions.clean import CleanConfig
    from spec.config.registry import KEEP_LATEST_COMMITS

    out = {}
    for version in (6, 8):
        path = sample_tables.build_table(tmp_path_factory.mktemp(f"newcomer-v{version}") / "trips", version)
        table = HudiTable(str(path), engine="local")
        assert table.compact() is not None
        row = {"uuid": "t9", "ts": 9, "rider": "rider-Z", "fare": 1.5, "city": "san_francisco"}
        table.write(pa.Table.from_pylist([row], schema=sample_tables.SCHEMA), "upsert",
                    {**TRIPS_OPTIONS, "hoodie.write.table.version": str(version)})
        storage, config = load_table(str(path))
        assert clean(storage, config, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1)).instant is not None
        out[version] = path
    return out


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(err: str, command: str, *needles: str) -> None:
    assert err.endswith("\n") and "\n" not in err.rstrip("\n"), f"not one line: {err!r}"
    assert err.startswith(f"hudi-spec {command}: "), err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"


# --- the demo's closing hints run as printed -------------------------------------------------------


def _env_without_venv() -> dict[str, str]:
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != BIN.resolve())
    return {**{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}, "PATH": path}


def test_demo_hints_run_as_printed_without_an_activated_venv(tables: dict[int, Path],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env_without_venv()
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.chdir(ROOT)
    lines = demo.closing_hints(tables[6])
    commands = [line.strip() for line in lines if line.startswith("  ")]
    assert len(commands) == len(demo.HINTS)
    first = shlex.split(commands[0])[0]
    assert first != "hudi-spec"  # not on PATH here: the hint names the script itself
    if SCRIPT.resolve().is_relative_to(ROOT.resolve()):
        assert first == os.path.relpath(SCRIPT, ROOT)  # e.g. .venv/bin/hudi-spec on a fresh clone
    assert any("activate" in line for line in lines)
    for command in commands:
        done = processes.run(shlex.split(command), cwd=ROOT, env=env).expect(0, "the hint runs as printed")
        assert done.stdout.strip(), done.report("expected output")


def test_demo_hints_use_the_bare_name_when_it_is_on_path(tables: dict[int, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{_env_without_venv()['PATH']}")
    lines = demo.closing_hints(tables[6])
    assert lines == [f"  hudi-spec {hint} {tables[6]}" for hint in demo.HINTS]


# --- text output fits where it goes ----------------------------------------------------------------


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


@pytest.mark.parametrize("command", ["desc", "timeline --files"])
def test_piped_text_fits_columns_80(tables: dict[int, Path], command: str) -> None:
    """``COLUMNS=80 hudi-spec desc T | cat`` and ``… timeline T --files | cat``: no line over 80 characters;
    without ``COLUMNS``, none over 100; JSON is one document whatever the width."""
    name, *extra = command.split()
    for version, table in tables.items():
        env = {**_env_without_venv(), "COLUMNS": "80"}
        piped = processes.run([str(SCRIPT), name, str(table), *extra], env=env).expect(0)
        assert 0 < _widest(piped.stdout) <= 80, (version, piped.stdout)
        env.pop("COLUMNS")
        wide = processes.run([str(SCRIPT), name, str(table), *extra], env=env).expect(0)
        assert 80 < _widest(wide.stdout) <= _output.PIPED_WIDTH, (version, wide.stdout)
        doc = processes.run([str(SCRIPT), name, str(table), *extra, "--json"], env={**env, "COLUMNS": "80"}).expect(0)
        assert json.loads(doc.stdout)


INSPECT = ["desc", "timeline", "timeline --all --files --archived", "commits", "commit-files", "fsview",
           "fsview --latest", "compactions", "cleans", "rollbacks", "savepoints", "stats", "archived", "read",
           "read --query read_optimized", "read --query incremental --begin 00000000000000", "schema", "partitions",
           "stats --section partitions"]


@pytest.mark.parametrize("width", [40, 80, 100, 160])
def test_every_text_command_fits_the_width(tables: dict[int, Path], width: int, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    for table in tables.values():
        for command in INSPECT:
            name, *extra = command.split()
            code, out, err = _run(capsys, [name, str(table), *extra])
            assert code == 0, err
            assert out.strip() and _widest(out) <= width, f"{command} at {width}:\n{out}"


def test_the_width_rule() -> None:
    env = os.environ.pop("COLUMNS", None)
    try:
        assert _output.text_width(True, 132) == 132  # a terminal: its width
        assert _output.text_width(False, 132) == _output.PIPED_WIDTH  # piped: 100
        os.environ["COLUMNS"] = "72"
        assert _output.text_width(True, 132) == 72 and _output.text_width(False, 132) == 72
        os.environ["COLUMNS"] = "5"
        assert _output.text_width(False, 132) == _output.MIN_WIDTH
        os.environ["COLUMNS"] = "wide"
        assert _output.text_width(False, 132) == _output.PIPED_WIDTH
    finally:
        os.environ.pop("COLUMNS", None)
        if env is not None:
            os.environ["COLUMNS"] = env


def test_a_table_too_wide_becomes_one_record_per_row(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    columns = [f"column_{i}" for i in range(12)]
    rows = [[f"value-{r}-{i}" for i in range(12)] for r in range(2)]
    monkeypatch.setenv("COLUMNS", "200")
    _output.emit_table("Wide", columns, rows)
    table = capsys.readouterr().out
    assert re.search(r"^column_0\s+column_1\s", table, re.M) and "-[ 1 ]" not in table
    monkeypatch.setenv("COLUMNS", "60")
    _output.emit_table("Wide", columns, rows)
    records = capsys.readouterr().out
    assert "-[ 1 ]" in records and "-[ 2 ]" in records and _widest(records) <= 60
    assert re.search(r"^column_11\s+value-1-11$", records, re.M)
    _output.emit_table("Nothing", columns, [])
    empty = capsys.readouterr().out
    assert empty.startswith("Nothing: no rows") and "column_11" in empty and _widest(empty) <= 60


def test_the_demo_timeline_fits_a_normal_terminal(tables: dict[int, Path], monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """At 80 columns the demo's timeline (compaction included) is a table of the timeline's own times and the
    file modification time under a name that says so; at 40, records."""
    monkeypatch.setenv("COLUMNS", "80")
    for version, header in ((6, r"^instant_time\s+action\s+state\s+file_modified\s*$"),
                            (8, r"^instant_time\s+action\s+state\s+completion_time\s+file_modified\s*$")):
        code, out, _ = _run(capsys, ["timeline", str(tables[version]), "--all"])
        assert code == 0 and _widest(out) <= 80
        assert re.search(header, out, re.M), out
        assert "(compaction)" in out and "requested_time" not in out  # commit (compaction), maybe on two lines
    monkeypatch.setenv("COLUMNS", "40")
    code, out, _ = _run(capsys, ["timeline", str(tables[8]), "--all"])
    assert code == 0 and _widest(out) <= 40 and "-[ 1 ]" in out


# --- read: refuse what Hudi refuses, say why nothing was found -------------------------------------


@pytest.mark.parametrize("argv", [["read", "{t}", "--limit", "-1"], ["timeline", "{t}", "--limit", "-1"],
                                  ["commits", "{t}", "--limit", "-3"], ["logfile", "{t}", "--records", "-1"],
                                  ["read", "{t}", "--limit", "many"]])
def test_a_negative_count_is_refused(tables: dict[int, Path], argv: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, [a.format(t=tables[6]) for a in argv])
    assert code == 2 and out == ""
    _one_line_error(err, argv[0], "InvalidOperation", "is not a count", "0 or more")


def test_as_of_before_the_first_commit_says_so(tables: dict[int, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A table never cleaned answers time travel before its first commit with no rows, and says why; a cleaned
    one refuses it, as Apache Hudi does (``spec.read.time_travel``: before the clean's earliest retained
    commit)."""
    for version in (6, 8):
        table = sample_tables.build_table(tmp_path / f"v{version}" / "trips", version)  # never cleaned
        code, out, _ = _run(capsys, ["read", str(table), "--as-of", "20000101000000000"])
        assert code == 0
        assert out == ("0 rows (snapshot): --as-of 20000101000000000 is before the table's first commit, "
                       "20250101080000000; nothing was written yet\n")
        code, out, _ = _run(capsys, ["read", str(table), "--as-of", "20000101000000000", "--json"])
        assert code == 0 and json.loads(out) == []
    for table in tables.values():
        code, out, err = _run(capsys, ["read", str(table), "--as-of", "20000101000000000"])
        assert (code, out) == (2, "")
        _one_line_error(err, "read", "TimeTravelRefused", "the latest clean retains")
        code, out, err = _run(capsys, ["read", str(table), "--partition", "city=nowhere"])  # no such partition
        assert (code, out) == (2, "")
        _one_line_error(err, "read", "InvalidOperation: no partition 'city=nowhere' in the table",
                        "(the partitions are: city=san_francisco)")


@pytest.mark.parametrize("engine", ["spec", "spark"])
def test_incremental_needs_begin_as_in_hudi(tables: dict[int, Path], engine: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Hudi's IncrementalRelation throws without hoodie.datasource.read.begin.instanttime; so does ``read``,
    before any Spark starts."""
    code, out, err = _run(capsys, ["read", str(tables[6]), "--query", "incremental", "--engine", engine])
    assert code == 2 and out == ""
    _one_line_error(err, "read", "InvalidOperation", "needs --begin", "--begin 00000000000000")
    code, out, _ = _run(capsys, ["read", str(tables[6]), "--query", "incremental", "--begin", "00000000000000",
                                 "--json"])
    assert code == 0 and len(json.loads(out)) == len(json.loads(_run(capsys, ["read", str(tables[6]), "--json"])[1]))


def test_read_help_says_begin_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["read", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "An incremental query needs --begin" in help_text and "incremental (required" in help_text


# --- state_transition_time -------------------------------------------------------------------------


def _transition_time(table: Path, timeline: Timeline, inst: Instant) -> str | None:
    """What Hudi's ``HoodieInstant.getCompletionTime`` gives: layout 2, the completion time of the name;
    layout 1, the modification time of the instant's file in its state, as a local-time instant time."""
    if timeline.layout == 2:
        return inst.completed
    stat = (table / timeline_dir(1) / format_instant_file_name(inst, 1)).stat()
    return time.strftime("%Y%m%d%H%M%S", time.localtime(stat.st_mtime)) + f"{stat.st_mtime_ns // 1_000_000 % 1000:03d}"


@pytest.mark.parametrize("command,key", [("commits", "commit_time"), ("compactions", "compaction_time"),
                                         ("cleans", "clean_time")])
def test_state_transition_time_is_filled(tables: dict[int, Path], command: str, key: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    for table in tables.values():
        timeline = Timeline.load(str(table))
        code, out, _ = _run(capsys, [command, str(table), "--json"])
        rows = json.loads(out)
        assert code == 0 and rows
        for row in rows:
            inst = next(i for i in timeline.instants if i.requested == row[key])
            assert row["state_transition_time"] is not None
            assert row["state_transition_time"] == _transition_time(table, timeline, inst), (command, row)


# --- messages that name the file, the flag, the column ---------------------------------------------


def test_logfile_names_a_missing_file(tables: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    missing = tables[6] / "city=san_francisco" / ".nope_20250101080000000.log.1_0-1-0"
    code, out, err = _run(capsys, ["logfile", str(missing)])
    assert code == 2 and out == ""
    _one_line_error(err, "logfile", "no such log file", str(missing))
    assert "InvalidTable" not in err and "table path" not in err


def test_a_new_table_without_a_key_names_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.parquet as pq

    data = tmp_path / "trips.parquet"
    pq.write_table(pa.table({"uuid": ["a"], "ts": [1]}), data)
    table = tmp_path / "new"
    code, out, err = _run(capsys, ["write", str(table), "--input", str(data), "--engine", "local"])
    assert code == 2 and out == ""
    _one_line_error(err, "write", "InvalidConfig", "--record-key")
    assert "hoodie.datasource.write.recordkey.field" not in err
    assert not table.exists()


def test_an_all_null_ordering_column_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "trips.json"
    data.write_text('{"uuid": "a", "ts": null, "fare": 1.0}\n{"uuid": "b", "ts": null, "fare": 2.0}\n')
    table = tmp_path / "new"
    code, out, err = _run(capsys, ["write", str(table), "--input", str(data), "--engine", "local",
                                   "--record-key", "uuid", "--ordering-field", "ts"])
    assert code == 2 and out == ""
    _one_line_error(err, "write", "SchemaMismatch", "column 'ts'", "every value in it is null", "give 'ts' a type")
    assert not (table / ".hoodie" / "hoodie.properties").exists()


# --- exit codes: documented once, and each one real ------------------------------------------------

EXIT_ROW = re.compile(r"^\| (\d+) \| (.+) \|$", re.M)


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/cli.md"])
def test_exit_codes_are_one_table(doc: str) -> None:
    text = (ROOT / doc).read_text()
    table = text[text.index("| code | meaning |"):]
    table = table[: table.index("\n\n")]
    assert {int(c): m for c, m in EXIT_ROW.findall(table)} == EXIT_CODES


def test_exit_0_success(tables: dict[int, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, ["desc", str(tables[6])])[0] == 0


def test_exit_1_a_corrupt_log_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = sample_tables.build_table(tmp_path / "trips", 6)
    log = next(p for p in sorted((table / "city=san_francisco").glob(".*.log.*")))
    broken = tmp_path / log.name
    data = bytearray(log.read_bytes())
    broken.write_bytes(bytes(data[: len(data) // 2]))  # a block cut in the middle
    code, out, _ = _run(capsys, ["logfile", str(broken), "--json"])
    assert code == 1 and json.loads(out)["corrupt_blocks"] >= 1


def test_exit_2_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, command in ((["read"], "read"), (["timeline", "T", "--bogus"], "timeline"), (["nope"], ""),
                          (["--bogus"], "")):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        prog = f"hudi-spec {command}".strip()
        assert err.startswith(f"{prog}: usage: ") and err.endswith(f"(see {prog} --help)\n"), err
        assert "\n" not in err.rstrip("\n")


def test_exit_2_typed_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, ["desc", str(tmp_path)])
    assert code == 2
    _one_line_error(err, "desc", "InvalidTable")


def test_exit_3_unexpected_and_130_interrupted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from reference.commands import desc

    def fails(args: Any) -> int:
        raise RuntimeError("something broke")

    def interrupted(args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.delenv("HUDI_SPEC_DEBUG", raising=False)
    monkeypatch.setattr(desc, "run", fails)
    code, _, err = _run(capsys, ["desc", str(tmp_path)])
    assert code == 3
    _one_line_error(err, "desc", "unexpected RuntimeError: something broke", "HUDI_SPEC_DEBUG=1")
    monkeypatch.setattr(desc, "run", interrupted)
    code, _, err = _run(capsys, ["desc", str(tmp_path)])
    assert code == 130 and err == "hudi-spec desc: interrupted\n"


# --- the licence, declared the current way ---------------------------------------------------------


def test_licence_is_an_spdx_expression_with_its_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"  # a string: no "license as a TOML table" warning
    for name in project["project"]["license-files"]:
        assert "Apache License" in (ROOT / name).read_text()[:200]
    setuptools = next(r for r in project["build-system"]["requires"] if r.startswith("setuptools"))
    assert tuple(int(x) for x in setuptools.split(">=")[1].split(".")) >= (77,)  # where license-files arrived


def test_installed_metadata_carries_the_licence_expression() -> None:
    import importlib.metadata

    metadata = importlib.metadata.metadata("hudi-spec")
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in (metadata.get_all("License-File") or [])


def test_every_command_line_of_the_cli_guide_parses() -> None:
    """The command lines docs/guide/cli.md shows are command lines ``hudi-spec`` accepts."""
    from reference.cli import build_parser

    text = (ROOT / "docs" / "guide" / "cli.md").read_text().replace("\\\n", " ")
    lines = [line.split("  #")[0].strip() for line in text.splitlines() if line.startswith("hudi-spec ")]
    assert len(lines) >= 30
    parser = build_parser()
    for line in lines:
        words = shlex.split(line)[1:]
        words = words[: words.index(">")] if ">" in words else words  # a shell redirect is the shell's
        args = parser.parse_args(words)
        assert args.handler is not None, line

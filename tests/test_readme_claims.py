"""Every claim of README.md that a test can check, checked: the make targets and options it names exist,
the ``hudi-spec`` and ``hudi-conformance`` lines it shows parse (and the ones that need no Spark run on a
table), its Python reading example runs, the option keys, operations, files, counts and links it names
are real, and its performance numbers are the performance page's. Claims backed by other tests name them
in ``BACKED_ELSEWHERE`` (a test below checks those tests exist)."""

from __future__ import annotations

import inspect
import json
import re
import shlex
from pathlib import Path

import pytest

from conformance.cli import build_parser as conformance_parser
from reference import demo, sample_tables
from reference.api import HudiTable
from reference.cli import build_parser, main
from spec.config.registry import ALIASES, BY_KEY
from spec.config.write_operation import WRITER_OPERATIONS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README) if lang == language]


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def _shell_lines(program: str) -> list[str]:
    """The ``program`` lines of the README's bash blocks, comments dropped, a line continued with ``\\``
    joined to the next."""
    out = []
    for block in _blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = " ".join(line.split("  #")[0].split())
            if line == program or line.startswith(f"{program} "):
                out.append(line)
    return out


def test_code_blocks_fit_the_page() -> None:
    """Every line of the README's code blocks fits 80 characters (a page, a terminal), as they are shown."""
    wide = [line for _, body in FENCE.findall(README) for line in body.splitlines() if len(line) > 80]
    assert not wide, wide


GUIDE_PAGES = ("docs/index.md", "docs/project.md", "docs/guide/cli.md", "docs/guide/writer.md")
"""The site's pages a newcomer reads first: their code blocks fit the page too."""


@pytest.mark.parametrize("page", GUIDE_PAGES)
def test_the_guides_code_blocks_fit_the_page(page: str) -> None:
    """Every line of the code blocks of the pages a newcomer reads first fits 90 characters (the site's
    column at its usual width)."""
    text = (ROOT / page).read_text()
    wide = [line for body in re.findall(r"^```[\w-]*\n(.*?)^```", text, re.S | re.M) for line in body.splitlines()
            if len(line) > 90]
    assert not wide, wide


def test_the_readme_is_at_most_half_its_old_size() -> None:
    """Usage first, the rest on the site: the README stays under half of its 20,774 bytes and 295 lines of
    before (the project's evidence, the writer's guarantees and performance in full are pages of docs/)."""
    assert len(README.encode()) <= 20_774 // 2 and len(README.splitlines()) <= 295 // 2
    order = [README.index(f"## {title}") for title in ("Install and try it", "Read, write, check",
                                                        "The conformance suite", "Performance",
                                                        "How we know it is right", "Development")]
    assert order == sorted(order)


BACKED_ELSEWHERE = {
    "make demo writes, checks and reads a MOR table with every query type": "tests/test_demo.py",
    "every table written reads the same with hudi-rs, the spec reader and the model": "tests/test_writer_vs_model.py",
    "a writer killed with SIGKILL at any point loses nothing": "tests/test_crash_safety.py",
    "a second writer gets WriteConflict and changes nothing": "tests/test_write_conflict.py",
    "the local engine leaves the same table as the Spark engine": "tests/test_local_engine.py",
    "real tables round-trip through the parse/format pairs": "tests/test_real_tables_foundation.py",
    "our rows equal hudi-rs's on every real table and query": "tests/test_reader_vs_hudi_rs.py",
    "each named difference between hudi-rs and Apache Hudi is asserted": "tests/test_reader_differences.py",
    "the conformance suite catches each injected bug": "tests/test_conformance_bugs.py",
    "spec imports only the standard library, fastavro and pyarrow": "tests/test_architecture.py",
    "no import cycle, no module over 500 lines, every module on the architecture page": "tests/test_architecture.py",
    "errors say what was wrong and what to do; one exit-code table": "tests/test_cli_newcomer.py",
    "the demo's hints run as printed; text fits COLUMNS": "tests/test_cli_newcomer.py",
    "streaming: one commit per micro-batch, replays skipped": "tests/test_streaming.py",
}


def test_claims_backed_elsewhere_name_existing_tests() -> None:
    for claim, path in BACKED_ELSEWHERE.items():
        assert (ROOT / path).is_file(), f"{claim!r}: {path} does not exist"
        assert "def test_" in (ROOT / path).read_text(), path


def test_make_targets_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    named = set(re.findall(r"`make ([\w-]+)", README)) | {line.split()[1] for line in _shell_lines("make")}
    assert {"demo", "test", "bench", "slow", "ci-slow", "docs-serve"} <= named
    assert named <= targets, named - targets
    assert "$(DEMO_ARGS)" in makefile and "HYPOTHESIS_PROFILE=long" in makefile
    ci = (ROOT / ".ci" / "run").read_text()  # CI: make test, then the slow tests it affords
    assert [ln for ln in ci.splitlines() if ln.startswith("make ")] == ["make test", "make ci-slow"]
    with pytest.raises(SystemExit) as done:  # DEMO_ARGS="--table-version 8" is an option of the demo
        demo.main(["--table-version", "7"])
    assert done.value.code == 2


def test_the_hudi_rs_tables_setting_exists() -> None:
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    assert '"--hudi-rs-tables"' in conftest and 'TABLES_ENV = "HUDI_RS_TABLES"' in conftest
    assert "MANIFEST.tsv" in conftest


def _trips_file(path: Path) -> None:
    """``trips.parquet``, the input the README's write lines name: two trips of the sample table's schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"uuid": "t7", "ts": 5, "rider": "rider-G", "fare": 12.5, "city": "san_francisco"},
            {"uuid": "t1", "ts": 5, "rider": "rider-A", "fare": 30.0, "city": "san_francisco"}]
    pq.write_table(pa.Table.from_pylist(rows, schema=sample_tables.SCHEMA), path)


def _hudi_spec_argv(line: str, table: Path, log: Path, t1: str, t2: str) -> list[str]:
    line = line.replace("[--json]", "--json")
    words = {"TABLE": str(table), "LOGFILE": str(log), "T1": t1, "T2": t2}
    return [words.get(w, w) for w in shlex.split(line)[1:]]


def test_the_hudi_spec_lines_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Each ``hudi-spec`` line of the README's shell blocks runs on a table, as typed (none of them needs
    Spark): the reads on the sample table, the writes from a ``trips.parquet`` into a new table and into the
    sample table, whose folder is not its name's."""
    table = sample_tables.build_table(tmp_path / "sample-trips", 6)
    log = next(table.rglob(".*.log.*"))
    monkeypatch.chdir(tmp_path)
    _trips_file(tmp_path / "trips.parquet")
    lines = _shell_lines("hudi-spec")
    assert len(lines) >= 11
    for line in lines:
        argv = _hudi_spec_argv(line, table, log, "20250101080000000", "20250101090000000")
        assert main(argv) == 0, f"{line}: {capsys.readouterr().err}"
        assert capsys.readouterr().out.strip(), line
    assert (tmp_path / "warehouse" / "trips" / ".hoodie" / "hoodie.properties").is_file()
    rows = json.loads(_run_json(capsys, ["read", str(table), "--query", "incremental", "--begin",
                                          "20250101080000000", "--end", "20250101090000000", "--format", "json"]))
    assert rows and {r["_hoodie_commit_time"] for r in rows} == {"20250101090000000"}


def _run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_the_hudi_spec_commands_named_in_prose_exist() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if getattr(a, "choices", None) and "desc" in a.choices).choices
    prose = FENCE.sub("", README).replace("\n", " ")
    spans = re.findall(r"`([^`]+)`", prose)
    named = {m for span in spans for m in re.findall(r"hudi-spec ([a-z][a-z-]+)", span)}
    named |= {line.split()[1] for line in _shell_lines("hudi-spec") if len(line.split()) > 1}
    services = next(span for span in spans if span.startswith("hudi-spec compact | cluster | clean | rollback"))
    listings = next(span for span in spans if span.startswith("cleans |"))
    named |= {w for w in re.split(r"[\s|]+", f"{services} {listings}") if w not in ("hudi-spec", "create", "delete",
                                                                                 "restore")}
    assert {"write", "compact", "cluster", "clean", "rollback", "savepoint", "cleans", "rollbacks", "savepoints",
            "compactions", "archived", "desc"} <= named
    assert named <= set(commands), named - set(commands)
    write = _write_line()
    args = parser.parse_args(write)
    assert (args.operation, args.record_key, args.ordering_field, args.partition_field) == ("upsert", "uuid", "ts",
                                                                                            "city")
    assert parser.parse_args([*write, "--engine", "local"]).engine == "local"
    for argv in (["compact", "T", "--schedule"], ["compact", "T", "--run"], ["compact", "T", "--run", "2025"],
                 ["savepoint", "create", "T"], ["savepoint", "delete", "T", "1"], ["savepoint", "restore", "T", "1"]):
        parser.parse_args(argv)


def _write_line() -> list[str]:
    """The README's write into a new table (the first ``hudi-spec write`` line of its shell blocks)."""
    line = next(line for line in _shell_lines("hudi-spec") if line.startswith("hudi-spec write "))
    return shlex.split(line)[1:]


def test_every_command_takes_output_json() -> None:
    def walk(parser: object) -> list[object]:
        subs = [a for a in parser._actions if getattr(a, "choices", None) and isinstance(a.choices, dict)]  # type: ignore[attr-defined]
        children = [p for a in subs for p in a.choices.values()]
        return children + [g for c in children for g in walk(c)]

    for command in walk(build_parser()):
        if any(getattr(a, "choices", None) and isinstance(a.choices, dict) for a in command._actions):  # type: ignore[attr-defined]
            continue  # a group of subcommands (savepoint): its subcommands take it
        output = [a for a in command._actions if "--output" in a.option_strings]  # type: ignore[attr-defined]
        assert output and tuple(output[0].choices)[:2] == ("text", "json"), command.prog  # type: ignore[attr-defined]


def test_the_python_reading_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample_tables.build_table(tmp_path / "path" / "to" / "table", 6)
    monkeypatch.chdir(tmp_path)
    (reading,) = [b for b in _blocks("python") if "from spec.read.reader" in b]
    namespace: dict[str, object] = {}
    exec(compile(reading, "README reading example", "exec"), namespace)
    assert namespace["rows"].num_rows == 3  # type: ignore[attr-defined]
    assert namespace["changes"].num_rows == 0  # type: ignore[attr-defined]  # nothing after 2025-03-31
    assert namespace["slice_rows"].num_rows == 3  # type: ignore[attr-defined]


def test_the_writing_example_names_real_options_and_methods() -> None:
    (writing,) = [b for b in _blocks("python") if "HudiTable" in b]
    keys = set(re.findall(r'"(hoodie\.[\w.]+)"', writing)) | set(re.findall(r"`(hoodie\.[\w.]+)", README))
    keys -= {"hoodie.properties"}
    assert len(keys) >= 10
    unknown = {k for k in keys if k not in BY_KEY and k not in ALIASES}
    assert not unknown, f"the README names options the writer does not know: {unknown}"
    for method in re.findall(r"trips\.(\w+)\(", writing):
        assert callable(getattr(HudiTable, method, None)), method
    assert "engine" in inspect.signature(HudiTable).parameters
    assert '"hoodie.write.table.version": "9",' in writing  # the default, said as such
    listed = re.search(r"Operations: (.+?), on copy-on-write", README.replace("\n", " "))
    assert listed and re.findall(r"`(\w+)`", listed.group(1)) == list(WRITER_OPERATIONS)


def test_files_counts_and_links_the_readme_names() -> None:
    from spec.storage.lock import LOCK_FILE
    from tests.test_conformance_bugs import REFERENCE_BUGS

    assert f"`{LOCK_FILE}`" in README
    assert "SIGKILL" in (ROOT / "tests" / "test_crash_safety.py").read_text()
    assert "eight bugs" in README and len(REFERENCE_BUGS) == 8
    manifest = json.loads((ROOT / "fixtures" / "MANIFEST.json").read_text())
    assert f"{manifest['cases']} cases" in README
    fuzz = (ROOT / "tests" / "test_log_format_corrupt.py").read_text()
    assert "2,000 cases" in README and "_fuzz, corpus, 2_000" in fuzz
    assert "100,000 with `make slow`" in README and "_fuzz, corpus, 100_000" in fuzz
    for link in re.findall(r"\]\(((?:docs|tests)/[^)#]+)", README):
        assert (ROOT / link).is_file(), link


def test_the_conformance_lines_parse() -> None:
    parser = conformance_parser()
    lines = _shell_lines("hudi-conformance")
    assert len(lines) == 6
    for line in lines:
        argv = [w for w in shlex.split(line.replace("[--json]", "--json"))[1:]]
        parser.parse_args(argv)
    plugin = (ROOT / "conformance" / "plugin.py").read_text()
    assert '"--hudi-impl"' in plugin and "MANIFEST.json" in plugin
    assert "hudi_conformance" in (ROOT / "pyproject.toml").read_text()


def test_the_performance_numbers_are_the_performance_pages() -> None:
    section = _section("Performance")
    page = (ROOT / "docs" / "performance.md").read_text()
    numbers = re.findall(r"\d+(?:\.\d+)?(?:x| s| MB)", section)
    assert len(numbers) >= 30
    missing = sorted({n for n in numbers if n not in page})
    assert not missing, f"numbers of the README's performance section not on docs/performance.md: {missing}"


def test_the_real_table_count(real_tables: list[object]) -> None:
    assert "22 tables written by Apache Hudi" in README and len(real_tables) == 22


def test_the_readme_and_the_guide_say_a_new_table_is_version_9_and_why() -> None:
    """Issue #45, item 1: the README and the command-line guide say what a new table gets (version 9 with a metadata
    table, Apache Hudi 1.1's) and how to ask for another (the `--help` test is tests/test_cli_first_use.py's)."""
    said = " ".join(README.split())
    assert "A new table gets table version 9 with a metadata table, as Apache Hudi 1.1 writes one" in said
    assert "(`--table-version 8` or `6`)" in said
    guide = " ".join((ROOT / "docs" / "guide" / "cli.md").read_text().split())
    assert "It writes table version 9 (Apache Hudi 1.1's, the default for a new table)" in guide


def test_the_home_page_opens_its_tour_with_a_picture_of_a_table() -> None:
    """Issue #45, item 9: the site's home page shows a table's folders and files and its file groups over its
    timeline, each drawn when the site is built, by our code, from a table our writer wrote (``docs/pictures.py``):
    inline SVG naming the table's own files."""
    import importlib.util

    found = importlib.util.spec_from_file_location("hudi_spec_docs_pictures", ROOT / "docs" / "pictures.py")
    assert found is not None and found.loader is not None
    pictures = importlib.util.module_from_spec(found)
    found.loader.exec_module(pictures)
    home = (ROOT / "docs" / "index.md").read_text()
    tour = home[home.index("## A five-minute tour"):]
    assert tour.index("<!-- hudi-spec:picture table-tree -->") < tour.index("1. **A table is a folder.**")
    assert "<!-- hudi-spec:picture file-groups -->" in tour.split("1. **")[0]
    rendered = pictures.on_page_markdown(tour.split("1. **")[0], None, None, None)
    svgs = re.findall(r"<svg.*?</svg>", rendered, re.S)
    assert len(svgs) == 2 and "hoodie.properties" in svgs[0] and ".parquet" in rendered, rendered[:300]

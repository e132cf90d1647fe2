"""The site's pictures are drawn from the rules and tables they show, so a changed input changes them.

- the timeline state machine follows ``spec.timeline.active_timeline``'s transition tables (a toy table, or the
  spec's patched, draws differently), and its Mermaid names only states it declares;
- the file-group picture and ``hudi-spec fsview --output mermaid|svg`` follow the table on disk;
- the log block picture cuts a real block along ``BLOCK_FIELDS`` at the offsets the encoder writes;
- the bucket picture shows ``assign_buckets``'s buckets and weights, and changes with the workload;
- the bench charts are drawn from the JSON beside the performance page, which holds the page's numbers;
- every picture marker of the site's pages is replaced by an inline SVG.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from types import MappingProxyType, ModuleType

import pytest

import spec.timeline.instant as timeline_rules
from bench.charts import chart_svg, results_from_page
from reference.cli import main
from reference.diagrams.buckets import WorkedExample, buckets_svg
from reference.diagrams.fsview import fsview_mermaid, fsview_svg
from reference.diagrams.log_layout import block_layout_svg
from reference.diagrams.timeline import moves, state_machine_mermaid, state_machine_svg
from spec.errors import IllegalStateTransition
from spec.file_group.file_system_view import FileSystemView
from spec.file_group.log_file.log_format import (
    BLOCK_FIELDS,
    BlockType,
    LogBlock,
    block_parts,
    encode_block,
    read_blocks,
    read_log_file,
)
from spec.storage.hoodie_storage import Storage
from spec.timeline.instant import Action, State, check_transition
from spec.write.partitioner import PartitionProfile, WorkloadProfile

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "fixtures" / "tables" / "compaction-logs-mor-v8" / "table"


# --- the timeline's state machine ------------------------------------------------------------------

def _declared_and_used(mermaid: str) -> tuple[set[str], set[str]]:
    declared = set(re.findall(r'state "[^"]*" as (\w+)', mermaid))
    used = {s for line in mermaid.splitlines() if "-->" in line
            for s in re.findall(r"(\w+|\[\*\])", line.split(":")[0]) if s != "[*]"}
    return declared, used


@pytest.mark.parametrize("version", [6, 8])
def test_state_machine_draws_every_action_of_its_layout(version: int) -> None:
    mermaid = state_machine_mermaid(version)
    declared, used = _declared_and_used(mermaid)
    assert used <= declared
    assert ("clustering_REQUESTED" in declared) == (version == 8)  # v6 clusters as a replacecommit
    assert "[*] --> savepoint_INFLIGHT" in mermaid and "savepoint_REQUESTED" not in declared
    assert "commit_COMPLETED --> commit_INFLIGHT: un-publish" in mermaid
    assert "compaction_INFLIGHT --> compaction_REQUESTED: back to plan" in mermaid
    svg = state_machine_svg(version)
    assert ("T_C.commit" in svg) == (version == 8) and "T.inflight" in svg


def test_a_toy_transition_table_draws_a_different_machine() -> None:
    toy = {Action.COMMIT: {None: State.INFLIGHT, State.INFLIGHT: State.COMPLETED}}
    mermaid = state_machine_mermaid(8, toy, {})
    assert "[*] --> commit_INFLIGHT" in mermaid and "commit_REQUESTED" not in mermaid
    assert "deltacommit" not in mermaid and "un-publish" not in mermaid
    assert mermaid != state_machine_mermaid(8)
    assert state_machine_svg(8, toy, {}) != state_machine_svg(8)
    skip = {Action.CLEAN: {None: State.REQUESTED, State.REQUESTED: State.COMPLETED}}
    assert [m.kind for m in moves(Action.CLEAN, skip, {})] == ["start", "forward"]
    assert "clean_REQUESTED --> clean_COMPLETED" in state_machine_mermaid(6, skip, {})


def test_the_picture_is_of_the_table_the_checks_read(monkeypatch: pytest.MonkeyPatch) -> None:
    before = state_machine_mermaid(6)
    with pytest.raises(IllegalStateTransition):
        check_transition(Action.CLEAN, State.REQUESTED, State.COMPLETED)
    changed = dict(timeline_rules.TRANSITIONS)
    changed[Action.CLEAN] = MappingProxyType({None: State.REQUESTED, State.REQUESTED: State.COMPLETED})
    monkeypatch.setattr(timeline_rules, "TRANSITIONS", MappingProxyType(changed))
    check_transition(Action.CLEAN, State.REQUESTED, State.COMPLETED)  # the check now allows it ...
    after = state_machine_mermaid(6)
    assert "clean_REQUESTED --> clean_COMPLETED" in after and after != before  # ... and the picture shows it
    assert "clean_INFLIGHT" not in after


# --- a file group over time -------------------------------------------------------------------------

def test_file_group_picture_follows_the_table(tmp_path: Path) -> None:
    table = tmp_path / "t"
    shutil.copytree(GOLDEN, table)
    view = FileSystemView.load(Storage(str(table)))
    mermaid = fsview_mermaid(view)
    assert mermaid.count("subgraph") == len(view.groups) == 2
    assert mermaid.count("slice ") == sum(len(g.slices) for g in view.groups) == 3
    assert mermaid.count("<br/>log ") == sum(len(s.log_files) for g in view.groups for s in g.slices) == 3
    svg = fsview_svg(view, Storage(str(table)))
    assert svg.count(">slice 2024") == 3 and "compaction" not in svg  # a completed compaction shows as commit
    for f in (table / "a").glob("00000000-0000-4000-8000-000000000002-0_*.parquet"):
        f.unlink()  # the last write's new file group goes
    smaller = FileSystemView.load(Storage(str(table)))
    assert fsview_mermaid(smaller).count("subgraph") == 1
    assert fsview_svg(smaller, Storage(str(table))) != svg


def test_table_tree_names_every_file_as_the_spec_parses_it(tmp_path: Path) -> None:
    """The home page's tree: every file of the golden table drawn once, each named by the spec's parsers (a
    timeline file by its state, a parquet file as a base file, a log file as a log of its group); a change
    to the table changes the picture."""
    from reference.diagrams.table_tree import table_tree_svg, tree_entries

    table = tmp_path / "t"
    shutil.copytree(GOLDEN, table)
    entries = tree_entries(table, 2)
    files = sorted(p.name for p in table.rglob("*") if p.is_file())
    assert sorted(e.name for e in entries if not e.folder) == files
    kinds = {e.name: e.kind for e in entries}
    data = [p.name for p in table.rglob("*") if p.is_file() and ".hoodie" not in p.relative_to(table).parts]
    assert {kinds[n] for n in data if n.endswith(".parquet")} == {"base"}
    assert {kinds[n] for n in data if ".log." in n} == {"log"}
    assert kinds["hoodie.properties"] == "config" and kinds[".hoodie_partition_metadata"] == "partition"
    notes = {e.name: e.note for e in entries}
    assert notes["20240101000010000.compaction.requested"].startswith(
        "instant 20240101000010000: compaction, requested")
    assert notes["20240101000010000_20240101000012000.commit"].startswith(
        "instant 20240101000010000: commit, completed at 20240101000012000")
    assert "written by 20240101000013000" in notes[next(n for n in files if "_20240101000013000.log." in n)]
    svg = table_tree_svg(table)
    assert all(f">{n}<" in svg for n in files)
    (table / "a" / "00000000-0000-4000-8000-000000000002-0_0-103-119_20240101000013000.parquet").unlink()
    assert table_tree_svg(table) != svg
    assert len(tree_entries(table, 2, max_files=3)) < len(entries)  # a long folder is cut, and says so
    assert any(e.name.startswith("… ") for e in tree_entries(table, 2, max_files=3))


def test_fsview_command_draws_mermaid_and_svg(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fsview", str(GOLDEN), "--output", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart LR\n") and out == fsview_mermaid(FileSystemView.load(Storage(str(GOLDEN))))
    assert main(["fsview", str(GOLDEN), "--output", "mermaid", "--latest"]) == 0
    latest = capsys.readouterr().out
    assert latest.count("slice ") == 2 and "20240101000000000.parquet" not in latest
    assert main(["fsview", str(GOLDEN), "--output", "svg"]) == 0
    svg = capsys.readouterr().out
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "\n\n" not in svg


# --- the log block, byte by byte --------------------------------------------------------------------

def test_block_parts_are_the_encoder_and_the_real_bytes() -> None:
    storage = Storage(str(GOLDEN))
    path = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.glob("*/.*.log.*"))[0]
    data = storage.read(path)
    record = read_log_file(storage, path)[0]
    assert record.block is not None
    parts = block_parts(record.block)
    assert [f for f, _ in parts] == list(BLOCK_FIELDS)
    assert b"".join(d for _, d in parts) == encode_block(record.block) == data[:record.length]
    svg = block_layout_svg(record.block)
    offsets, pos = [], 0
    for _, d in parts:
        offsets.append(pos)
        pos += len(d)
    for offset in offsets[4:]:  # where the variable fields move the fixed ones to, as drawn
        assert f">{offset:,}</text>" in svg


def test_log_block_picture_changes_with_the_block() -> None:
    small = LogBlock(BlockType.COMMAND_BLOCK, ((0, "20240101000000000"), (1, "20231231000000000"), (3, "0")))
    big = LogBlock(BlockType.AVRO_DATA_BLOCK, ((0, "20240101000000000"),), b"x" * 1000)
    for block in (small, big):
        assert next(read_blocks(encode_block(block))).block == block
    a, b = block_layout_svg(small), block_layout_svg(big)
    assert "COMMAND_" in a and "AVRO_" in b and f">{len(encode_block(big)):,}</text>" in b and a != b


# --- bucket assignment ------------------------------------------------------------------------------

def test_bucket_picture_shows_the_partitioners_output() -> None:
    ex = WorkedExample()
    a = ex.assign()
    svg = buckets_svg(ex)
    for w in a.insert_buckets[ex.partition]:
        assert f">{w.weight:.5f}</text>" in svg and f">bucket {w.bucket}</text>" in svg
    assert "trip-42: r = 0.966736 → bucket 4" in svg and "an update of f1 → bucket 0" in svg
    fewer = WorkedExample(counts=(("f1", 1000), (None, 50_000)))
    assert len(fewer.assign().buckets) == 2  # the inserts fit in f2
    other = buckets_svg(fewer)
    assert ">bucket 3</text>" not in other and ">1.00000</text>" in other and other != svg
    assert WorkloadProfile.from_counts({(ex.partition, "f1"): 1000, (ex.partition, None): 250_000}).partitions[
        ex.partition] == PartitionProfile(250_000, {"f1": 1000})


# --- the bench charts -------------------------------------------------------------------------------

def test_bench_json_beside_the_page_holds_the_pages_numbers() -> None:
    page = (ROOT / "docs" / "performance.md").read_text()
    data = json.loads((ROOT / "docs" / "performance.json").read_text())
    from_page = results_from_page(page)
    assert from_page, "the page shows no results"
    keys = ("job", "n", "seconds", "warm_seconds", "peak_rss_mb")

    def shown(value: float | None, digits: int) -> float | None:  # as the page's table shows it (bench.report.row)
        return None if value is None else float(f"{value:.{digits}f}")

    digits = {"seconds": 2, "warm_seconds": 2, "peak_rss_mb": 1}
    from_json = [{k: shown(r[k], digits[k]) if k in digits else r[k] for k in keys} for r in data["results"]]
    assert from_json == [{k: r[k] for k in keys} for r in from_page]


def test_bench_chart_has_a_bar_per_number_and_says_why_otherwise() -> None:
    results = [{"job": "a", "engine": "x", "n": 10, "status": "ok", "seconds": 2.0, "peak_rss_mb": 100.0},
               {"job": "a", "engine": "x", "n": 20, "status": "ok", "seconds": 30.0, "peak_rss_mb": 300.0},
               {"job": "b", "engine": "y", "n": 10, "status": "skipped", "seconds": None, "peak_rss_mb": None}]
    svg = chart_svg(results, "seconds")
    assert svg.count("<title>a, ") == 2 and ">skipped</text>" in svg and ">not run</text>" in svg
    assert ">30</text>" in svg and ">2</text>" in svg
    results[1]["seconds"] = 3.0
    assert chart_svg(results, "seconds") != svg


# --- the site ---------------------------------------------------------------------------------------

def _pictures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hudi_spec_docs_pictures", ROOT / "docs" / "pictures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_picture_marker_of_the_site_becomes_an_inline_svg() -> None:
    pictures = _pictures()
    found = 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text()
        markers = pictures.MARKER.findall(text)
        found += len(markers)
        rendered = pictures.on_page_markdown(text, None, None, None)
        assert "hudi-spec:picture" not in rendered
        figures = re.findall(r'<figure class="hudi-picture">\n(.*?)\n<figcaption>', rendered, re.S)
        assert len(figures) == len(markers), page
        for svg in figures:
            assert svg.startswith("<svg") and svg.endswith("</svg>") and "\n\n" not in svg  # one HTML block
    assert found >= 9  # two state machines, file groups (twice), the table tree, log block, buckets, bench charts


def test_the_bench_writes_the_charts_json_beside_the_page(tmp_path: Path) -> None:
    from bench.__main__ import main as bench_main
    from bench.charts import charts_from_json
    from bench.report import BEGIN_MARK, END_MARK, page_json_path

    page = tmp_path / "performance.md"
    page.write_text(f"# Performance\n\n{BEGIN_MARK}\n{END_MARK}\n")
    assert bench_main(["--rows", "2000", "--only", "pyarrow_dataset_write", "--out", str(tmp_path / "r.json"),
                       "--docs", str(page)]) == 0
    beside = page_json_path(page)
    assert beside == tmp_path / "performance.json"
    data = json.loads(beside.read_text())
    assert [r["job"] for r in data["results"]] == ["pyarrow_dataset_write"]
    charts = charts_from_json(beside)
    assert "<title>pyarrow_dataset_write, 2,000 rows: " in charts["seconds"]
    assert [(r["job"], r["seconds"]) for r in results_from_page(page.read_text())] == [
        ("pyarrow_dataset_write", round(data["results"][0]["seconds"], 2))]

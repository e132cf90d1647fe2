"""Apache Hudi's technical specification page, point by point (``docs/spec/hudi-tech-spec.md``).

The page has one row per statement of Hudi's page: every row names spec modules, pages of this site and tests that
exist, every section of Hudi's page (both version 9 revisions) has a row, and no row is left uncovered. The rows this
file itself checks are decided here, on the real version 9 tables where they can be."""

from __future__ import annotations

import ast
import re
import struct
from functools import cache
from pathlib import Path

import pytest

from spec.config.registry import resolve_settings
from spec.errors import InvalidConfig, InvalidOperation
from spec.file_group.log_file.log_format import (
    BLOCK_FIELDS,
    HEADER_KEY_SINCE_TABLE_VERSION,
    LOG_FORMAT_FEATURES,
    LOG_FORMAT_VERSION,
    BlockType,
    HeaderKey,
    LogBlock,
    encode_block,
    read_blocks,
)
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieCompactionPlan, HoodieIndexPlan, parse_avro_metadata
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action, State
from spec.timeline.layout import parse_instant_file_name
from tests.conftest import RealTable

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "spec" / "hudi-tech-spec.md"

HUDI_SECTIONS = (
    "Overview", "Storage Layout", "Timeline", "Time", "Actions", "States", "LSM Timeline", "Table Types",
    "Data Files", "Base Files", "Types", "Log Files", "Log Format", "Versioning", "Headers", "Block types",
    "Command Block (Id: 0)", "Delete Block (Id: 1)", "Corrupted Block (Id: 2)", "Avro Block (Id: 3)",
    "HFile Block (Id: 4)", "Parquet Block (Id: 5)", "CDC Block (Id: 6)", "Table Properties", "Metadata",
    "File Listings", "Column Statistics", "Partition Statistics", "Meta Fields", "Indexes", "Naming",
    "Index Definitions", "Index Versions", "Table Upgrade and Downgrade", "Bloom Filter Index", "Record Index",
    "Secondary Index", "Limitations", "Expression Indexes", "Relational Model", "Writer Expectations",
    "Table Service/Writer Concurrency", "Concurrent readers", "Reader Expectations", "Incremental Streaming Model",
    "Non-blocking Concurrency Control", "Table Management", "Compaction", "Log Compaction", "Re-writing",
    "Cleaning", "Indexing", "Compatibility", "Change Log", "version 9", "version 8", "version 6 & earlier", "APIs",
    "RecordMerger API", "Indexing Functions", "Appendix", "Lock Provider Implementations",
    "Balancing write and read performance", "Optimistic concurrency efficiency",
    "Marker mechanism to remove uncommitted data",
)
"""The headings of Apache Hudi's version 9 specification page, both revisions, in its order (``version 9`` is
its ``version 9 — current (Hudi 1.1.0 → 1.2.0)``, ``version 8`` its ``version 8 (Hudi 1.0)``)."""

VERDICTS = ("agrees", "page wrong", "page incomplete", "refused", "open")


@cache
def _rows() -> list[tuple[str, list[str]]]:
    """(the section heading above it, its cells) of every row of the page's tables."""
    out, heading = [], ""
    for line in PAGE.read_text().splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("| ") and not line.startswith(("| # ", "|---")):
            out.append((heading, [c.strip() for c in line.strip().strip("|").split(" | ")]))
    return out


@cache
def _test_names(path: Path) -> frozenset[str]:
    return frozenset(n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef))


def test_the_page_has_a_row_for_every_section_of_hudis_page() -> None:
    headings = [line.lstrip("#").strip() for line in PAGE.read_text().splitlines() if line.startswith("## ")
                or line.startswith("### ")]
    assert [h for h in headings if h in HUDI_SECTIONS] == [h for h in HUDI_SECTIONS if h in headings]  # in order
    assert set(HUDI_SECTIONS) <= set(headings), set(HUDI_SECTIONS) - set(headings)
    with_rows = {heading for heading, _ in _rows()}
    for section in HUDI_SECTIONS:
        nested = headings[headings.index(section) + 1] if headings.index(section) + 1 < len(headings) else ""
        assert section in with_rows or nested in HUDI_SECTIONS, f"no row for Hudi's section {section!r}"
    assert "not covered" not in PAGE.read_text().lower()


def test_every_row_names_modules_pages_and_tests_that_exist() -> None:
    rows = _rows()
    assert len(rows) >= 90
    numbers = [cells[0] for _, cells in rows]
    assert len(numbers) == len(set(numbers)), "row numbers repeat"
    for heading, cells in rows:
        assert len(cells) == 5, (heading, cells)
        number, statement, verdict, stated, checked = cells
        assert statement and any(verdict.startswith(v) for v in VERDICTS), (number, verdict)
        if verdict.startswith("open"):
            assert "running Apache Hudi" in verdict, f"{number}: say what running Apache Hudi would settle"
        modules = re.findall(r"`(spec/[\w/]+\.py)`", stated)
        pages = re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]+)?\)", stated)
        assert modules and pages, f"{number}: name the spec module and the page that states it"
        for module in modules:
            assert (ROOT / module).is_file(), f"{number}: {module} does not exist"
        for page in pages:
            assert (PAGE.parent / page).resolve().is_file(), f"{number}: {page} does not exist"
        tests = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", checked)
        assert tests, f"{number}: name the test that checks it"
        for path, name in tests:
            assert name in _test_names(ROOT / path), f"{number}: {path}::{name} does not exist"


def test_no_row_is_left_open() -> None:
    """Every row Hudi's page and code left open was settled by running Apache Hudi 1.2.0
    (``tests/test_hudi_tech_spec_measured.py``): 8.4 index versions, 8.9 the partitioned record index, 11.7
    ``lastCompletedCommitTimestamp``."""
    assert [cells[0] for _, cells in _rows() if cells[2].startswith("open")] == []


def test_every_page_a_row_links_shows_the_module_it_names() -> None:
    """A row's page includes its module's code (a snippet or its sources note), so the link opens code that runs."""
    for _, cells in _rows():
        stated = cells[3]
        modules = re.findall(r"`(spec/[\w/]+\.py)`", stated)
        pages = {(PAGE.parent / p).resolve() for p in re.findall(r"\]\(([\w./-]+\.md)", stated)}
        shown = "".join(p.read_text() for p in pages)
        for module in modules:
            assert module in shown, f"{cells[0]}: no page linked shows {module}"


# --- rows decided here ------------------------------------------------------------------------------


def _timeline_names(table: RealTable, metadata: bool = False) -> list[str]:
    folder = table.path / ".hoodie" / ("metadata/.hoodie/timeline" if metadata else "timeline")
    return sorted(p.name for p in folder.iterdir() if p.is_file())


def test_compaction_and_clustering_complete_as_hudi_names_them(real_tables_v9: list[RealTable]) -> None:
    """Rows 3.4 and 3.5: on the real version 9 tables a compaction (of a metadata table) is requested as
    ``compaction`` with a ``HoodieCompactionPlan`` and completes as a ``commit`` holding commit metadata; a
    clustering is requested and inflight as ``clustering`` and completes as a ``replacecommit``; an inflight commit
    is ``<time>.inflight``."""
    compactions = clusterings = inflight_commits = 0
    for table in real_tables_v9:
        for metadata in (False, True):
            if metadata and not (table.path / ".hoodie" / "metadata").is_dir():
                continue
            names = _timeline_names(table, metadata)
            folder = table.path / ".hoodie" / ("metadata/.hoodie/timeline" if metadata else "timeline")
            timeline = Timeline.from_file_names(names, 2)
            for name in names:
                if name == "history":
                    continue
                inst = parse_instant_file_name(name, 2)
                if inst.action == Action.COMPACTION and inst.state == State.REQUESTED:
                    parse_avro_metadata((folder / name).read_bytes(), HoodieCompactionPlan)
                    (done,) = [n for n in names if n.startswith(inst.requested + "_")]
                    assert done.endswith(".commit") and timeline.origin_action(inst.requested) == Action.COMPACTION
                    assert parse_commit_metadata((folder / done).read_bytes()).operation_type == "COMPACT"
                    compactions += 1
                elif inst.action == Action.CLUSTERING and inst.state == State.REQUESTED:
                    assert f"{inst.requested}.clustering.inflight" in names
                    (done,) = [n for n in names if n.startswith(inst.requested + "_")]
                    assert done.endswith(".replacecommit")
                    assert parse_commit_metadata((folder / done).read_bytes()).operation_type == "CLUSTER"
                    clusterings += 1
                elif name.endswith(".inflight") and inst.action == Action.COMMIT:
                    assert name == f"{inst.requested}.inflight"
                    inflight_commits += 1
    assert compactions and clusterings and inflight_commits


def test_the_indexing_plan_names_index_upto_instant(real_tables_v9: list[RealTable]) -> None:
    """Row 11.9: each real indexing plan's partition infos name the partition built and the instant it is indexed
    up to (``indexUptoInstant``, an instant of the table's timeline); the schema has no ``baseInstantTime``."""
    plans = 0
    for table in real_tables_v9:
        folder = table.path / ".hoodie" / "timeline"
        for requested in sorted(folder.glob("*.indexing.requested")):
            plan = parse_avro_metadata(requested.read_bytes(), HoodieIndexPlan)
            (info,) = plan.index_partition_infos or ()
            assert info.metadata_partition_path and info.metadata_partition_path.startswith("secondary_index_")
            assert info.index_upto_instant and any(n.startswith(info.index_upto_instant) for n in _timeline_names(
                table))
            assert not hasattr(info, "base_instant_time")
            plans += 1
    assert plans


def test_log_format_versions() -> None:
    """Rows 5.8 to 5.10 and 13.3: version 1's features are the fields a block has; a version 0 block is a corrupt
    region; header keys 0 to 8 and block types 0 to 6 by number; keys 7 and 8 exist from table version 8 on."""
    fields = {f.name for f in BLOCK_FIELDS}
    assert LOG_FORMAT_VERSION == 1 and {"header", "footer", "block size", "content length"} <= fields
    assert LOG_FORMAT_FEATURES[1] - LOG_FORMAT_FEATURES[0] == {"header", "footer", "block length"}
    block = encode_block(LogBlock(BlockType.COMMAND_BLOCK, ((0, "1"), (1, "0"), (3, "0"))))
    (ok,) = read_blocks(block)
    assert ok.block is not None
    legacy = block[:14] + struct.pack(">i", 0) + block[18:]
    (bad,) = read_blocks(legacy)
    assert bad.is_corrupt and bad.block is None
    assert [k.name for k in sorted(HeaderKey)] == [
        "INSTANT_TIME", "TARGET_INSTANT_TIME", "SCHEMA", "COMMAND_BLOCK_TYPE", "COMPACTED_BLOCK_TIMES",
        "RECORD_POSITIONS", "BLOCK_IDENTIFIER", "IS_PARTIAL", "BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS"]
    assert [int(k) for k in sorted(HeaderKey)] == list(range(9))
    assert [t.name for t in sorted(BlockType)] == ["COMMAND_BLOCK", "DELETE_BLOCK", "CORRUPT_BLOCK",
                                                   "AVRO_DATA_BLOCK", "HFILE_DATA_BLOCK", "PARQUET_DATA_BLOCK",
                                                   "CDC_DATA_BLOCK"]
    assert {k for k, v in HEADER_KEY_SINCE_TABLE_VERSION.items() if v == 8} == {
        HeaderKey.IS_PARTIAL, HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS}


def test_cdc_queries_and_non_blocking_concurrency_are_refused(real_tables_v9: list[RealTable]) -> None:
    """Row 10.2 (and 4.3: the CDC query is a format of the incremental query, ``spec.read.cdc``, not a query type of
    its own): non-blocking concurrency control is not a concurrency mode the writer takes."""
    with pytest.raises(InvalidOperation, match="unknown query type"):
        read_table(str(real_tables_v9[0].path), "cdc")
    with pytest.raises(InvalidConfig, match=r"hoodie\.write\.concurrency\.mode"):
        resolve_settings({"hoodie.write.concurrency.mode": "NON_BLOCKING_CONCURRENCY_CONTROL"})

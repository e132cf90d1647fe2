"""The code of the Python API page runs as written: every ```python block of docs/guide/python-api.md
is executed, in page order and in one namespace, on a small merge-on-read table at ``warehouse/trips``
(the one the page describes). The blocks that need no Spark run without it; the whole page runs with it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.sample_tables import build_table

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "guide" / "python-api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    """The fenced python code blocks of a Markdown page, in order."""
    return BLOCK.findall(text)


def _needs_spark(block: str) -> bool:
    return "spark" in block.lower() or "HudiTable(" in block


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The page's table: ``warehouse/trips`` below the current folder, commits 20250101080000000 and
    20250101090000000, a base file and a log file in ``city=san_francisco``."""
    table = build_table(tmp_path / "warehouse" / "trips", 6)
    monkeypatch.chdir(tmp_path)
    return table


def _run(blocks: list[str]) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "python_api_page"}
    for n, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{PAGE.name} block {n}", "exec"), namespace)
        except Exception as err:  # name the block that failed, with its code
            raise AssertionError(f"block {n} of {PAGE.name} failed: {err!r}\n{block}") from err
    return namespace


def test_the_page_has_code_and_every_block_is_run_by_a_test() -> None:
    blocks = python_blocks(PAGE.read_text())
    assert len(blocks) >= 4
    assert any(not _needs_spark(b) for b in blocks) and any(_needs_spark(b) for b in blocks)


def test_the_blocks_without_spark_run(warehouse: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ns = _run([b for b in python_blocks(PAGE.read_text()) if not _needs_spark(b)])
    assert isinstance(ns["rows"], pa.Table) and ns["rows"].column_names == ["uuid", "fare"]
    assert ns["rows"].num_rows == 3  # the partition's snapshot: four trips, one deleted
    assert capsys.readouterr().out.split() == ["3"]  # iter_table: one file slice of three rows
    assert ns["config"].record_key_fields == ("uuid",)
    assert [i.requested for i in ns["timeline"].completed().instants] == ["20250101080000000", "20250101090000000"]
    assert ns["log"].path.startswith("city=san_francisco/.") and ns["record"].block is not None


@pytest.mark.spark
def test_the_whole_page_runs_with_spark(warehouse: Path, spark: Any) -> None:
    ns = _run(python_blocks(PAGE.read_text()))
    assert (ns["result"].action, ns["result"].operation) == ("deltacommit", "upsert")
    assert sorted(ns["df"].columns)[:2] == ["_hoodie_commit_seqno", "_hoodie_commit_time"]
    assert ns["df"].count() == 2  # the upsert's two trips, after the first commit

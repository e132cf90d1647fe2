"""Compaction after archival keeps every committed update (issue: "Nothing lost, ever").

A merge-on-read table takes one insert and then 50 deltacommits, each updating one key, with Hudi's
default settings: automatic archival, ``hoodie.keep.min.commits`` 20 and ``hoodie.keep.max.commits``
30, no inline compaction. Archival then moves the oldest deltacommits off the active timeline while
their log files are still the only holders of their updates. A compaction must take those log files
(their deltacommits completed, as the archived timeline records) and write every update into the new
base files: the spec reader, hudi-rs and the spec model read the same rows before and after it.

Table versions 8 and 9 decide it from completion times (``CompletionTimeQueryViewV2`` consults the
archived timeline); version 6 takes every log file of the slice and is checked alike.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.interface.ops import CreateTable
from reference.executors.compaction import compact
from reference.write.client import WriteClient
from spec.actions.archive import archived_instants
from spec.config.table_config import TableConfig
from spec.model import Env, TableModel
from spec.model.operations import Compact, Write
from spec.model.queries import snapshot
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action
from tests.hudi_rs import hudi_rs_read

UPDATES = 50


def options(version: int) -> dict[str, str]:
    return {"hoodie.table.name": "arch", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.write.table.version": str(version)}


def batches() -> list[list[dict[str, Any]]]:
    first = [{"id": f"k{i:02d}", "ts": 0, "city": "sf", "v": -1} for i in range(UPDATES)]
    return [first, *([{"id": f"k{i:02d}", "ts": 1, "city": "sf", "v": i}] for i in range(UPDATES))]


def rows(table: pa.Table | None) -> list[tuple[Any, ...]]:
    return [] if table is None else sorted((r["id"], r["v"]) for r in table.select(["id", "v"]).to_pylist())


def model_rows(version: int, compacted: bool) -> list[tuple[Any, ...]]:
    """The spec model's snapshot after the same writes (its archival is Hudi's default, automatic)."""
    times = (f"20240101{i:06d}000" for i in itertools.count(1))
    ids = itertools.count(1)
    model = TableModel(CreateTable(table_type="MERGE_ON_READ", table_version=version, partition_fields=("city",),
                                   auto_archive=True),
                       Env(lambda: next(times), lambda: f"00000000-0000-4000-8000-{next(ids):012d}"))
    for batch in batches():
        model.apply(Write("upsert", tuple(batch)))
    assert model.state.archived, "the model archived nothing: the case does not exercise archival"
    if compacted:
        model.apply(Compact())
    return sorted((r["id"], r["v"]) for r in snapshot(model.state))


@pytest.mark.parametrize("version", [6, 8, 9])
def test_compaction_after_archival_keeps_every_update(tmp_path: Path, version: int) -> None:
    path = str(tmp_path / "t")
    client = WriteClient(path, engine="local")
    for batch in batches():
        client.write(pa.Table.from_pylist(batch), "upsert", options(version))
    storage = Storage(path)
    table = TableConfig.load(storage)
    archived = [a for a in archived_instants(storage, table) if a.action == Action.DELTA_COMMIT]
    assert archived, "archival moved no deltacommit off the active timeline"
    expected = sorted((f"k{i:02d}", i) for i in range(UPDATES))
    assert rows(read_table(path)) == expected
    assert rows(hudi_rs_read(path)) == expected
    assert model_rows(version, compacted=False) == expected

    assert compact(client) is not None
    timeline = Timeline.load(storage, table.timeline_layout)
    assert [i for i in timeline.instants if i.action == Action.COMMIT and i.is_completed]
    assert rows(read_table(path)) == expected, "the compaction reverted updates of archived deltacommits"
    assert rows(hudi_rs_read(path)) == expected
    assert model_rows(version, compacted=True) == expected

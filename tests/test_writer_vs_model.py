"""The reference writer in lockstep with the spec model: the written layout is the predicted one.

The writer writes; the model is told what the writer chose where the spec lets a writer choose
(the instant time) and what it observed (base file sizes); file ids come from the same injected
sequence. Then, per partition, the file groups, their slices and the keys each group holds must be
the ones the model predicts — so inserts went to the same small files and the same new buckets.
"""

from __future__ import annotations

import itertools
from collections import deque
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.interface.ops import CreateTable
from reference.api import HudiTable
from spec.file_group.file_naming import parse_base_file_name
from spec.file_group.file_system_view import FileSystemView
from spec.model import Env, TableModel
from spec.model.operations import Write
from spec.model.queries import layout, snapshot
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage

pytestmark = pytest.mark.spark


def _prefixes() -> Any:
    ids = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(ids):012d}"


def _disk_layout(path: Path) -> dict[str, list[tuple[str, list[str], list[str]]]]:
    from spec.read.reader import TableReader

    reader = TableReader(str(path))
    out: dict[str, list[tuple[str, list[str], list[str]]]] = {}
    view = FileSystemView.load(Storage(str(path)))
    for g in view.groups:
        sl = g.latest_slice
        assert sl is not None
        keys = sorted(reader.read_slice(sl).column("_hoodie_record_key").to_pylist())
        out.setdefault(g.partition_path, []).append((g.file_id, [s.base_instant for s in g.slices], keys))
    return {p: sorted(v) for p, v in out.items()}


def _model_layout(model: TableModel) -> dict[str, list[tuple[str, list[str], list[str]]]]:
    return {p: sorted((g.file_id, [s.base_instant for s in g.slices], sorted(g.keys)) for g in groups)
            for p, groups in layout(model.state).items()}


@pytest.mark.parametrize("max_file_size", [125829120, 2048])
def test_layout_equals_the_models_prediction(spark: Any, tmp_path: Path, max_file_size: int) -> None:
    path = tmp_path / "t"
    config = CreateTable(table_version=6, partition_fields=("city",), hive_style=True, max_file_size=max_file_size,
                         record_size_estimate=100)
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.hive_style_partitioning": "true",
               "hoodie.parquet.max.file.size": str(max_file_size), "hoodie.copyonwrite.record.size.estimate": "100",
               "hoodie.write.table.version": "6"}  # the instants below are the writer's requested times (layout 1)
    instants: deque[str] = deque()
    sizes: dict[tuple[str, str, str], int] = {}
    env = Env(lambda: instants.popleft(), _prefixes(), lambda p, f, t, n: sizes.get((p, f, t)))
    model = TableModel(config, env)
    table = HudiTable(str(path), spark, file_id_prefix=_prefixes())
    batches = [
        [{"id": i, "ts": 1, "city": "sf" if i % 3 else "la", "v": f"a{i}"} for i in range(45)],
        [{"id": i, "ts": 2, "city": "sf" if i % 3 else "la", "v": f"b{i}"} for i in range(30, 90)],
        [{"id": i, "ts": 3, "city": "ny", "v": f"c{i}"} for i in range(200, 230)],
    ]
    for batch in batches:
        result = table.write(pa.Table.from_pylist(batch), "upsert", options)
        instants.append(result.instant)
        for stat in result.metadata.all_write_stats():
            name = stat.path.rsplit("/", 1)[-1]
            sizes[(stat.partition_path, stat.file_id, parse_base_file_name(name).instant)] = stat.file_size
        model.apply(Write("upsert", tuple(batch)))
        assert _disk_layout(path) == _model_layout(model)
        predicted = sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"], r["v"]) for r in snapshot(model.state))
        written = sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"], r["v"])
                         for r in read_table(str(path)).to_pylist())
        assert written == predicted
    groups = sum(len(v) for v in _disk_layout(path).values())
    assert groups >= (6 if max_file_size == 2048 else 3)  # small files split inserts into several groups


LAYOUT_OPTIONS = {
    "partitioned": ({"hoodie.datasource.write.recordkey.field": "id",
                     "hoodie.datasource.write.partitionpath.field": "city",
                     "hoodie.datasource.write.hive_style_partitioning": "true"},
                    {"partition_fields": ("city",), "hive_style": True}),
    "non_partitioned": ({"hoodie.datasource.write.recordkey.field": "id"}, {}),
    "complex_key": ({"hoodie.datasource.write.recordkey.field": "id,name",
                     "hoodie.datasource.write.partitionpath.field": "city,zone"},
                    {"record_key_fields": ("id", "name"), "partition_fields": ("city", "zone")}),
}


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("layout_name", list(LAYOUT_OPTIONS))
def test_every_operation_rows_equal_the_models_and_hudi_rs(spark: Any, tmp_path: Path, version: int,
                                                           layout_name: str) -> None:
    from spec.timeline.active_timeline import Timeline
    from tests.hudi_rs import hudi_rs_read

    writer_options, model_fields = LAYOUT_OPTIONS[layout_name]
    path = tmp_path / "t"
    config = CreateTable(table_version=version, **model_fields)  # type: ignore[arg-type]
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.write.table.version": str(version), **writer_options}
    instants: deque[str] = deque()
    sizes: dict[tuple[str, str, str], int] = {}
    model = TableModel(config, Env(lambda: instants.popleft(), _prefixes(), lambda p, f, t, n: sizes.get((p, f, t))))
    table = HudiTable(str(path), spark, file_id_prefix=_prefixes())

    def rec(i: int, ts: int, city: str = "sf") -> dict[str, Any]:
        return {"id": i, "name": f"n{i}", "ts": ts, "city": city, "zone": "z1", "v": f"v{i}@{ts}"}

    steps = [("insert", [rec(1, 1), rec(2, 1), rec(3, 1, "la")]),
             ("upsert", [rec(1, 5), rec(2, 0), rec(4, 1, "la")]),
             ("delete", [rec(3, 9, "la")]),
             ("bulk_insert", [rec(5, 1, "ny")]),
             ("insert_overwrite", [rec(6, 1)]),
             ("insert_overwrite_table", [rec(7, 1), rec(8, 1, "la")])]
    for op, batch in steps:
        result = table.write(pa.Table.from_pylist(batch), op, options)
        inst = Timeline.load(str(path)).get(result.instant)
        assert inst is not None
        instants.extend([inst.requested] + ([inst.completed] if version == 8 and inst.completed else []))
        for stat in result.metadata.all_write_stats():
            name = stat.path.rsplit("/", 1)[-1]
            sizes[(stat.partition_path, stat.file_id, parse_base_file_name(name).instant)] = stat.file_size
        model.apply(Write(op, tuple(batch)))
        predicted = sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"])
                           for r in snapshot(model.state))
        ours = sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"])
                      for r in read_table(str(path)).to_pylist())
        theirs_table = hudi_rs_read(str(path))
        theirs = sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"])
                        for r in (theirs_table.to_pylist() if theirs_table is not None else []))
        assert ours == predicted, op
        assert theirs == predicted, op

"""Streaming writes: one commit per checkpoint, buckets by ``spec.write.stream_buckets``, as the spec model predicts."""

from __future__ import annotations

import itertools
import json
from collections import deque
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.interface.ops import CreateTable
from reference.write.streaming import CHECKPOINT_KEY, StreamingWriter, start_stream
from spec.config.table_config import TableConfig
from spec.file_group.file_naming import is_base_file_name, parse_base_file_name
from spec.model import Env, TableModel
from spec.model.operations import Stream, StreamRecord
from spec.model.queries import snapshot
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import read_instant_content
from tests.hudi_rs import check_hudi_rs_snapshot, hudi_rs_read, log_only_file_groups
from tests.test_mor_writer import _disk_layout, _model_layout

pytestmark = pytest.mark.spark


def _prefixes() -> Any:
    ids = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(ids):012d}"


def _options(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "s", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.write.table.version": str(version)}


def rec(key: str, ts: int, deleted: bool = False) -> dict[str, Any]:
    return {"id": key, "ts": ts, "city": "sf", "v": f"{key}@{ts}", "_hoodie_is_deleted": deleted}


class StreamLockstep:
    def __init__(self, spark: Any, path: Path, table_type: str, version: int) -> None:
        self.path, self.version = path, version
        self.instants: deque[str] = deque()
        self.sizes: dict[tuple[str, str, str], int] = {}
        self.model = TableModel(CreateTable(table_type=table_type, table_version=version, partition_fields=("city",),
                                            hive_style=True),
                                Env(lambda: self.instants.popleft(), _prefixes(),
                                    lambda p, f, t, n: self.sizes.get((p, f, t))))
        self.writer = StreamingWriter(str(path), _options(table_type, version), spark, file_id_prefix=_prefixes())

    def checkpoints(self, batches: list[list[dict[str, Any]]], first_batch_id: int = 0) -> list[str]:
        done = []
        for i, batch in enumerate(batches):
            result = self.writer.write_checkpoint(pa.Table.from_pylist(batch), first_batch_id + i)
            assert result is not None
            inst = Timeline.load(str(self.path)).get(result.instant)
            assert inst is not None
            self.instants.extend([inst.requested] + ([inst.completed] if self.version == 8 and inst.completed else []))
            for stat in result.metadata.all_write_stats():
                name = stat.path.rsplit("/", 1)[-1]
                if is_base_file_name(name):
                    self.sizes[(stat.partition_path, stat.file_id, parse_base_file_name(name).instant)] = stat.file_size
            done.append(result.instant)
        self.model.apply(Stream(tuple(tuple(StreamRecord("upsert", r) for r in b) for b in batches)))
        return done

    def check(self) -> None:
        assert _disk_layout(self.path) == _model_layout(self.model)

        def rows(table: Any) -> list[tuple[Any, ...]]:
            return sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"], r["v"]) for r in table)

        model_rows = snapshot(self.model.state)
        predicted = rows(model_rows)
        assert rows(read_table(str(self.path)).to_pylist()) == predicted
        check_hudi_rs_snapshot(str(self.path), model_rows,
                               lambda r: (r["_hoodie_record_key"], r["_hoodie_commit_time"], r["v"]))


@pytest.mark.parametrize(("table_type", "version"), [("MERGE_ON_READ", 6), ("MERGE_ON_READ", 8), ("COPY_ON_WRITE", 6)])
def test_insert_bucket_of_checkpoint_one_is_appended_to(spark: Any, tmp_path: Path, table_type: str,
                                                        version: int) -> None:
    """Seed 000's I, U | U, U: a key inserted and updated in checkpoint 1, updated twice in checkpoint 2,
    plus a new key in checkpoint 2 — one file group throughout."""
    t = StreamLockstep(spark, tmp_path / "s", table_type, version)
    t.checkpoints([[rec("a", 1), rec("a", 2)], [rec("a", 3), rec("a", 4), rec("b", 1)]])
    t.check()
    groups = _disk_layout(t.path)["city=sf"]
    assert len(groups) == 1
    _, slices, keys = groups[0]
    assert keys == ["a", "b"]
    if table_type == "MERGE_ON_READ":
        # a log-only group: one slice, two log files (v6: both named by the first checkpoint, versions 1, 2;
        # v8: each named by its own deltacommit, version 1)
        ((_, has_base, versions),) = slices
        assert not has_base and versions == ((1, 2) if version == 6 else (1, 1))
    else:
        assert len(slices) == 2 and all(has_base for _, has_base, _ in slices)


def test_deletes_and_replayed_batches(spark: Any, tmp_path: Path) -> None:
    t = StreamLockstep(spark, tmp_path / "s", "MERGE_ON_READ", 6)
    t.checkpoints([[rec("a", 1), rec("b", 1), rec("c", 1)], [rec("b", 2, deleted=True), rec("z", 1, deleted=True)]])
    t.check()
    assert sorted(r["id"] for r in read_table(str(t.path)).to_pylist()) == ["a", "c"]
    # the last commit records its micro-batch; replaying batch 1 writes nothing
    last = Timeline.load(str(t.path)).commits_timeline().latest_completed()
    assert last is not None
    md = parse_commit_metadata(read_instant_content(Storage(str(t.path)), last, 1))
    assert json.loads(md.extra_metadata[CHECKPOINT_KEY]) == {"default_single_writer": "1"}
    before = len(Timeline.load(str(t.path)).instants)
    assert t.writer.write_checkpoint(pa.Table.from_pylist([rec("q", 1)]), 1) is None
    assert len(Timeline.load(str(t.path)).instants) == before


def test_structured_streaming_foreach_batch(spark: Any, tmp_path: Path) -> None:
    """A real Spark stream (files arriving in a folder) written with foreachBatch: one commit per micro-batch."""
    source = tmp_path / "in"
    source.mkdir()
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("city", pa.string()), ("v", pa.string())])
    table_path = str(tmp_path / "t")
    batches = [[("a", 1, "sf", "a1"), ("b", 1, "la", "b1")], [("a", 2, "sf", "a2"), ("c", 1, "sf", "c1")]]
    for i, batch in enumerate(batches):
        pq.write_table(pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in batch], schema),
                       source / f"part-{i}.parquet")
    stream = spark.readStream.schema("id string, ts long, city string, v string").option(
        "maxFilesPerTrigger", 1).parquet(str(source))
    query = start_stream(stream, table_path, _options("MERGE_ON_READ", 8), str(tmp_path / "ckpt"),
                         trigger={"availableNow": True})
    query.awaitTermination(120)
    assert query.exception() is None
    commits = Timeline.load(table_path).commits_timeline().completed().instants
    assert len(commits) == 2
    ours = read_table(table_path).to_pylist()
    assert sorted((r["id"], r["v"]) for r in ours) == [("a", "a2"), ("b", "b1"), ("c", "c1")]
    # a new version 8 table gets the metadata table by default, as in Hudi 1.x; every file group here has log
    # files only, which hudi-rs does not list through it (check_hudi_rs_snapshot names that departure)
    assert TableConfig.load(Storage(table_path)).metadata_partitions == ("files",)
    assert log_only_file_groups(table_path) and hudi_rs_read(table_path) is None
    check_hudi_rs_snapshot(table_path, ours, lambda r: (r["id"], r["v"]))


def test_a_refused_first_checkpoint_leaves_no_table(spark: Any, tmp_path: Path) -> None:
    """The first checkpoint creates the table inside its commit: refused (a record without a key), it
    leaves no folder behind, and a corrected checkpoint then creates the table."""
    from spec.errors import InvalidRecord

    path = tmp_path / "s"
    writer = StreamingWriter(str(path), _options("MERGE_ON_READ", 8), spark, file_id_prefix=_prefixes())
    with pytest.raises(InvalidRecord):
        writer.write_checkpoint(pa.Table.from_pylist([rec("a", 1), {**rec("b", 1), "id": None}]), 0)
    assert not path.exists()
    assert writer.write_checkpoint(pa.Table.from_pylist([rec("a", 1)]), 0) is not None
    assert [r["id"] for r in read_table(str(path)).to_pylist()] == ["a"]

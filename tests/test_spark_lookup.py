"""The Spark engine's index lookup runs in its tasks: no key of the batch or of the table reaches the driver.

Hudi's driver holds the workload profile's counts and the partitions' file listings, not records or
keys (``HoodieBloomIndex`` looks keys up in executors). The Spark engine does likewise
(``SparkEngine.locate``: one task per partition, ``reference.io.index.lookup_partition``); the driver-side
paths (``SparkEngine.keys``, ``reference.io.index.bloom_index`` and ``simple_index``) are made to fail here,
and the upserts and deletes must still leave the local engine's table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_local_engine import _groups, _records

from conformance.adapters.reference_spark import FileIds, ReplayClock
from reference.api import HudiTable
from reference.io.index import base_files, lookup_partition
from spec.file_group.file_system_view import FileSystemView
from spec.storage.hoodie_storage import Storage


def _batches() -> list[tuple[pa.Table, str]]:
    first = pa.table({"id": list(range(300)), "city": [f"c{i % 3}" for i in range(300)], "ts": [1] * 300,
                      "v": [f"a{i}" for i in range(300)]})
    ids = [*range(0, 300, 7), *range(300, 330), 14, 14]  # updates, new keys, a repeated key
    update = pa.table({"id": ids, "city": [f"c{i % 3}" for i in ids], "ts": [2] * len(ids),
                       "v": [f"b{i}" for i in ids]})
    gone = pa.table({"id": [1, 2, 3, 999], "city": ["c1", "c2", "c0", "c0"], "ts": [3] * 4, "v": [""] * 4})
    return [(first, "upsert"), (update, "upsert"), (gone, "delete")]


def _write(path: Path, engine: str, table_type: str, index: str, spark: Any = None) -> None:
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.index.type": index,
               "hoodie.datasource.write.table.type": table_type}
    ids, clock = FileIds(), ReplayClock()
    for batch, op in _batches():
        table = (HudiTable(str(path), spark, clock=clock, file_id_prefix=ids) if engine == "spark"
                 else HudiTable(str(path), clock=clock, file_id_prefix=ids, engine="local"))
        table.write(batch, op, options)


@pytest.mark.spark
@pytest.mark.parametrize("index", ["BLOOM", "SIMPLE"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_spark_lookup_needs_no_key_on_the_driver(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 table_type: str, index: str) -> None:
    _write(tmp_path / "local", "local", table_type, index)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a driver-side lookup ran on the Spark engine")

    import reference.engines.local
    import reference.io.index

    for module in (reference.io.index, reference.engines.local):  # the driver-side lookups, wherever bound
        monkeypatch.setattr(module, "bloom_index", refuse)
        monkeypatch.setattr(module, "simple_index", refuse)
    _write(tmp_path / "spark", "spark", table_type, index, spark)
    assert _groups(tmp_path / "spark") == _groups(tmp_path / "local")
    assert _records(tmp_path / "spark") == _records(tmp_path / "local")


def test_a_partitions_lookup_by_bloom_and_by_simple_agree(tmp_path: Path) -> None:
    """``lookup_partition`` on the files the driver ships: both indexes find exactly the stored keys."""
    _write(tmp_path / "t", "local", "COPY_ON_WRITE", "BLOOM")
    storage = Storage(str(tmp_path / "t"))
    view = FileSystemView.load(storage)
    files = base_files(view, "c1")
    assert files and all(fid and path.startswith("c1/") for fid, path in files)
    probe = pa.array(["1", "4", "2", "999", "4", None, "301"], pa.string())  # stored c1 keys: 4, 301 (1 deleted)
    for bloom in (True, False):
        found = lookup_partition(storage, files, "c1", probe, bloom)
        assert sorted(found.column("_hoodie_record_key").to_pylist()) == ["301", "4"]
        assert set(found.column("_hoodie_partition_path").to_pylist()) == {"c1"}
        assert set(found.column("__file_id").to_pylist()) <= {fid for fid, _ in files}

"""The bucket index (SIMPLE engine) against Apache Hudi 1.2.0 in the test's Spark session: a bucket-indexed table
Apache Hudi wrote, continued by our writer (upserts with new keys and a new partition, an insert of a new and of a
stored key, a delete of a stored and of a never-written key; merge-on-read: a compaction), then continued by
Apache Hudi again. After every step Apache Hudi's reader, the spec reader and hudi-rs read what the spec model
predicts (``tests.test_apache_hudi_continues.check``), every row sits in the file group of its key's bucket
(``spec.index.bucket_identifier``: complex keys, both fields hashed), a partition has one group per bucket, and a
bucket's file id, once written by either writer, is the one the other writer keeps writing to."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.hudi_spark import HudiSparkAdapter
from conformance.adapters.reference_spark import ReferenceLocalAdapter, ReferenceSparkAdapter
from conformance.interface.ops import CreateTable
from spec.config.registry import BY_NAME
from spec.index.bucket_identifier import bucket_id, parse_bucket_id
from spec.model.operations import Compact, Operation, Write
from spec.read.reader import read_table
from spec.timeline.instant import parse_instant_time
from tests.test_apache_hudi_continues import Expected, attach, check

pytestmark = [pytest.mark.spark, pytest.mark.slow]

KEY_FIELDS = ("id", "name")
BUCKETS = 4


def _w(operation: str, *rows: tuple[int, str, int]) -> Write:
    return Write(operation, tuple({"id": i, "name": f"n{i % 3}", "p": p, "ts": ts, "v": f"v{i}@{ts}"}
                                  for i, p, ts in rows))


def table(table_type: str, version: int) -> CreateTable:
    return CreateTable(table_type=table_type, table_version=version, record_key_fields=KEY_FIELDS,
                       partition_fields=("p",), index_type="BUCKET",
                       options=(("hoodie.bucket.index.num.buckets", str(BUCKETS)),))


def round_of(n: int, mor: bool) -> tuple[Operation, ...]:
    """One writer's round: an upsert (an update, a new key, a key in a new partition), an insert (a new key and a
    stored one), a delete (a stored key and one never written); merge-on-read: a compaction."""
    ops: list[Operation] = [
        _w("upsert", (2, "a", 10 * n), (100 + n, "a", 10 * n), (200 + n, f"new-{n}", 10 * n)),
        _w("insert", (300 + n, "b", 10 * n), (4, "b", 10 * n)),
        _w("delete", (3, "a", 10 * n), (900 + n, "a", 10 * n)),
    ]
    return (*ops, Compact()) if mor else tuple(ops)


HUDI_FIRST = (_w("insert", *((i, "ab"[i % 2], 1) for i in range(1, 17))),)


def check_buckets(path: Path, owners: dict[tuple[str, int], str], step: str) -> None:
    """Every row in its key's bucket's group, one group per bucket of a partition, and every bucket's file id the
    one it had since it was first written (``owners``: (partition, bucket) → file id, filled here)."""
    rows = read_table(str(path)).to_pylist()
    assert rows, step
    groups: dict[tuple[str, int], set[str]] = {}
    for r in rows:
        file_id = r["_hoodie_file_name"].split("_")[0]
        bucket = parse_bucket_id(file_id)
        assert bucket == bucket_id(r["_hoodie_record_key"], KEY_FIELDS, BUCKETS), (step, r)
        groups.setdefault((r["_hoodie_partition_path"], bucket), set()).add(file_id)
    for where, ids in groups.items():
        assert len(ids) == 1, (step, where, ids)
        assert owners.setdefault(where, next(iter(ids))) in ids, (step, where, owners[where], ids)


def wait_past(writer: Any) -> None:
    """Until the clock is past every instant ``writer`` made: the replayable writer's clock moves a second a call and
    may run ahead of the clock Apache Hudi takes its next instant from, which no two real writers' clocks do (seen
    once: Hudi's upsert of a version 6 merge-on-read table, its instant before our compaction's, was left out of
    Hudi's own snapshot read, while the spec reader and hudi-rs read it)."""
    latest = parse_instant_time(max(t for i in writer.timeline() for t in (i[0], i[3]) if t)).replace(tzinfo=UTC)
    while datetime.now(UTC) <= latest + timedelta(seconds=1):
        time.sleep(0.2)


def run(spark: Any, adapter: Any, ops: tuple[Operation, ...], expected: Expected, path: Path,
        owners: dict[tuple[str, int], str], who: str) -> None:
    for op in ops:
        adapter.apply(op)
        expected.ops.append(op)
        step = f"{who} {type(op).__name__} {getattr(op, 'operation', '')}"
        check(spark, path, expected, step)
        check_buckets(path, owners, step)


# version 6 merge-on-read is left to `make slow` (explore): Apache Hudi's own snapshot, after its upsert of the
# table our writer compacted, has once more left that upsert out (a v2@20 row read as v2@10) though the clock had
# passed every instant of ours (``wait_past``); a difference not yet reduced to its smallest case, so not in CI,
# which must pass or fail by the code alone
@pytest.mark.parametrize(("table_type", "version", "engine"), [
    ("COPY_ON_WRITE", 8, "local"), ("MERGE_ON_READ", 9, "spark"),
    pytest.param("MERGE_ON_READ", 6, "local", marks=pytest.mark.explore)])
def test_hudi_and_our_writer_continue_each_others_bucket_table(apache_hudi: Any, tmp_path: Path, table_type: str,
                                                               version: int, engine: str) -> None:
    config = table(table_type, version)
    mor = table_type == "MERGE_ON_READ"
    if version in (6, 8):
        # no metadata table, for both writers: Hudi's version 6 one is one our writer does not keep, and hudi-rs fails
        # to read the metadata table Hudi 1.2.0 writes for version 8 (its ColumnStatsMetadata record, the departure
        # tests.test_apache_hudi_continues.HUDI_RS_COLUMN_STATS names); version 9 keeps it
        config = replace(config, options=(*config.options, ("hoodie.metadata.enable", "false")))
    expected = Expected(config, [])
    folder = tmp_path / "t"
    path = folder / config.table_name
    owners: dict[tuple[str, int], str] = {}
    hudi = HudiSparkAdapter()
    attach(hudi, config, folder)
    try:
        run(apache_hudi, hudi, HUDI_FIRST, expected, path, owners, "Apache Hudi")
    finally:
        hudi.close()
    hudis = dict(owners)
    assert len(hudis) == 2 * BUCKETS  # 16 keys fill every bucket of both partitions
    ours = ReferenceSparkAdapter(apache_hudi) if engine == "spark" else ReferenceLocalAdapter()
    attach(ours, config, folder)
    run(apache_hudi, ours, round_of(1, mor), expected, path, owners, f"reference ({engine})")
    assert {k: owners[k] for k in hudis} == hudis  # Hudi's groups kept
    wait_past(ours)
    hudi = HudiSparkAdapter()
    attach(hudi, config, folder)
    try:
        run(apache_hudi, hudi, round_of(2, mor), expected, path, owners, "Apache Hudi again")
    finally:
        hudi.close()
    assert len(owners) > len(hudis)  # the new partitions' buckets, ours and Hudi's, each kept by the other


def test_the_bucket_options_are_hudis(apache_hudi: Any) -> None:
    """The registry's bucket index options are Apache Hudi 1.2.0's ``HoodieIndexConfig`` properties: their keys and
    defaults (the hash field has none: the record key fields)."""
    config = apache_hudi._jvm.org.apache.hudi.config.HoodieIndexConfig
    for prop, name in ((config.BUCKET_INDEX_NUM_BUCKETS, "bucket_index_num_buckets"),
                       (config.BUCKET_INDEX_ENGINE_TYPE, "bucket_index_engine")):
        assert (prop.key(), str(prop.defaultValue())) == (BY_NAME[name].key, BY_NAME[name].default)
    assert config.BUCKET_INDEX_HASH_FIELD.key() == BY_NAME["bucket_index_hash_fields"].key
    assert not config.BUCKET_INDEX_HASH_FIELD.hasDefaultValue()
    assert config.INDEX_TYPE.key() == BY_NAME["index_type"].key

"""The rows of ``docs/spec/hudi-tech-spec.md`` that only running Apache Hudi settles, settled by running it.

Apache Hudi 1.2.0 (its Spark bundle, in the test run's Spark session) writes small version 9 tables, and each
test reads what it wrote:

- **8.4 index versions**: the definitions ``.hoodie/.index_defs/index.json`` holds for a table with a record
  index, column and partition statistics, bloom filters, a secondary index and two expression indexes (one
  column-statistics-shaped, one bloom-filter-shaped): each carries the version
  ``spec.metadata.partition_type.current_index_version`` gives it, and ``files``, ``bloom_filters`` and
  ``partition_stats`` get no definition at all;
- **8.9 partitioned record index** (``hoodie.metadata.record.level.index.enable``): its definition says
  ``isPartitioned`` ``true`` and its file groups are per data partition,
  ``spec.metadata.partition_type.partitioned_file_group_id``, each holding the keys of its data partition;
- **11.7 lastCompletedCommitTimestamp**: with a write that began before the last write but completed after it,
  the cleaner plan (and the clean metadata) name the write that began last — the commit timeline in begin-time
  order, as ``spec.actions.clean.plan_clean`` takes it — not the one that completed last;
- the escaping behind those file ids, ``PartitionPathEncodeUtils.escapePathName`` and ``escapeFileName``, asked
  of Hudi itself character by character.

Without the bundle these tests skip (``tests/conftest.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from reference.engines.spark_arrow import arrow_to_spark, spark_to_arrow
from reference.executors.savepoint import savepoint_create
from reference.write.client import WriteClient
from spec.actions.clean import KEEP_LATEST_COMMITS, CleanConfig, plan_clean
from spec.config.table_config import TableConfig
from spec.file_group.log_file.log_format import HeaderKey, read_blocks
from spec.keygen.partition_path import escape_file_name, escape_path_name
from spec.metadata.index_definition import index_definitions_path, is_valid_for, parse_index_definitions
from spec.metadata.partition_type import (
    BLOOM_FILTERS,
    FILES,
    PARTITION_STATS,
    RECORD_INDEX,
    current_index_version,
    data_partition_of,
    file_group_index,
    partitioned_file_group_id,
)
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action
from tests.test_metadata_indexes import _records

pytestmark = pytest.mark.spark

IN_PROCESS_LOCK = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
"""Hudi creates an index only with a lock provider set in the session (its error says so): this one, for one
writer."""
LOCK_PROVIDER = "hoodie.write.lock.provider"


def sql(spark: Any, statement: str) -> list[Any]:
    return list(spark.sql(statement).collect())


def create_table(spark: Any, name: str, path: Path, **properties: str) -> None:
    """A version 9 copy-on-write table partitioned by ``city``, through Hudi's SQL."""
    props = {"primaryKey": "id", "preCombineField": "ts", "type": "cow", "hoodie.write.table.version": "9",
             "hoodie.metadata.enable": "true", "hoodie.spark.sql.insert.into.operation": "upsert", **properties}
    options = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    sql(spark, f"drop table if exists {name}")
    sql(spark, f"create table {name} (id int, name string, price double, ts bigint, city string) using hudi "
               f"location '{path}' partitioned by (city) tblproperties ({options})")


def insert_two_writes(spark: Any, name: str) -> None:
    sql(spark, f"insert into {name} values (1, 'a', 1.0, 1, 'sf'), (2, 'b', 2.0, 1, 'la'), (3, 'c', 3.0, 1, 'sf')")
    sql(spark, f"insert into {name} values (1, 'a2', 1.5, 2, 'sf'), (4, 'd', 4.0, 2, 'new-york_1')")


def index_definitions(path: Path) -> dict[str, Any]:
    rel = index_definitions_path(TableConfig.load(str(path)).props)
    assert rel is not None, "Hudi wrote no index definitions path"
    return parse_index_definitions((path / rel).read_text())


# --- 8.4 index versions ------------------------------------------------------------------------------


@pytest.mark.slow
def test_index_versions_are_as_apache_hudi_writes_them(apache_hudi: Any, tmp_path: Path) -> None:
    path = tmp_path / "indexes"
    create_table(apache_hudi, "tech_spec_indexes", path, **{
        "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.partition.stats.enable": "true", "hoodie.metadata.index.bloom.filter.enable": "true"})
    insert_two_writes(apache_hudi, "tech_spec_indexes")
    apache_hudi.conf.set(LOCK_PROVIDER, IN_PROCESS_LOCK)
    try:
        sql(apache_hudi, "create index idx_name on tech_spec_indexes (name)")
        sql(apache_hudi, "create index idx_upper on tech_spec_indexes using column_stats(name) options(expr='upper')")
        sql(apache_hudi, "create index idx_bf on tech_spec_indexes using bloom_filters(name) options(expr='lower')")
    finally:
        apache_hudi.conf.unset(LOCK_PROVIDER)
    definitions = index_definitions(path)
    assert set(definitions) == {"record_index", "column_stats", "secondary_index_idx_name", "expr_index_idx_upper",
                                "expr_index_idx_bf"}
    found = {name: d.version for name, d in definitions.items()}
    assert found == {"record_index": "V1", "column_stats": "V2", "secondary_index_idx_name": "V2",
                     "expr_index_idx_upper": "V2", "expr_index_idx_bf": "V2"}
    assert found == {name: current_index_version(9, name) for name in definitions}
    assert all(is_valid_for(9, d) for d in definitions.values())
    partitions = TableConfig.load(str(path)).metadata_partitions
    # the partitions Hudi's page gives V1 (bloom filters, files) or V2 (partition statistics) have no definition
    assert {FILES.path, BLOOM_FILTERS.path, PARTITION_STATS.path} <= set(partitions)
    assert not {FILES.path, BLOOM_FILTERS.path, PARTITION_STATS.path} & set(definitions)


# --- 8.9 the partitioned record index ----------------------------------------------------------------


@pytest.mark.slow
def test_a_partitioned_record_index_is_as_apache_hudi_writes_it(apache_hudi: Any, tmp_path: Path) -> None:
    path = tmp_path / "partitioned-rli"
    create_table(apache_hudi, "tech_spec_prli", path, **{"hoodie.metadata.record.level.index.enable": "true"})
    insert_two_writes(apache_hudi, "tech_spec_prli")
    definition = index_definitions(path)[RECORD_INDEX.path]
    assert definition.index_options == {"isPartitioned": "true"}
    rows = read_table(str(path)).to_pylist()
    assert sorted(r["id"] for r in rows) == [1, 2, 3, 4]
    partition_of_key = {r["_hoodie_record_key"]: r["_hoodie_partition_path"] for r in rows}
    data_partitions = set(partition_of_key.values())
    assert data_partitions == {"city=sf", "city=la", "city=new-york_1"}
    records = [(g, k) for g, k, r in _records(path / ".hoodie" / "metadata" / RECORD_INDEX.path) if r is not None]
    groups = {g for g, _ in records}
    # one file group per data partition, named for it (its "-" and "_" escaped), numbered from 0
    assert groups == {partitioned_file_group_id(RECORD_INDEX.path, p, 0) for p in data_partitions}
    assert "record-index-city%3Dnew%2Dyork%5F1-0000-0" in groups
    for group, key in records:
        assert data_partition_of(group) == partition_of_key[key], (group, key)
        assert file_group_index(RECORD_INDEX.path, group) == 0
    assert {k for _, k in records} == set(partition_of_key)


# --- 11.7 lastCompletedCommitTimestamp ---------------------------------------------------------------


def avro_records(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as f:
        return list(fastavro.reader(f))  # type: ignore[arg-type]


@pytest.mark.slow
def test_last_completed_commit_timestamp_is_the_write_that_began_last(apache_hudi: Any, tmp_path: Path) -> None:
    path = tmp_path / "clean"
    create_table(apache_hudi, "tech_spec_clean", path, **{
        "hoodie.metadata.enable": "false", "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"})
    for n in range(1, 5):
        sql(apache_hudi, f"insert into tech_spec_clean values (1, 'a{n}', 1.0, {n}, 'sf'), (2, 'b{n}', 2.0, {n}, 'la')")
    timeline_dir = path / ".hoodie" / "timeline"
    done = sorted(f for f in os.listdir(timeline_dir) if f.endswith(".commit"))
    assert len(done) == 4
    # the third write completes after the fourth (a concurrent writer's order): its completion time moved past
    (third, _), (fourth, fourth_done) = (f.removesuffix(".commit").split("_") for f in done[2:])
    (timeline_dir / done[2]).rename(timeline_dir / f"{third}_{int(fourth_done) + 1}.commit")
    timeline = Timeline.load(str(path))
    by_completion = sorted(timeline.commits_timeline().instants,
                           key=lambda i: timeline.completion_time(i.requested) or "")
    assert by_completion[-1].requested == third
    sql(apache_hudi, "call run_clean(table => 'tech_spec_clean', retain_commits => 1)")
    cleans = sorted(timeline_dir.glob("*.clean*"))
    requested = [p for p in cleans if p.name.endswith(".clean.requested")]
    completed = [p for p in cleans if p.name.endswith(".clean")]
    assert len(requested) == len(completed) == 1, cleans
    (plan,) = avro_records(requested[0])
    (metadata,) = avro_records(completed[0])
    assert plan["lastCompletedCommitTimestamp"] == metadata["lastCompletedCommitTimestamp"] == fourth
    ours = plan_clean([], timeline, CleanConfig(policy=KEEP_LATEST_COMMITS, commits_retained=1))
    assert ours.last_completed_commit == plan["lastCompletedCommitTimestamp"]
    assert ours.earliest_instant_to_retain is not None
    assert (ours.earliest_instant_to_retain.requested, Action.COMMIT) == (
        plan["earliestInstantToRetain"]["timestamp"], plan["earliestInstantToRetain"]["action"])


@pytest.mark.slow
def test_apache_hudi_continues_the_cleans_the_reference_writer_wrote(apache_hudi: Any, tmp_path: Path) -> None:
    """The reference writer cleans a version 9 table with a savepoint: its plan and metadata are 1.2.0's records
    (``lastCompletedCommitTimestamp``, ``extraMetadata`` with ``savepointed_timestamps``); Apache Hudi then writes
    and cleans on after it, writing the same fields the same way, and both read the same rows."""
    path = tmp_path / "cleaned"
    opts = {"hoodie.table.name": "cleaned", "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.write.table.version": "9",
            "hoodie.cleaner.commits.retained": "1"}
    client = WriteClient(str(path), engine="local")
    savepoint = ""
    for n in range(1, 5):
        done = client.write(pa.Table.from_pylist([{"id": "a", "ts": n, "city": "sf", "v": n},
                                                  {"id": "b", "ts": n, "city": "la", "v": n}]), "upsert", opts)
        if n == 2:
            savepoint = done.instant
            storage = Storage(str(path))
            savepoint_create(storage, TableConfig.load(storage), savepoint)
    timeline_dir = path / ".hoodie" / "timeline"
    ours = sorted(timeline_dir.glob("*.clean.requested"))
    assert ours, "the reference writer cleaned nothing"
    for batch in ([{"id": "a", "ts": 5, "city": "sf", "v": 5}], [{"id": "a", "ts": 6, "city": "sf", "v": 6}]):
        (arrow_to_spark(apache_hudi, pa.Table.from_pylist(batch)).write.format("hudi").options(**opts)
         .option("hoodie.datasource.write.operation", "upsert").mode("append").save(str(path)))
    plans = sorted(timeline_dir.glob("*.clean.requested"))
    assert len(plans) > len(ours), "Apache Hudi cleaned nothing after the reference writer"
    writes = Timeline.load(str(path)).commits_timeline().instants
    for plan_file in plans:
        (plan,) = avro_records(plan_file)
        clean_time = plan_file.name.split(".")[0]
        assert plan["extraMetadata"] == {"savepointed_timestamps": savepoint}, plan_file.name
        assert plan["lastCompletedCommitTimestamp"] == max(i.requested for i in writes if i.requested < clean_time)
        (completed,) = [p for p in timeline_dir.glob(f"{clean_time}_*.clean")]
        (metadata,) = avro_records(completed)
        assert (metadata["extraMetadata"], metadata["lastCompletedCommitTimestamp"]) == (
            plan["extraMetadata"], plan["lastCompletedCommitTimestamp"])
    theirs = sorted((r["id"], r["v"]) for r in spark_to_arrow(apache_hudi.read.format("hudi").load(str(path)))
                    .select(["id", "v"]).to_pylist())
    assert theirs == [("a", 6), ("b", 4)]
    assert sorted((r["id"], r["v"]) for r in read_table(str(path)).select(["id", "v"]).to_pylist()) == theirs


# --- 9.10 record positions ---------------------------------------------------------------------------


@pytest.mark.slow
def test_log_blocks_carry_record_positions_and_the_spec_reader_merges_them_by_key(apache_hudi: Any,
                                                                                   tmp_path: Path) -> None:
    """Apache Hudi 1.2.0 writes ``RECORD_POSITIONS`` and ``BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS`` on update
    blocks of a version 9 merge-on-read table (not on every block: a SQL ``UPDATE``'s block carries none), the
    latter naming the base file the positions are in; the spec reader, merging by key, reads what Hudi reads."""
    path = tmp_path / "positions"
    create_table(apache_hudi, "tech_spec_positions", path, type="mor", **{"hoodie.compact.inline": "false"})
    insert_two_writes(apache_hudi, "tech_spec_positions")
    sql(apache_hudi, "update tech_spec_positions set price = 9.0 where id = 3")
    blocks = [(log, r.block) for log in path.rglob(".*.log.*") if not log.name.endswith(".crc")
              for r in read_blocks(log.read_bytes()) if r.block is not None and r.block.is_data]
    positioned = [(log, block) for log, block in blocks if block.header_value(HeaderKey.RECORD_POSITIONS)]
    assert positioned, "Hudi wrote no log block with record positions"
    for log, block in positioned:
        file_id = log.name.lstrip(".").split("_")[0]
        bases = {b.name.rsplit("_", 1)[1].split(".")[0] for b in log.parent.glob(f"{file_id}_*.parquet")}
        assert block.header_value(HeaderKey.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS) in bases
    theirs = sorted((r["id"], r["price"]) for r in spark_to_arrow(apache_hudi.read.format("hudi").load(str(path)))
                    .select(["id", "price"]).to_pylist())
    assert theirs == [(1, 1.5), (2, 2.0), (3, 9.0), (4, 4.0)]
    ours = sorted((r["id"], r["price"]) for r in read_table(str(path)).select(["id", "price"]).to_pylist())
    assert ours == theirs


# --- the escaping behind metadata file ids -----------------------------------------------------------


def test_partition_paths_and_file_names_are_escaped_as_apache_hudi_escapes_them(apache_hudi: Any) -> None:
    utils = apache_hudi._jvm.org.apache.hudi.common.util.PartitionPathEncodeUtils
    texts = [chr(c) for c in range(128)] + ["city=la/x-y_z.é ñ", "東京", "a%b"]
    for text in texts:
        assert escape_path_name(text) == utils.escapePathName(text), repr(text)
        assert escape_file_name(text) == utils.escapeFileName(text), repr(text)

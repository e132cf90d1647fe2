"""Tables with change data capture written by this writer, read by Apache Hudi 1.2.0's CDC query: it answers what
the spec's CDC query answers on them, and what it answers on a table Apache Hudi wrote with the same operations.
Copy-on-write covers every inference case it has (BASE_FILE_INSERT, AS_IS with updates, a stale update's empty log, a
delete, BASE_FILE_DELETE's empty base file, REPLACE_COMMIT); merge-on-read adds LOG_FILE, small-file merges and
compactions. The two tables' instant times and file names differ: the comparison across them takes each ``ts_ms``
and ``_hoodie_commit_time`` as the ordinal of its write and leaves out ``_hoodie_commit_seqno`` and
``_hoodie_file_name``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.write.client import WriteClient
from spec.config.table_config import TableConfig
from spec.read.cdc import DATA_BEFORE, DATA_BEFORE_AFTER, OP_KEY_ONLY, read_cdc
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from tests.test_cdc_hudi import SCHEMA, WRITES, hudi_cdc_table, hudis, ours

pytestmark = [pytest.mark.spark, pytest.mark.slow]

Change = tuple[str, str, str, str]


MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.compact.inline": "true",
       "hoodie.compact.inline.max.delta.commits": "2", "hoodie.parquet.small.file.limit": "104857600"}
"""Merge-on-read with a compaction every two deltacommits and Hudi's small-file limit: updates appended to logs
(LOG_FILE), inserts and updates merged into a small file group's base file (AS_IS), compactions that write CDC logs
the query does not read."""


def write_hudi(spark: Any, path: Path, mode: str, **extra: str) -> None:
    """The same writes by Apache Hudi (``tests.test_cdc_hudi.WRITES``), with ``extra`` options."""
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode,
               "hoodie.metadata.enable": "false", "hoodie.parquet.small.file.limit": "0", **extra}
    for operation, rows in WRITES:
        spark.createDataFrame(list(rows), SCHEMA).write.format("hudi").options(**options).option(
            "hoodie.datasource.write.operation", operation).mode("append").save(str(path))


def write_ours(path: Path, mode: str, engine: str, spark: Any, **extra: str) -> None:
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode,
               "hoodie.metadata.enable": "false", "hoodie.parquet.small.file.limit": "0", **extra}
    client = WriteClient(str(path), spark=spark if engine == "spark" else None, engine=engine)
    schema = pa.schema([("id", pa.int64()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
    for operation, rows in WRITES:
        client.write(pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema),
                     operation, options)


def _ordinals(path: Path) -> dict[str, str]:
    """The ordinal of each write among the table's completed writes (a merge-on-read table's compactions left out:
    they yield no change, and the two writers need not compact after the same writes)."""
    storage = Storage(str(path))
    table = TableConfig.load(storage)
    instants = [i for i in Timeline.load(storage, table.timeline_layout).completed().instants
                if not (table.table_type == "MERGE_ON_READ" and i.action == "commit")]
    return {i.requested: f"#{n}" for n, i in enumerate(instants)}


def _image(text: str, ordinal: dict[str, str]) -> str:
    value = json.loads(text)
    if isinstance(value, dict):
        value = {k: ordinal.get(v, v) if k == "_hoodie_commit_time" else v for k, v in value.items()
                 if k not in ("_hoodie_commit_seqno", "_hoodie_file_name")}
    return json.dumps(value, sort_keys=True)


def by_ordinal(changes: Counter[Change], path: Path) -> Counter[Change]:
    """The changes with instant times as commit ordinals, file names and sequence numbers left out."""
    ordinal = _ordinals(path)
    return Counter({(op, ordinal[ts], _image(b, ordinal), _image(a, ordinal)): n
                    for (op, ts, b, a), n in changes.items()})


@pytest.mark.parametrize(("mode", "engine"), [
    (DATA_BEFORE_AFTER, "local"), (OP_KEY_ONLY, "spark"),
    pytest.param(DATA_BEFORE, "local", marks=pytest.mark.explore),
    pytest.param(OP_KEY_ONLY, "local", marks=pytest.mark.explore),
    pytest.param(DATA_BEFORE_AFTER, "spark", marks=pytest.mark.explore),
    pytest.param(DATA_BEFORE, "spark", marks=pytest.mark.explore)])
def test_apache_hudi_reads_our_cdc_logs_as_the_spec_does_and_as_its_own(apache_hudi: Any, tmp_path: Path, mode: str,
                                                                         engine: str) -> None:
    mine, theirs = tmp_path / "ours", tmp_path / "hudi"
    write_ours(mine, mode, engine, apache_hudi)
    assert list(mine.rglob(".*.cdc"))
    read_by_hudi = hudis(apache_hudi, mine)
    got = ours(read_cdc(str(mine)))
    assert got == read_by_hudi, (sorted((read_by_hudi - got).elements()), sorted((got - read_by_hudi).elements()))
    assert {op for op, *_ in read_by_hudi.elements()} == {"i", "u", "d"}
    hudi_cdc_table(apache_hudi, theirs, "COPY_ON_WRITE", mode)
    expected = by_ordinal(hudis(apache_hudi, theirs), theirs)
    assert by_ordinal(read_by_hudi, mine) == expected


@pytest.mark.parametrize(("mode", "version", "engine"), [
    (DATA_BEFORE_AFTER, "9", "local"), pytest.param(OP_KEY_ONLY, "9", "local", marks=pytest.mark.explore),
    pytest.param(DATA_BEFORE, "9", "local", marks=pytest.mark.explore),
    pytest.param(DATA_BEFORE_AFTER, "8", "local", marks=pytest.mark.explore),
    pytest.param(DATA_BEFORE_AFTER, "9", "spark", marks=pytest.mark.explore)])
def test_apache_hudi_reads_our_merge_on_read_cdc_tables_as_the_spec_does_and_as_its_own(
        apache_hudi: Any, tmp_path: Path, mode: str, version: str, engine: str) -> None:
    mine, theirs = tmp_path / "ours", tmp_path / "hudi"
    extra = {**MOR, "hoodie.write.table.version": version}
    write_ours(mine, mode, engine, apache_hudi, **extra)
    assert len({p.name.split("_")[1].split(".")[0] for p in mine.rglob(".*.cdc")}) >= 2  # merges and compactions
    read_by_hudi = hudis(apache_hudi, mine)
    got = ours(read_cdc(str(mine)))
    assert got == read_by_hudi, (sorted((read_by_hudi - got).elements()), sorted((got - read_by_hudi).elements()))
    write_hudi(apache_hudi, theirs, mode, **extra)
    assert by_ordinal(read_by_hudi, mine) == by_ordinal(hudis(apache_hudi, theirs), theirs)


@pytest.mark.explore
@pytest.mark.parametrize("extra", [{"hoodie.write.table.version": "6"}, {"hoodie.write.table.version": "8"},
                                   {"hoodie.metadata.enable": "true"}], ids=["v6", "v8", "v9-metadata-table"])
def test_apache_hudi_reads_our_cdc_logs_of_every_table_version(apache_hudi: Any, tmp_path: Path,
                                                               extra: dict[str, str]) -> None:
    """Tables of versions 6 and 8, and one whose metadata table lists the CDC logs (Hudi's reader lists the table
    through it)."""
    mine = tmp_path / "ours"
    write_ours(mine, DATA_BEFORE_AFTER, "local", apache_hudi, **extra)
    read_by_hudi = hudis(apache_hudi, mine)
    assert ours(read_cdc(str(mine))) == read_by_hudi and {op for op, *_ in read_by_hudi.elements()} == {"i", "u", "d"}


@pytest.mark.explore
def test_apache_hudi_cannot_read_the_changes_of_an_insert_its_concat_handle_wrote(apache_hudi: Any,
                                                                                   tmp_path: Path) -> None:
    """Why this writer refuses an insert into a small file of a CDC table with
    ``hoodie.merge.allow.duplicate.on.inserts`` on (``reference.write.write_checks.check_cdc_write``): Apache Hudi
    1.2.0 writes it with its concat handle, which logs nothing, and its CDC query then fails on the write."""
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.table.cdc.enabled": "true", "hoodie.metadata.enable": "false"}
    for rows in ([(1, "a", 1, "v1")], [(2, "a", 1, "v2")]):
        apache_hudi.createDataFrame(rows, "id long, p string, ts long, v string").write.format("hudi").options(
            **options).option("hoodie.datasource.write.operation", "insert").mode("append").save(path)
    with pytest.raises(Exception, match="There should be a cdc log file"):
        hudis(apache_hudi, Path(path))

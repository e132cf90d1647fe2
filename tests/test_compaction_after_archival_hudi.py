"""Compaction after archival, with Apache Hudi on both sides: 50 deltacommits, archival on, then a compaction.

The merge-on-read table of ``tests/test_compaction_after_archival.py`` (one insert of 50 keys, then 50
deltacommits each updating one key; Hudi's default retention and automatic archival, no inline compaction):

- **the reference writer writes it** (the deltacommits, archival, the compaction) and Apache Hudi's Spark
  datasource reads every update, as the spec reader, hudi-rs and the spec model do;
- **Apache Hudi writes it** (its own archival and compaction, ``run_compaction``) and the spec reader reads
  what Hudi's own read returns, before and after the compaction: every update, as the spec model predicts. On
  version 6 Hudi 1.2.0 archives into ``.hoodie/history`` (``hoodie.archivelog.folder``), which the archived
  timeline is read from.

``make test`` runs the version 9 table written by the reference writer; ``make ci-slow`` the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.engines.spark_arrow import arrow_to_spark, spark_to_arrow
from reference.executors.compaction import compact
from reference.write.client import WriteClient
from spec.actions.archive import archived_instants
from spec.config.table_config import TableConfig
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action
from tests.hudi_rs import hudi_rs_read
from tests.test_compaction_after_archival import UPDATES, batches, model_rows, options, rows

pytestmark = pytest.mark.spark

EXPECTED = sorted((f"k{i:02d}", i) for i in range(UPDATES))
"""Every key holds its one update."""


def hudi_rows(spark: Any, path: Path) -> list[tuple[Any, ...]]:
    """Apache Hudi's snapshot read of the table (its Spark datasource)."""
    return rows(spark_to_arrow(spark.read.format("hudi").load(str(path))))


def archived_deltacommits(path: Path) -> list[str]:
    storage = Storage(str(path))
    return [a.requested for a in archived_instants(storage, TableConfig.load(storage))
            if a.action == Action.DELTA_COMMIT]


def completed_compactions(path: Path) -> list[str]:
    timeline = Timeline.load(str(path))
    return [i.requested for i in timeline.instants if i.action == Action.COMMIT and i.is_completed]


def reference_writer_trial(spark: Any, path: Path, version: int) -> None:
    client = WriteClient(str(path), engine="local")
    for batch in batches():
        client.write(pa.Table.from_pylist(batch), "upsert", options(version))
    assert archived_deltacommits(path), "archival moved no deltacommit off the active timeline"
    assert hudi_rows(spark, path) == EXPECTED
    assert compact(client) is not None and completed_compactions(path)
    assert hudi_rows(spark, path) == EXPECTED, "Apache Hudi reads updates the compaction reverted"
    assert rows(read_table(str(path))) == EXPECTED
    assert rows(hudi_rs_read(str(path))) == EXPECTED
    assert model_rows(version, compacted=True) == EXPECTED


NO_INLINE_COMPACTION = {"hoodie.compact.inline": "false"}
"""Apache Hudi's Spark datasource compacts a merge-on-read table inline every 5 deltacommits unless told not to
(measured with 1.2.0: a compaction after every fifth deltacommit with no option set); the 50 deltacommits must
reach archival uncompacted, as the reference writer's do (``hoodie.compact.inline`` false by default)."""


def apache_hudi_trial(spark: Any, path: Path, version: int) -> None:
    for batch in batches():
        (arrow_to_spark(spark, pa.Table.from_pylist(batch)).write.format("hudi")
         .options(**options(version), **NO_INLINE_COMPACTION)
         .option("hoodie.datasource.write.operation", "upsert").mode("append").save(str(path)))
    assert TableConfig.load(str(path)).table_version == version
    assert archived_deltacommits(path), "Apache Hudi archived no deltacommit"
    assert not completed_compactions(path), "Apache Hudi compacted on its own: the case needs the logs uncompacted"
    assert hudi_rows(spark, path) == EXPECTED
    assert rows(read_table(str(path))) == EXPECTED
    spark.sql(f"call run_compaction(op => 'scheduleandexecute', path => '{path}')").collect()
    assert completed_compactions(path), "Apache Hudi's run_compaction completed no compaction"
    theirs = hudi_rows(spark, path)
    assert theirs == EXPECTED
    assert rows(read_table(str(path))) == theirs
    assert rows(hudi_rs_read(str(path))) == theirs
    assert model_rows(version, compacted=True) == theirs


def test_apache_hudi_reads_every_update_after_the_reference_writer_compacts_archived_deltacommits(
        apache_hudi: Any, tmp_path: Path) -> None:
    reference_writer_trial(apache_hudi, tmp_path / "t", 9)


@pytest.mark.slow
@pytest.mark.parametrize("version", [8, 6])
def test_apache_hudi_reads_every_update_after_the_reference_writer_compacts_archived_deltacommits_everywhere(
        apache_hudi: Any, tmp_path: Path, version: int) -> None:
    reference_writer_trial(apache_hudi, tmp_path / "t", version)


@pytest.mark.slow
@pytest.mark.parametrize("version", [9, pytest.param(8, marks=pytest.mark.explore),
                                     pytest.param(6, marks=pytest.mark.explore)])
def test_the_spec_reader_reads_apache_hudis_compaction_after_archival_as_hudi_does(
        apache_hudi: Any, tmp_path: Path, version: int) -> None:
    apache_hudi_trial(apache_hudi, tmp_path / "t", version)

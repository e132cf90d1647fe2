"""Options that change safety or what is written, which the writer does not implement, are refused
(``spec.config.refused_options``); options it does not know and that change neither are warned about."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

from reference.config.options import parse_options
from reference.write.client import WriteClient
from spec.config.refused_options import (
    BUCKET_CONFLICT_STRATEGY,
    REFUSED,
    REJECT_UPDATE_STRATEGY,
    SIMPLE_CONFLICT_STRATEGY,
    STORAGE_LOCK_PROVIDER,
    refused_option,
)
from spec.errors import InvalidConfig, UnsupportedOption
from tests.test_bad_input import options, refused_unchanged, rows

ZOOKEEPER = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"

REFUSED_VALUES = {
    # option: a value Hudi users set that this writer does not implement
    "hoodie.write.lock.provider": ZOOKEEPER,
    "hoodie.write.lock.zookeeper.url": "zk1",
    "hoodie.write.lock.dynamodb.table": "locks",
    "hoodie.write.lock.num_retries": "3",
    "hoodie.write.concurrency.early.conflict.detection.enable": "true",
    "hoodie.consistency.check.enabled": "true",
    "hoodie.auto.commit": "false",
    "hoodie.datasource.write.streaming.ignore.failed.batch": "true",
    "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true",
    "hoodie.datasource.write.drop.partition.columns": "true",
    "hoodie.populate.meta.fields": "false",
    "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
    "hoodie.database.name": "sales",
    "hoodie.table.base.file.format": "ORC",
    "hoodie.clustering.async.enabled": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    # Apache Hudi 1.2.0 record index options (HoodieMetadataConfig; tests/test_hudi_tech_spec_measured.py):
    # a partitioned record index sized otherwise than by Hudi's defaults
    "hoodie.metadata.record.level.index.max.filegroup.count": "4",
    "hoodie.index.bloom.num_entries": "1000",
    # Apache Hudi 1.2.0's allow strategy loses the update (tests/test_clustering_hudi.py, the reproducer)
    "hoodie.clustering.updates.strategy": "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
}


@pytest.mark.parametrize(("key", "value"), sorted(REFUSED_VALUES.items()))
def test_an_option_that_changes_safety_or_what_is_written_is_refused(tmp_path: Path, key: str, value: str) -> None:
    """Before: warned about and ignored (a ZooKeeper lock replaced by the storage lock, a timestamp key
    generator by the simple one). After: UnsupportedOption naming the key, nothing written."""
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    err = refused_unchanged(path, lambda: client.write(pa.Table.from_pylist(rows()), "upsert",
                                                       options("COPY_ON_WRITE", 6, **{key: value})), UnsupportedOption)
    assert isinstance(err, InvalidConfig) and key in err.message
    assert not path.exists()


def test_a_zookeeper_lock_is_refused_with_the_storage_lock_as_hint() -> None:
    with pytest.raises(UnsupportedOption, match="locking") as info:
        parse_options({"hoodie.write.lock.provider": ZOOKEEPER})
    assert STORAGE_LOCK_PROVIDER in (info.value.hint or "")


@pytest.mark.parametrize(("key", "value"), [
    ("hoodie.write.lock.provider", STORAGE_LOCK_PROVIDER),
    ("hoodie.consistency.check.enabled", "false"),
    ("hoodie.auto.commit", "TRUE"),
    ("hoodie.populate.meta.fields", "true"),
    ("hoodie.database.name", "default"),
    ("hoodie.index.bloom.fpp", "0.000000001"),
    ("hoodie.datasource.write.payload.class", "org.apache.hudi.common.model.DefaultHoodieRecordPayload"),
    ("hoodie.clustering.updates.strategy", REJECT_UPDATE_STRATEGY),
])
def test_a_value_that_means_what_the_writer_does_is_accepted_without_a_warning(key: str, value: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_options({key: value})


def test_the_payload_class_must_be_the_merge_mode_s() -> None:
    overwrite = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
    parse_options({"hoodie.datasource.write.payload.class": overwrite,
                   "hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"})
    with pytest.raises(UnsupportedOption, match="payload"):
        parse_options({"hoodie.datasource.write.payload.class": overwrite})


def test_the_conflict_strategy_must_be_the_one_hudi_infers_from_the_index_type() -> None:
    """``HoodieLockConfig`` infers the bucket strategy for a bucket index and the simple one otherwise; the
    writer applies exactly that one (``spec.timeline.conflict_resolution``), so only it is accepted."""
    key = "hoodie.write.lock.conflict.resolution.strategy"
    parse_options({key: SIMPLE_CONFLICT_STRATEGY})
    parse_options({key: BUCKET_CONFLICT_STRATEGY, "hoodie.index.type": "BUCKET"})
    with pytest.raises(UnsupportedOption, match="concurrency"):
        parse_options({key: SIMPLE_CONFLICT_STRATEGY, "hoodie.index.type": "BUCKET"})
    with pytest.raises(UnsupportedOption, match="concurrency"):
        parse_options({key: BUCKET_CONFLICT_STRATEGY})


def test_a_key_generator_class_the_writer_writes_sets_its_type(tmp_path: Path) -> None:
    """Before: the class was ignored (a one-field ComplexKeyGenerator table was written as SIMPLE, its keys
    without the field name). After: the class sets the key generator type; a conflicting type is refused."""
    from spec.config.table_config import TableConfig
    from spec.read.reader import read_table

    cls = "org.apache.hudi.keygen.ComplexKeyGenerator"
    assert parse_options({"hoodie.datasource.write.keygenerator.class": cls}).keygen_type == "COMPLEX"
    path = tmp_path / "t"
    WriteClient(str(path), engine="local").write(
        pa.Table.from_pylist(rows()), "upsert",
        options("COPY_ON_WRITE", 6, **{"hoodie.datasource.write.keygenerator.class": cls}))
    assert TableConfig.load(str(path)).keygen_class == cls
    assert sorted(read_table(str(path)).column("_hoodie_record_key").to_pylist()) == ["id:k0", "id:k1"]
    with pytest.raises(InvalidConfig, match="COMPLEX"):
        parse_options({"hoodie.datasource.write.keygenerator.class": cls,
                       "hoodie.datasource.write.keygenerator.type": "SIMPLE"})


def test_an_option_that_changes_neither_is_warned_about() -> None:
    with pytest.warns(UserWarning, match="hoodie.upsert.shuffle.parallelism"):
        parse_options({"hoodie.upsert.shuffle.parallelism": "200"})


def test_every_refusal_is_reachable_and_documented() -> None:
    """Each refusal is the first to match its own key (no earlier prefix hides it), and the options
    page lists it (generated from ``REFUSED``)."""
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("hudi_spec_docs_hooks", root / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    table = hooks.refused_options_table()
    for refusal in REFUSED:
        assert refused_option(refusal.key) is refusal
        assert f"`{refusal.key}" in table
    assert hooks.REFUSED_MARKER in (root / "docs" / "guide" / "options.md").read_text()

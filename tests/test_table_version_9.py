"""Table version 9 (Apache Hudi 1.1): its hoodie.properties read like version 8's, written as Hudi 1.1
writes a new table, writes to real v9 tables, and base file formats other than parquet refused everywhere
(instead of reading no rows)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import EXIT_BAD_INPUT, main
from spec.config.properties_file import format_properties
from spec.config.table_config import PROPERTIES_FILE, TableConfig
from spec.errors import (
    InvalidTable,
    UnsupportedBaseFileFormat,
    UnsupportedTable,
    UnsupportedTableVersion,
)
from spec.read.merge import MergeMode, MergeRule
from spec.read.reader import read_table
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset, hudi_rs_read


def _v9(**extra: str) -> TableConfig:
    """A version-9 config as Apache Hudi 1.1 writes one (ordering fields, no strategy id, no payload class)."""
    props = dict(TableConfig.create("t", "MERGE_ON_READ", 8, ("id",), "ts").props)
    props.pop("hoodie.table.precombine.field")
    props.pop("hoodie.record.merge.strategy.id")
    props.pop("hoodie.compaction.payload.class")
    props.update({"hoodie.table.version": "9", "hoodie.table.initial.version": "9",
                  "hoodie.table.ordering.fields": "ts", "hoodie.table.format": "native", **extra})
    return TableConfig(props).validate()


def test_version_9_config_reads_as_hudi_1_1_writes_it() -> None:
    cfg = _v9()
    assert cfg.table_version == 9 and cfg.timeline_layout == 2
    assert cfg.ordering_field == "ts" and cfg.partial_update_mode == "NONE"
    rule = MergeRule.from_config(cfg)
    assert rule.mode == MergeMode.EVENT_TIME_ORDERING and not rule.log_wins_over_base
    commit_time = MergeRule.from_config(_v9(**{"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}))
    assert commit_time.mode == MergeMode.COMMIT_TIME_ORDERING and commit_time.log_wins_over_base
    # partial updates blend columns: not specified here, so the rule is custom (log merging refused)
    assert MergeRule.from_config(_v9(**{"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"})).mode == (
        MergeMode.CUSTOM)
    with pytest.raises(InvalidTable, match="timeline layout 1"):
        _v9(**{"hoodie.timeline.layout.version": "1"})


def test_version_9_is_created_as_hudi_1_1_creates_it() -> None:
    cfg = TableConfig.create("t", "MERGE_ON_READ", 9, ("id",), "ts")
    assert cfg.props["hoodie.table.ordering.fields"] == "ts" and cfg.ordering_field == "ts"
    assert "hoodie.record.merge.strategy.id" not in cfg.props and "hoodie.compaction.payload.class" not in cfg.props
    v8 = MergeRule.from_config(TableConfig.create("t", "MERGE_ON_READ", 8, ("id",), "ts"))
    assert MergeRule.from_config(cfg) == replace(v8, table_version=9)
    with pytest.raises(UnsupportedTableVersion, match="use 6 \\(default\\), 8 or 9"):
        TableConfig.create("t", table_version=7)
    with pytest.raises(UnsupportedTableVersion) as err:
        _v9(**{"hoodie.table.version": "10"})
    assert isinstance(err.value, UnsupportedTable) and "6, 8, 9" in str(err.value)


def _files(path: Path) -> list[tuple[Path, int]]:
    return sorted((p.relative_to(path), p.stat().st_size) for p in Path(path).rglob("*") if p.is_file())


def test_writes_to_real_version_9_tables(v9_table: RealTable, real_table_copy: Any) -> None:
    """Every table takes an upsert, which hudi-rs then reads as our reader does (through the metadata table
    where there is one, which the writer keeps: ``tests/test_metadata_writer.py``)."""
    path = real_table_copy(v9_table)
    snapshot = read_table(str(path))
    row = snapshot.slice(0, 1).drop_columns([c for c in snapshot.column_names if c.startswith("_hoodie_")])
    row = row.set_column(row.column_names.index("txn_ts"), "txn_ts", pa.array([10**15], pa.int64()))
    table = HudiTable(str(path), engine="local")
    table.write(row, "upsert")
    assert ("files" in TableConfig.load(str(path)).metadata_partitions) == (v9_table.manifest["mdt_partitions"] != "-")
    after = read_table(str(path))
    assert after.num_rows == snapshot.num_rows
    assert as_multiset(hudi_rs_read(str(path))) == as_multiset(after)


@pytest.mark.parametrize("fmt", ["LANCE", "ORC", "HFILE"])
def test_other_base_file_formats_are_refused_everywhere(tmp_path: Path, fmt: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    cfg = TableConfig.create("t", record_key_fields=("id",)).with_props(**{"hoodie.table.base.file.format": fmt})
    with pytest.raises(UnsupportedBaseFileFormat):
        TableConfig.create("t", record_key_fields=("id",), extra={"hoodie.table.base.file.format": fmt})
    (tmp_path / ".hoodie").mkdir()
    (tmp_path / PROPERTIES_FILE).write_bytes(format_properties(cfg.props))
    with pytest.raises(UnsupportedBaseFileFormat, match=f"base file format {fmt}"):
        read_table(str(tmp_path))
    for command in (["read"], ["desc"], ["timeline"], ["fsview"]):
        assert main([*command, str(tmp_path)]) == EXIT_BAD_INPUT
        assert "UnsupportedBaseFileFormat" in capsys.readouterr().err
    with pytest.raises(UnsupportedBaseFileFormat):
        HudiTable(str(tmp_path), engine="local").write(pa.table({"id": ["a"]}), "insert")


def test_a_metadata_table_is_the_one_table_with_hfile_base_files() -> None:
    mdt = TableConfig.create("t_metadata", "MERGE_ON_READ", 8, ("key",), extra={  # (validated)
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload"})
    assert mdt.is_metadata_table and mdt.base_file_format == "HFILE"
    assert not TableConfig.create("t", record_key_fields=("id",)).is_metadata_table


def test_a_new_version_9_table_has_a_metadata_table_unless_told_false(tmp_path: Path) -> None:
    """A new version 9 table gets a metadata table (its files partition) with ``hoodie.metadata.enable`` true
    or unset (Hudi 1.x's default, true); false, none; a new version 6 table none when unset."""
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.write.table.version": "9", "hoodie.metadata.enable": "true"}
    HudiTable(str(tmp_path / "t"), engine="local").write(pa.table({"id": ["a"]}), "insert", options)
    assert TableConfig.load(str(tmp_path / "t")).metadata_partitions == ("files",)
    assert as_multiset(hudi_rs_read(str(tmp_path / "t"))) == as_multiset(read_table(str(tmp_path / "t")))
    unset = {k: v for k, v in options.items() if k != "hoodie.metadata.enable"}
    for version, enable, kept in (("9", None, True), ("9", "false", False), ("6", None, False)):
        path = tmp_path / f"u{version}{enable}"
        given = {"hoodie.metadata.enable": enable} if enable else {}
        opts = {**unset, "hoodie.write.table.version": version, **given}
        HudiTable(str(path), engine="local").write(pa.table({"id": ["a"]}), "insert", opts)
        assert TableConfig.load(str(path)).metadata_partitions == (("files",) if kept else ())
        assert (path / ".hoodie" / "metadata").exists() == kept

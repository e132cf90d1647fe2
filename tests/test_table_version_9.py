"""Table version 9 (Apache Hudi 1.1): its hoodie.properties read like version 8's, writes refused with
a typed error, and base file formats other than parquet refused everywhere (instead of reading no rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import EXIT_BAD_INPUT, main
from spec.errors import InvalidTable, UnsupportedBaseFileFormat, UnsupportedTable, UnsupportedTableVersion
from spec.merge import MergeMode, MergeRule
from spec.reader import read_table
from spec.table_config import PROPERTIES_FILE, TableConfig, format_properties
from tests.conftest import RealTable


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


def test_version_9_is_read_but_not_created() -> None:
    with pytest.raises(UnsupportedTableVersion, match="version 9 is read, not yet written"):
        TableConfig.create("t", table_version=9)
    with pytest.raises(UnsupportedTableVersion) as err:
        _v9(**{"hoodie.table.version": "10"})
    assert isinstance(err.value, UnsupportedTable) and "6, 8, 9" in str(err.value)


def test_writing_a_version_9_table_is_refused_and_changes_nothing(v9_table: RealTable, real_table_copy: Any) -> None:
    path = real_table_copy(v9_table)
    before = sorted((p.relative_to(path), p.stat().st_size) for p in Path(path).rglob("*") if p.is_file())
    rows = read_table(str(path)).slice(0, 1).drop_columns(
        [c for c in read_table(str(path)).column_names if c.startswith("_hoodie_")])
    with pytest.raises(UnsupportedTableVersion, match="does not write table version 9"):
        HudiTable(str(path), engine="local").write(rows, "upsert")
    assert sorted((p.relative_to(path), p.stat().st_size) for p in Path(path).rglob("*") if p.is_file()) == before


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

"""Table properties as Apache Hudi names them, where Hudi's specification page names them otherwise, and the
table features this writer does not carry out: refused by every write and service, the table left as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.config.properties_file import parse_properties
from spec.config.table_config import KEYS_BY_NAME, PROPERTIES_FILE, TableConfig
from spec.errors import UnsupportedBaseFileFormat, UnsupportedTable
from spec.read.reader import read_table
from spec.schema.table_schema import hudi_logical_types
from spec.timeline.layout import HISTORY_DIRS, TIMELINE_DIRS
from spec.write.writer_utils import UNSUPPORTED_FEATURES, check_table_features, unsupported_features
from tests.conftest import RealTable

PAGE_ONLY_KEYS = ("hoodie.table.timeline.path", "hoodie.table.timeline.history.path", "hoodie.table.archivelog.folder")
"""Keys Hudi's specification page lists that no Hudi code declares: the real keys drop ``table.``."""


def test_timeline_paths_are_named_as_hudi_writes_them(any_real_table: RealTable) -> None:
    """Real version 8 and 9 tables name their timeline folders ``hoodie.timeline.path`` = ``timeline`` and
    ``hoodie.timeline.history.path`` = ``history`` (the history relative to the timeline folder), the archive
    folder ``hoodie.archivelog.folder``; the names on Hudi's page are in no table."""
    props = parse_properties((any_real_table.path / PROPERTIES_FILE).read_bytes())
    assert not set(PAGE_ONLY_KEYS) & set(props) and not set(PAGE_ONLY_KEYS) & set(KEYS_BY_NAME)
    if int(props["hoodie.table.version"]) >= 8:
        assert (props["hoodie.timeline.path"], props["hoodie.timeline.history.path"]) == ("timeline", "history")
        assert HISTORY_DIRS[2] == f"{TIMELINE_DIRS[2]}/history" == ".hoodie/timeline/history"
        assert (any_real_table.path / HISTORY_DIRS[2]).is_dir()
    cfg = TableConfig(props)
    assert cfg.get("hoodie.table.log.file.format") == "HOODIE_LOG" and not unsupported_features(props)
    assert cfg.get("hoodie.table.cdc.supplemental.logging.mode") == "DATA_BEFORE_AFTER"


def test_hudi_logical_types_are_found_anywhere_in_a_schema() -> None:
    variant = {"type": "record", "name": "v", "logicalType": "variant",
               "fields": [{"name": "metadata", "type": "bytes"}, {"name": "value", "type": "bytes"}]}
    vector = {"type": "fixed", "name": "e", "size": 16, "logicalType": "vector"}
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": ["null", variant]},
        {"name": "b", "type": {"type": "array", "items": {"type": "map", "values": vector}}},
        {"name": "c", "type": {"type": "int", "logicalType": "date"}}]}
    assert hudi_logical_types(schema) == ("variant", "vector") and hudi_logical_types(json.dumps(schema))
    assert hudi_logical_types({"type": "record", "name": "r", "fields": []}) == ()
    with pytest.raises(UnsupportedTable, match=r"Hudi 1\.2's logical type 'blob'"):
        check_table_features({}, ("blob",))


def _table(tmp_path: Path, version: int = 9) -> Path:
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": str(version),
               "hoodie.metadata.enable": "false",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    table = HudiTable(str(path), engine="local")
    table.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "v": [1, 2]}), "insert", options)
    table.write(pa.table({"id": ["a"], "ts": [2], "v": [3]}), "upsert", options)
    return path


def _files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _set(path: Path, **props: str) -> None:
    cfg = TableConfig.load(str(path)).with_props(**props)
    (path / PROPERTIES_FILE).write_bytes(cfg.to_bytes())


@pytest.mark.parametrize("key", [k for k, _ in UNSUPPORTED_FEATURES])
def test_a_table_with_a_feature_this_writer_does_not_carry_out_is_refused(tmp_path: Path, key: str) -> None:
    """A write, a compaction and a clean of a table that turns on change data capture (merge-on-read of version 6),
    mixed base file formats or slash-separated date partitions raise ``UnsupportedTable`` and leave every file as it
    was; a table of mixed base file formats is not read either."""
    path = _table(tmp_path, 6 if key == "hoodie.table.cdc.enabled" else 9)
    _set(path, **{key: "true"})
    before = _files(path)
    with pytest.raises(UnsupportedTable, match=key.replace(".", r"\.")):
        HudiTable(str(path), engine="local").write(pa.table({"id": ["c"], "ts": [1], "v": [4]}), "upsert")
    with pytest.raises(UnsupportedTable, match=r"cannot compact|mixes base file formats"):
        HudiTable(str(path), engine="local").compact()
    with pytest.raises(UnsupportedTable, match=r"cannot clean|mixes base file formats"):
        HudiTable(str(path), engine="local").clean({"hoodie.cleaner.commits.retained": "1"})
    assert _files(path) == before
    if key == "hoodie.table.multiple.base.file.formats.enable":
        with pytest.raises(UnsupportedBaseFileFormat, match="mixes base file formats"):
            read_table(str(path))
    else:
        assert read_table(str(path)).num_rows == 2  # reading needs none of it


def test_a_table_whose_schema_has_a_hudi_1_2_type_is_refused(tmp_path: Path) -> None:
    path = _table(tmp_path)
    cfg: Any = TableConfig.load(str(path))
    schema = json.loads(cfg.create_schema) if cfg.create_schema else {"type": "record", "name": "r", "fields": []}
    schema["fields"].append({"name": "emb", "type": ["null", {"type": "fixed", "name": "emb", "size": 8,
                                                              "logicalType": "vector"}], "default": None})
    _set(path, **{"hoodie.table.create.schema": json.dumps(schema)})
    before = _files(path)
    with pytest.raises(UnsupportedTable, match="'vector'"):
        HudiTable(str(path), engine="local").write(pa.table({"id": ["c"], "ts": [1], "v": [4]}), "upsert")
    assert _files(path) == before

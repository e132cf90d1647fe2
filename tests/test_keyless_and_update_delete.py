"""Tables with auto-generated record keys (``spec.keygen.auto_record_key``) and update/delete by a condition
(``reference.commands._update_delete``) on the local engine, without Spark (Apache Hudi's side:
``tests/test_update_delete_hudi.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.commands._update_delete import Assignment, parse_set
from spec.config.table_config import TableConfig
from spec.errors import ConfigConflict, InvalidOperation, UnsupportedOption
from spec.keygen.auto_record_key import auto_generates_record_keys, auto_record_key, check_keyless_write

OPTS = {"hoodie.table.name": "kl", "hoodie.datasource.write.partitionpath.field": "p"}


def _data(*ids: int) -> pa.Table:
    return pa.table({"id": list(ids), "p": ["a" if i % 2 else "b" for i in ids], "v": [f"v{i}" for i in ids]})


def test_the_key_rule_and_when_keys_are_generated() -> None:
    assert auto_record_key("20240101000000000", 3, 17) == "20240101000000000_3_17"
    with pytest.raises(ValueError):
        auto_record_key("20240101000000000", 0, -1)
    assert auto_generates_record_keys({})
    assert auto_generates_record_keys({"hoodie.datasource.write.recordkey.field": " "})
    assert not auto_generates_record_keys({"hoodie.datasource.write.recordkey.field": "id"})
    assert not auto_generates_record_keys({}, ("id",))
    check_keyless_write("insert", {}, prepped=False)
    check_keyless_write("delete", {}, prepped=True)
    with pytest.raises(InvalidOperation, match="delete on a table with auto-generated record keys"):
        check_keyless_write("delete", {}, prepped=False)
    with pytest.raises(UnsupportedOption, match=r"Enabling hoodie\.combine\.before\.insert is not supported"):
        check_keyless_write("insert", {"hoodie.combine.before.insert": "true"}, prepped=False)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_keyless_table_takes_inserts_upserts_and_deletes_by_condition(tmp_path: Path, table_type: str) -> None:
    t = HudiTable(str(tmp_path / "t"), engine="local")
    opts = {**OPTS, "hoodie.datasource.write.table.type": table_type}
    first = t.write(_data(1, 2, 3), "insert", opts).instant
    second = t.write(_data(1, 4), "upsert", opts).instant  # new keys: a second row of id 1
    config = TableConfig.load(str(tmp_path / "t"))
    assert config.record_key_fields == () and "hoodie.table.recordkey.fields" not in config.props
    assert config.merge_mode == "COMMIT_TIME_ORDERING" and config.ordering_field is None
    keys = {(r["id"], r["_hoodie_record_key"]) for r in t.read().to_pylist()}
    assert keys == {(1, f"{first}_0_0"), (2, f"{first}_0_1"), (3, f"{first}_0_2"), (1, f"{second}_0_0"),
                    (4, f"{second}_0_1")}
    before = t.read().num_rows
    with pytest.raises(InvalidOperation):
        t.write(_data(2), "delete", opts)
    with pytest.raises(UnsupportedOption):
        t.write(_data(9), "insert", {**opts, "hoodie.combine.before.insert": "true"})
    with pytest.raises(ConfigConflict):
        t.write(_data(9), "insert", {**opts, "hoodie.datasource.write.recordkey.field": "id"})
    assert t.read().num_rows == before  # refused: nothing written
    with pytest.raises(InvalidOperation, match="the table has none"):
        t.merge(_data(1))
    with pytest.raises(InvalidOperation, match="meta columns"):
        t.update("id = 1", "_hoodie_record_key = 'mine'")
    assert t.update("id = 1", "v = 'one'") is not None
    deleted = t.delete("id >= 3")
    assert deleted is not None and deleted.metadata.operation_type == "DELETE_PREPPED"
    rows = sorted((r["id"], r["v"], r["_hoodie_record_key"]) for r in t.read().to_pylist())
    assert rows == [(1, "one", f"{first}_0_0"), (1, "one", f"{second}_0_0"), (2, "v2", f"{first}_0_1")]


def test_update_and_delete_on_a_keyed_table(tmp_path: Path) -> None:
    t = HudiTable(str(tmp_path / "t"), engine="local")
    opts = {**OPTS, "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "n"}
    data = _data(1, 2, 3, 4).append_column("n", pa.array([5, 5, 5, None], pa.int64())).append_column(
        "m", pa.array([0, 0, 0, 0], pa.int32()))
    t.write(data, "insert", opts)
    result = t.update("p = 'a'", "v = 'odd'")
    assert result is not None and result.operation == "upsert"
    assert result.metadata.operation_type == "UPSERT_PREPPED"  # as Hudi's Spark SQL UPDATE records it
    assert t.update("id = 99", "v = 'x'") is None and t.delete("v IS NULL") is None  # nothing matched: no commit
    t.delete("n IS NULL OR id = 2")  # a null matches IS NULL only
    assert sorted((r["id"], r["v"], r["n"]) for r in t.read().to_pylist()) == [(1, "odd", 5), (3, "odd", 5)]
    for where, assignments, message in [
            ("id = 1", "id = 5", "cannot change a record key field"),
            ("id = 1", "p = 'b'", "cannot change a partition field"),
            ("id = 1", "n = 1", "cannot change the ordering field"),
            ("id = 1", "nope = 1", "names no column"),
            ("id = 1", "v = 3", "of type string"),
            ("id = 1", "m = 1.5", "whole number"),
            ("id = ", "v = 'x'", "expected a value"),
            ("missing = 1", "v = 'x'", "names no column")]:
        with pytest.raises(InvalidOperation, match=message):
            t.update(where, assignments)
    assert len(t.timeline.commits_timeline().completed()) == 3


def test_the_set_clause() -> None:
    assert parse_set("v = 'it''s', n = -2, f = 1.5, b = true, x = null") == (
        Assignment("v", "it's"), Assignment("n", -2), Assignment("f", 1.5), Assignment("b", True),
        Assignment("x", None))
    for bad in ("", "v", "v = ", "v = 1 w = 2", "v = 1, v = 2", "v > 1", "= 1", "v = w"):
        with pytest.raises(InvalidOperation, match="--set"):
            parse_set(bad)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reference.cli", *args], capture_output=True, text=True, check=False)


def test_the_command_line_verbs(tmp_path: Path) -> None:
    table = str(tmp_path / "t")
    HudiTable(table, engine="local").write(_data(1, 2, 3), "insert",
                                           {**OPTS, "hoodie.datasource.write.recordkey.field": "id"})
    out = _cli("update", table, "--where", "id < 3", "--set", "v = 'new'", "--output", "json")
    assert out.returncode == 0, out.stderr
    summary: dict[str, Any] = json.loads(out.stdout)
    assert summary["operation"] == "upsert" and summary["updates"] == 2
    out = _cli("delete", table, "--where", "v = 'new' AND p = 'a'", "--output", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["deletes"] == 1
    assert sorted((r["id"], r["v"]) for r in HudiTable(table).read().to_pylist()) == [(2, "new"), (3, "v3")]
    out = _cli("update", table, "--where", "id = 2", "--set", "id = 4")
    assert out.returncode == 2 and "hudi-spec update: InvalidOperation" in out.stderr
    out = _cli("delete", str(tmp_path / "none"), "--where", "id = 2")
    assert out.returncode == 2 and "is not a Hudi table" in out.stderr


def test_the_command_line_creates_a_keyless_table(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    source = tmp_path / "in.parquet"
    pq.write_table(_data(1, 2), source)
    table = str(tmp_path / "t")
    out = _cli("write", table, "--input", str(source), "--auto-record-key", "--record-key", "id")
    assert out.returncode == 2 and "exclude each other" in out.stderr
    out = _cli("write", table, "--input", str(source))
    assert out.returncode == 2 and "--auto-record-key" in out.stderr
    out = _cli("write", table, "--input", str(source), "--auto-record-key", "--partition-field", "p",
               "--output", "json")
    assert out.returncode == 0, out.stderr
    instant = json.loads(out.stdout)["instant"]
    assert sorted(r["_hoodie_record_key"] for r in HudiTable(table).read().to_pylist()) == [
        f"{instant}_0_0", f"{instant}_0_1"]
    out = _cli("write", table, "--input", str(source), "--auto-record-key")
    assert out.returncode == 2 and "for new tables" in out.stderr
    assert _cli("write", table, "--input", str(source)).returncode == 0  # an upsert: every row new
    assert HudiTable(table).read().num_rows == 4


@pytest.mark.spark
def test_streaming_writes_refuse_a_keyless_table(spark: Any, tmp_path: Path) -> None:
    from reference.write.streaming import StreamingWriter

    writer = StreamingWriter(str(tmp_path / "t"), OPTS, spark=spark)
    with pytest.raises(InvalidOperation, match="streaming writes to a table with auto-generated record keys"):
        writer.write_checkpoint(_data(1))
    assert not (tmp_path / "t" / ".hoodie").exists()  # refused before the table was created

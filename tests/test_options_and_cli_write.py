"""Write options (defaults, validation, unknown keys) and ``hudi-spec write``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference.cli import main
from reference.config.options import parse_options
from spec.errors import InvalidConfig
from spec.read.reader import read_table
from tests.hudi_rs import as_multiset, hudi_rs_read


def test_defaults_and_inferred_key_generator() -> None:
    cfg = parse_options({"hoodie.datasource.write.recordkey.field": "id"})
    assert (cfg.operation, cfg.table_version, cfg.keygen_type, cfg.max_file_size) == ("upsert", 9, "NON_PARTITION",
                                                                                      125829120)
    assert parse_options({"hoodie.datasource.write.recordkey.field": "a,b",
                          "hoodie.datasource.write.partitionpath.field": "p"}).keygen_type == "COMPLEX"


def test_bad_values_and_unknown_keys() -> None:
    with pytest.raises(InvalidConfig, match=r"hoodie\.write\.table\.version"):
        parse_options({"hoodie.write.table.version": "7"})
    with pytest.raises(InvalidConfig, match=r"hoodie\.parquet\.max\.file\.size"):
        parse_options({"hoodie.parquet.max.file.size": "lots"})
    with pytest.warns(UserWarning, match=r"hoodie\.not\.a\.thing"):
        parse_options({"hoodie.not.a.thing": "1"})
    assert parse_options({}).index_type == "BLOOM"  # Hudi's default
    assert parse_options({"hoodie.index.type": "simple"}).index_type == "SIMPLE"


@pytest.mark.spark
def test_cli_write_then_read(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2], "ts": [1, 1], "city": ["a", "b"]}), src)
    table = tmp_path / "t"
    assert main(["write", str(table), "--input", str(src), "--record-key", "id", "--ordering-field", "ts",
                 "--partition-field", "city", "--table-version", "8", "--engine", "spark", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inserts"] == 2 and out["action"] == "commit"
    assert (out["engine"], out["engine_choice"]) == ("spark", "--engine spark")  # the parquet input read by Spark
    assert as_multiset(read_table(str(table))) == as_multiset(hudi_rs_read(str(table)))
    assert main(["write", str(table), "--input", str(tmp_path / "missing.txt")]) == 2


def test_cli_write_with_the_local_engine_starts_no_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import reference.engines.spark_session

    def no_spark(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the local engine started a Spark session")

    monkeypatch.setattr(reference.engines.spark_session, "get_or_create_session", no_spark)
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3], "ts": [1, 1, 2], "city": ["a", "b", "a"]}), src)
    table = tmp_path / "t"
    args = ["write", str(table), "--input", str(src), "--record-key", "id", "--ordering-field", "ts",
            "--partition-field", "city", "--table-type", "MERGE_ON_READ", "--engine", "local", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["inserts"] == 3
    pq.write_table(pa.table({"id": [1, 4], "ts": [5, 1], "city": ["a", "b"]}), src)
    assert main([*args[:-1], "--operation", "upsert", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["action"], out["updates"], out["inserts"]) == ("deltacommit", 1, 1)
    assert sorted(read_table(str(table)).column("id").to_pylist()) == [1, 2, 3, 4]
    assert as_multiset(read_table(str(table))) == as_multiset(hudi_rs_read(str(table)))


def test_cli_write_into_a_hyphenated_folder_gives_a_table_hudi_rs_reads(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The default table name is the folder's, ``my-table``: the Avro record name is sanitized as
    Hudi's ``AvroSchemaUtils.getAvroRecordQualifiedName`` does, so hudi-rs can parse the schema."""
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2], "ts": [1, 1], "city": ["a", "b"]}), src)
    table = tmp_path / "my-table"
    assert main(["write", str(table), "--input", str(src), "--record-key", "id", "--ordering-field", "ts",
                 "--partition-field", "city", "--engine", "local", "--table-version", "6", "--json"]) == 0
    capsys.readouterr()
    props = (table / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.name=my-table" in props
    commit = next(p for p in (table / ".hoodie").iterdir() if p.name.endswith(".commit"))
    schema = json.loads(json.loads(commit.read_text())["extraMetadata"]["schema"])
    assert (schema["name"], schema["namespace"]) == ("my__table_record", "hoodie.my__table")
    assert as_multiset(read_table(str(table))) == as_multiset(hudi_rs_read(str(table)))
    assert sorted(hudi_rs_read(str(table)).column("id").to_pylist()) == [1, 2]  # type: ignore[union-attr]


@pytest.mark.parametrize("version", [8, 9])
def test_the_merge_mode_is_hudi_s_write_option_and_the_table_property_is_compared(tmp_path: Path,
                                                                                   version: int) -> None:
    """Apache Hudi 1.2.0 (commit-time-ordering-cow-v8): ``hoodie.write.record.merge.mode`` creates the table's
    merge mode; the table property ``hoodie.record.merge.mode`` creates none (the mode is event-time ordering,
    from the ordering field) and is compared with an existing table's; the write option is compared on
    version 9 only."""
    from reference.api import HudiTable
    from spec.config.table_config import TableConfig
    from spec.errors import ConfigConflict

    base = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": str(version)}

    def write(path: Path, ts: int, v: str, **opts: str) -> None:
        HudiTable(str(path), engine="local").write(pa.Table.from_pylist([{"id": 1, "ts": ts, "v": v}]), "upsert",
                                                   {**base, **opts})

    table_key, write_key = "hoodie.record.merge.mode", "hoodie.write.record.merge.mode"
    with pytest.warns(UserWarning, match=f"{table_key}. is a table property"):  # as Hudi: no table from it
        write(tmp_path / "a", 5, "x", **{table_key: "COMMIT_TIME_ORDERING"})
    assert TableConfig.load(str(tmp_path / "a")).merge_mode == "EVENT_TIME_ORDERING"
    with pytest.raises(ConfigConflict, match=table_key):
        write(tmp_path / "a", 1, "y", **{table_key: "COMMIT_TIME_ORDERING"})
    write(tmp_path / "b", 5, "x", **{write_key: "commit_time_ordering"})
    assert TableConfig.load(str(tmp_path / "b")).merge_mode == "COMMIT_TIME_ORDERING"
    write(tmp_path / "b", 1, "y")
    assert [r["v"] for r in read_table(str(tmp_path / "b")).to_pylist()] == ["y"]  # the later write wins
    if version == 9:
        with pytest.raises(ConfigConflict, match=write_key):
            write(tmp_path / "b", 0, "z", **{write_key: "EVENT_TIME_ORDERING"})
    else:
        write(tmp_path / "b", 0, "z", **{write_key: "EVENT_TIME_ORDERING"})  # the table's mode merges
        assert [r["v"] for r in read_table(str(tmp_path / "b")).to_pylist()] == ["z"]

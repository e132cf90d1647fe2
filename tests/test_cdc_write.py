"""The writer's CDC logs (``spec.write.cdc_logger``, the merge handle in ``reference.io.handles``), without Spark:
their schemas, record order, names, blocks and write stats as Apache Hudi 1.2.0 writes them (the literals below
were read from CDC logs Hudi 1.2.0 wrote for a table ``t`` of columns ``id long, p string, ts long, v string``),
what the CDC query reads from them, what is refused, and the table services that delete them. Apache Hudi's own
CDC query on tables this writer wrote is in ``tests/test_cdc_write_hudi.py``."""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.executors.rollback import rollback_instant
from reference.write.client import WriteClient
from spec.config.table_config import TableConfig
from spec.errors import ConfigConflict, UnsupportedOption, UnsupportedTable
from spec.file_group.file_naming import is_base_file_name, parse_base_file_name, parse_log_file_name
from spec.file_group.log_file.log_blocks import decode_cdc_records
from spec.file_group.log_file.log_format import BlockType, HeaderKey, read_blocks
from spec.metadata.index_keys import java_hash_map_order, java_string_hash
from spec.metadata.metadata_table import read_files_partition
from spec.read.cdc import read_cdc
from spec.read.reader import read_table
from spec.schema.table_schema import avro_schema_from_arrow, record_name_for_table, with_meta_fields
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Instant
from spec.write.cdc_logger import (
    DATA_BEFORE,
    DATA_BEFORE_AFTER,
    OP_KEY_ONLY,
    cdc_schema_json,
)

IMAGE = ('{"type":"record","name":"t_record","fields":[{"name":"id","type":["null","long"],"default":null},'
         '{"name":"p","type":["null","string"],"default":null},{"name":"ts","type":["null","long"],"default":null},'
         '{"name":"v","type":["null","string"],"default":null}]}')
HUDI_SCHEMAS = {
    OP_KEY_ONLY: '{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
                 '{"name":"record_key","type":["string","null"]}]}',
    DATA_BEFORE: '{"type":"record","name":"CDC","namespace":"hoodie.t","doc":"","fields":[{"name":"op","type":'
                 '["null","string"],"doc":"","default":null},{"name":"record_key","type":["null","string"],"doc":"",'
                 f'"default":null}},{{"name":"before","type":["null",{IMAGE}],"doc":"","default":null}}]}}',
    DATA_BEFORE_AFTER: '{"type":"record","name":"CDC","namespace":"hoodie.t","doc":"","fields":[{"name":"op","type":'
                       '["null","string"],"doc":"","default":null},{"name":"ts_ms","type":["null","string"],"doc":"",'
                       f'"default":null}},{{"name":"before","type":["null",{IMAGE}],"doc":"","default":null}},'
                       '{"name":"after","type":["null","t_record"],"doc":"","default":null}]}',
}
"""The SCHEMA headers of the CDC logs Apache Hudi 1.2.0 wrote, per logging mode."""

PUT_ORDER = ["k0", "k2", "k4", "k6", "k8", "k10", "k12", "k14", "k16", "k18", "k20", "k22", "k24", "k26", "k28",
             "k30", "k32", "k34", "k36", "k38", "m1"]
HUDI_ORDER = ["m1", "k0", "k2", "k20", "k4", "k30", "k22", "k6", "k10", "k32", "k24", "k8", "k12", "k34", "k26",
              "k14", "k36", "k28", "k16", "k38", "k18"]
"""An upsert of 20 keys of a file group and one insert routed to it: the merge handle's put order (the stored
file's order, then the insert) and the order of the records in the CDC block Apache Hudi 1.2.0 wrote."""


def test_the_cdc_schemas_are_hudis() -> None:
    table = json.dumps(with_meta_fields(avro_schema_from_arrow(
        pa.schema([("id", pa.int64()), ("p", pa.string()), ("ts", pa.int64()), ("v", pa.string())]),
        *record_name_for_table("t"))), separators=(",", ":"))
    for mode, expected in HUDI_SCHEMAS.items():
        assert cdc_schema_json(mode, table) == expected


def test_records_are_in_the_order_of_hudis_hash_map() -> None:
    assert java_string_hash("hello") == 99162322 and java_string_hash("polygenelubricants") == -(2**31)
    assert [PUT_ORDER[i] for i in java_hash_map_order(PUT_ORDER)] == HUDI_ORDER


def _opts(mode: str = DATA_BEFORE_AFTER, version: int = 9, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": mode,
            "hoodie.write.table.version": str(version), "hoodie.metadata.enable": "false",
            "hoodie.parquet.small.file.limit": "0", **extra}


def _rows(*rows: tuple[int, str, int, str]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(("id", "p", "ts", "v"), r, strict=True)) for r in rows])


def _cdc_logs(path: Path) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for f in sorted(path.rglob(".*.cdc")):
        blocks = list(read_blocks(f.read_bytes()))
        assert len(blocks) == 1 and blocks[0].block is not None
        block = blocks[0].block
        assert block.block_type == BlockType.CDC_DATA_BLOCK and block.format_version == 1 and not block.footer
        assert [k for k, _ in block.header] == [HeaderKey.INSTANT_TIME, HeaderKey.SCHEMA]
        out[f.relative_to(path).as_posix()] = decode_cdc_records(block)
    return out


@pytest.mark.parametrize("version", [6, 8, 9])
def test_a_merge_handle_writes_one_cdc_log_beside_its_base_file(tmp_path: Path, version: int) -> None:
    """The CDC log is named with the write's instant and the base file's write token; the stat names it with its
    size; an insert into a new file group logs nothing; an update that loses to the stored row is no change (an
    empty block); a delete of every row leaves an empty base file and logs the deletes."""
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(_rows((1, "a", 1, "v1"), (2, "a", 1, "v2"), (3, "b", 1, "v3")), "insert", _opts(version=version))
    assert not list(path.rglob(".*.cdc"))  # new file groups
    up = client.write(_rows((1, "a", 2, "v1b"), (3, "b", 0, "stale")), "upsert", _opts(version=version))
    logs = _cdc_logs(path)
    for stats in up.metadata.partition_to_write_stats.values():
        (stat,) = stats
        base = parse_base_file_name(stat.path.rsplit("/", 1)[-1])
        (cdc_path, size), = (stat.cdc_stats or {}).items()
        log = parse_log_file_name(cdc_path.rsplit("/", 1)[-1])
        assert (log.file_id, log.instant, log.version, log.write_token, log.suffix) == (
            base.file_id, up.instant, 1, base.write_token, ".cdc")
        assert (path / cdc_path).stat().st_size == size
    assert logs[f"a/{_only(up, 'a')}"] == [{"op": "u", "ts_ms": up.instant, "before": {"id": 1, "p": "a", "ts": 1,
                                                                                        "v": "v1"},
                                            "after": {"id": 1, "p": "a", "ts": 2, "v": "v1b"}}]
    assert logs[f"b/{_only(up, 'b')}"] == []  # the stale update: no change, a block all the same
    gone = client.write(_rows((3, "b", 5, "")), "delete", _opts(version=version))
    (stat,) = gone.metadata.partition_to_write_stats["b"]
    assert stat.num_writes == 0 and stat.num_deletes == 1 and stat.cdc_stats
    assert _cdc_logs(path)[f"b/{_only(gone, 'b')}"] == [
        {"op": "d", "ts_ms": gone.instant, "before": {"id": 3, "p": "b", "ts": 1, "v": "v3"}, "after": None}]
    ops = [(r.op, r.ts_ms) for r in read_cdc(str(path))]
    assert sorted(ops) == sorted([("i", _first(path)), ("i", _first(path)), ("i", _first(path)), ("u", up.instant),
                                  ("d", gone.instant)])


def _only(result: Any, partition: str) -> str:
    (stat,) = result.metadata.partition_to_write_stats[partition]
    (cdc_path,) = stat.cdc_stats
    return str(cdc_path).rsplit("/", 1)[-1]


def _first(path: Path) -> str:
    storage = Storage(str(path))
    return Timeline.load(storage, TableConfig.load(storage).timeline_layout).completed().instants[0].requested


@pytest.mark.parametrize("mode", [OP_KEY_ONLY, DATA_BEFORE])
def test_the_other_modes_log_keys_and_before_images(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(_rows((1, "a", 1, "v1"), (2, "a", 1, "v2")), "insert", _opts(mode))
    up = client.write(_rows((1, "a", 2, "v1b"), (4, "a", 2, "v4")), "upsert",
                      _opts(mode, **{"hoodie.parquet.small.file.limit": "104857600"}))  # the insert joins the group
    (records,) = _cdc_logs(path).values()
    before = {"id": 1, "p": "a", "ts": 1, "v": "v1"}
    expected = ([{"op": "u", "record_key": "1"}, {"op": "i", "record_key": "4"}] if mode == OP_KEY_ONLY else
                [{"op": "u", "record_key": "1", "before": before}, {"op": "i", "record_key": "4", "before": None}])
    assert sorted(records, key=str) == sorted(expected, key=str)
    changes = {(r.op, r.ts_ms, (r.before or {}).get("v"), (r.after or {}).get("v")) for r in read_cdc(str(path))}
    assert {("u", up.instant, "v1", "v1b"), ("i", up.instant, None, "v4")} <= changes
    assert TableConfig.load(Storage(str(path))).cdc_mode == mode


def test_what_is_refused_leaves_the_table_as_it_was(tmp_path: Path) -> None:
    """Merge-on-read of version 6 with change data capture, an insert the concat handle would take without logging
    it, and a change of an existing table's CDC properties are refused before anything is written."""
    with pytest.raises(UnsupportedTable, match="merge-on-read table of version 6"):
        WriteClient(str(tmp_path / "mor"), engine="local").write(
            _rows((1, "a", 1, "v1")), "upsert",
            _opts(version=6, **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"}))
    assert not (tmp_path / "mor").exists()
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(_rows((1, "a", 1, "v1")), "insert", _opts())
    files = sorted(p.as_posix() for p in path.rglob("*"))
    with pytest.raises(UnsupportedOption, match=r"allow\.duplicate\.on\.inserts"):
        client.write(_rows((2, "a", 1, "v2")), "insert", _opts(**{"hoodie.parquet.small.file.limit": "1000000"}))
    with pytest.raises(ConfigConflict, match=r"supplemental\.logging\.mode"):
        client.write(_rows((2, "a", 1, "v2")), "upsert", _opts(OP_KEY_ONLY))
    assert sorted(p.as_posix() for p in path.rglob("*")) == files
    plain = tmp_path / "plain"
    WriteClient(str(plain), engine="local").write(_rows((1, "a", 1, "v1")), "insert", _opts(**{
        "hoodie.table.cdc.enabled": "false"}))
    with pytest.raises(ConfigConflict, match=r"cdc\.enabled"):  # an existing table's CDC is not turned on by a write
        WriteClient(str(plain), engine="local").write(_rows((1, "a", 2, "v2")), "upsert", _opts())
    merged = client.write(_rows((2, "a", 1, "v2")), "insert", _opts(**{
        "hoodie.parquet.small.file.limit": "1000000", "hoodie.merge.allow.duplicate.on.inserts": "false"}))
    assert [r["op"] for r in next(iter(_cdc_logs(path).values()))] == ["i"]  # merged into the small file, logged
    assert {r.op for r in read_cdc(str(path)) if r.ts_ms == merged.instant} == {"i"}


def test_rollback_and_cleaner_delete_cdc_logs_with_their_write_and_slice(tmp_path: Path) -> None:
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    opts = _opts(version=8, **{"hoodie.clean.commits.retained": "1"})
    instants = [client.write(_rows((1, "a", i, f"x{i}")), "upsert", opts).instant for i in range(4)]
    names = [p.name for p in (path / "a").iterdir() if is_base_file_name(p.name) or p.name.endswith(".cdc")]
    # the cleaner kept the latest two slices, each a base file and its CDC log; the second write's slice went whole
    assert sorted(parse_log_file_name(n).instant for n in names if n.endswith(".cdc")) == instants[2:]
    assert sorted(parse_base_file_name(n).instant for n in names if not n.endswith(".cdc")) == instants[2:]
    last = client.write(_rows((1, "a", 9, "x9")), "upsert", opts)
    storage = Storage(str(path))
    table = TableConfig.load(storage)
    target = next(i for i in Timeline.load(storage, table.timeline_layout).instants
                  if i.requested == last.instant and i.action == "commit")
    rollback_instant(storage, table, Instant(target.requested, target.action, target.state))
    assert not [p for p in path.rglob(f".*{last.instant}*")]  # the base file and the CDC log of the write
    assert read_table(str(path)).column("v").to_pylist() == ["x3"]


def test_images_of_every_column_type_are_logged_as_avro_values(tmp_path: Path) -> None:
    """Timestamps, decimals, dates, maps, lists, structs, bytes and floats in the before and after images."""
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("t", pa.timestamp("us", tz="UTC")),
                        ("d", pa.decimal128(10, 2)), ("dt", pa.date32()), ("m", pa.map_(pa.string(), pa.int32())),
                        ("l", pa.list_(pa.int64())), ("s", pa.struct([("a", pa.int32()), ("b", pa.string())])),
                        ("bin", pa.binary()), ("f", pa.float32())])

    def rows(v: int) -> pa.Table:
        return pa.Table.from_pylist([{
            "id": "k1", "ts": v, "t": datetime.datetime(2024, 1, v, tzinfo=datetime.UTC),
            "d": decimal.Decimal(f"{v}.25"), "dt": datetime.date(2024, 1, v), "m": [("x", v)], "l": [1, v],
            "s": {"a": v, "b": "q"}, "bin": bytes([v]), "f": 1.5}], schema=schema)

    def image(v: int) -> dict[str, Any]:
        return {"id": "k1", "ts": v, "t": datetime.datetime(2024, 1, v, tzinfo=datetime.UTC),
                "d": decimal.Decimal(f"{v}.25"), "dt": datetime.date(2024, 1, v), "m": {"x": v}, "l": [1, v],
                "s": {"a": v, "b": "q"}, "bin": bytes([v]), "f": 1.5}

    path = tmp_path / "t"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.table.cdc.enabled": "true",
            "hoodie.metadata.enable": "false"}
    client = WriteClient(str(path), engine="local")
    client.write(rows(1), "insert", opts)
    up = client.write(rows(2), "upsert", opts)
    (records,) = _cdc_logs(path).values()
    assert records == [{"op": "u", "ts_ms": up.instant, "before": image(1), "after": image(2)}]


def test_the_metadata_tables_files_partition_lists_the_cdc_logs(tmp_path: Path) -> None:
    """A commit's CDC logs are files of their partition in the metadata table (``cdcStats``), and so are those a
    metadata table built over an existing table finds."""
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(_rows((1, "a", 1, "v1")), "insert", _opts(**{"hoodie.metadata.enable": "true"}))
    client.write(_rows((1, "a", 2, "v2")), "upsert", _opts(**{"hoodie.metadata.enable": "false"}))  # none kept
    client.write(_rows((1, "a", 3, "v3")), "upsert", _opts(**{"hoodie.metadata.enable": "true"}))  # built again
    client.write(_rows((1, "a", 4, "v4")), "upsert", _opts(**{"hoodie.metadata.enable": "true"}))
    storage = Storage(str(path))
    listing = read_files_partition(storage, Timeline.load(storage, TableConfig.load(storage).timeline_layout))
    on_disk = {p.name: p.stat().st_size for p in (path / "a").iterdir() if p.name.endswith(".cdc")}
    assert len(on_disk) == 3
    assert {n: i.size for n, i in listing["a"].items() if n.endswith(".cdc") and not i.is_deleted} == on_disk


@pytest.mark.parametrize(("version", "io_type"), [(6, "APPEND"), (9, "CREATE")])
def test_a_marker_names_the_cdc_log_as_hudis_log_writer_marks_a_log(tmp_path: Path, version: int,
                                                                     io_type: str) -> None:
    path = tmp_path / "t"
    client = WriteClient(str(path), engine="local")
    client.write(_rows((1, "a", 1, "v1")), "insert", _opts(version=version))
    seen: list[str] = []
    real = Storage.create_if_absent

    def spy(self: Storage, rel: str, data: bytes) -> Any:
        seen.append(rel)
        return real(self, rel, data)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Storage, "create_if_absent", spy)
        up = client.write(_rows((1, "a", 2, "v2")), "upsert", _opts(version=version))
    assert f".hoodie/.temp/{up.instant}/a/{_only(up, 'a')}.marker.{io_type}" in seen


def test_merge_on_read_compactions_log_their_changes_and_appends_name_the_slices_logs(tmp_path: Path) -> None:
    """Merge-on-read (version 8 and 9): updates appended to logs write no CDC log (the query infers them); a
    compaction writes one beside each base file it rewrites, of its changes against the old base file, named in
    its stat (not read by the query: a compaction yields no change); the next append names the slice's logs, its
    CDC log too, as Apache Hudi 1.2.0's append handle does."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    opts = _opts(**{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    table.write(_rows((1, "a", 1, "v1"), (2, "a", 1, "v2")), "insert", opts)
    up = table.write(_rows((1, "a", 2, "v1b")), "upsert", opts)
    assert not list(path.rglob(".*.cdc"))
    compaction = table.compact()
    assert compaction is not None
    (records,) = _cdc_logs(path).values()
    assert records == [{"op": "u", "ts_ms": compaction, "before": {"id": 1, "p": "a", "ts": 1, "v": "v1"},
                        "after": {"id": 1, "p": "a", "ts": 2, "v": "v1b"}}]
    (cdc_name,) = [p.name for p in path.rglob(".*.cdc")]
    again = table.write(_rows((2, "a", 3, "v2b")), "upsert", opts)
    (stat,) = again.metadata.partition_to_write_stats["a"]
    assert stat.log_files is not None and stat.log_files[0] == cdc_name and stat.log_files[-1] == stat.path[2:]
    changes = sorted((r.op, r.ts_ms, (r.before or {}).get("v"), (r.after or {}).get("v")) for r in read_cdc(str(path)))
    assert [c for c in changes if c[0] != "i"] == [("u", up.instant, "v1", "v1b"), ("u", again.instant, "v2", "v2b")]

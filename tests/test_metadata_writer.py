"""The writer's metadata table (``spec.metadata.writer``, ``reference.metadata.writer``): its files byte for byte
as Hudi 1.1 writes them, every write and table service recorded in the files partition, crashes repaired,
partitions it does not keep removed, and the metadata table turned off — each checked by hudi-rs (which lists
files through the metadata table) against the spec's reader and by ``check`` (the files partition against the
live files on storage)."""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.checker import check_table
from conformance.runner import FixtureCase, Verdict, run_case
from reference.api import HudiTable
from reference.executors.clean import clean
from reference.executors.restore import restore
from reference.executors.rollback import rollback
from reference.executors.savepoint import savepoint_create
from spec.actions.archive import ArchiveConfig, archived_instants
from spec.actions.clean import CleanConfig
from spec.config.table_config import TableConfig
from spec.errors import InvalidOperation, UnsupportedTableVersion
from spec.file_group.log_file.log_format import BlockType, read_blocks
from spec.metadata.hfile import parse_hfile
from spec.metadata.hfile_writer import build_hfile
from spec.metadata.metadata_table import (
    FILES_PARTITION,
    METADATA_TABLE_PATH,
    file_infos,
    hfile_records,
    list_table_files,
)
from spec.metadata.writer import (
    SOLO_COMMIT_TIMESTAMP,
    commit_records,
    earliest_for_metadata_archival,
    enabled_by_default,
    index_definitions_without,
    init_instant,
    latest_compaction,
    merged_by_compaction,
    metadata_archival_retains,
    metadata_archive_config,
    metadata_table_config,
    records_hfile,
)
from spec.read.reader import read_table
from spec.schema.table_schema import META_FIELDS
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action, Instant, State
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset, hudi_rs_read
from tests.test_writer_v9 import CORPUS, _v9_cases

ON = {"hoodie.metadata.enable": "true"}


def _options(table_type: str, version: int, **more: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.table.type": table_type,
            **ON, **more}


def _listings(path: str | Path) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
    storage = Storage(str(path))
    cfg = TableConfig.load(storage)
    timeline = Timeline.load(storage, cfg.timeline_layout)
    via_mdt = sorted((f.partition_path, f.name, f.size) for f in list_table_files(storage, cfg, timeline))
    on_storage = sorted((f.partition_path, f.name, f.size)
                        for f in list_table_files(storage, cfg, timeline, use_metadata_table=False))
    return via_mdt, on_storage


def _assert_consistent(path: str | Path) -> None:
    """hudi-rs (through the metadata table) reads what the spec's reader reads from a storage listing, and
    ``check`` finds nothing wrong (the files partition lists exactly the live files)."""
    assert FILES_PARTITION in TableConfig.load(str(path)).metadata_partitions
    assert as_multiset(hudi_rs_read(str(path))) == as_multiset(read_table(str(path)))
    errors = [f for f in check_table(str(path)).findings if f.level == "error"]
    assert errors == []


# --- the files, as Hudi 1.1 writes them ------------------------------------------------------------


def _metadata_hfiles(table: RealTable) -> list[tuple[str, bytes]]:
    out = []
    for f in sorted((table.path / METADATA_TABLE_PATH / FILES_PARTITION).iterdir()):
        data = f.read_bytes()
        if f.name.endswith(".hfile"):
            out.append((f.name, data))
        elif ".log." in f.name:
            out += [(f.name, r.block.content) for r in read_blocks(data)
                    if r.block is not None and r.block.block_type == BlockType.HFILE_DATA_BLOCK]
    return out


def _with_metadata_table(*sets: list[RealTable]) -> list[RealTable]:
    return [t for tables in sets for t in tables
            if FILES_PARTITION in t.manifest.get("mdt_partitions", "").split(",")
            or (t.path / METADATA_TABLE_PATH / FILES_PARTITION).is_dir()]


def test_hudi_1_1_metadata_hfiles_are_rebuilt_byte_for_byte_from_their_records(
        real_tables_v9: list[RealTable]) -> None:
    """Every files-partition HFile of the Hudi 1.1 tables (base files and log blocks) is what ``build_hfile``
    lays out from its entries; log blocks and the initial base file are what ``records_hfile`` makes from the
    decoded records alone, given in any order (record encoding, the HashMap order of the file info and of the
    records' maps, bloom filter included)."""
    tables = _with_metadata_table(real_tables_v9)
    assert len(tables) == 4
    hfiles = [(f"{t.name}/{where}", data) for t in tables for where, data in _metadata_hfiles(t)]
    for where, data in hfiles:
        hf = parse_hfile(data)
        created = struct.unpack(">q", hf.file_info["hfile.CREATE_TIME_TS"])[0]
        user = [(k, v) for k, v in hf.file_info.items()
                if not k.startswith("hfile.") and k not in ("KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY")]
        metas = [(m.first_key, p) for m, p in zip(hf.meta_index, hf.meta_blocks, strict=True)]
        assert build_hfile(hf.entries, user, metas, created) == data, where
        records = {k: dict(sorted(file_infos(r).items())) for k, r in hfile_records(data).items()}  # (any order)
        base = where.endswith(".hfile")
        if not base or where.endswith(f"_{init_instant(())}.hfile"):
            assert records_hfile(records, created, base_file=base, table_version=9) == data, where


def test_the_metadata_tables_properties_are_hudis(real_tables: list[RealTable],
                                                  real_tables_v9: list[RealTable]) -> None:
    tables = _with_metadata_table(real_tables, real_tables_v9)
    assert len(tables) == 5
    for t in tables:
        data = TableConfig.load(str(t.path))
        assert metadata_table_config(data).props == TableConfig.load(str(t.path / METADATA_TABLE_PATH)).props, t.name


def test_index_definitions_lose_exactly_the_dropped_indexes() -> None:
    text = ('{\n  "indexDefinitions" : {\n    "a" : {\n      "indexName" : "a"\n    },\n'
            '    "b" : {\n      "indexName" : "b"\n    }\n  }\n}')
    assert json.loads(index_definitions_without(text, ["a"])) == {"indexDefinitions": {"b": {"indexName": "b"}}}
    assert index_definitions_without(text, ["a", "b"]) == '{\n  "indexDefinitions" : { }\n}'


def test_init_instants_skip_those_taken() -> None:
    assert init_instant(()) == "00000000000000000"
    assert init_instant(["00000000000000000", "00000000000000001"]) == "00000000000000002"


# --- our writer's tables ---------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("version", [8, 9])
def test_every_operation_keeps_the_files_partition(tmp_path: Path, table_type: str, version: int) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options(table_type, version)
    t.write(pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "p": ["x", "y", "x"]}), "insert", opts)
    assert (path / METADATA_TABLE_PATH / ".hoodie" / "hoodie.properties").exists()
    t.write(pa.table({"id": ["a", "d"], "ts": [2, 2], "p": ["x", "z"]}), "upsert", opts)
    t.write(pa.table({"id": ["b"], "ts": [3], "p": ["y"]}), "delete", opts)
    t.write(pa.table({"id": ["e"], "ts": [4], "p": ["z"]}), "insert_overwrite", opts)
    t.delete_partitions(["y"], opts)
    if table_type == "MERGE_ON_READ":
        assert t.compact() is not None
    storage = Storage(str(path))
    clean(storage, TableConfig.load(storage), CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS",
                                                          file_versions_retained=1))
    _assert_consistent(path)
    assert sorted(read_table(str(path)).column("id").to_pylist()) == ["a", "c", "e"]
    mdt_timeline = Timeline.load(Storage(str(path / METADATA_TABLE_PATH)), 2)
    data_instants = {i.requested for i in Timeline.load(storage, 2).instants if i.is_completed}
    assert data_instants <= {i.requested for i in mdt_timeline.instants if i.is_completed}


def test_rollback_rolls_back_the_metadata_tables_instant(tmp_path: Path) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("MERGE_ON_READ", 9)
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", opts)
    last = t.write(pa.table({"id": ["a"], "ts": [2], "p": ["x"]}), "upsert", opts).instant
    storage = Storage(str(path))
    rollback(storage, TableConfig.load(storage), last)
    mdt = Timeline.load(Storage(str(path / METADATA_TABLE_PATH)), 2)
    assert mdt.get(last) is None and any(i.action == "rollback" and i.is_completed for i in mdt.instants)
    assert not any(f.name.startswith(f".files-0000-0_{last}")
                   for f in Storage(str(path / METADATA_TABLE_PATH)).list(FILES_PARTITION))
    _assert_consistent(path)
    assert read_table(str(path)).column("ts").to_pylist() == [1]


def test_restore_lists_the_table_anew(tmp_path: Path) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("COPY_ON_WRITE", 9)
    first = t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", opts).instant
    storage = Storage(str(path))
    savepoint_create(storage, TableConfig.load(storage), first)
    t.write(pa.table({"id": ["b"], "ts": [2], "p": ["y"]}), "insert", opts)
    restore(storage, TableConfig.load(storage), first)
    _assert_consistent(path)
    assert read_table(str(path)).column("id").to_pylist() == ["a"]


def test_a_data_instant_that_did_not_complete_is_skipped_then_rolled_back(tmp_path: Path) -> None:
    """A crash after the metadata deltacommit and before the data instant completed: readers skip the
    deltacommit of a data instant that is not complete, and the next write rolls both back."""
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("MERGE_ON_READ", 9)
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", opts)
    crashed = t.write(pa.table({"id": ["a", "b"], "ts": [2, 2], "p": ["x", "x"]}), "upsert", opts).instant
    timeline_dir = path / ".hoodie" / "timeline"
    (completed,) = [f for f in timeline_dir.iterdir() if f.name.startswith(f"{crashed}_")]
    completed.unlink()  # the data instant is inflight again; its metadata deltacommit completed
    assert as_multiset(hudi_rs_read(str(path))) == as_multiset(read_table(str(path)))
    assert read_table(str(path)).column("ts").to_pylist() == [1]
    t.write(pa.table({"id": ["c"], "ts": [3], "p": ["x"]}), "insert", opts)
    assert Timeline.load(Storage(str(path / METADATA_TABLE_PATH)), 2).get(crashed) is None
    _assert_consistent(path)
    assert sorted(read_table(str(path)).column("id").to_pylist()) == ["a", "c"]


def test_turning_the_metadata_table_off_deletes_it(tmp_path: Path) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", _options("COPY_ON_WRITE", 9))
    t.write(pa.table({"id": ["b"], "ts": [1], "p": ["x"]}), "insert", {"hoodie.metadata.enable": "true"})
    assert (path / METADATA_TABLE_PATH).exists()
    t.write(pa.table({"id": ["c"], "ts": [1], "p": ["x"]}), "insert", {"hoodie.metadata.enable": "false"})
    assert not (path / METADATA_TABLE_PATH).exists()
    assert TableConfig.load(str(path)).metadata_partitions == ()
    t.write(pa.table({"id": ["d"], "ts": [1], "p": ["x"]}), "insert", {"hoodie.metadata.enable": "true"})
    _assert_consistent(path)  # turned on again: listed anew
    assert sorted(read_table(str(path)).column("id").to_pylist()) == ["a", "b", "c", "d"]


def test_a_version_6_table_refuses_the_metadata_table_and_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", _options("COPY_ON_WRITE", 6,
                                                                               **{"hoodie.metadata.enable": "false"}))
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    with pytest.raises(InvalidOperation, match="metadata"):
        t.write(pa.table({"id": ["b"], "ts": [1], "p": ["x"]}), "insert", ON)
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before


def test_table_services_refuse_a_version_6_metadata_table_they_would_leave_stale(tmp_path: Path) -> None:
    """A version 6 table with a metadata table (as Apache Hudi 0.x writes one) is not cleaned, rolled back,
    restored or compacted by this writer, which does not keep version 6 metadata tables: each is refused with
    nothing changed. Written once with the metadata table off (deleting it, as Hudi does), the services run."""
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("MERGE_ON_READ", 6, **{"hoodie.metadata.enable": "false", "hoodie.cleaner.commits.retained": "1",
                                           "hoodie.clean.automatic": "false", "hoodie.compact.inline": "false"})
    for ts in (1, 2, 3):
        t.write(pa.table({"id": ["a", "b"], "ts": [ts, ts], "p": ["x", "y"]}), "upsert", opts)
    storage = Storage(str(path))
    savepoint_create(storage, TableConfig.load(storage))
    t.write(pa.table({"id": ["a"], "ts": [4], "p": ["x"]}), "upsert", opts)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.table.metadata.partitions=files\n")  # as Hudi 0.x leaves it
    table = TableConfig.load(storage)
    assert table.metadata_partitions == (FILES_PARTITION,)
    savepoint = next(i.requested for i in Timeline.load(storage).instants if i.action == "savepoint")
    before = {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
              and ".locks" not in p.parts}
    for name, run in [("clean", lambda: t.clean(opts)), ("roll back", lambda: rollback(storage, table)),
                      ("restore", lambda: restore(storage, table, savepoint)), ("compact", lambda: t.compact(opts))]:
        with pytest.raises(InvalidOperation, match=f"cannot {name}: .*version 6 metadata table") as err:
            run()
        assert "hoodie.metadata.enable=false" in (err.value.hint or "")
        after = {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
                 and ".locks" not in p.parts}
        assert after == before, f"{name} changed the table"
    t.write(pa.table({"id": ["b"], "ts": [5], "p": ["y"]}), "upsert", opts)  # enable=false: the metadata table goes
    assert TableConfig.load(storage).metadata_partitions == ()
    assert t.compact(opts) is not None
    t.clean(opts)  # runs: no metadata table left to go stale


# --- the default: Hudi's HoodieMetadataConfig.ENABLE ----------------------------------------------------------


def test_metadata_is_on_by_default_for_the_written_versions_only() -> None:
    assert [v for v in (6, 8, 9) if enabled_by_default(v)] == [8, 9]


@pytest.mark.parametrize("version", [8, 9])
def test_a_new_table_gets_the_metadata_table_by_default_as_in_hudi_1(tmp_path: Path, version: int) -> None:
    """``hoodie.metadata.enable`` unset: Hudi 1.x's default (true) initializes the files partition with the
    first commit, and every later commit has its deltacommit."""
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = {k: v for k, v in _options("MERGE_ON_READ", version).items() if k != "hoodie.metadata.enable"}
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "p": ["x", "y"]}), "insert", opts)
    t.write(pa.table({"id": ["a"], "ts": [2], "p": ["x"]}), "upsert", {})
    assert TableConfig.load(str(path)).metadata_partitions == (FILES_PARTITION,)
    data = [i.requested for i in Timeline.load(str(path)).commits_timeline().completed().instants]
    mdt = Timeline.load(str(path / METADATA_TABLE_PATH), 2).completed().instants
    assert [i.requested for i in mdt if i.requested != SOLO_COMMIT_TIMESTAMP] == data
    _assert_consistent(path)


def test_a_new_version_6_table_gets_none_a_departure_from_hudi_0_15(tmp_path: Path) -> None:
    """Hudi 0.15 would create a version 6 metadata table (its default is true too); this writer does not write
    one, so a new version 6 table gets none unless asked — and asking is refused."""
    path = tmp_path / "t"
    opts = {k: v for k, v in _options("COPY_ON_WRITE", 6).items() if k != "hoodie.metadata.enable"}
    with pytest.raises(UnsupportedTableVersion, match="version 6"):
        HudiTable(str(path), engine="local").write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert",
                                                   {**opts, **ON})
    assert not path.exists()
    HudiTable(str(path), engine="local").write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", opts)
    assert TableConfig.load(str(path)).metadata_partitions == ()
    assert not (path / METADATA_TABLE_PATH).exists()


def test_an_existing_table_without_one_keeps_none_while_the_option_is_unset(tmp_path: Path) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert",
            _options("COPY_ON_WRITE", 9, **{"hoodie.metadata.enable": "false"}))
    t.write(pa.table({"id": ["b"], "ts": [1], "p": ["x"]}), "insert", {})
    assert TableConfig.load(str(path)).metadata_partitions == ()
    assert not (path / METADATA_TABLE_PATH).exists()
    assert sorted(read_table(str(path)).column("id").to_pylist()) == ["a", "b"]


def test_commit_records_take_the_largest_size_of_a_file() -> None:
    from spec.timeline.commit_metadata import CommitMetadata, write_stat
    md = CommitMetadata({"": (write_stat(path=".f_1.log.1_0-0-0", fileSizeInBytes=5),
                              write_stat(path=".f_1.log.1_0-0-0", fileSizeInBytes=9))})
    records = commit_records(md)
    assert records["."][".f_1.log.1_0-0-0"].size == 9 and "." in records["__all_partitions__"]


def _corpus_with_metadata() -> list[tuple[str, Any]]:
    """Every version 9 case, the corpus's own and the version 8 ones replayed at version 9, with the metadata
    table's options."""
    v9 = [fc for cid, fc in CORPUS.items() if cid.endswith("-v9")] + [c9 for _, c9 in _v9_cases()]
    return [(fc.suite, replace(fc.case, config=replace(fc.case.config, options=(*fc.case.config.options,
                                                                              *ON.items()))))
            for fc in v9]


REPRESENTATIVE = ("insert-upsert-delete-logs-mor-v9", "compaction-logs-mor-v9", "clean-latest-commits-mor-v9",
                  "rollback-latest-logs-mor-v9", "savepoint-restore-logs-mor-v9", "delete-partition-cow-v9",
                  "crash-then-write-logs-mor-v9", "archive-cow-v9", "insert-overwrite-table-cow-v9")


def test_representative_cases_at_version_9_with_the_metadata_table_match_the_model() -> None:
    every = _corpus_with_metadata()
    cases = [(s, c) for s, c in every if c.id in REPRESENTATIVE]
    assert len(cases) == len(REPRESENTATIVE)
    failed = {c.id: r.diff for s, c in cases
              if (r := run_case(FixtureCase(c, s), ReferenceLocalAdapter)).verdict not in (Verdict.PASS, Verdict.XFAIL)}
    assert failed == {}


@pytest.mark.slow
def test_every_version_9_case_with_the_metadata_table_matches_the_model() -> None:
    cases = _corpus_with_metadata()
    assert len(cases) > 50
    failed = {c.id: r.diff for s, c in cases
              if (r := run_case(FixtureCase(c, s), ReferenceLocalAdapter)).verdict not in (Verdict.PASS, Verdict.XFAIL)}
    assert failed == {}


# --- real tables ----------------------------------------------------------------------------------


def test_upsert_delete_compaction_and_clean_on_every_real_table_with_a_metadata_table(
        real_tables: list[RealTable], real_tables_v9: list[RealTable], real_table_copy: Any) -> None:
    tables = _with_metadata_table(real_tables, real_tables_v9)
    assert len(tables) == 5
    for table in tables:
        _upsert_delete_compact_clean(real_table_copy(table))


def _upsert_delete_compact_clean(path: Path) -> None:
    """On a copy of a real table with a metadata table: an upsert and a delete (and a compaction, merge-on-read)
    and a clean; hudi-rs then reads exactly the rows predicted from the rows before, and the files partition
    lists exactly the live files. The partitions this writer does not keep are gone, with their index
    definitions."""
    cfg = TableConfig.load(str(path))
    before = read_table(str(path))
    user = before.drop([c for c in before.column_names if c in META_FIELDS])
    key = cfg.record_key_fields[0]
    keys = user.column(key).to_pylist()
    single = [i for i, k in enumerate(keys) if keys.count(k) == 1]  # (Hudi lets inserts repeat a key)
    changed = user.slice(single[0], 1)
    if cfg.ordering_field:
        i = changed.schema.get_field_index(cfg.ordering_field)
        bumped = pc.add(changed[cfg.ordering_field], pa.scalar(1, changed.schema.field(i).type))
        changed = changed.set_column(i, cfg.ordering_field, bumped)
    gone = user.slice(single[1], 1)
    t = HudiTable(str(path), engine="local")
    t.write(changed, "upsert", {"hoodie.table.name": cfg.name})
    t.write(gone, "delete", {"hoodie.table.name": cfg.name})
    if cfg.is_mor:
        assert t.compact() is not None
    storage = Storage(str(path))
    clean(storage, TableConfig.load(storage), CleanConfig(policy="KEEP_LATEST_FILE_VERSIONS", file_versions_retained=1))
    expected = [changed.to_pylist()[0] if i == single[0] else row for i, row in enumerate(user.to_pylist())
                if i != single[1]]
    got = [{c: r[c] for c in user.column_names} for r in hudi_rs_read(str(path)).to_pylist()]
    assert sorted(map(repr, got)) == sorted(map(repr, expected))
    _assert_consistent(path)
    via_mdt, on_storage = _listings(path)
    assert via_mdt == on_storage
    assert TableConfig.load(str(path)).metadata_partitions == (FILES_PARTITION,)
    defs = path / ".hoodie" / ".index_defs" / "index.json"
    if defs.exists():
        assert json.loads(defs.read_text())["indexDefinitions"] == {}


def test_the_metadata_table_is_compacted_after_ten_deltacommits_and_cleaned(tmp_path: Path) -> None:
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("COPY_ON_WRITE", 9, **{"hoodie.clean.automatic": "false"})
    writes = [t.write(pa.table({"id": [f"k{i % 3}"], "ts": [i], "p": [f"p{i % 2}"]}), "upsert", opts).instant
              for i in range(22)]
    mdt = Storage(str(path / METADATA_TABLE_PATH))
    timeline = Timeline.load(mdt, 2)
    compactions = [i for i in timeline.instants if i.action == "commit" and i.is_completed]
    deltacommits = sorted(i.requested for i in timeline.instants if i.action == "deltacommit" and i.is_completed)
    # the init deltacommit and nine data deltacommits, then the compaction before the tenth data deltacommit
    assert deltacommits[:10] == ["00000000000000000", *writes[:9]]
    assert len(compactions) == 2 and writes[9] < compactions[0].requested < writes[10]
    assert any(i.action == "clean" and i.is_completed for i in timeline.instants)
    assert merged_by_compaction(timeline, writes[0]) and not merged_by_compaction(timeline, writes[-1])
    bases = sorted(f.name for f in mdt.list(FILES_PARTITION) if f.name.endswith(".hfile"))
    assert bases == sorted(f"files-0000-0_0-0-0_{c.requested}.hfile" for c in compactions)[-len(bases):]
    _assert_consistent(path)
    assert sorted(read_table(str(path)).column("ts").to_pylist()) == [16, 17, 18, 19, 20, 21]  # (key, partition): i % 6
    # an instant a compaction merged cannot be rolled back out of the metadata table: it is listed anew
    from reference.metadata.writer import rollback_instant
    from spec.timeline.active_timeline import instant_times
    rollback_instant(Storage(str(path)), writes[0], "29990101000000000", instant_times(timeline, None))
    assert Timeline.load(mdt, 2).instants[0].requested == "00000000000000000"
    assert not any(i.action == "commit" for i in Timeline.load(mdt, 2).instants)
    _assert_consistent(path)


# --- archival of the metadata table's timeline -------------------------------------------------------

C, R, INF = State.COMPLETED, State.REQUESTED, State.INFLIGHT


def _t(short: str) -> str:
    return f"20240101000000{short}"


def _timeline(*instants: tuple[str, Action, State]) -> Timeline:
    return Timeline(tuple(Instant(_t(t), a, s) for t, a, s in instants), 2)
ROLLBACK, CLEAN, COMMIT = Action.ROLLBACK, Action.CLEAN, Action.COMMIT


@pytest.mark.parametrize(("instants", "expected"), [
    ((), None),
    # an earlier requested clean before the commits
    ((("001", ROLLBACK, C), ("002", CLEAN, C), ("003", CLEAN, R), ("010", COMMIT, C),
      ("011", Action.REPLACE_COMMIT, C), ("012", Action.CLUSTERING, R)), "003"),
    # no inflight instants
    ((("001", ROLLBACK, C), ("002", CLEAN, C), ("003", CLEAN, C), ("010", COMMIT, C),
      ("011", Action.REPLACE_COMMIT, C), ("012", Action.CLUSTERING, R)), "010"),
    # rollbacks only
    ((("001", ROLLBACK, C), ("002", ROLLBACK, C), ("003", ROLLBACK, INF)), "003"),
    ((("001", ROLLBACK, C), ("002", ROLLBACK, C), ("003", ROLLBACK, C)), None),
    # with a savepoint (archival beyond savepoints off)
    ((("001", ROLLBACK, C), ("003", COMMIT, C), ("003", Action.SAVEPOINT, C), ("010", COMMIT, C),
      ("011", COMMIT, C)), "003"),
])
def test_the_metadata_table_archives_nothing_from_its_data_tables_earliest_commit_or_pending_instant(
        instants: tuple[tuple[str, Action, State], ...], expected: str | None) -> None:
    """The cases of Hudi's ``TestTimelineUtils.testGetEarliestInstantForMetadataArchival`` (its times 001, 002, …
    as the last digits of full instant times)."""
    assert earliest_for_metadata_archival(_timeline(*instants)) == (None if expected is None else _t(expected))


def test_the_metadata_table_archives_nothing_before_its_first_compaction_nor_after_its_latest() -> None:
    data = _timeline(("020", Action.DELTA_COMMIT, C), ("021", Action.DELTA_COMMIT, C))
    uncompacted = _timeline(("000", Action.DELTA_COMMIT, C), ("010", Action.DELTA_COMMIT, C))
    assert latest_compaction(uncompacted) is None and metadata_archival_retains(uncompacted, data) is None
    compacted = _timeline(("000", Action.DELTA_COMMIT, C), ("010", Action.DELTA_COMMIT, C), ("015", COMMIT, C),
                          ("020", Action.DELTA_COMMIT, C), ("030", COMMIT, INF))
    assert latest_compaction(compacted) == _t("015")  # completed compactions only
    assert metadata_archival_retains(compacted, data) == (_t("015"), _t("020"))
    assert metadata_archival_retains(compacted, _timeline()) == (_t("015"),)
    # a deltacommit requested before the compaction and completed after it is in the compaction's slice: kept
    late = Timeline((Instant(_t("000"), Action.DELTA_COMMIT, C, completed=_t("001")),
                     Instant(_t("010"), Action.DELTA_COMMIT, C, completed=_t("017")),
                     Instant(_t("015"), COMMIT, C, completed=_t("016"))), 2)
    assert metadata_archival_retains(late, data) == (_t("010"), _t("020"))


def test_the_metadata_table_keeps_one_commit_more_than_its_data_table() -> None:
    assert metadata_archive_config(ArchiveConfig()) == ArchiveConfig(21, 31)  # Hudi's defaults, 20 and 30, + 1
    assert metadata_archive_config(ArchiveConfig(2, 3)) == ArchiveConfig(3, 4)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_metadata_timeline_is_archived_behind_its_data_table(tmp_path: Path, table_type: str) -> None:
    """Thirty upserts: the metadata table's timeline is archived to its LSM history as its data table's is,
    never from the data table's earliest commit on, never the deltacommits its next compaction counts, and no
    instant is lost between the active and the archived timeline; the table reads the same everywhere."""
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options(table_type, 8, **{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                      "hoodie.cleaner.commits.retained": "1"})
    writes = [t.write(pa.table({"id": [f"k{i % 4}"], "ts": [i], "p": [f"p{i % 2}"]}), "upsert", opts).instant
              for i in range(30)]
    mdt = Storage(str(path / METADATA_TABLE_PATH))
    mdt_cfg = TableConfig.load(mdt)
    active = Timeline.load(mdt, 2)
    archived = archived_instants(mdt, mdt_cfg)
    assert archived, "the metadata timeline grew past its limit and was not archived"
    assert len(active.commits_timeline().instants) < len(writes) // 2
    # never from the data table's earliest commit or pending instant on
    earliest = earliest_for_metadata_archival(Timeline.load(Storage(str(path)), 2))
    assert earliest is not None and max(a.requested for a in archived) < earliest
    # nothing lost: every data write's deltacommit is active or archived, completed
    seen = {a.requested: a.state for a in archived} | {i.requested: i.state.value for i in active.instants}
    assert all(seen.get(w) == State.COMPLETED.value for w in writes), [w for w in writes if w not in seen]
    # nothing that completed after the latest compaction was requested: those deltacommits' log files are in
    # the compaction's slice, their blocks not compacted yet
    last = latest_compaction(active)
    assert last is not None and [a.requested for a in archived if (a.completed or a.requested) > last] == []
    retain = metadata_archival_retains(active, Timeline.load(Storage(str(path)), 2))
    assert retain is not None and earliest in retain and max(a.requested for a in archived) < min(retain) <= last
    _assert_consistent(path)
    assert sorted(read_table(str(path)).column("ts").to_pylist()) == [26, 27, 28, 29]


def test_a_compaction_run_again_after_a_crash_rolls_back_its_metadata_deltacommit(tmp_path: Path) -> None:
    """The compaction's metadata deltacommit completed, the data commit did not (a crash): run again, the inflight
    compaction is rolled back first — and with it its metadata deltacommit — then committed once more."""
    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("MERGE_ON_READ", 9)
    t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", opts)
    t.write(pa.table({"id": ["a"], "ts": [2], "p": ["x"]}), "upsert", opts)
    instant = t.compact()
    assert instant is not None
    timeline_dir = path / ".hoodie" / "timeline"
    (completed,) = [f for f in timeline_dir.iterdir() if f.name.startswith(f"{instant}_")]
    completed.unlink()  # the compaction is inflight again on the data table
    for f in (path / "x").iterdir():
        if f.name.endswith(f"_{instant}.parquet"):
            f.unlink()
    assert t.run_compaction(instant) == instant
    mdt = Timeline.load(Storage(str(path / METADATA_TABLE_PATH)), 2)
    assert [i.action for i in mdt.instants if i.requested == instant and i.is_completed] == ["deltacommit"]
    assert any(i.action == "rollback" and i.is_completed for i in mdt.instants)
    _assert_consistent(path)
    assert read_table(str(path)).column("ts").to_pylist() == [2]


def test_a_deltacommit_written_again_replaces_the_first(tmp_path: Path) -> None:
    """A metadata deltacommit for an instant that already has one (a re-attempted commit) replaces it."""
    from reference.metadata.writer import append_deltacommit
    from spec.timeline.active_timeline import instant_times

    path = tmp_path / "t"
    result = HudiTable(str(path), engine="local").write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert",
                                                        _options("COPY_ON_WRITE", 9))
    storage = Storage(str(path))
    mdt = Storage(str(path / METADATA_TABLE_PATH))
    append_deltacommit(storage, result.instant, commit_records(result.metadata),
                       instant_times(Timeline.load(mdt, 2), None))
    assert [i.is_completed for i in Timeline.load(mdt, 2).instants if i.requested == result.instant] == [True]
    assert len([f for f in mdt.list(FILES_PARTITION) if f"_{result.instant}.log" in f.name]) == 1
    _assert_consistent(path)


def test_a_metadata_table_initialized_after_archival_lists_the_archived_instants_files(tmp_path: Path) -> None:
    """Turned on for a table whose first instants are archived, the metadata table lists their files too (only
    files of pending instants are left out)."""
    from reference.executors.archive import archive
    from spec.actions.archive import ArchiveConfig

    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    off = _options("COPY_ON_WRITE", 9, **{"hoodie.metadata.enable": "false"})
    for i in range(6):
        t.write(pa.table({"id": [f"k{i}"], "ts": [i], "p": ["x"]}), "insert", off)
    storage = Storage(str(path))
    archive(storage, TableConfig.load(storage), ArchiveConfig(2, 3))
    first = min(i.requested for i in Timeline.load(storage, 2).instants)
    t.write(pa.table({"id": ["k9"], "ts": [9], "p": ["x"]}), "insert", ON)
    _assert_consistent(path)
    assert sorted(read_table(str(path)).column("id").to_pylist()) == [*(f"k{i}" for i in range(6)), "k9"]
    assert any(f.name.endswith(".parquet") and f.name.rsplit("_", 1)[1][:17] < first
               for f in list_table_files(storage, TableConfig.load(storage), Timeline.load(storage, 2)))


@pytest.mark.parametrize("version", [8, 9])
def test_the_data_table_s_archival_waits_for_the_metadata_table_s_compaction(tmp_path: Path, version: int) -> None:
    """``spec.actions.archive.metadata_table_retains`` in the reference's archival (Apache Hudi 1.2.0's
    ``TimelineArchiverV2``, archive-cow-v8): nothing archived before the metadata table's first compaction, then
    nothing from the data commit that completed after it on; the model predicts the same instant."""
    from reference.executors.archive import archive
    from spec.actions.archive import ArchiveConfig
    from spec.metadata.writer import latest_compaction

    path = tmp_path / "t"
    t = HudiTable(str(path), engine="local")
    opts = _options("COPY_ON_WRITE", version)
    storage = Storage(str(path))
    for i in range(14):
        t.write(pa.table({"id": ["k"], "ts": [i], "p": ["x"]}), "upsert", opts)
        if i == 4:
            assert archive(storage, TableConfig.load(storage), ArchiveConfig(2, 3)).archived == ()
    mdt = Timeline.load(Storage(str(path / ".hoodie" / "metadata")), 2)
    compacted = latest_compaction(mdt)
    assert compacted is not None
    before = [i for i in Timeline.load(storage, 2).instants if i.action == "commit"]
    result = archive(storage, TableConfig.load(storage), ArchiveConfig(2, 3))
    kept = [i for i in Timeline.load(storage, 2).instants if i.action == "commit"]
    assert kept and (kept[0].completed or "") > compacted > kept[0].requested
    assert [i.requested for i in result.archived] == [i.requested for i in before[:len(before) - len(kept)]]
    assert len(kept) > 2  # the bound, not hoodie.keep.min.commits, kept them

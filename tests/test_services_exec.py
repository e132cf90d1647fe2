"""Table services executed on real tables: clean, rollback, savepoint + restore, archival.

Copy-on-write tables are written once per table version by the reference writer on Spark and
copied for every test; merge-on-read tables are built from the spec's builders (``reference.sample_tables``).
After every service the spec reader must read what the service promises (the same snapshot, the
same retained time travel, the snapshot of the instant rolled back to) and hudi-rs must read the
same rows. A property test runs the cleaner on random synthetic timelines (no Spark) and checks
that no file a retained query or a savepoint needs is ever deleted.
"""

from __future__ import annotations

import itertools
import shutil
from collections import deque
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.executors import archive as arch
from reference.executors.clean import clean, cleaner_plan_record, plan_table_clean
from reference.executors.common import savepointed_files
from reference.executors.restore import restore
from reference.executors.rollback import plan_table_rollback, rollback, rollback_plan_record
from reference.executors.savepoint import savepoint_create
from reference.sample_tables import INSERT_T, UPDATE_T, build_table
from spec.actions.archive import ArchiveConfig, archived_instants
from spec.actions.clean import CleanConfig, CleanPlan, earliest_commit_to_retain
from spec.actions.compaction import compaction_base_instants, pending_compaction_plans
from spec.config.registry import KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS
from spec.config.table_config import COPY_ON_WRITE, TableConfig
from spec.errors import InstantNotFound, InvalidOperation, TimeTravelRefused
from spec.file_group.file_system_view import FileSystemView
from spec.file_group.log_file.archived_log import archive_log_files, read_archived_entries
from spec.file_group.log_file.log_format import read_log_file
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCKS_FOLDER as LOCKS  # the table lock: coordination, not table content
from spec.timeline.active_timeline import Timeline
from spec.timeline.archived_timeline import ENTRY_FIELDS
from spec.timeline.avro_model import (
    HoodieCleanerPlan,
    HoodieCleanMetadata,
    HoodieRestoreMetadata,
    HoodieRestorePlan,
    HoodieRollbackMetadata,
    HoodieRollbackPlan,
    HoodieSavepointMetadata,
    format_avro_metadata,
    parse_timeline_content,
)
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata
from spec.timeline.instant import Action, Instant, State, format_instant_time
from spec.timeline.layout import read_instant_content
from spec.timeline.lsm_timeline import latest_snapshot_version, snapshot_manifest
from tests.hudi_rs import hudi_rs_read

# --- helpers ---------------------------------------------------------------------------------------


def open_(path: Path) -> tuple[Storage, TableConfig]:
    storage = Storage(path)
    return storage, TableConfig.load(storage)


def rows_of(table: pa.Table | None) -> list[tuple[Any, ...]]:
    """Rows as comparable tuples: partition, key, commit time and every data column."""
    if table is None or table.num_columns == 0:
        return []
    keep = [c for c in table.column_names if c not in ("_hoodie_file_name", "_hoodie_commit_seqno")]
    return sorted(tuple(str(r[c]) for c in sorted(keep)) for r in table.to_pylist())


def read(path: Path, as_of: str | None = None) -> list[tuple[Any, ...]]:
    return rows_of(read_table(str(path), as_of=as_of))


def assert_hudi_rs_agrees(path: Path) -> None:
    """hudi-rs reads what the spec reader reads, and the table passes ``hudi-conformance check``."""
    from conformance.checker import check_table

    assert rows_of(hudi_rs_read(str(path))) == read(path)
    report = check_table(str(path))
    assert report.ok, report.errors


def timeline_of(path: Path) -> Timeline:
    return Timeline.load(Storage(path))


def content(path: Path, inst: Instant) -> Any:
    tl = timeline_of(path)
    return parse_timeline_content(inst, read_instant_content(Storage(path), inst, tl.layout))


def instant(path: Path, action: str, state: State = State.COMPLETED) -> list[Instant]:
    return [i for i in timeline_of(path).instants if i.action == action and i.state == state]


def data_files(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()
            and not str(p.relative_to(path)).startswith(".hoodie") and p.name != ".hoodie_partition_metadata"}


def disk(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not str(p.relative_to(path)).startswith(LOCKS)}


# --- copy-on-write tables written by the reference writer ------------------------------------------

OPTIONS = {"hoodie.table.name": "svc", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
           "hoodie.datasource.write.hive_style_partitioning": "true"}


def batch(ids: list[int], ts: int, city: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "city": [city] * len(ids), "v": [f"v{i}@{ts}" for i in ids]})


STEPS = [("insert", [*batch([1, 2, 3], 1, "a").to_pylist(), *batch([5, 6], 1, "b").to_pylist()]),
         ("upsert", batch([1, 2], 2, "a").to_pylist()),
         ("upsert", [*batch([3], 3, "a").to_pylist(), *batch([5], 3, "b").to_pylist()]),
         ("upsert", batch([1], 4, "a").to_pylist())]
"""The writes of every copy-on-write test table."""


def file_id_prefixes() -> Any:
    """The same sequence of file id prefixes for the writer and the model."""
    ids = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(ids):012d}"


@pytest.fixture(scope="module")
def cow_templates(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, list[str]]]:
    """Per table version a COW table with four commits: group a gets a slice in each, group b in c1, c3."""
    from reference.write.client import WriteClient

    out = {}
    for version in (6, 8):
        path = tmp_path_factory.mktemp(f"cow{version}") / "t"
        client = WriteClient(str(path), spark, file_id_prefix=file_id_prefixes())
        opts = {**OPTIONS, "hoodie.write.table.version": str(version)}
        commits = [client.write(pa.Table.from_pylist(rows), op, opts).instant for op, rows in STEPS]
        out[version] = (path, commits)
    return out


@pytest.fixture
def cow(cow_templates: dict[int, tuple[Path, list[str]]], tmp_path: Path) -> Any:
    def copy(version: int) -> tuple[Path, list[str]]:
        src, commits = cow_templates[version]
        dest = tmp_path / f"cow{version}"
        shutil.copytree(src, dest)
        return dest, commits
    return copy


VERSIONS = [6, 8]


@pytest.mark.spark
@pytest.mark.parametrize("version", VERSIONS)
def test_clean_keeps_the_snapshot_and_retained_time_travel(cow: Any, version: int) -> None:
    path, commits = cow(version)
    storage, table = open_(path)
    before = {c: read(path, c) for c in commits}
    snapshot = read(path)
    files_before = data_files(path)
    result = clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=2))
    assert result.instant is not None and result.total_deleted == 1
    assert result.plan is not None and result.plan.earliest_instant_to_retain is not None
    assert result.plan.earliest_instant_to_retain.requested == commits[2]
    (gone,) = [f"{p}/{f}" for p, fs in result.deleted.items() for f in fs]
    assert gone.startswith("city=a/") and gone.endswith(f"_{commits[0]}.parquet")
    assert data_files(path) == files_before - {gone}
    assert read(path) == snapshot
    for c in commits[2:]:  # the retained commits
        assert read(path, c) == before[c], c
    # before the earliest retained commit Apache Hudi refuses time travel (spec.read.time_travel), though the last
    # slice before it is kept
    for c in commits[:2]:
        with pytest.raises(TimeTravelRefused):
            read(path, c)
    # the timeline: requested and inflight hold the plan, the completed file the clean metadata
    plan = content(path, Instant(result.instant, Action.CLEAN, State.REQUESTED))
    assert isinstance(plan, HoodieCleanerPlan) and plan.policy == KEEP_LATEST_COMMITS and plan.version == 2
    assert plan.earliest_instant_to_retain is not None
    assert plan.earliest_instant_to_retain.timestamp == commits[2]
    (infos,) = plan.file_paths_to_be_deleted_per_partition.values()  # type: ignore[union-attr]
    assert [i.file_path for i in infos] == [str(path / gone)]
    assert content(path, Instant(result.instant, Action.CLEAN, State.INFLIGHT)) == plan
    (done,) = instant(path, Action.CLEAN)
    assert (done.completed is not None) == (version == 8)
    md = content(path, done)
    assert isinstance(md, HoodieCleanMetadata)
    assert md.total_files_deleted == 1 and md.earliest_commit_to_retain == commits[2]
    assert md.last_completed_commit_timestamp == commits[-1]
    assert md.partition_metadata["city=a"].success_delete_files == (gone.split("/")[1],)
    assert_hudi_rs_agrees(path)
    # a second clean with the same retention finds nothing: no new instant
    again = clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=2))
    assert again.instant is None and len(instant(path, Action.CLEAN)) == 1


@pytest.mark.spark
def test_clean_never_touches_a_savepoint(cow: Any) -> None:
    path, commits = cow(6)
    storage, table = open_(path)
    sp = savepoint_create(storage, table, commits[0], comment="keep c1")
    assert {f for _, f in sp.files} == {f.split("/")[1] for f in data_files(path) if f"_{commits[0]}." in f}
    result = clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1))
    # without the savepoint, c1 and c2 slices of group a and c1 of group b would go; c2 still goes
    assert result.total_deleted == 1
    assert all(f"_{commits[1]}." in f for fs in result.deleted.values() for f in fs)
    # the savepoint's files stay; time travel to it is refused, as Apache Hudi's validateTimestampAsOf refuses any
    # instant before the clean's earliest retained commit (restore the savepoint to read it)
    assert {f.split("/")[1] for f in data_files(path) if f"_{commits[0]}." in f} == {f for _, f in sp.files}
    with pytest.raises(TimeTravelRefused):
        read(path, commits[0])
    md = content(path, instant(path, Action.SAVEPOINT)[0])
    assert isinstance(md, HoodieSavepointMetadata) and md.comments == "keep c1"
    # a savepoint older than what a clean retained is refused
    clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1))
    with pytest.raises(InvalidOperation, match="already savepointed"):
        savepoint_create(storage, table, commits[0])
    with pytest.raises(InvalidOperation, match="last clean retained"):
        savepoint_create(storage, table, commits[1])
    assert_hudi_rs_agrees(path)


@pytest.mark.spark
def test_a_pending_clean_bounds_savepoints_as_a_completed_one_does(cow: Any) -> None:
    """``SavepointActionExecutor`` reads the newest clean in any state: a clean still requested counts
    through its plan's earliest instant to retain, so a savepoint it may break is refused."""
    path, commits = cow(6)
    storage, table = open_(path)
    done_clean = clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1))
    assert done_clean.instant is not None
    for name in (f"{done_clean.instant}.clean.inflight", f"{done_clean.instant}.clean"):
        (path / ".hoodie" / name).unlink()  # the clean is back to requested: planned, not yet run
    assert [i.state for i in instant(path, Action.CLEAN, State.REQUESTED)] == [State.REQUESTED]
    before = disk(path)
    with pytest.raises(InvalidOperation, match="retained only commits from"):
        savepoint_create(storage, table, commits[1])
    assert disk(path) == before
    assert savepoint_create(storage, table, commits[-1]).instant == commits[-1]


@pytest.mark.spark
@pytest.mark.parametrize("version", VERSIONS)
def test_rollback_of_the_latest_commit_restores_the_previous_snapshot(cow: Any, version: int) -> None:
    path, commits = cow(version)
    storage, table = open_(path)
    previous = read(path, commits[2])
    written = {f for f in data_files(path) if f"_{commits[3]}." in f}
    result = rollback(storage, table)
    assert result.target.requested == commits[3] and result.target.is_completed
    assert read(path) == previous
    assert not written & data_files(path)
    tl = timeline_of(path)
    assert tl.get(commits[3]) is None and not tl.files_of(commits[3])
    plan = content(path, Instant(result.instant, Action.ROLLBACK, State.REQUESTED))
    assert isinstance(plan, HoodieRollbackPlan)
    assert plan.instant_to_rollback is not None and plan.instant_to_rollback.commit_time == commits[3]
    assert {f for r in plan.rollback_requests or () for f in r.files_to_be_deleted} == {str(path / f) for f in written}
    assert content(path, Instant(result.instant, Action.ROLLBACK, State.INFLIGHT)) is None
    (done,) = instant(path, Action.ROLLBACK)
    md = content(path, done)
    assert isinstance(md, HoodieRollbackMetadata)
    assert md.commits_rollback == (commits[3],) and md.total_files_deleted == len(written)
    assert md.instants_rollback[0].action == Action.COMMIT
    assert_hudi_rs_agrees(path)


@pytest.mark.spark
def test_rollback_refusals_leave_the_table_untouched(cow: Any) -> None:
    path, commits = cow(8)
    storage, table = open_(path)
    before = disk(path)
    with pytest.raises(InvalidOperation, match=f"{commits[3]} completed after it"):
        rollback(storage, table, commits[2])
    with pytest.raises(InstantNotFound):
        rollback(storage, table, "20000101000000000")
    assert disk(path) == before
    savepoint_create(storage, table)
    before = disk(path)
    with pytest.raises(InvalidOperation, match="savepointed"):
        rollback(storage, table)
    assert disk(path) == before


@pytest.mark.spark
@pytest.mark.parametrize("version", VERSIONS)
def test_rollback_of_a_failed_write(cow: Any, version: int) -> None:
    """A write that died after writing a base file: requested + inflight on the timeline, a data file."""
    path, _ = cow(version)
    storage, table = open_(path)
    snapshot = read(path)
    tl = timeline_of(path)
    failed = format_instant_time(datetime.now(UTC) + timedelta(seconds=5))
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"
    storage.create_if_absent(f"{folder}/{failed}.commit.requested", b"")
    storage.create_if_absent(f"{folder}/{failed}.inflight", b"")
    any_base = sorted(f for f in data_files(path) if f.startswith("city=b/"))[0]
    stray = any_base.rsplit("_", 1)[0] + f"_{failed}.parquet"
    storage.write_atomic(stray, b"PAR1 half written")
    assert read(path) == snapshot  # invisible to readers
    result = rollback(storage, table)
    assert result.target == Instant(failed, Action.COMMIT, State.INFLIGHT)
    assert not storage.exists(stray) and not timeline_of(path).files_of(failed)
    assert read(path) == snapshot and len(timeline_of(path)) == len(tl) + 1
    assert_hudi_rs_agrees(path)


@pytest.mark.spark
@pytest.mark.parametrize("version", VERSIONS)
def test_savepoint_and_restore_return_the_savepointed_snapshot(cow: Any, version: int) -> None:
    path, commits = cow(version)
    storage, table = open_(path)
    at_c2 = read(path, commits[1])
    savepoint_create(storage, table, commits[1])
    savepoint_create(storage, table, commits[3])  # a later savepoint: the restore removes it
    result = restore(storage, table, commits[1])
    assert [i.requested for i in result.rolled_back] == [commits[3], commits[2]]
    assert read(path) == at_c2
    tl = timeline_of(path)
    assert [i.requested for i in tl.commits_timeline().instants] == commits[:2]
    assert [i.requested for i in tl.instants if i.action == Action.SAVEPOINT] == [commits[1]]
    assert not [f for f in data_files(path) if f"_{commits[2]}." in f or f"_{commits[3]}." in f]
    (done,) = instant(path, Action.RESTORE)
    plan = content(path, Instant(done.requested, Action.RESTORE, State.REQUESTED))
    assert isinstance(plan, HoodieRestorePlan) and plan.savepoint_to_restore_timestamp == commits[1]
    assert [i.commit_time for i in plan.instants_to_rollback] == [commits[3], commits[2]]
    md = content(path, done)
    assert isinstance(md, HoodieRestoreMetadata)
    assert md.instants_to_rollback == (commits[3], commits[2])
    assert set(md.hoodie_restore_metadata) == {commits[2], commits[3]}
    assert_hudi_rs_agrees(path)
    with pytest.raises(InstantNotFound, match="no completed savepoint"):
        restore(storage, table, commits[3])


@pytest.mark.spark
def test_archival_moves_old_instants_and_lists_them_back(cow: Any) -> None:
    path, commits = cow(6)
    storage, table = open_(path)
    snapshot = read(path)
    before = timeline_of(path)
    result = arch.archive(storage, table, ArchiveConfig(keep_min_commits=2, keep_max_commits=3))
    assert [i.requested for i in result.archived] == commits[:2]
    assert result.archive_file == ".hoodie/archived/.commits_.archive.1_1-0-1"
    after = timeline_of(path)
    assert len(after) == len(before) - 2
    assert [i.requested for i in after.commits_timeline().instants] == commits[2:]
    listed = archived_instants(storage, table)
    assert [(i.requested, i.action, i.state) for i in listed] == [(c, "commit", "COMPLETED") for c in commits[:2]]
    entries = read_archived_entries(storage)
    assert len(entries) == result.records == 6  # requested, inflight and completed file of each commit
    completed = [e for e in entries if e["actionState"] == "COMPLETED"]
    assert all(e["hoodieCommitMetadata"]["operationType"] in ("INSERT", "UPSERT") for e in completed)
    blocks = read_log_file(storage, result.archive_file)
    assert [b.block.header_map for b in blocks if b.block] and all(
        set(b.block.header_map) == {2} for b in blocks if b.block)
    assert read(path) == snapshot
    assert_hudi_rs_agrees(path)
    # under the limits: nothing more
    assert arch.archive(storage, table, ArchiveConfig(keep_min_commits=2, keep_max_commits=3)).archived == ()


@pytest.mark.spark
def test_archival_writes_into_the_folder_the_table_names(cow: Any) -> None:
    """A version 6 table whose ``hoodie.archivelog.folder`` is ``history`` (as Apache Hudi 1.2.0 creates them)
    is archived into ``.hoodie/history`` and read back from there; nothing goes to ``.hoodie/archived``."""
    path, commits = cow(6)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.archivelog.folder=history\n")
    storage, table = open_(path)
    result = arch.archive(storage, table, ArchiveConfig(keep_min_commits=2, keep_max_commits=3))
    assert [i.requested for i in result.archived] == commits[:2]
    assert result.archive_file == ".hoodie/history/.commits_.archive.1_1-0-1"
    assert not (path / ".hoodie" / "archived").exists() or not any((path / ".hoodie" / "archived").iterdir())
    assert [(i.requested, i.state) for i in archived_instants(storage, table)] == [
        (c, "COMPLETED") for c in commits[:2]]
    assert archived_instants(storage, TableConfig.load(storage)) == archived_instants(storage, table)


@pytest.mark.spark
def test_archival_into_the_lsm_history(cow: Any) -> None:
    """Table version 8: one level-0 parquet file of HoodieLSMTimelineInstant rows, manifest_1, _version_."""
    import json

    import pyarrow.parquet as pq

    from reference.metadata.writer import delete_metadata_table

    path, commits = cow(8)
    # without its metadata table (as hoodie.metadata.enable=false leaves it): with one, nothing is archived before
    # that table's first compaction (spec.actions.archive.metadata_table_retains)
    delete_metadata_table(Storage(path))
    storage, table = open_(path)
    snapshot = read(path)
    tl = timeline_of(path)
    completed = {c: read_instant_content(storage, tl.get(c), tl.layout) for c in commits[:2]}  # type: ignore[arg-type]
    result = arch.archive(storage, table, ArchiveConfig(keep_min_commits=2, keep_max_commits=3))
    assert [i.requested for i in result.archived] == commits[:2]
    history = ".hoodie/timeline/history"
    assert result.archive_file == f"{history}/{commits[0]}_{commits[1]}_0.parquet"
    footer = pq.ParquetFile(storage.full(result.archive_file)).metadata.metadata
    assert json.loads(footer[b"parquet.avro.schema"])["name"] == "HoodieLSMTimelineInstant"
    rows = pq.read_table(storage.full(result.archive_file)).to_pylist()
    assert [(r["instantTime"], r["action"], r["version"]) for r in rows] == [(c, "commit", 1) for c in commits[:2]]
    assert [r["completionTime"] for r in rows] == [tl.get(c).completed for c in commits[:2]]  # type: ignore[union-attr]
    assert [r["metadata"] for r in rows] == [completed[c] for c in commits[:2]] and all(r["plan"] is None for r in rows)
    manifest = json.loads(storage.read(f"{history}/manifest_1"))
    assert manifest == {"files": [{"fileName": result.archive_file.rsplit("/", 1)[1],
                                   "fileLen": storage.size(result.archive_file)}]}
    assert storage.read(f"{history}/_version_") == b"1"
    listed = archived_instants(storage, table)
    assert [(i.requested, i.action, i.completed) for i in listed] == [
        (c, "commit", tl.get(c).completed) for c in commits[:2]]  # type: ignore[union-attr]
    assert [i.requested for i in timeline_of(path).commits_timeline().instants] == commits[2:]
    assert read(path) == snapshot
    assert_hudi_rs_agrees(path)


# --- merge-on-read tables from the spec builders (no Spark) ----------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_mor_rollback_of_a_deltacommit(tmp_path: Path, version: int) -> None:
    path = build_table(tmp_path / "t", version)
    storage, table = open_(path)
    at_insert = read(path, INSERT_T)
    logs_before = {f for f in data_files(path) if "/." in f}
    result = rollback(storage, table)
    assert result.target.requested == UPDATE_T
    assert read(path) == at_insert
    md = result.metadata
    (pm,) = md.partition_metadata.values()
    if version == 6:  # logs are shared: a ROLLBACK command block in a new log version
        (cmd_log,) = pm.rollback_log_files or {}
        assert cmd_log.endswith(f"_{INSERT_T}.log.2_1-0-1")
        assert set(pm.log_files_from_failed_commit or {}) == {str(path / f) for f in logs_before}
        rel = str(Path(cmd_log).relative_to(path))
        (blk,) = read_log_file(storage, rel)
        assert blk.block is not None and blk.block.is_rollback
        assert blk.block.target_instant_time == UPDATE_T and blk.block.instant_time == result.instant
        assert logs_before < {f for f in data_files(path) if "/." in f}
    else:  # the log is the deltacommit's own: deleted
        assert set(pm.success_delete_files) == {str(path / f) for f in logs_before}
        assert not {f for f in data_files(path) if "/." in f}
    assert_hudi_rs_agrees(path)


@pytest.mark.parametrize("version", VERSIONS)
def test_mor_savepoint_and_restore(tmp_path: Path, version: int) -> None:
    path = build_table(tmp_path / "t", version)
    storage, table = open_(path)
    at_insert = read(path, INSERT_T)
    sp = savepoint_create(storage, table, INSERT_T)
    # v6: the slice's shared log file is part of the slice as of any instant (its blocks are filtered
    # when read); v8: the log of the later deltacommit is not in the slice as of the insert
    assert len(sp.files) == (2 if version == 6 else 1)
    result = restore(storage, table, INSERT_T)
    assert [i.requested for i in result.rolled_back] == [UPDATE_T]
    assert read(path) == at_insert
    assert_hudi_rs_agrees(path)
    # the restore happened inside one restore instant: no rollback instants of its own
    assert not [i for i in timeline_of(path).instants if i.action == Action.ROLLBACK]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_rollback_left_pending_is_finished_from_its_plan(tmp_path: Path, version: int) -> None:
    """A crash after the plan was written and the target un-published: the next rollback finishes
    that one (same instant, same plan) instead of rolling back another write."""
    path = build_table(tmp_path / "t", version)
    storage, table = open_(path)
    at_insert = read(path, INSERT_T)
    tl = timeline_of(path)
    target = tl.get(UPDATE_T)
    assert target is not None
    plan, appended = plan_table_rollback(storage, table, target)
    record = rollback_plan_record(storage, plan, appended,
                                           {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*")})
    r = "20250101100000000"
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"
    storage.create_if_absent(f"{folder}/{r}.rollback.requested", format_avro_metadata(record, version))
    storage.create_if_absent(f"{folder}/{r}.rollback.inflight", b"")
    (completed,) = [n for n in tl.files_of(target) if "." + Action.DELTA_COMMIT in n and "flight" not in n
                    and "requested" not in n]
    storage.delete(f"{folder}/{completed}")  # un-published, then the crash
    result = rollback(storage, table)
    assert result.resumed and result.instant == r and result.target.requested == UPDATE_T
    assert read(path) == at_insert
    after = timeline_of(path)
    assert [(i.requested, i.action, i.state) for i in after.instants] == [
        (INSERT_T, "deltacommit", State.COMPLETED), (r, "rollback", State.COMPLETED)]
    md = content(path, next(i for i in after.instants if i.action == Action.ROLLBACK))
    assert isinstance(md, HoodieRollbackMetadata) and md.commits_rollback == (UPDATE_T,)
    assert_hudi_rs_agrees(path)


def test_a_clean_left_pending_is_finished_by_the_next(tmp_path: Path) -> None:
    path = build_table(tmp_path / "t", 6)
    storage, table = open_(path)
    base = next(f for f in data_files(path) if f.endswith(".parquet"))
    stale = base.replace(f"_{INSERT_T}.parquet", "_20241231000000000.parquet")
    storage.write_atomic(stale, b"")  # an older slice, deleted by the plan below
    plan = CleanPlan(KEEP_LATEST_COMMITS, None, UPDATE_T, {"city=san_francisco": (stale.split("/")[1],)})
    record = cleaner_plan_record(storage, plan)
    t = "20250101100000000"
    storage.create_if_absent(f".hoodie/{t}.clean.requested", format_avro_metadata(record, 6))
    result = clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=5))
    assert result.finished_pending == (t,) and result.instant is None
    assert not storage.exists(stale)
    md = content(path, Instant(t, Action.CLEAN, State.COMPLETED))
    assert isinstance(md, HoodieCleanMetadata) and md.total_files_deleted == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_replacecommit_rollback_and_clean_of_replaced_groups(tmp_path: Path, version: int) -> None:
    """A replacecommit rolled back brings the replaced group back; once older than the earliest
    retained commit, a replaced group is cleaned whole."""
    path = tmp_path / "t"
    storage = Storage(path)
    table = TableConfig.create("r", COPY_ON_WRITE, version, ("id",), "ts", ("part",), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    t = [format_instant_time(T0 + timedelta(minutes=n)) for n in range(4)]
    done = [format_instant_time(T0 + timedelta(minutes=n, seconds=1)) for n in range(4)]
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"

    def complete(i: int, action: str, md: CommitMetadata) -> None:
        name = f"{t[i]}.{action}" if version == 6 else f"{t[i]}_{done[i]}.{action}"
        storage.create_if_absent(f"{folder}/{name}", format_commit_metadata(md, version))

    _commit(storage, version, t[0], done[0], [f"p/f0-0_0-0-0_{t[0]}.parquet", f"p/f1-0_0-0-0_{t[0]}.parquet"])
    storage.write_atomic(f"p/f2-0_0-0-0_{t[1]}.parquet", b"")
    storage.create_if_absent(f"{folder}/{t[1]}.replacecommit.requested", b"")
    storage.create_if_absent(f"{folder}/{t[1]}.replacecommit.inflight", b"")
    complete(1, "replacecommit", CommitMetadata(operation_type="INSERT_OVERWRITE",
                                                partition_to_replace_file_ids={"p": ("f0-0",)}))

    def groups() -> list[str]:
        return sorted(g.file_id for g in FileSystemView.load(storage, table).groups)

    assert groups() == ["f1-0", "f2-0"]
    result = rollback(storage, table)
    assert result.target.requested == t[1] and result.target.action == Action.REPLACE_COMMIT
    assert groups() == ["f0-0", "f1-0"] and not storage.exists(f"p/f2-0_0-0-0_{t[1]}.parquet")
    # again, then two more commits: the replaced group goes whole once its replacecommit is not retained
    storage.write_atomic(f"p/f2-0_0-0-0_{t[2]}.parquet", b"")
    storage.create_if_absent(f"{folder}/{t[2]}.replacecommit.requested", b"")
    storage.create_if_absent(f"{folder}/{t[2]}.replacecommit.inflight", b"")
    complete(2, "replacecommit", CommitMetadata(operation_type="INSERT_OVERWRITE",
                                                partition_to_replace_file_ids={"p": ("f0-0",)}))
    _commit(storage, version, t[3], done[3], [f"p/f1-0_0-0-0_{t[3]}.parquet"])
    cleaned = clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1))
    assert cleaned.deleted == {"p": (f"f0-0_0-0-0_{t[0]}.parquet",)}
    assert groups() == ["f1-0", "f2-0"]


@pytest.mark.parametrize("version", VERSIONS)
def test_archival_of_every_kind_of_instant(tmp_path: Path, version: int) -> None:
    """Commits, a clean, a rollback and a replacecommit archived: each timeline file becomes the entry
    its action and state call for (v6) or one LSM row per instant (v8); a replacecommit waits until
    the clean removed the group it replaced."""
    import pyarrow.parquet as pq

    from spec.timeline.avro_model import HoodieRequestedReplaceMetadata

    path = tmp_path / "t"
    storage = Storage(path)
    table = TableConfig.create("a", COPY_ON_WRITE, version, ("id",), "ts", ("part",), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"
    t = [format_instant_time(T0 + timedelta(minutes=n)) for n in range(11)]
    done = [format_instant_time(T0 + timedelta(minutes=n, seconds=30)) for n in range(11)]

    def at(n: int) -> Any:
        return lambda: (T0 + timedelta(minutes=n, seconds=10)).timestamp()

    def svc(n: int) -> str:  # the instant time a service run on clock at(n) takes
        return format_instant_time(T0 + timedelta(minutes=n, seconds=10))

    for n in range(3):
        _commit(storage, version, t[n], done[n], [f"p/f0-0_0-0-0_{t[n]}.parquet"])
    assert clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1), clock=at(3)).instant
    storage.create_if_absent(f"{folder}/{t[4]}.commit.requested", b"")  # a failed write, rolled back
    storage.create_if_absent(f"{folder}/{t[4]}.inflight", b"")
    rollback(storage, table, clock=at(5))
    storage.write_atomic(f"p/f1-0_0-0-0_{t[6]}.parquet", b"")
    storage.create_if_absent(f"{folder}/{t[6]}.replacecommit.requested",
                             format_avro_metadata(HoodieRequestedReplaceMetadata(), version))
    storage.create_if_absent(f"{folder}/{t[6]}.replacecommit.inflight",
                             format_commit_metadata(CommitMetadata(operation_type="INSERT_OVERWRITE"), version))
    name = f"{t[6]}.replacecommit" if version == 6 else f"{t[6]}_{done[6]}.replacecommit"
    storage.create_if_absent(f"{folder}/{name}", format_commit_metadata(
        CommitMetadata(operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={"p": ("f0-0",)}), version))
    for n in (7, 8, 9):
        _commit(storage, version, t[n], done[n], [f"p/f1-0_0-0-0_{t[n]}.parquet"])
    config = ArchiveConfig(keep_min_commits=2, keep_max_commits=3)
    first = arch.archive(storage, table, config)  # f0 still has files: the replacecommit stays
    assert [i.requested for i in first.archived] == t[:3]
    assert clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1),
                          clock=at(10)).total_deleted == 4  # f0 whole (replaced), f1 at t6 and t7
    second = arch.archive(storage, table, config)
    assert [(i.requested, i.action) for i in second.archived] == [
        (svc(3), "clean"), (svc(5), "rollback"), (t[6], "replacecommit"), (t[7], "commit")]
    assert [(i.requested, i.action) for i in timeline_of(path).instants] == [
        (t[8], "commit"), (t[9], "commit"), (svc(10), "clean")]
    listed = archived_instants(storage, table)
    assert [(i.requested, i.action, i.state) for i in listed] == [
        (t[0], "commit", "COMPLETED"), (t[1], "commit", "COMPLETED"), (t[2], "commit", "COMPLETED"),
        (svc(3), "clean", "COMPLETED"), (svc(5), "rollback", "COMPLETED"), (t[6], "replacecommit", "COMPLETED"),
        (t[7], "commit", "COMPLETED")]
    if version == 6:
        entries = {(e["commitTime"], e["actionType"], e["actionState"]): e for e in read_archived_entries(storage)}
        assert len(entries) == 21
        filled = {k: sorted(f for f, _ in ENTRY_FIELDS if f not in ("commitTime", "actionType", "actionState",
                                                                          "version", "stateTransitionTime")
                            and v[f] is not None) for k, v in entries.items()}
        assert filled[(svc(3), "clean", "REQUESTED")] == filled[(svc(3), "clean", "INFLIGHT")] == ["hoodieCleanerPlan"]
        assert filled[(svc(3), "clean", "COMPLETED")] == ["hoodieCleanMetadata"]
        assert filled[(svc(5), "rollback", "COMPLETED")] == ["hoodieRollbackMetadata"]
        assert filled[(t[6], "replacecommit", "REQUESTED")] == ["hoodieRequestedReplaceMetadata"]
        assert filled[(t[6], "replacecommit", "INFLIGHT")] == ["HoodieInflightReplaceMetadata"]
        assert filled[(t[6], "replacecommit", "COMPLETED")] == ["hoodieReplaceCommitMetadata"]
        assert entries[(t[6], "replacecommit", "COMPLETED")]["hoodieReplaceCommitMetadata"][
            "partitionToReplaceFileIds"] == {"p": ["f0-0"]}
        assert filled[(t[0], "commit", "COMPLETED")] == ["hoodieCommitMetadata"]
        assert all(e["stateTransitionTime"] for e in entries.values())
        assert archive_log_files(storage) == [".hoodie/archived/.commits_.archive.1_1-0-1"]  # appended to
    else:
        assert second.archive_file == f".hoodie/timeline/history/{svc(3)}_{t[7]}_0.parquet"
        rows = {r["instantTime"]: r for r in pq.read_table(storage.full(second.archive_file)).to_pylist()}
        assert rows[svc(3)]["plan"] is not None and rows[svc(3)]["metadata"] is not None  # cleaner plan, metadata
        assert rows[t[6]]["plan"] is not None  # the inflight replacecommit's metadata
        assert rows[t[7]]["plan"] is None and rows[svc(5)]["action"] == "rollback"
        assert latest_snapshot_version(storage) == 2 and len(snapshot_manifest(storage, 2)) == 2


def test_clean_spares_slices_a_pending_compaction_needs(tmp_path: Path) -> None:
    """The cleaner reads the plans of pending compactions: a slice at or after an operation's base
    instant stays, even under KEEP_LATEST_FILE_VERSIONS with one version."""
    from spec.config.table_config import MERGE_ON_READ
    from spec.timeline.avro_model import HoodieCompactionOperation, HoodieCompactionPlan

    path = tmp_path / "t"
    storage = Storage(path)
    table = TableConfig.create("m", MERGE_ON_READ, 6, ("id",), "ts", ("part",), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    t = [format_instant_time(T0 + timedelta(minutes=n)) for n in range(4)]
    for n in range(3):
        name = f"f0-0_0-0-0_{t[n]}.parquet"
        storage.write_atomic(f"p/{name}", b"")
        storage.create_if_absent(f".hoodie/{t[n]}.deltacommit.requested", b"")
        storage.create_if_absent(f".hoodie/{t[n]}.deltacommit.inflight", b"")
        storage.create_if_absent(f".hoodie/{t[n]}.deltacommit", format_commit_metadata(CommitMetadata(), 6))
    config = CleanConfig(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1)
    assert plan_table_clean(storage, table, config).all_files() == {
        ("p", f"f0-0_0-0-0_{t[0]}.parquet"), ("p", f"f0-0_0-0-0_{t[1]}.parquet")}
    op = HoodieCompactionOperation(base_instant_time=t[1], delta_file_paths=(), file_id="f0-0", partition_path="p",
                                   data_file_path=f"f0-0_0-0-0_{t[1]}.parquet")
    storage.create_if_absent(f".hoodie/{t[3]}.compaction.requested",
                             format_avro_metadata(HoodieCompactionPlan(operations=(op,), version=2), 6))
    assert compaction_base_instants(pending_compaction_plans(storage, timeline_of(path))) == {("p", "f0-0"): t[1]}
    result = clean(storage, table, config)
    assert result.deleted == {"p": (f"f0-0_0-0-0_{t[0]}.parquet",)}
    assert storage.exists(f"p/f0-0_0-0-0_{t[1]}.parquet") and storage.exists(f"p/f0-0_0-0-0_{t[2]}.parquet")


def test_clean_by_hours(tmp_path: Path) -> None:
    """KEEP_LATEST_BY_HOURS: commits requested within the last N hours of ``now`` are retained."""
    path = tmp_path / "t"
    storage = Storage(path)
    table = TableConfig.create("h", COPY_ON_WRITE, 8, ("id",), "ts", (), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    t = [format_instant_time(T0 + timedelta(hours=n)) for n in range(4)]
    for n in range(4):
        done = format_instant_time(T0 + timedelta(hours=n, seconds=1))
        _commit(storage, 8, t[n], done, [f"f0-0_0-0-0_{t[n]}.parquet"])
    now = format_instant_time(T0 + timedelta(hours=4))
    config = CleanConfig("KEEP_LATEST_BY_HOURS", hours_retained=2)  # earliest retained: t[2]
    result = clean(storage, table, config, now=now)
    assert result.plan is not None and result.plan.earliest_instant_to_retain is not None
    assert result.plan.earliest_instant_to_retain.requested == t[2]
    # t[1]'s slice stays: it is the last one before the earliest retained commit
    assert result.deleted == {"": (f"f0-0_0-0-0_{t[0]}.parquet",)}
    md = content(path, instant(path, Action.CLEAN)[0])
    assert isinstance(md, HoodieCleanMetadata) and md.policy == "KEEP_LATEST_BY_HOURS"
    assert md.partition_metadata[""].success_delete_files == (f"f0-0_0-0-0_{t[0]}.parquet",)


# --- property: the cleaner never deletes what a retained query or a savepoint reads ----------------

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _commit(storage: Storage, version: int, t: str, done: str, files: list[str]) -> None:
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"
    for f in files:
        storage.write_atomic(f, b"")
    storage.create_if_absent(f"{folder}/{t}.commit.requested", b"")
    storage.create_if_absent(f"{folder}/{t}.inflight", b"")
    name = f"{t}.commit" if version == 6 else f"{t}_{done}.commit"
    storage.create_if_absent(f"{folder}/{name}", format_commit_metadata(CommitMetadata(), version))


def _slice_files(storage: Storage, table: TableConfig, as_of: str | None) -> set[str]:
    view = FileSystemView.load(storage, table, as_of=as_of)
    return {f"{s.partition_path}/{s.base_file.name}" for s in view.latest_slices() if s.base_file}


@given(version=st.sampled_from(VERSIONS),
       steps=st.lists(st.tuples(st.sets(st.integers(0, 3), min_size=1), st.booleans(), st.integers(0, 4)),
                      min_size=1, max_size=9),
       policy=st.sampled_from([KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS]),
       retained=st.integers(1, 4))
def test_clean_property_never_deletes_needed_files(tmp_path_factory: pytest.TempPathFactory, version: int,
                                                    steps: list[tuple[set[int], bool, int]], policy: str,
                                                    retained: int) -> None:
    path = tmp_path_factory.mktemp("prop") / "t"
    storage = Storage(path)
    table = TableConfig.create("p", COPY_ON_WRITE, version, ("id",), "ts", ("part",), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    config = CleanConfig(policy, commits_retained=retained, file_versions_retained=retained)
    clock_t = [T0]

    def clock() -> float:
        clock_t[0] += timedelta(seconds=1)
        return clock_t[0].timestamp()

    for groups, savepoint, clean_now in steps:
        t = format_instant_time(datetime.fromtimestamp(clock(), UTC))
        done = format_instant_time(datetime.fromtimestamp(clock(), UTC))
        _commit(storage, version, t, done, [f"p{g % 2}/f{g}-0_0-0-0_{t}.parquet" for g in groups])
        if savepoint:
            savepoint_create(storage, table, t, clock=clock)
        if clean_now:
            tl = Timeline.load(storage, table.timeline_layout)
            earliest = earliest_commit_to_retain(tl, config)
            commits = [i.requested for i in tl.commits_timeline().instants]
            needed = _slice_files(storage, table, None)
            if policy == KEEP_LATEST_COMMITS and earliest is not None:
                for c in commits:
                    if c >= earliest.requested:
                        needed |= _slice_files(storage, table, c)
            kept = savepointed_files(storage, tl)
            before = data_files(path)
            result = clean(storage, table, config, clock=clock)
            after = data_files(path)
            deleted = {f"{p}/{f}" for p, fs in result.deleted.items() for f in fs}
            assert before - after == deleted
            assert not deleted & needed, (deleted & needed)
            assert not {d.split("/")[1] for d in deleted} & kept
            if policy == KEEP_LATEST_FILE_VERSIONS:
                for g in range(4):  # the newest `retained` versions of every group survive
                    mine = sorted((f for f in before if f"/f{g}-0_" in f), reverse=True)[:retained]
                    assert set(mine) <= after
            if result.instant is None:
                assert deleted == set()


@given(version=st.sampled_from(VERSIONS),
       steps=st.lists(st.tuples(st.sets(st.integers(0, 3), min_size=1), st.sets(st.integers(0, 3)),
                                st.booleans()), min_size=1, max_size=8),
       policy=st.sampled_from([KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS]),
       retained=st.integers(1, 3))
def test_clean_property_spares_pending_compactions(tmp_path_factory: pytest.TempPathFactory, version: int,
                                                   steps: list[tuple[set[int], set[int], bool]], policy: str,
                                                   retained: int) -> None:
    """Merge-on-read: random deltacommits, compactions scheduled (left pending) on random groups, and
    cleans; a clean never deletes the slice a pending compaction's operation reads, nor what the
    latest snapshot reads."""
    from spec.config.table_config import MERGE_ON_READ
    from spec.timeline.avro_model import HoodieCompactionOperation, HoodieCompactionPlan

    path = tmp_path_factory.mktemp("propc") / "t"
    storage = Storage(path)
    table = TableConfig.create("p", MERGE_ON_READ, version, ("id",), "ts", ("part",), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    folder = ".hoodie" if version == 6 else ".hoodie/timeline"
    config = CleanConfig(policy, commits_retained=retained, file_versions_retained=retained)
    clock_t = [T0]

    def clock() -> float:
        clock_t[0] += timedelta(seconds=1)
        return clock_t[0].timestamp()

    def now() -> str:
        return format_instant_time(datetime.fromtimestamp(clock(), UTC))

    pending: dict[tuple[str, str], str] = {}  # group -> the base file its pending compaction reads
    for groups, compact, clean_now in steps:
        t, done = now(), now()
        for g in groups:
            storage.write_atomic(f"p{g % 2}/f{g}-0_0-0-0_{t}.parquet", b"")
        storage.create_if_absent(f"{folder}/{t}.deltacommit.requested", b"")
        storage.create_if_absent(f"{folder}/{t}.deltacommit.inflight", b"")
        storage.create_if_absent(f"{folder}/{t}.deltacommit" if version == 6 else f"{folder}/{t}_{done}.deltacommit",
                                 format_commit_metadata(CommitMetadata(), version))
        view = FileSystemView.load(storage, table)
        ops = []
        for g in sorted(compact):
            sl = next((s for s in view.latest_slices() if s.file_id == f"f{g}-0"), None)
            if sl is None or sl.base_file is None or (sl.partition_path, sl.file_id) in pending:
                continue
            ops.append(HoodieCompactionOperation(base_instant_time=sl.base_instant, delta_file_paths=(),
                                                 file_id=sl.file_id, partition_path=sl.partition_path,
                                                 data_file_path=sl.base_file.name))
            pending[(sl.partition_path, sl.file_id)] = f"{sl.partition_path}/{sl.base_file.name}"
        if ops:
            storage.create_if_absent(f"{folder}/{now()}.compaction.requested",
                                     format_avro_metadata(HoodieCompactionPlan(operations=tuple(ops), version=2),
                                                          version))
        if clean_now:
            needed = _slice_files(storage, table, None) | set(pending.values())
            before = data_files(path)
            result = clean(storage, table, config, clock=clock)
            deleted = {f"{p}/{f}" for p, fs in result.deleted.items() for f in fs}
            assert before - data_files(path) == deleted
            assert not deleted & needed, (deleted & needed)


# --- in lockstep with the spec model ------------------------------------------------------------------

@pytest.mark.spark
@pytest.mark.parametrize("version", VERSIONS)
def test_services_leave_the_table_the_model_predicts(cow: Any, version: int) -> None:
    """The four writes, a savepoint, a clean, archival, a rollback and a restore: after each, the
    timeline, every group's slices and the snapshot are what the spec model predicts for the same steps
    (told the instant times and file sizes the writer chose, given the same file ids)."""
    from conformance.interface.ops import CreateTable
    from spec.file_group.file_naming import parse_base_file_name
    from spec.model import Env, TableModel
    from spec.model.operations import Archive, Clean, Restore, Rollback, Savepoint, Write
    from spec.model.queries import layout, snapshot
    from spec.timeline.commit_metadata import parse_commit_metadata

    path, commits = cow(version)
    storage, table = open_(path)
    times: deque[str] = deque()
    sizes: dict[tuple[str, str, str], int] = {}
    for inst in timeline_of(path).commits_timeline().instants:
        for stat in parse_commit_metadata(read_instant_content(storage, inst, table.timeline_layout)).all_write_stats():
            name = stat.path.rsplit("/", 1)[-1]
            sizes[(stat.partition_path, stat.file_id, parse_base_file_name(name).instant)] = stat.file_size
    config = CreateTable(table_version=version, partition_fields=("city",), hive_style=True,
                         clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3)
    model = TableModel(config, Env(lambda: times.popleft(), file_id_prefixes(),
                                   lambda p, f, t, n: sizes.get((p, f, t))))
    fed: set[str] = set()

    def new_times() -> None:
        """Feed the model the instant times the last step chose, in the order it asks for them
        (a savepoint's requested time is its commit's, not a new one)."""
        for i in sorted(timeline_of(path).instants, key=lambda i: i.requested):
            for t in (i.requested, i.completed):
                if t is not None and t not in fed and not (i.action == Action.SAVEPOINT and t == i.requested):
                    times.append(t)
                    fed.add(t)

    def check(step: str) -> None:
        disk_tl = sorted((i.requested, i.action, i.state, i.completed) for i in timeline_of(path).instants)
        model_tl = sorted((i.requested, i.action, i.state, i.completed) for i in model.state.timeline)
        assert disk_tl == model_tl, step
        view = FileSystemView.load(Storage(path))
        disk_layout = {p: sorted((g.file_id, [s.base_instant for s in g.slices]) for g in view.groups
                                 if g.partition_path == p) for p in view.partitions()}
        model_layout = {p: sorted((g.file_id, [s.base_instant for s in g.slices]) for g in groups)
                        for p, groups in layout(model.state).items() if groups}
        assert disk_layout == model_layout, step
        predicted = sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"], r["v"]) for r in snapshot(model.state))
        written = sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"], r["v"])
                         for r in read_table(str(path)).to_pylist())
        assert written == predicted, step

    # the writes, replayed: the writer wrote them in requested-time order, completion times after each
    for (op, rows), c in zip(STEPS, commits, strict=True):
        inst = timeline_of(path).get(c)
        assert inst is not None
        times.extend([c] + ([inst.completed] if inst.completed else []))
        fed.update(times)
        model.apply(Write(op, tuple(rows)))
    check("writes")
    steps: list[tuple[str, Any, Any]] = [
        ("savepoint", lambda: savepoint_create(storage, table, commits[1]), Savepoint(commits[1])),
        ("clean", lambda: clean(storage, table, CleanConfig(KEEP_LATEST_COMMITS, commits_retained=1)),
         Clean()),
    ]
    steps.append(("archive", lambda: arch.archive(storage, table, ArchiveConfig(2, 3)), Archive()))
    steps += [("rollback", lambda: rollback(storage, table), Rollback()),
              ("restore", lambda: restore(storage, table, commits[1]), Restore(commits[1]))]
    for name, run, op in steps:
        run()
        new_times()
        model.apply(op)
        check(name)
        if name == "archive" and version == 6:
            assert timeline_of(path).get(commits[0]) is None and archived_instants(storage, table)
        elif name == "archive":  # its metadata table not yet compacted: archival waits (metadata_table_retains)
            assert timeline_of(path).get(commits[0]) is not None and not archived_instants(storage, table)
    remaining = [i.requested for i in timeline_of(path).commits_timeline().instants]
    assert remaining == (commits[1:2] if version == 6 else commits[:2])
    assert_hudi_rs_agrees(path)

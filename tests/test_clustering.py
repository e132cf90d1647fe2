"""A pending clustering's file groups (``spec.actions.clustering``): read from a real clustering plan; left out of a
compaction plan; a write touching them after the clustering was scheduled conflicts with it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.transaction.transaction import resolve_write_conflict
from spec.actions.clustering import clustering_file_groups, pending_clustering_groups
from spec.config.table_config import TableConfig
from spec.errors import MetadataFormatError, WriteConflict
from spec.file_group.file_naming import parse_base_file_name, parse_log_file_name
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCKS_FOLDER
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieRequestedReplaceMetadata, format_avro_metadata, parse_avro_metadata
from spec.timeline.commit_metadata import CommitMetadata, parse_commit_metadata, write_stat
from spec.timeline.instant import Action, Instant, State
from tests.conftest import RealTable


def _real_clustering(tables: list[RealTable]) -> tuple[Path, str, str]:
    for t in tables:
        folder = t.path / ".hoodie" / "timeline"
        for requested in sorted(folder.glob("*.clustering.requested")):
            instant = requested.name.split(".")[0]
            (done,) = folder.glob(f"{instant}_*.replacecommit")
            return folder, requested.name, done.name
    raise AssertionError("no real table has a clustering")


def test_a_real_clustering_plan_names_the_groups_its_replacecommit_replaces(real_tables_v9: list[RealTable]) -> None:
    folder, requested, done = _real_clustering(real_tables_v9)
    plan = parse_avro_metadata((folder / requested).read_bytes(), HoodieRequestedReplaceMetadata)
    replaced = parse_commit_metadata((folder / done).read_bytes()).partition_to_replace_file_ids or {}
    assert plan.operation_type == "CLUSTER"
    assert sorted(clustering_file_groups(plan.clustering_plan)) == sorted(
        (p, f) for p, ids in replaced.items() for f in ids)
    assert clustering_file_groups(None) == ()
    with pytest.raises(MetadataFormatError):
        clustering_file_groups({"inputGroups": [{"slices": [{"partitionPath": "p"}]}]})


def _mor(tmp_path: Path) -> Path:
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "9",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.metadata.enable": "false"}
    table = HudiTable(str(path), engine="local")
    table.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "p": ["x", "y"]}), "insert", options)
    table.write(pa.table({"id": ["a", "b"], "ts": [2, 2], "p": ["x", "y"]}), "upsert", options)
    return path


def _schedule_clustering(path: Path, real: list[RealTable], instant: str, partition: str, file_id: str) -> None:
    folder, requested, _ = _real_clustering(real)
    plan: Any = copy.deepcopy(parse_avro_metadata((folder / requested).read_bytes(),
                                                  HoodieRequestedReplaceMetadata).clustering_plan)
    group = plan["inputGroups"][0]
    group["slices"] = [{**group["slices"][0], "partitionPath": partition, "fileId": file_id, "dataFilePath": "",
                        "deltaFilePaths": []}]
    plan["inputGroups"] = [group]
    content = format_avro_metadata(HoodieRequestedReplaceMetadata(operation_type="CLUSTER", clustering_plan=plan), 9)
    (path / ".hoodie" / "timeline" / f"{instant}.clustering.requested").write_bytes(content)


def _group_of(path: Path, partition: str) -> str:
    return parse_base_file_name(next((path / partition).glob("*.parquet")).name).file_id


def test_a_compaction_leaves_out_the_groups_a_pending_clustering_holds(tmp_path: Path,
                                                                       real_tables_v9: list[RealTable]) -> None:
    path = _mor(tmp_path)
    held = _group_of(path, "x")
    _schedule_clustering(path, real_tables_v9, "20990101000000000", "x", held)
    storage = Storage(str(path))
    assert pending_clustering_groups(storage, Timeline.load(storage, 2)) == {("x", held): "20990101000000000"}
    instant = HudiTable(str(path), engine="local").compact()
    assert instant is not None
    compacted = {parse_base_file_name(f.name).file_id for f in path.rglob(f"*_{instant}.parquet")}
    assert compacted == {_group_of(path, "y")}  # y compacted, x left to the clustering
    assert any(parse_log_file_name(f.name).file_id == held for f in (path / "x").glob(".*.log.*"))
    # the compaction's clean-up of failed writes left the clustering pending: a table service, not a failed write
    assert (path / ".hoodie" / "timeline" / "20990101000000000.clustering.requested").exists()


def _files(path: Path) -> dict[str, bytes]:
    """The table's files (the table lock is coordination, not table content)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*")
            if p.is_file() and not str(p.relative_to(path)).startswith(LOCKS_FOLDER)}


def test_a_write_updating_a_group_a_pending_clustering_holds_is_rejected(tmp_path: Path,
                                                                        real_tables_v9: list[RealTable]) -> None:
    """Hudi rejects an update to a file group a pending clustering rewrites (its default update strategy); the write
    is rolled back and leaves the table as it was; a write to another group commits and leaves the clustering
    pending."""
    path = _mor(tmp_path)
    _schedule_clustering(path, real_tables_v9, "20990101000000000", "x", _group_of(path, "x"))
    before = _files(path)
    table = HudiTable(str(path), engine="local")
    with pytest.raises(WriteConflict, match="pending clustering 20990101000000000"):
        table.write(pa.table({"id": ["a"], "ts": [3], "p": ["x"]}), "upsert")
    assert _files(path) == before
    table.write(pa.table({"id": ["b"], "ts": [3], "p": ["y"]}), "upsert")
    assert (path / ".hoodie" / "timeline" / "20990101000000000.clustering.requested").exists()


def test_a_write_conflicts_with_a_clustering_scheduled_after_it_started(tmp_path: Path,
                                                                        real_tables_v9: list[RealTable]) -> None:
    path = _mor(tmp_path)
    held = _group_of(path, "x")
    storage, table = Storage(str(path)), TableConfig.load(str(path))
    writer_instant = "20980101000000000"
    _schedule_clustering(path, real_tables_v9, "20990101000000000", "x", held)
    timeline = Timeline.load(storage, 2)
    done = frozenset(i.requested for i in timeline.completed().instants)
    md = CommitMetadata(partition_to_write_stats={"x": (write_stat(fileId=held, path=f"x/.{held}_x.log.1_0-0-0",
                                                                     partitionPath="x"),)})
    inst = Instant(writer_instant, Action.DELTA_COMMIT, State.INFLIGHT)
    with pytest.raises(WriteConflict, match="clustering 20990101000000000"):
        resolve_write_conflict(storage, timeline, inst, md, done, table)
    other = CommitMetadata(partition_to_write_stats={"y": (write_stat(fileId=_group_of(path, "y"),
                                                                        path="y/x", partitionPath="y"),)})
    resolve_write_conflict(storage, timeline, inst, other, done, table)  # another group: no conflict

"""Clustering (``spec.actions.clustering_plan``, ``reference.executors.clustering``): the size-based plan's rules on
slices of given sizes; the options refused; a clustering on the local engine keeps every row, sorts by the sort
columns, splits by the target size and replaces its input groups; a write updating a group under a pending
clustering is refused while an insert elsewhere proceeds; an inflight clustering is rolled back and run again; a
second clustering looks only at the partitions written since the first."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import main
from reference.executors.clustering import cluster_group
from spec.actions.clustering import clustering_file_groups, pending_clustering_groups
from spec.actions.clustering_plan import (
    ClusteringConfig,
    CommitPartitions,
    EligibleSlice,
    clustering_partitions,
    incremental_partitions,
    plan_clustering,
)
from spec.actions.file_refs import SliceRef
from spec.errors import InvalidConfig, UnsupportedLayout, UnsupportedOption, WriteConflict
from spec.file_group.file_naming import parse_base_file_name
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieRequestedReplaceMetadata, parse_avro_metadata
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action, State
from spec.timeline.layout import read_instant_content

MB = 1024 * 1024


def s(partition: str, file_id: str, size: int | None, logs: tuple[int, ...] = ()) -> EligibleSlice:
    base = None if size is None else f"{file_id}_0-0-0_20260101000000000.parquet"
    return EligibleSlice(SliceRef(partition, file_id, "20260101000000000", base,
                                  tuple(f".{file_id}_20260101000000000.log.{i + 1}_0-0-0" for i in range(len(logs)))),
                         size, logs)


def ids(plan: Any) -> list[list[str]]:
    return [[x.slice.file_id for x in g.slices] for g in plan.groups]


def test_groups_take_the_largest_small_files_first_up_to_the_group_size() -> None:
    latest = {"a": [s("a", "f1", 10 * MB), s("a", "f2", 50 * MB), s("a", "big", 400 * MB), s("a", "f3", 30 * MB),
                    s("a", "log-only", None, (5,))],
              "b": [s("b", "g1", 1 * MB)]}
    config = ClusteringConfig(max_bytes_per_group=130 * MB, target_file_max_bytes=60 * MB)
    plan = plan_clustering(latest, config)
    # a slice without a base file counts as hoodie.parquet.max.file.size (120 MB); the 400 MB file is not small
    assert ids(plan) == [["log-only"], ["f2", "f3", "f1"], ["g1"]]
    assert [g.num_output_file_groups for g in plan.groups] == [2, 2, 1]
    assert plan.missing_partitions == ()
    no_single = plan_clustering(latest, ClusteringConfig(max_bytes_per_group=130 * MB, single_group=False))
    assert ids(no_single) == [["log-only"], ["f2", "f3", "f1"]]  # only a partition's *last* group may be single
    assert ids(plan_clustering(latest, config, excluded_groups={("a", "f2")})) == [["log-only"], ["f3", "f1"],
                                                                                  ["g1"]]


def test_the_group_limit_cuts_within_and_across_partitions_and_names_what_it_left() -> None:
    latest = {"a": [s("a", f"f{i}", (10 - i) * MB) for i in range(4)], "b": [s("b", "g", MB), s("b", "h", 2 * MB)]}
    config = ClusteringConfig(max_bytes_per_group=10 * MB, max_num_groups=2)
    plan = plan_clustering(latest, config)
    assert ids(plan) == [["f0"], ["f1"]]
    assert plan.missing_partitions == ("a", "b")
    assert ids(plan_clustering(latest, ClusteringConfig(max_bytes_per_group=10 * MB, max_num_groups=3))) == [
        ["f0"], ["f1"], ["f2"]]


def test_partition_selection() -> None:
    parts = ["2024/01/01", "2024/01/02", "2024/01/03", "x"]
    assert clustering_partitions(parts, ClusteringConfig(partition_regex=r"2024/01/0[12]")) == parts[:2]
    assert clustering_partitions(parts, ClusteringConfig(partition_selected=("x", "2024/01/01"))) == [
        "x", "2024/01/01"]
    assert clustering_partitions(parts, ClusteringConfig(filter_mode="RECENT_DAYS", lookback_partitions=2,
                                                         skip_from_latest=1)) == ["2024/01/03", "2024/01/02"]
    assert clustering_partitions(parts, ClusteringConfig(filter_mode="SELECTED_PARTITIONS",
                                                         begin_partition="2024/01/02",
                                                         end_partition="2024/01/03")) == parts[1:3]


def test_the_incremental_window() -> None:
    commits = [CommitPartitions("commit", "001", "002", frozenset({"a"})),
               CommitPartitions("replacecommit", "003", "005", frozenset({"a"})),  # the last clustering
               CommitPartitions("commit", "004", "006", frozenset({"b"})),
               CommitPartitions("deltacommit", "007", "008", frozenset({"c"})),
               CommitPartitions("commit", "009", "011", frozenset({"d"}))]  # completes after the new instant
    assert incremental_partitions("010", None, (), commits, False) is None
    assert incremental_partitions("010", "003", ["z"], commits, False) == {"b", "z"}
    assert incremental_partitions("010", "003", (), commits, True) == {"c"}


def test_options_refused() -> None:
    with pytest.raises(UnsupportedLayout):
        ClusteringConfig.from_options({"hoodie.layout.optimize.strategy": "z-order"})
    with pytest.raises(UnsupportedLayout):
        ClusteringConfig.from_options({"hoodie.layout.optimize.strategy": "hilbert"})
    with pytest.raises(UnsupportedOption):
        ClusteringConfig.from_options({"hoodie.clustering.plan.strategy.class": "x.Y"})
    with pytest.raises(UnsupportedOption):
        ClusteringConfig.from_options({"hoodie.clustering.rollback.pending.replacecommit.on.conflict": "true"})
    with pytest.raises(InvalidConfig):
        ClusteringConfig.from_options({"hoodie.clustering.plan.strategy.max.num.groups": "many"})
    with pytest.raises(UnsupportedOption):
        ClusteringConfig.from_options({"hoodie.clustering.plan.partition.filter.mode": "DAY_ROLLING"})
    assert ClusteringConfig.from_options({"hoodie.clustering.plan.strategy.sort.columns": "a, b",
                                          "hoodie.layout.optimize.strategy": "linear"}).sort_columns == ("a", "b")


def options(version: int, table_type: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.parquet.small.file.limit": "0"}


def small_table(path: Path, version: int, table_type: str) -> HudiTable:
    """Four inserts (four file groups in x, two in y); merge-on-read: an update appended to a log of x."""
    table = HudiTable(str(path), engine="local")
    for i in range(4):
        table.write(pa.table({"id": [f"k{i}{j}" for j in range(5)], "ts": [i] * 5, "p": ["x", "y", "x", "x", "y"][:5],
                              "v": [(7 * i + 3 * j) % 10 for j in range(5)]}).slice(0, 5 if i < 2 else 3),
                    "insert", options(version, table_type))
    table.write(pa.table({"id": ["k00"], "ts": [9], "p": ["x"], "v": [100]}), "upsert", options(version, table_type))
    return table


def rows(path: Path) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"], r["_hoodie_commit_time"]) for r in read_table(str(path)).to_pylist())


@pytest.mark.parametrize(("version", "table_type"), [(6, "COPY_ON_WRITE"), (8, "MERGE_ON_READ"),
                                                     (9, "MERGE_ON_READ"), (9, "COPY_ON_WRITE")])
def test_a_local_clustering_keeps_every_row_sorted_in_new_groups(tmp_path: Path, version: int,
                                                                  table_type: str) -> None:
    path = tmp_path / "t"
    table = small_table(path, version, table_type)
    before = rows(path)
    t = table.cluster({"hoodie.clustering.plan.strategy.sort.columns": "v,id"})
    assert t is not None
    timeline = Timeline.load(str(path))
    requested = f"{t}.{'clustering' if version >= 8 else 'replacecommit'}.requested"
    folder = path / ".hoodie" / ("timeline" if version >= 8 else "")
    plan = parse_avro_metadata((folder / requested).read_bytes(), HoodieRequestedReplaceMetadata)
    done = timeline.get(t)
    assert done is not None and done.action == Action.REPLACE_COMMIT and done.is_completed
    md = parse_commit_metadata(read_instant_content(Storage(str(path)), done, timeline.layout))
    assert md.operation_type == "CLUSTER"
    assert sorted((p, f) for p, fs in (md.partition_to_replace_file_ids or {}).items() for f in fs) == sorted(
        clustering_file_groups(plan.clustering_plan))
    assert rows(path) == before  # commit times kept (preserveHoodieMetadata)
    out = read_table(str(path)).to_pylist()
    new_ids = {s.file_id for s in md.all_write_stats()}
    assert {parse_base_file_name(r["_hoodie_file_name"]).file_id for r in out} <= new_ids
    for name in {r["_hoodie_file_name"] for r in out}:
        in_file = [(r["v"], r["id"]) for r in out if r["_hoodie_file_name"] == name]
        assert len(in_file) > 1 and in_file == sorted(in_file)
    assert table.cluster() is None  # nothing was written since (the incremental window is empty)


def test_the_target_size_splits_a_group_into_files(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = small_table(path, 9, "COPY_ON_WRITE")
    before = rows(path)
    t = table.cluster({"hoodie.clustering.plan.strategy.target.file.max.bytes": "2000",
                       "hoodie.clustering.plan.strategy.sort.columns": "id"})
    assert t is not None and rows(path) == before
    out = read_table(str(path)).to_pylist()
    files = sorted({r["_hoodie_file_name"] for r in out})
    assert len(files) > 2  # each of the two partitions' groups written to more than one file
    prefixes = {parse_base_file_name(f).file_id.rsplit("-", 1)[0] for f in files}
    assert len(prefixes) == 2  # per input group one prefix, files numbered -0, -1, …


def test_a_pending_clustering_refuses_updates_to_its_groups_and_lets_inserts_elsewhere_proceed(
        tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = small_table(path, 9, "COPY_ON_WRITE")
    t = table.schedule_clustering({"hoodie.clustering.plan.strategy.partition.selected": "x"})
    assert t is not None
    held = pending_clustering_groups(Storage(str(path)), Timeline.load(str(path)))
    assert held and {p for p, _ in held} == {"x"}
    before, files = rows(path), sorted(p.name for p in path.glob("*/*.parquet"))
    with pytest.raises(WriteConflict, match="pending clustering"):
        table.write(pa.table({"id": ["k02"], "ts": [5], "p": ["x"], "v": [-1]}), "upsert",
                    options(9, "COPY_ON_WRITE"))
    assert rows(path) == before and sorted(p.name for p in path.glob("*/*.parquet")) == files
    table.write(pa.table({"id": ["new"], "ts": [5], "p": ["y"], "v": [-2]}), "insert", options(9, "COPY_ON_WRITE"))
    table.write(pa.table({"id": ["new2"], "ts": [5], "p": ["x"], "v": [-3]}), "insert",
                {**options(9, "COPY_ON_WRITE"), "hoodie.parquet.small.file.limit": str(100 * MB)})
    assert len(rows(path)) == len(before) + 2
    new_x = {parse_base_file_name(r["_hoodie_file_name"]).file_id for r in read_table(str(path)).to_pylist()
             if r["id"] == "new2"}
    assert not new_x & {f for _, f in held}  # the insert went to no small file the clustering holds
    table.run_clustering(t)
    assert {r[0] for r in rows(path)} >= {"new", "new2"}


def test_an_inflight_clustering_is_rolled_back_and_run_again(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = small_table(path, 9, "COPY_ON_WRITE")
    before = rows(path)
    t = table.schedule_clustering()
    assert t is not None
    folder = path / ".hoodie" / "timeline"
    (folder / f"{t}.clustering.inflight").write_bytes(b"")  # a run killed after writing one new file
    plan = parse_avro_metadata((folder / f"{t}.clustering.requested").read_bytes(), HoodieRequestedReplaceMetadata)
    group = plan.clustering_plan["inputGroups"][0]
    slices = [{"partition": sl["partitionPath"], "file_id": sl["fileId"],
               "base_file": Path(sl["dataFilePath"]).name, "logs": []} for sl in group["slices"]]
    (left,) = cluster_group(str(path), {"slices": slices, "prefix": "dead0000-0000-0000-0000-000000000000",
                                        "sort": [], "outputs": 1}, t, "0-0-0")
    assert (path / left["path"]).exists()
    half = path / left["path"].replace("dead0000", "dead0001")
    half = half.with_name(half.name + ".inprogress")
    half.write_bytes(b"PAR1")  # a file the killed run was writing
    assert Timeline.load(str(path)).get(t).state == State.INFLIGHT  # type: ignore[union-attr]
    table.run_clustering()
    assert not (path / left["path"]).exists() and not half.exists()
    assert Timeline.load(str(path)).get(t).is_completed  # type: ignore[union-attr]
    assert any(i.action == Action.ROLLBACK for i in Timeline.load(str(path)).instants)
    assert rows(path) == before


def test_a_second_clustering_looks_only_at_partitions_written_since(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = small_table(path, 9, "COPY_ON_WRITE")
    assert table.cluster({"hoodie.clustering.plan.strategy.partition.selected": "x"}) is not None
    assert table.cluster() is None  # y was not written since the clustering, x was clustered
    table.write(pa.table({"id": ["n"], "ts": [1], "p": ["y"], "v": [0]}), "insert", options(9, "COPY_ON_WRITE"))
    t = table.schedule_clustering()
    assert t is not None
    plan = parse_avro_metadata((path / ".hoodie/timeline" / f"{t}.clustering.requested").read_bytes(),
                               HoodieRequestedReplaceMetadata)
    assert {p for p, _ in clustering_file_groups(plan.clustering_plan)} == {"y"}
    every = tmp_path / "every"
    shutil.copytree(path, every)
    (every / ".hoodie" / "timeline" / f"{t}.clustering.requested").unlink()  # unscheduled again
    t2 = HudiTable(str(every), engine="local").schedule_clustering(
        {"hoodie.table.services.incremental.enabled": "false"})
    assert t2 is not None  # incremental table services off: every partition is looked at again
    plan = parse_avro_metadata((every / ".hoodie/timeline" / f"{t2}.clustering.requested").read_bytes(),
                               HoodieRequestedReplaceMetadata)
    assert {p for p, _ in clustering_file_groups(plan.clustering_plan)} == {"x", "y"}
    assert plan.clustering_plan["missingSchedulePartitions"] is None


def test_the_cli_clusters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = tmp_path / "t"
    small_table(path, 9, "COPY_ON_WRITE")
    before = rows(path)
    assert main(["cluster", str(path), "--schedule", "--output", "json"]) == 0
    scheduled = json.loads(capsys.readouterr().out)
    assert scheduled["state"] == "REQUESTED"
    assert main(["cluster", str(path), "--run", "--output", "json",
                 "--option", "hoodie.clustering.plan.strategy.sort.columns=v"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["clustering_time"] == scheduled["clustering_time"] and done["state"] == "COMPLETED"
    assert sum(r["num_writes"] for r in done["file_groups"]) == len(before)
    assert rows(path) == before
    assert main(["cluster", str(path), "--option", "hoodie.layout.optimize.strategy=z-order"]) == 2
    assert "z-order" in capsys.readouterr().err
    assert main(["cluster", str(path), "--option", "hoodie.index.type=BUCKET"]) == 2
    assert "bucket" in capsys.readouterr().err
    assert rows(path) == before


def test_cluster_runs_the_pending_clusterings_first(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = small_table(path, 9, "COPY_ON_WRITE")
    before = rows(path)
    t = table.schedule_clustering({"hoodie.clustering.plan.strategy.partition.selected": "x"})
    assert t is not None
    # the pending one runs; then the incremental window is empty (nothing was written since it), so no new plan
    assert table.cluster() == t
    timeline = Timeline.load(str(path))
    assert all(i.is_completed for i in timeline.instants)
    assert [i.requested for i in timeline.instants if i.action == Action.REPLACE_COMMIT] == [t]
    assert rows(path) == before


def test_sizes_compare_as_hudis_int_comparator_does() -> None:
    """Hudi orders slices by ``(int) (size2 - size1)``: two sizes 3 GiB apart compare the wrong way round."""
    gib = 1024 * MB
    latest = {"a": [s("a", "small", 1 * gib), s("a", "huge", 4 * gib)]}
    config = ClusteringConfig(small_file_limit=8 * gib, max_bytes_per_group=3 * gib, target_file_max_bytes=gib)
    assert ids(plan_clustering(latest, config)) == [["small"], ["huge"]]  # a plain sort would put huge first


def test_the_model_refuses_a_z_order_clustering_and_leaves_the_table() -> None:
    import itertools

    from conformance.interface.ops import CreateTable
    from spec.model import Env, TableModel
    from spec.model.operations import Cluster, ExpectError, Write

    times = (f"20240101{i:06d}000" for i in itertools.count(1))
    ids = itertools.count(1)
    model = TableModel(CreateTable(table_type="COPY_ON_WRITE", table_version=9, partition_fields=("p",),
                                   small_file_limit=0),
                       Env(lambda: next(times), lambda: f"00000000-0000-4000-8000-{next(ids):012d}"))
    for i in range(2):
        model.apply(Write("insert", ({"id": i, "ts": 1, "p": "a", "v": str(i)},)))
    before = model.state
    model.apply(ExpectError("unsupported_layout"))
    model.apply(Cluster((("hoodie.layout.optimize.strategy", "z-order"),)))
    assert model.state.timeline == before.timeline and model.state.groups == before.groups
    model.apply(Cluster())
    assert [i.action for i in model.state.timeline][-1] == Action.REPLACE_COMMIT
    assert len([g for g in model.state.groups if g.replaced_by is None]) == 1  # two small groups became one

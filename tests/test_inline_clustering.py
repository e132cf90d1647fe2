"""Inline clustering (``hoodie.clustering.inline``, ``hoodie.clustering.inline.max.commits``): after a write's commit,
once enough completed commits followed the last clustering, the writer schedules a clustering with the write's
``hoodie.clustering.*`` options and runs it (``reference.executors.service_client.maybe_inline_clustering``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.config.options import parse_options
from spec.actions.clustering import commits_since_last_clustering, last_clustering
from spec.config.registry import BY_KEY
from spec.errors import UnsupportedOption
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.instant import Action
from spec.timeline.layout import read_instant_content


def _options(version: int, table_type: str, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": str(version),
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.metadata.enable": "false", **extra}


def _write(table: HudiTable, i: int, options: dict[str, str]) -> None:
    """Write ``i``: two new keys, and an update of key k0 (merge-on-read: a log file)."""
    rows = pa.table({"id": [f"k{i}a", f"k{i}b", "k0a"], "ts": [i, i, 100 + i], "p": ["x", "y", "x"],
                     "v": [i, i, -i]})
    table.write(rows, "insert" if i == 0 else "upsert", options)


def _insert(table: HudiTable, i: int, options: dict[str, str]) -> None:
    """Write ``i``: two new keys only (no update of a group a pending clustering holds)."""
    table.write(pa.table({"id": [f"k{i}a", f"k{i}b"], "ts": [i, i], "p": ["x", "y"], "v": [i, i]}), "insert", options)


def _clusterings(path: Path) -> list[str]:
    """The completed replacecommits whose operation is CLUSTER."""
    timeline = Timeline.load(str(path))
    out = []
    for inst in timeline.commits_timeline().instants:
        if inst.action != Action.REPLACE_COMMIT:
            continue
        md = parse_commit_metadata(read_instant_content(Storage(str(path)), inst, timeline.layout))
        if md.operation_type == "CLUSTER":
            out.append(inst.requested)
    return out


def _rows(path: Path) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["v"], r["_hoodie_commit_time"]) for r in read_table(str(path)).to_pylist())


def test_the_options_are_hudis() -> None:
    assert BY_KEY["hoodie.clustering.inline"].default == "false"
    assert BY_KEY["hoodie.clustering.inline.max.commits"].default == "4"  # HoodieClusteringConfig, Hudi 1.2.0
    assert BY_KEY["hoodie.clustering.schedule.inline"].default == "false"
    assert BY_KEY["hoodie.clustering.async.max.commits"].default == "4"
    cfg = parse_options({"hoodie.datasource.clustering.inline.enable": "true"})
    assert cfg.inline_cluster and cfg.cluster_max_commits == 4


def test_off_by_default_no_write_clusters(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    for i in range(5):
        _write(table, i, _options(9, "COPY_ON_WRITE"))
    assert _clusterings(path) == []


@pytest.mark.parametrize(("version", "table_type"), [(6, "COPY_ON_WRITE"), (9, "COPY_ON_WRITE"),
                                                     (9, "MERGE_ON_READ")])
def test_max_commits_clusters_after_the_nth_commit_and_not_before(tmp_path: Path, version: int,
                                                                   table_type: str) -> None:
    path, plain_path = tmp_path / "t", tmp_path / "plain"
    table, plain = HudiTable(str(path), engine="local"), HudiTable(str(plain_path), engine="local")
    inline = _options(version, table_type, **{"hoodie.clustering.inline": "true",
                                              "hoodie.clustering.inline.max.commits": "3",
                                              "hoodie.clustering.plan.strategy.sort.columns": "id"})
    for i in range(2):
        _write(table, i, inline)
        _write(plain, i, _options(version, table_type))
    assert _clusterings(path) == []  # two commits: not yet
    _write(table, 2, inline)
    _write(plain, 2, _options(version, table_type))
    (first,) = _clusterings(path)  # the third commit clusters
    timeline = Timeline.load(str(path))
    assert last_clustering(Storage(str(path)), timeline) is not None
    assert commits_since_last_clustering(timeline, last_clustering(Storage(str(path)), timeline)) == 0
    writes = [i.requested for i in timeline.commits_timeline().instants if i.requested != first]
    assert first > max(writes)  # after the third write's commit
    before = sorted((r["id"], r["v"], r["_hoodie_commit_time"]) for r in table.read(as_of=max(writes)).to_pylist())
    assert _rows(path) == before  # the same rows, their commit times kept
    assert [(k, v) for k, v, _ in _rows(path)] == [(k, v) for k, v, _ in _rows(plain_path)]
    names = {r["_hoodie_file_name"] for r in read_table(str(path)).to_pylist()}
    assert all(n.split("_")[2].startswith(first) for n in names)  # every row in the clustering's files
    for i in range(3, 5):
        _write(table, i, inline)
        _write(plain, i, _options(version, table_type))
    assert _clusterings(path) == [first]  # two commits since the clustering: not yet
    _write(table, 5, inline)
    _write(plain, 5, _options(version, table_type))
    assert len(_clusterings(path)) == 2  # the third commit after it clusters again
    assert table.cluster(inline) is None  # the write's options serve an explicit clustering too (nothing new)
    assert [(k, v) for k, v, _ in _rows(path)] == [(k, v) for k, v, _ in _rows(plain_path)]


def test_a_pending_clustering_counts_as_the_last(tmp_path: Path) -> None:
    """Hudi's ``getLastClusteringInstant`` takes a pending clustering too: commits are counted after it."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    for i in range(2):
        _write(table, i, _options(9, "COPY_ON_WRITE"))
    t = table.schedule_clustering()
    assert t is not None
    timeline = Timeline.load(str(path))
    last = last_clustering(Storage(str(path)), timeline)
    assert last is not None and last.requested == t and not last.is_completed
    assert commits_since_last_clustering(timeline, last) == 0
    assert commits_since_last_clustering(timeline, None) == 2


def test_an_unsupported_clustering_option_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    bad = _options(9, "COPY_ON_WRITE", **{"hoodie.clustering.inline": "true",
                                          "hoodie.layout.optimize.strategy": "z-order"})
    with pytest.raises(UnsupportedOption):
        _write(table, 0, bad)
    assert not path.exists() or not any(path.rglob("*.parquet"))


def test_inline_clustering_runs_a_pending_clustering_first(tmp_path: Path) -> None:
    """``runAnyPendingClustering`` before the trigger is checked: a pending clustering completes after the next
    write even when too few commits followed it to plan another."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    _write(table, 0, _options(9, "COPY_ON_WRITE"))
    t = table.schedule_clustering()
    assert t is not None and _clusterings(path) == []
    _insert(table, 1, _options(9, "COPY_ON_WRITE", **{"hoodie.clustering.inline": "true",
                                                      "hoodie.clustering.inline.max.commits": "5"}))
    assert _clusterings(path) == [t]


def test_schedule_inline_plans_without_running(tmp_path: Path) -> None:
    """``hoodie.clustering.schedule.inline`` alone: a plan once ``hoodie.clustering.async.max.commits`` commits
    completed, left pending; no second plan while it is pending."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    options = _options(9, "COPY_ON_WRITE", **{"hoodie.clustering.schedule.inline": "true",
                                              "hoodie.clustering.async.max.commits": "2"})
    _write(table, 0, options)
    storage = Storage(str(path))
    assert last_clustering(storage, Timeline.load(str(path))) is None
    _write(table, 1, options)
    planned = last_clustering(storage, Timeline.load(str(path)))
    assert planned is not None and not planned.is_completed and _clusterings(path) == []
    for i in range(2, 5):
        _insert(table, i, options)
    assert last_clustering(storage, Timeline.load(str(path))) == planned  # pending: none planned beside it
    assert table.run_clustering(planned.requested) == planned.requested
    assert _clusterings(path) == [planned.requested]

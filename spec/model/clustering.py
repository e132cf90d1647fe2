"""The model's clustering: the plan of ``spec.actions.clustering_plan`` over the model's latest slices, executed as
Hudi's ``SparkSortAndSizeExecutionStrategy`` executes it.

Per input group: the slices' rows (base and logs merged, as a reader reads them) in plan order, sorted by the sort
columns (ascending, nulls first, a stable sort; none: the input order kept), then split in that order into the
group's ``numOutputFileGroups`` new file groups (``<prefix>-0``, ``<prefix>-1``, … — one new prefix per group from
``Env.next_file_id_prefix``, in plan order), as even as the rows allow. Rows keep their commit time and sequence
number (``preserveHoodieMetadata``); only ``_hoodie_file_name`` changes. The clustering replaces every input group.

The incremental window of a later clustering (``spec.actions.clustering_plan.incremental_partitions``) looks at the
partitions the completed writes since the last clustering wrote files in.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``SparkSortAndSizeExecutionStrategy``,
``ClusteringPlanActionExecutor``, ``BaseTableServicePlanActionExecutor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spec.actions.clustering_plan import (
    ClusteringConfig,
    ClusteringPlan,
    CommitPartitions,
    EligibleSlice,
    incremental_partitions,
    output_chunks,
    plan_clustering,
)
from spec.actions.compaction import groups_under_compaction
from spec.actions.file_refs import SliceRef
from spec.model.actions import pending_compaction_plans
from spec.model.files import FILE_NAME, BaseFile, Row
from spec.model.queries import read_slice, view
from spec.model.state import TableState
from spec.timeline.instant import Action


def model_clustering_plan(state: TableState, config: ClusteringConfig, t: str) -> ClusteringPlan:
    """The plan a clustering at ``t`` makes of the model's table."""
    latest: dict[str, list[EligibleSlice]] = {}
    for g in view(state):
        sl = g.latest_slice
        if sl is not None:
            latest.setdefault(g.partition_path, []).append(EligibleSlice(
                SliceRef.of(sl), sl.base_file.size if sl.base_file else None, tuple(f.size for f in sl.log_files)))
    busy = set(groups_under_compaction(pending_compaction_plans(state)))
    return plan_clustering(latest, config, busy, _window(state, t))


def _window(state: TableState, t: str) -> set[str] | None:
    done = [(c, missing) for c, missing in state.clusterings if (i := state.instant(c)) is not None and i.is_completed]
    if not done:
        return None
    last, missing = done[-1]
    written: dict[str, set[str]] = {}
    for g in (*state.groups, *state.cleaned):
        for b in g.base_files:
            written.setdefault(b.instant, set()).add(g.partition)
        for lf in g.log_files:
            for blk in lf.blocks:
                written.setdefault(blk.instant, set()).add(g.partition)
    commits = [CommitPartitions(i.action, i.requested, i.completed or i.requested,
                                frozenset(written.get(i.requested, ())))
               for i in state.timeline if i.is_completed and i.action in (Action.COMMIT, Action.DELTA_COMMIT,
                                                                          Action.REPLACE_COMMIT)]
    return incremental_partitions(t, last, missing, commits, state.config.is_mor)


def sorted_rows(rows: Sequence[Row], columns: Sequence[str]) -> list[Row]:
    """The rows by the sort columns, ascending, nulls first (a stable sort: ties keep their order)."""
    def key(r: Row) -> tuple[Any, ...]:
        return tuple((r.get(c) is not None, r.get(c)) for c in columns)

    return sorted(rows, key=key) if columns else list(rows)


def split_rows(rows: Sequence[Row], files: int) -> list[Sequence[Row]]:
    """``rows`` in order, in the new file groups ``spec.actions.clustering_plan.output_chunks`` gives."""
    return [rows[start:start + count] for start, count in output_chunks(len(rows), files)]


def group_rows(state: TableState, slices: Sequence[SliceRef]) -> list[Row]:
    """An input group's rows: each slice's rows as a reader reads them, in plan order."""
    by_id = {(g.partition_path, g.file_id): g for g in view(state)}
    rows: list[Row] = []
    for s in slices:
        sl = by_id[(s.partition_path, s.file_id)].latest_slice
        assert sl is not None
        rows += read_slice(state, sl, None)
    return rows


def new_base_file(file_id: str, t: str, rows: Sequence[Row], size: int) -> BaseFile:
    """A new file group's base file at ``t`` holding ``rows`` (their file name column set to it)."""
    name = BaseFile(file_id, t, ()).name
    return BaseFile(file_id, t, tuple({**r, FILE_NAME: name} for r in rows), size)


__all__ = ["group_rows", "model_clustering_plan", "new_base_file", "sorted_rows", "split_rows"]

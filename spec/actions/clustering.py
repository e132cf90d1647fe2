"""Clustering: the file groups a pending clustering holds, so that writers and compaction stay off them.

A clustering is planned as ``T.clustering.requested`` (table versions 8 and 9; ``T.replacecommit.requested`` before)
holding a ``HoodieRequestedReplaceMetadata`` whose ``clusteringPlan`` lists input groups of file slices, each slice
naming its partition and file id. It completes as a ``replacecommit`` that replaces exactly those file groups.
While it is pending:

- a compaction leaves its file groups out of the plan (``spec.actions.compaction.plan_compaction``'s
  ``excluded_groups``): their slices are being rewritten;
- a write that touches one of its file groups, when the clustering was scheduled after the write started,
  conflicts with it (``spec.timeline.conflict_resolution``); a write updating one of them is rejected anyway
  (Hudi's default update strategy, ``SparkRejectUpdateStrategy``: ``updates_to_clustering``), so the
  clustering's output never misses an update;
- the writer's clean-up of failed writes never rolls it back (``is_clustering``): it is a table service, run
  again until it completes.

Which file groups a clustering takes is ``spec.actions.clustering_plan``'s; the reference executes plans
(``reference.executors.clustering``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``ClusteringUtils``
(``getFileGroupsFromClusteringPlan``, ``getFileGroupsInPendingClusteringInstants``), the Avro records
``HoodieClusteringPlan``, ``HoodieClusteringGroup`` and ``HoodieSliceInfo``, and
``BaseHoodieCompactionPlanGenerator`` (which filters file groups in pending clustering), ``SparkRejectUpdateStrategy``
and ``BaseHoodieTableServiceClient.getInflightTimelineExcludeCompactionAndClustering``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spec.actions.file_refs import GroupId
from spec.errors import MetadataFormatError
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_model import HoodieRequestedReplaceMetadata, parse_avro_metadata
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import read_instant_content


# --8<-- [start:clustering]
def clustering_file_groups(clustering_plan: Mapping[str, Any] | None) -> tuple[GroupId, ...]:
    """The (partition, file id) of every slice of every input group of a ``HoodieClusteringPlan`` (the decoded
    record), in plan order; none for a replacecommit without a plan (an insert overwrite)."""
    if clustering_plan is None:
        return ()
    try:
        return tuple((str(s["partitionPath"] or ""), str(s["fileId"]))
                     for group in clustering_plan.get("inputGroups") or () for s in group.get("slices") or ())
    except (KeyError, TypeError, AttributeError) as err:
        raise MetadataFormatError(f"a clustering plan's input groups do not name their file groups: {err}",
                                  hint="each slice of HoodieClusteringPlan.inputGroups has partitionPath and fileId") \
            from err


def is_clustering(action: str, clustering_plan: Mapping[str, Any] | None) -> bool:
    """Whether a pending instant is a clustering: a ``clustering`` instant (layout 2), or a replacecommit whose
    requested file holds a clustering plan (an insert overwrite's holds none)."""
    return action == Action.CLUSTERING or (action == Action.REPLACE_COMMIT and clustering_plan is not None)


def updates_to_clustering(written: Iterable[GroupId], held: Iterable[GroupId]) -> frozenset[GroupId]:
    """The file groups a write touched that a pending clustering holds: a non-empty result rejects the write."""
    return frozenset(written) & frozenset(held)
# --8<-- [end:clustering]


# --- a table's pending clusterings ------------------------------------------------------------------------

def clustering_plan(storage: Storage, inst: Instant, layout: int) -> Mapping[str, Any] | None:
    """The clustering plan in the requested file of the clustering or replacecommit ``inst`` (None when it has
    none: an insert overwrite)."""
    content = read_instant_content(storage, Instant(inst.requested, inst.action, State.REQUESTED), layout)
    return parse_avro_metadata(content, HoodieRequestedReplaceMetadata).clustering_plan if content else None


def clustering_groups(storage: Storage, inst: Instant, layout: int) -> tuple[tuple[str, str], ...]:
    """The file groups the clustering (or replacecommit) ``inst`` plans to rewrite (``clustering_file_groups``);
    none for a replacecommit without a clustering plan."""
    return clustering_file_groups(clustering_plan(storage, inst, layout))


def pending_clusterings(storage: Storage, timeline: Timeline) -> list[Instant]:
    """The pending clusterings: ``clustering`` instants, and replacecommits that plan one (``is_clustering``)."""
    return [i for i in timeline.instants
            if not i.is_completed and i.action in (Action.CLUSTERING, Action.REPLACE_COMMIT)
            and is_clustering(i.action, clustering_plan(storage, i, timeline.layout))]


def last_clustering(storage: Storage, timeline: Timeline) -> Instant | None:
    """The newest clustering on the timeline, completed or pending (Hudi's ``getLastClusteringInstant``: the last
    replacecommit or clustering instant that ``ClusteringUtils.isClusteringInstant``): a completed one requested as
    ``clustering`` (layout 2) or whose requested file holds a clustering plan; an insert overwrite's is none."""
    for inst in reversed(timeline.instants):
        if inst.action not in (Action.CLUSTERING, Action.REPLACE_COMMIT):
            continue
        requested = Instant(inst.requested, timeline.origin_action(inst.requested) or inst.action, State.REQUESTED)
        if requested.action == Action.CLUSTERING or is_clustering(
                requested.action, clustering_plan(storage, requested, timeline.layout)):
            return inst
    return None


# --8<-- [start:inline_clustering]
def commits_since_last_clustering(timeline: Timeline, last: Instant | None) -> int:
    """The completed commits, deltacommits and replacecommits requested after the last clustering ``last``
    (``last_clustering``; all of them when there was none), as Hudi's ``ClusteringPlanActionExecutor`` counts
    them before it plans."""
    after = last.requested if last is not None else "0"
    return sum(1 for i in timeline.commits_timeline().instants if i.requested > after)


def should_schedule_inline_clustering(commits_since: int, inline_max: int | None, async_max: int | None) -> bool:
    """Whether a clustering is planned after a commit, as ``ClusteringPlanActionExecutor.createClusteringPlan``
    decides: nothing while inline clustering is on (``inline_max``: ``hoodie.clustering.inline.max.commits``) and
    fewer commits completed since the last clustering, nor while clustering is scheduled inline (``async_max``:
    ``hoodie.clustering.async.max.commits``) and fewer completed since; None: that rule is off."""
    return all(limit is None or commits_since >= limit for limit in (inline_max, async_max))
# --8<-- [end:inline_clustering]


def pending_clustering_groups(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) → the pending clustering whose plan holds the group: a compaction leaves it out, a
    write may not update it."""
    return {g: inst.requested for inst in pending_clusterings(storage, timeline)
            for g in clustering_groups(storage, inst, timeline.layout)}

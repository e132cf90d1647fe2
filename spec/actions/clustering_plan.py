"""Clustering plans: which file groups a clustering rewrites, chosen as Hudi's size-based strategy chooses them.

Hudi's default plan strategy (``SparkSizeBasedClusteringPlanStrategy``, over ``PartitionAwareClusteringPlanStrategy``
and ``ClusteringPlanStrategy``) plans, partition by partition:

1. **partitions**: every partition (sorted) — with incremental table services (``hoodie.table.services.incremental
   .enabled``, default true) and an earlier completed clustering, only the partitions written since
   (``incremental_partitions``) — narrowed by ``hoodie.clustering.plan.strategy.partition.selected``
   (a comma list, taken as given) or else ``...partition.regex.pattern`` (a full match), then by
   ``hoodie.clustering.plan.partition.filter.mode`` (``ClusteringPlanPartitionFilter``): ``NONE``; ``RECENT_DAYS``
   — the partitions in reverse order, the first ``...daybased.skipfromlatest.partitions`` skipped, at most
   ``...daybased.lookback.partitions`` kept; ``SELECTED_PARTITIONS`` — those between ``...cluster.begin.partition``
   and ``...cluster.end.partition`` (inclusive, string order);
2. **eligible slices**: the latest slice of every file group that no pending compaction or clustering holds
   (``ClusteringPlanStrategy.getFileSlicesEligibleForClustering``) whose base file is smaller than
   ``hoodie.clustering.plan.strategy.small.file.limit`` (a slice without a base file counts 0);
3. **groups**: the eligible slices, largest base file first (a slice without one counts as
   ``hoodie.parquet.max.file.size``; a stable sort by the size difference cast to a Java int, as Hudi's comparator
   sorts, so sizes more than 2 GiB apart compare the wrong way round there and here), filled in that order into groups
   of at most ``...max.bytes.per.group`` bytes (a slice that would overflow a non-empty group starts the next one). A
   partition stops making groups once it has ``...max.num.groups``; its last group is kept when it holds more than one
   slice or ``...single.group.clustering.enabled`` (default true). Each group writes ``ceil(bytes /
   ...target.file.max.bytes)`` output file groups;
4. **the plan**: the groups of all partitions in partition order, at most ``...max.num.groups`` in all; none → no
   plan (Hudi writes no requested instant). A partition whose slices did not all find a group, or whose groups the
   limit cut, is named in the plan's ``missingSchedulePartitions`` (table version 8 and later).

Ties in step 3 (two base files of the same size) keep the file system view's order in Hudi (a hash set's); here
they are in file id order, the one place a plan may order slices differently.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9; the plans are compared with
1.2.0's ``run_clustering``): ``SparkSizeBasedClusteringPlanStrategy``, ``PartitionAwareClusteringPlanStrategy``,
``ClusteringPlanStrategy``, ``ClusteringPlanPartitionFilter``, ``FileSliceMetricUtils`` (the group metrics) and
``HoodieClusteringConfig`` (the options and their defaults), ``BaseTableServicePlanActionExecutor`` (the incremental
window).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from spec.actions.file_refs import GroupId, SliceRef
from spec.errors import InvalidConfig, UnsupportedLayout, UnsupportedOption

PLAN_STRATEGY = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
EXECUTION_STRATEGY = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
UPDATES_STRATEGY = "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"
SORT_COLUMNS_KEY = "hoodie.clustering.plan.strategy.sort.columns"
PLAN_VERSION = 1
"""``HoodieClusteringPlan.version`` (``ClusteringPlanStrategy.CLUSTERING_PLAN_VERSION_1``)."""

_P = "hoodie.clustering.plan.strategy."
_KEYS: Mapping[str, str] = {
    _P + "small.file.limit": "small_file_limit", _P + "target.file.max.bytes": "target_file_max_bytes",
    _P + "max.bytes.per.group": "max_bytes_per_group", _P + "max.num.groups": "max_num_groups",
    SORT_COLUMNS_KEY: "sort_columns", _P + "partition.selected": "partition_selected",
    _P + "partition.regex.pattern": "partition_regex", "hoodie.clustering.plan.partition.filter.mode": "filter_mode",
    _P + "daybased.lookback.partitions": "lookback_partitions",
    _P + "daybased.skipfromlatest.partitions": "skip_from_latest", _P + "cluster.begin.partition": "begin_partition",
    _P + "cluster.end.partition": "end_partition", _P + "single.group.clustering.enabled": "single_group",
    "hoodie.parquet.max.file.size": "parquet_max_file_size", "hoodie.table.services.incremental.enabled": "incremental",
}
_ACCEPTED: Mapping[str, tuple[str, ...]] = {
    "hoodie.clustering.plan.strategy.class": (PLAN_STRATEGY,),
    "hoodie.clustering.execution.strategy.class": (EXECUTION_STRATEGY,),
    "hoodie.clustering.updates.strategy": (UPDATES_STRATEGY,),
    "hoodie.layout.optimize.strategy": ("linear",),
    "hoodie.clustering.layout.optimize.strategy": ("linear",),
}
"""Options whose only value this implementation runs; any other value is refused (``UnsupportedOption``)."""
FILTER_MODES = ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS")


# --8<-- [start:clustering_config]
@dataclass(frozen=True)
class ClusteringConfig:
    """The size-based plan strategy's options (``HoodieClusteringConfig``), with Hudi's defaults."""

    small_file_limit: int = 300 * 1024 * 1024
    target_file_max_bytes: int = 1024 * 1024 * 1024
    max_bytes_per_group: int = 2 * 1024 * 1024 * 1024
    max_num_groups: int = 30
    sort_columns: tuple[str, ...] = ()
    partition_selected: tuple[str, ...] = ()
    partition_regex: str = ""
    filter_mode: str = "NONE"
    lookback_partitions: int = 2
    skip_from_latest: int = 0
    begin_partition: str = ""
    end_partition: str = ""
    single_group: bool = True
    parquet_max_file_size: int = 120 * 1024 * 1024
    incremental: bool = True

    def __post_init__(self) -> None:
        for name in ("small_file_limit", "target_file_max_bytes", "max_bytes_per_group", "max_num_groups",
                     "parquet_max_file_size"):
            if getattr(self, name) < 1:
                raise InvalidConfig(f"clustering option {name} is {getattr(self, name)}; it must be positive")
        if self.filter_mode not in FILTER_MODES:
            raise UnsupportedOption(f"hoodie.clustering.plan.partition.filter.mode={self.filter_mode!r} is not "
                                    "supported", hint=f"use one of {', '.join(FILTER_MODES)}")

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> ClusteringConfig:
        """The config of the ``hoodie.clustering.*`` keys of ``options`` (other keys ignored). A layout other
        than linear (z-order, Hilbert curve) is refused with UnsupportedLayout; another plan, execution or update
        strategy, or a clustering key this implementation does not know, with UnsupportedOption."""
        values: dict[str, Any] = {}
        for key, raw in options.items():
            text = str(raw).lower() if isinstance(raw, bool) else str(raw)
            if key in _ACCEPTED:
                if text.lower() not in {v.lower() for v in _ACCEPTED[key]}:
                    error = UnsupportedLayout if "layout" in key else UnsupportedOption
                    what = ("a z-order or Hilbert curve layout is not supported" if "layout" in key
                            else "only Hudi's default strategy is supported")
                    raise error(f"{key}={text!r}: {what}", hint=f"leave {key} unset ({_ACCEPTED[key][0]})")
            elif key in _KEYS:
                values[_KEYS[key]] = _value(_KEYS[key], key, text)
            elif key.startswith("hoodie.clustering."):
                raise UnsupportedOption(f"{key} is not supported by this clustering",
                                        hint="the size-based plan and sort-and-size execution take "
                                             + ", ".join(sorted(k for k in _KEYS if k.startswith("hoodie.cl"))))
        return ClusteringConfig(**values)
# --8<-- [end:clustering_config]


def _value(name: str, key: str, text: str) -> Any:
    default = getattr(ClusteringConfig, name, None) if name not in ("sort_columns", "partition_selected") else ()
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            return text.lower() == "true"
        if isinstance(default, int):
            return int(text)
    except ValueError as err:
        raise InvalidConfig(f"{key}={text!r} is not a {'boolean' if isinstance(default, bool) else 'number'}",
                            hint=f"give a {'boolean' if isinstance(default, bool) else 'whole number'}") from err
    if name in ("sort_columns", "partition_selected"):
        return tuple(p.strip() for p in text.split(",") if p.strip())
    return text.upper() if name == "filter_mode" else text


@dataclass(frozen=True)
class EligibleSlice:
    """A latest file slice as the plan strategy sees it: the slice, and its base file's and log files' sizes."""

    slice: SliceRef
    base_size: int | None
    log_sizes: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClusteringGroup:
    """One input group of a plan (``HoodieClusteringGroup``): its slices in plan order, and how many file groups
    the execution writes for it."""

    slices: tuple[EligibleSlice, ...]
    num_output_file_groups: int
    partition_path: str = field(default="")

    def group_ids(self) -> tuple[GroupId, ...]:
        """The (partition, file id) of every slice."""
        return tuple((s.slice.partition_path, s.slice.file_id) for s in self.slices)


# --8<-- [start:clustering_plan]
@dataclass(frozen=True)
class CommitPartitions:
    """A completed write as the incremental window sees it: its action, requested and completion times and the
    partitions of its write stats."""

    action: str
    requested: str
    completed: str
    partitions: frozenset[str]


def incremental_partitions(instant: str, last_clustering: str | None, last_missing: Iterable[str],
                           commits: Iterable[CommitPartitions], merge_on_read: bool) -> set[str] | None:
    """The partitions an incremental clustering at ``instant`` looks at (``BaseTableServicePlanActionExecutor
    .getIncrementalPartitions``): without an earlier completed clustering (``last_clustering``, its requested
    time), None — every partition; else those of the completed writes (copy-on-write: ``commit`` and
    ``replacecommit``; merge-on-read: ``deltacommit`` and ``replacecommit``), the last clustering itself left out,
    that completed at or after the last clustering was requested and before ``instant``, and the partitions the
    last clustering's plan left out (``last_missing``). An empty set schedules nothing."""
    if last_clustering is None:
        return None
    actions = {"deltacommit", "replacecommit"} if merge_on_read else {"commit", "replacecommit"}
    window = {p for c in commits if c.action in actions and c.requested != last_clustering
              and last_clustering <= c.completed < instant for p in c.partitions}
    return window | set(last_missing)


def clustering_partitions(partitions: Iterable[str], config: ClusteringConfig) -> list[str]:
    """The partitions a plan looks at (steps 1 of the module's rule), in the order their groups are taken."""
    if config.partition_selected:
        chosen = list(config.partition_selected)
    else:
        chosen = sorted(partitions)
        if config.partition_regex:
            pattern = re.compile(config.partition_regex)
            chosen = [p for p in chosen if pattern.fullmatch(p)]
    if config.filter_mode == "RECENT_DAYS":
        newest = sorted(chosen, reverse=True)[max(config.skip_from_latest, 0):]
        return newest[:config.lookback_partitions] if config.lookback_partitions > 0 else newest
    if config.filter_mode == "SELECTED_PARTITIONS":
        return [p for p in chosen if config.begin_partition <= p <= config.end_partition]
    return chosen


def eligible_slices(latest: Iterable[EligibleSlice], config: ClusteringConfig,
                    excluded_groups: Collection[GroupId] = ()) -> list[EligibleSlice]:
    """The latest slices no pending compaction or clustering holds whose base file is under the small file
    limit (a slice without a base file counts 0)."""
    return [s for s in latest if (s.slice.partition_path, s.slice.file_id) not in excluded_groups
            and (s.base_size or 0) < config.small_file_limit]


def partition_groups(slices: Sequence[EligibleSlice], config: ClusteringConfig) -> tuple[list[ClusteringGroup], bool]:
    """The groups of one partition's eligible slices (step 3): largest base file first, filled up to
    ``max_bytes_per_group``, at most ``max_num_groups``; and whether slices were left over for want of groups."""
    def size(s: EligibleSlice) -> int:
        return s.base_size if s.base_size is not None else config.parquet_max_file_size

    def larger_first(a: EligibleSlice, b: EligibleSlice) -> int:
        """Hudi's comparator: the difference of the sizes cast to a Java int (its sign flips past 2 GiB)."""
        return (size(b) - size(a) + 2**31) % 2**32 - 2**31

    ordered = sorted(sorted(slices, key=lambda s: s.slice.file_id), key=cmp_to_key(larger_first))
    groups: list[tuple[list[EligibleSlice], int]] = []
    current: list[EligibleSlice] = []
    total = 0
    partial = False
    for s in ordered:
        if current and total + size(s) > config.max_bytes_per_group:
            groups.append((current, total))
            current, total = [], 0
            if len(groups) >= config.max_num_groups:
                partial = True
                break
        current.append(s)
        total += size(s)
    if current and (len(current) > 1 or config.single_group):
        groups.append((current, total))
    return [ClusteringGroup(tuple(g), math.ceil(total / config.target_file_max_bytes),
                            g[0].slice.partition_path) for g, total in groups], partial


@dataclass(frozen=True)
class ClusteringPlan:
    """A plan's input groups, and the partitions it left (partly) unplanned for want of groups
    (``missingSchedulePartitions``, sorted: a later incremental schedule looks at them again)."""

    groups: tuple[ClusteringGroup, ...]
    missing_partitions: tuple[str, ...] = ()


def plan_clustering(latest_by_partition: Mapping[str, Sequence[EligibleSlice]], config: ClusteringConfig,
                    excluded_groups: Collection[GroupId] = (), window: Collection[str] | None = None) -> ClusteringPlan:
    """The clustering plan over the latest slices of every partition (the module's rule), or only of the
    partitions of the incremental ``window`` when given; no groups when nothing qualifies (then no clustering
    is scheduled)."""
    groups: list[ClusteringGroup] = []
    missing: set[str] = set()
    candidates = latest_by_partition.keys() if window is None or not config.incremental else window
    for partition in clustering_partitions(candidates, config):
        slices = eligible_slices(latest_by_partition.get(partition, ()), config, excluded_groups)
        made, partial = partition_groups(slices, config)
        if partial or len(made) > config.max_num_groups:
            missing.add(partition)
        groups.extend(made[:config.max_num_groups])
    missing.update(g.partition_path for g in groups[config.max_num_groups:])
    return ClusteringPlan(tuple(groups[:config.max_num_groups]), tuple(sorted(missing)))
# --8<-- [end:clustering_plan]


# --8<-- [start:output_chunks]
def output_chunks(num_rows: int, num_output_file_groups: int) -> list[tuple[int, int]]:
    """How an input group's rows, in order, fill its new file groups (``SparkSortAndSizeExecutionStrategy``: one
    writer per output group, ``numOutputFileGroups = ceil(group bytes / target.file.max.bytes)``): (offset, count)
    per new file group, ``ceil(rows / groups)`` rows each and the rest in the last, at most one group per row."""
    if num_rows <= 0:
        return []
    step = math.ceil(num_rows / min(max(num_output_file_groups, 1), num_rows))
    return [(start, min(step, num_rows - start)) for start in range(0, num_rows, step)]
# --8<-- [end:output_chunks]


def _mb(n: int) -> float:
    """Whole megabytes (``FSUtils.getSizeInMB``: long division)."""
    return float(n // (1024 * 1024))


def group_metrics(group: ClusteringGroup, config: ClusteringConfig) -> dict[str, float]:
    """``FileSliceMetricUtils.addFileSliceCommonMetrics``: log files and their bytes, megabytes read (base and
    logs), written (the base file, or ``hoodie.parquet.max.file.size`` without one) and both."""
    logs = sum(len(s.log_sizes) for s in group.slices)
    log_bytes = sum(x for s in group.slices for x in s.log_sizes if x >= 0)
    read = _mb(sum(s.base_size or 0 for s in group.slices) + log_bytes)
    write = _mb(sum(s.base_size if s.base_size else config.parquet_max_file_size for s in group.slices))
    return {"TOTAL_LOG_FILES": float(logs), "TOTAL_LOG_FILES_SIZE": float(log_bytes), "TOTAL_IO_READ_MB": read,
            "TOTAL_IO_WRITE_MB": write, "TOTAL_IO_MB": read + write}


def clustering_plan_record(plan: ClusteringPlan, config: ClusteringConfig, base_uri: str,
                           table_version: int) -> dict[str, Any]:
    """The ``HoodieClusteringPlan`` record of ``plan`` as Hudi writes it: slices naming their files by full path
    under ``base_uri`` (the table's location as given), the sort-and-size execution strategy with the sort
    columns as its parameter, ``preserveHoodieMetadata`` true; table version 8 and later add the
    ``missingSchedulePartitions`` (Hudi 1.x, incremental table services on by default)."""
    def path(partition: str, name: str) -> str:
        return "/".join(p for p in (base_uri.rstrip("/"), partition, name) if p)

    record: dict[str, Any] = {
        "inputGroups": [{
            "slices": [{"dataFilePath": path(s.slice.partition_path, s.slice.base_file) if s.slice.base_file else "",
                        "deltaFilePaths": [path(s.slice.partition_path, n) for n in s.slice.log_files],
                        "fileId": s.slice.file_id, "partitionPath": s.slice.partition_path,
                        "bootstrapFilePath": "", "version": 1} for s in g.slices],
            "metrics": group_metrics(g, config), "numOutputFileGroups": g.num_output_file_groups,
            "extraMetadata": None, "version": 1} for g in plan.groups],
        "strategy": {"strategyClassName": EXECUTION_STRATEGY,
                     "strategyParams": {SORT_COLUMNS_KEY: ",".join(config.sort_columns)} if config.sort_columns
                     else {}, "version": 1},
        "extraMetadata": {}, "version": PLAN_VERSION, "preserveHoodieMetadata": True,
    }
    if table_version >= 8:
        record["missingSchedulePartitions"] = list(plan.missing_partitions) if config.incremental else None
    return record


__all__ = [
    "EXECUTION_STRATEGY",
    "PLAN_STRATEGY",
    "SORT_COLUMNS_KEY",
    "ClusteringConfig",
    "ClusteringGroup",
    "ClusteringPlan",
    "CommitPartitions",
    "EligibleSlice",
    "clustering_partitions",
    "clustering_plan_record",
    "eligible_slices",
    "group_metrics",
    "incremental_partitions",
    "output_chunks",
    "partition_groups",
    "plan_clustering",
]

"""The performance targets, and whether a run met them: a table computed from the run's results, never typed.

A target divides one job's seconds by another's at the same row count, first run and warm run
(each where both jobs have it), and compares the ratio with its limit; a target without a limit only
asks that the job complete (its ratio to the other job is shown). The verdict's reason comes from the
numbers too: the ratio against the limit and, for a miss, the step of our write path that took longest.
A paired target takes its ratio from the job's own pairs (the median of the ratios of processes run in
turn, ``paired``); a target without a base holds the job's seconds to its limit in seconds. Either shows
the CPU seconds' figure beside the wall's, and the floor measured beside the job (``floor``): the same
input and output done by the libraries our code is built on, with none of our code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.jobs import OK

MET, MISSED = "met", "missed"


@dataclass(frozen=True)
class Target:
    """``job``'s seconds over ``base``'s at the same row count must be at most ``limit`` (none: the job
    must complete). With ``paired``, the ratio is the median of the job's extra figure of that name (its
    processes' ratios to the base's, run in turn), and ``floor`` names the extra figure of the floor's ratio
    shown beside it. Without a base (``None``), the job's seconds must be at most ``limit`` seconds. A ``scale``
    target (both its jobs scale jobs, ``bench.cluster``) is judged at the scale row counts, where they run."""

    name: str
    job: str
    base: str | None
    limit: float | None
    paired: str | None = None
    floor: str | None = None
    scale: bool = False

    @property
    def unit(self) -> str:
        """How the target's figures read: a ratio (x), or seconds without a base."""
        return "x" if self.base is not None else " s"


TARGETS: tuple[Target, ...] = (
    Target("local engine, Hudi's defaults: MOR upsert ≤ 1.0x delta-rs merge", "hudi_spec_local_mor_upsert",
           "delta_rs_merge", 1.0),
    Target("local engine, Hudi's defaults: COW upsert ≤ 2.0x delta-rs merge", "hudi_spec_local_cow_upsert",
           "delta_rs_merge", 2.0),
    Target("local engine, snappy: MOR upsert ≤ 0.5x delta-rs merge", "hudi_spec_local_mor_upsert_tuned",
           "delta_rs_merge", 0.5),
    Target("local engine, snappy: COW upsert ≤ 1.0x delta-rs merge", "hudi_spec_local_cow_upsert_tuned",
           "delta_rs_merge", 1.0),
    Target("Spark engine: bulk_insert ≤ 1.2x plain Spark partitioned parquet write", "hudi_spec_bulk_insert",
           "spark_parquet_write", 1.2),
    Target("Spark engine: COW upsert ≤ 1.0x plain Spark naive full rewrite", "hudi_spec_cow_upsert",
           "spark_naive_full_rewrite", 1.0),
    Target("Spark engine: MOR upsert ≤ 0.5x plain Spark naive full rewrite", "hudi_spec_mor_upsert",
           "spark_naive_full_rewrite", 0.5),
    *(Target(f"Spark engine: {what} ≤ 1.0x Apache Hudi", ours, theirs, 1.0) for what, ours, theirs in (
        ("bulk_insert", "hudi_spec_bulk_insert", "apache_hudi_bulk_insert"),
        ("COW upsert", "hudi_spec_cow_upsert", "apache_hudi_cow_upsert"),
        ("MOR upsert", "hudi_spec_mor_upsert", "apache_hudi_mor_upsert"),
        ("compaction", "hudi_spec_compaction", "apache_hudi_compaction"),
        ("COW snapshot read", "hudi_spec_snapshot_read_spark_engine", "apache_hudi_cow_snapshot_read"))),
    *(Target(f"local engine: {what} ≤ 0.25x Apache Hudi's Spark writer", ours, theirs, 0.25)
      for what, ours, theirs in (
        ("bulk_insert", "hudi_spec_local_bulk_insert", "apache_hudi_bulk_insert"),
        ("COW upsert", "hudi_spec_local_cow_upsert", "apache_hudi_cow_upsert"),
        ("MOR upsert", "hudi_spec_local_mor_upsert", "apache_hudi_mor_upsert"),
        ("compaction", "hudi_spec_local_compaction", "apache_hudi_compaction"))),
    Target("spec reader: incremental read ≤ 1.0x Apache Hudi", "hudi_spec_incremental_read_spec_engine",
           "apache_hudi_incremental_read", 1.0),
    Target("standalone cluster: bulk_insert completes (ratio to local[2])", "hudi_spec_cluster_bulk_insert",
           "hudi_spec_bulk_insert", None),
    Target("standalone cluster: COW upsert completes (ratio to local[2])", "hudi_spec_cluster_cow_upsert",
           "hudi_spec_cow_upsert", None),
    Target("standalone cluster: MOR upsert completes (ratio to local[2])", "hudi_spec_cluster_mor_upsert",
           "hudi_spec_mor_upsert", None),
    Target("standalone cluster: compaction completes (ratio to local[2])", "hudi_spec_cluster_compaction",
           "hudi_spec_compaction", None),
    *(Target(f"standalone cluster: {what} ≤ 1.0x Apache Hudi on the same cluster", f"hudi_spec_cluster_{op}",
             f"apache_hudi_cluster_{op}", 1.0, scale=True) for what, op in (
        ("bulk_insert", "bulk_insert"), ("COW upsert", "cow_upsert"), ("MOR upsert", "mor_upsert"),
        ("compaction", "compaction"))),
    Target("spec reader ≤ 1.0x hudi-rs, COW snapshot", "hudi_spec_snapshot_read_spec_engine",
           "hudi_rs_read_our_cow_table", 1.0),
    Target("spec reader ≤ 1.0x hudi-rs, MOR snapshot", "hudi_spec_mor_snapshot_read_spec_engine",
           "hudi_rs_read_our_mor_table", 1.0),
    Target("`hudi-spec read TABLE --limit 1` ≤ 1.0x a one-line hudi-rs read, whole processes (median of the "
           "pairs)", "hudi_spec_cli_read_first_row", "hudi_rs_one_line_read", 1.0, paired="wall_ratio",
           floor="floor_wall_ratio"),
    Target("`hudi-spec --help` ≤ 0.3 s, whole process", "hudi_spec_cli_help", None, 0.3),
    Target("importing the spec reader ≤ 0.15 s, whole process", "hudi_spec_import_reader", None, 0.15,
           floor="floor_wall_seconds"),
)


@dataclass(frozen=True)
class TargetVerdict:
    """One target at one row count."""

    target: Target
    n: int
    first: float | None
    warm: float | None
    result: str  # met, missed, or why there is no number ("not run", "failed: ...")
    why: str


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _slowest_step(r: Mapping[str, Any]) -> str:
    steps = r.get("warm_steps") or r.get("steps") or {}
    if not steps:
        return ""
    name, seconds = max(steps.items(), key=lambda kv: kv[1])
    return f"; its slowest step: {name}, {seconds:.2f} s of {sum(steps.values()):.2f} s"


def _x(value: float | None, unit: str = "x") -> str:
    return "—" if value is None else f"{value:.2f}{unit}"


def _figures(target: Target, job: Mapping[str, Any]) -> tuple[float | None, str]:
    """The target's figure — the job's seconds, or the median of its pairs' ratios (``paired``) — and in words
    the CPU's beside it and the floor's (``floor``), from the job's extra figures where it kept them."""
    extra = job.get("extra") or {}

    def median(key: str | None) -> float | None:
        figure = extra.get(key) if key else None
        return float(figure["median"]) if isinstance(figure, Mapping) else None

    def cpu(key: str | None) -> float | None:
        return median(key.replace("wall", "cpu")) if key else None

    value = job.get("seconds") if target.paired is None else median(target.paired)
    wall = "wall_seconds" if target.paired is None else target.paired
    words = f" (CPU {_x(cpu(wall), target.unit)})" if cpu(wall) is not None else ""
    floor = median(target.floor)
    if floor is not None:
        words += (f"; the floor, the libraries alone doing the same, {_x(floor, target.unit)}"
                  + (f" (CPU {_x(cpu(target.floor), target.unit)})" if cpu(target.floor) is not None else ""))
    return value, words


def judge(target: Target, n: int, by: Mapping[tuple[str, int], Mapping[str, Any]]) -> TargetVerdict:
    """The verdict of ``target`` at ``n`` rows from the results (``(job, n)`` to its result dict)."""
    job = by.get((target.job, n))
    base = by.get((target.base, n)) if target.base is not None else job
    for name, r in ((target.job, job), (target.base or target.job, base)):
        if r is None:
            return TargetVerdict(target, n, None, None, "not run", f"{name} did not run at {n:,} rows")
        if r["status"] != OK:
            return TargetVerdict(target, n, None, None, str(r["status"]), f"{name}: {r['status']}: {r.get('reason')}")
    assert job is not None and base is not None
    if target.base is None or target.paired is not None:  # one figure: seconds, or the median of the pairs
        value, words = _figures(target, job)
        if value is None:
            return TargetVerdict(target, n, None, None, "no figure", f"{target.job} kept no {target.paired}")
        met = target.limit is None or value <= target.limit
        return TargetVerdict(target, n, value, None, MET if met else MISSED,
                             f"{_x(value, target.unit)} {'≤' if met else '>'} {_x(target.limit, target.unit)}"
                             + words)
    first = _ratio(job.get("seconds"), base.get("seconds"))
    warm = _ratio(job.get("warm_seconds"), base.get("warm_seconds"))
    if target.limit is None:
        return TargetVerdict(target, n, first, warm, MET,
                       f"completed, rows checked; {job['seconds']:.2f} s against {base['seconds']:.2f} s on "
                       f"{base['engine']}")
    ratios = [(label, v) for label, v in (("first", first), ("warm", warm)) if v is not None]
    over = [f"{label} {v:.2f}x > {target.limit:.2f}x" for label, v in ratios if v > target.limit]
    if not over:
        return TargetVerdict(target, n, first, warm, MET,
                       ", ".join(f"{label} {v:.2f}x ≤ {target.limit:.2f}x" for label, v in ratios))
    return TargetVerdict(target, n, first, warm, MISSED, ", ".join(over) + _slowest_step(job))


def verdicts(results: Sequence[Mapping[str, Any]], sizes: Sequence[int],
             scale_sizes: Sequence[int] | None = None) -> list[TargetVerdict]:
    """Every target at every row count of ``sizes``; the ``scale`` targets at those of ``scale_sizes`` instead,
    where given."""
    by = {(str(r["job"]), int(r["n"])): r for r in results}
    return [judge(t, n, by) for t in TARGETS
            for n in (scale_sizes if t.scale and scale_sizes is not None else sizes)]


def targets_table(results: Sequence[Mapping[str, Any]], sizes: Sequence[int],
                  scale_sizes: Sequence[int] | None = None) -> str:
    """The targets as a markdown table: target, rows, first and warm ratio, met or missed, and why."""
    lines = ["| target | rows | first | warm | result | why |", "|---|---|---|---|---|---|"]
    for v in verdicts(results, sizes, scale_sizes):
        cells = [v.target.name, f"{v.n:,}", _x(v.first, v.target.unit), _x(v.warm, v.target.unit),
                 f"**{v.result}**", v.why]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)

"""The benchmark's outputs: the JSON results file and the markdown table (printed, and put in the docs page).

Every number in them comes from one run; a job without a number says why ("not available: ...",
"skipped: ...", "failed: ...").
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.data import UpsertShape
from bench.harness import JobResult, result_dicts
from bench.jobs import OK, SCHEMA_ID, SPARK_START_JOB

BEGIN_MARK = "<!-- bench:results:begin -->"
END_MARK = "<!-- bench:results:end -->"
PACKAGES = ("pyarrow", "pyspark", "deltalake", "pyiceberg", "hudi")
COLUMNS = ("job", "engine", "rows", "seconds", "rows/s", "ratio", "vs", "warm s", "warm ratio", "peak RSS MB",
           "bytes on disk", "process s", "rows check")


@dataclass(frozen=True)
class RunInfo:
    """Where and how a run happened."""

    command: str
    started: str
    finished: str
    machine: dict[str, Any]
    versions: dict[str, str]


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        return None
    return None


def load_average() -> float | None:
    """The 1-minute load average (other work on the machine skews every number)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def machine(load_at_start: float | None = None) -> dict[str, Any]:
    return {"platform": platform.platform(), "cpus": os.cpu_count(), "memory_gib": _memory_gib(),
            "python": platform.python_version(), "load_average_start": load_at_start,
            "load_average_end": load_average()}


def versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _num(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _int(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def row(r: JobResult) -> list[str]:
    """One job as table cells."""
    if r.status != OK:
        return [r.job, r.engine, _int(r.n), f"{r.status}: {r.reason}", *[""] * (len(COLUMNS) - 4)]
    check = "" if r.rows_check is None else f"{r.rows_check} ({_int(r.rows_seen)})"
    return [r.job, r.engine, _int(r.rows), _num(r.seconds), _num(r.rows_per_second, 0),
            "" if r.ratio is None else f"{r.ratio:.2f}x", r.vs or "", _num(r.warm_seconds),
            "" if r.warm_ratio is None else f"{r.warm_ratio:.2f}x", _num(r.peak_rss_mb, 1), _int(r.bytes),
            _num(r.process_seconds, 1), check]


def markdown_table(results: Sequence[JobResult]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row(r)) + " |" for r in results]
    return "\n".join(lines)


def steps_table(results: Sequence[JobResult]) -> str:
    """Our writes' seconds per step of the write path (first and warm run), one row per job and run."""
    from reference.instrumentation.step_times import StepTimes

    rows = [(r, label, steps) for r in results if r.status == OK
            for label, steps in (("first", r.steps), ("warm", r.warm_steps)) if steps]
    if not rows:
        return ""
    columns = ["job", "run", *StepTimes.STEPS, "total"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r, label, steps in rows:
        cells = [_num(steps.get(s)) for s in StepTimes.STEPS]
        lines.append("| " + " | ".join([r.job, label, *cells, _num(sum(steps.values()))]) + " |")
    return "\n".join(lines)


def _scale_jobs() -> set[str]:
    from bench.harness import all_jobs

    return {name for name, job in all_jobs().items() if job.scale}


def _mb(kb: Any) -> str:
    return "" if kb is None else f"{int(kb) / 1024:,.0f}"


def _operation(job: str) -> str:
    """A scale job's operation (``cow_upsert``): what ours and Apache Hudi's cluster jobs of it share."""
    return job.split("_cluster_", 1)[-1]


def scale_table(results: Sequence[JobResult]) -> str:
    """The scale jobs at each of their row counts, each of ours beside Apache Hudi's on the cluster: seconds, the
    ratio to local[2], ours to Hudi's (``bench.targets``' scale targets), the table's file groups and bytes, the
    driver's peak RSS (its Python process and its JVM) and the seconds of each step."""
    from bench.targets import TARGETS
    from reference.instrumentation.step_times import StepTimes

    scale = _scale_jobs()
    rows = [r for r in results if r.job in scale]
    if not rows:
        return ""
    against = {t.job: t.base or "" for t in TARGETS if t.scale}
    by = {(r.job, r.n): r for r in rows}
    columns = ["job", "rows", "file groups", "seconds", "vs local[2]", "vs Apache Hudi", "driver Python peak MB",
               "driver JVM peak MB", "bytes on disk", *StepTimes.STEPS]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in sorted(rows, key=lambda r: (_operation(r.job), r.n, r.job not in against, r.job)):
        if r.status != OK:
            lines.append("| " + " | ".join([r.job, _int(r.n), f"{r.status}: {r.reason}".replace("|", "/"),
                                            *[""] * (len(columns) - 3)]) + " |")
            continue
        theirs = by.get((against.get(r.job, ""), r.n))
        vs_hudi = (f"{r.seconds / theirs.seconds:.2f}x" if theirs is not None and theirs.status == OK
                   and r.seconds and theirs.seconds else "")
        steps = r.steps or {}
        ex = r.extra
        lines.append("| " + " | ".join([r.job, _int(r.n), _int(ex.get("file_groups")), _num(r.seconds),
                                        "" if r.ratio is None else f"{r.ratio:.2f}x", vs_hudi,
                                        _mb(ex.get("driver_python_peak_kb")), _mb(ex.get("driver_jvm_peak_kb")),
                                        _int(r.bytes), *[_num(steps.get(s)) for s in StepTimes.STEPS]]) + " |")
    return "\n".join(lines)


def target_sizes(results: Sequence[JobResult]) -> list[int]:
    """The row counts the targets are judged at: those of every job but the scale jobs."""
    scale = _scale_jobs()
    return list(dict.fromkeys(r.n for r in results if r.job not in scale))


def scale_sizes(results: Sequence[JobResult]) -> list[int]:
    """The row counts the scale targets are judged at: those of the scale jobs."""
    scale = _scale_jobs()
    return list(dict.fromkeys(r.n for r in results if r.job in scale))


def markdown(results: Sequence[JobResult], info: RunInfo) -> str:
    """The run as markdown: how it was measured, Spark start, one table per row count, then the targets
    (``bench.targets``) and the scale jobs."""
    m, v = info.machine, info.versions
    out = [
        f"Measured by `{info.command}` from {info.started} to {info.finished} (UTC) on {m['platform']}, "
        f"{m['cpus']} CPUs, {m['memory_gib']} GiB of memory; Python {m['python']}, "
        + ", ".join(f"{k} {v[k]}" for k in PACKAGES) + " (hudi = hudi-rs). 1-minute load average "
        f"{m.get('load_average_start')} at the start and {m.get('load_average_end')} at the end.",
        "",
    ]
    starts = [r for r in results if r.job == SPARK_START_JOB and r.status == OK and r.seconds is not None]
    if starts:
        out += ["Spark session start (a new local[2] session and its first trivial job) is measured on its own: "
                + ", ".join(f"{r.seconds:.1f} s" for r in starts)
                + "; it is excluded from every Spark job's seconds (each job starts its session before its "
                "timer) but included in its process seconds and peak memory.", ""]
    if any(r.warm_seconds is not None for r in results):
        out += ["**warm s**: the same job run a second time in the same process on a fresh copy of its input "
                "(Spark: the session's Python workers started and its plans compiled by the first run); "
                "**warm ratio** divides it by the warm seconds of the job in **vs**.", ""]
    for n in dict.fromkeys(r.n for r in results):
        shape = UpsertShape(n)
        out += [f"#### {n:,} rows",
                "",
                f"Upsert batch: {shape.batch:,} rows ({shape.updates:,} updates, {shape.inserts:,} new keys); "
                f"after it a table holds {shape.rows_after:,} rows.",
                "",
                markdown_table([r for r in results if r.n == n]),
                ""]
        steps = steps_table([r for r in results if r.n == n])
        if steps:
            out += [f"Where our writes spent their time at {n:,} rows (seconds per step of the write path, "
                    "from `WriteResult.step_seconds`):", "", steps, ""]
    from bench.targets import targets_table

    sizes, scaled = target_sizes(results), scale_sizes(results)
    if sizes or scaled:
        out += ["#### Targets", "",
                "Each target's ratio at each row count, first run and warm (the second run in the same process), "
                "computed from this run's seconds by `bench/targets.py` (the standalone cluster's against Apache "
                "Hudi's at the scale row counts):", "",
                targets_table(result_dicts(results), sizes, scaled), ""]
    scale = scale_table(results)
    if scale:
        out += ["#### Scale: the Spark engine on a standalone cluster", "",
                "A master and a worker started from pyspark's distribution, the driver in this job's process; "
                "the driver's peak RSS is that of the timed operation alone (both high-water marks reset just "
                "before it): the Python process and the driver JVM, executors not included. Each of our jobs is "
                "followed by Apache Hudi's on the same cluster (**vs Apache Hudi**: ours over Hudi's seconds). "
                "Seconds per step from `WriteResult.step_seconds` (ours; compaction has none).", "", scale, ""]
    return "\n".join(out).rstrip() + "\n"


def results_json(results: Sequence[JobResult], info: RunInfo, md: str) -> dict[str, Any]:
    return {"schema": SCHEMA_ID, "command": info.command, "started": info.started, "finished": info.finished,
            "machine": info.machine, "versions": info.versions,
            "rows": list(dict.fromkeys(r.n for r in results)), "results": result_dicts(results), "markdown": md}


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def replace_between_markers(text: str, body: str) -> str:
    """``text`` with everything between the begin and end markers replaced by ``body``."""
    begin, end = text.find(BEGIN_MARK), text.find(END_MARK)
    if begin < 0 or end < begin:
        raise ValueError(f"the page lacks the markers {BEGIN_MARK} ... {END_MARK}; add them where the "
                         "latest results belong")
    return text[:begin + len(BEGIN_MARK)] + "\n\n" + body.strip() + "\n\n" + text[end:]


def update_docs(path: Path, md: str) -> None:
    path.write_text(replace_between_markers(path.read_text(), md))


def page_json_path(page: Path) -> Path:
    """Where the results JSON of the run a page shows lives: beside the page (``performance.json``); the site's
    charts are drawn from it (``bench/charts.py``)."""
    return page.with_suffix(".json")

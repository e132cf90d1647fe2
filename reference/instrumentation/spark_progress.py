"""The progress bar of Spark jobs, one line on a terminal.

``with spark_progress():`` starts a background thread that polls the active SparkContext's status
tracker a few times a second and redraws one line on standard error::

    [job 7 · stages 12,13] hudi commit 20250101080000000: upsert ━━━━━━━━━━──────── 9/16 tasks (2 running) 4.2s

It draws nothing and starts no thread unless the stream is a terminal, never starts Spark itself
(it waits for a session the command creates), and never lets an error of its own reach the job: a
failed poll is skipped, and after ``MAX_FAILED_POLLS`` failures in a row the bar stops. Jobs are
named by their description (``SparkContext.setJobDescription``, which the writer, the compactor
and the Spark reader set), or by their stage's name when they have none. The line is drawn as a
command's own line is (``reference.instrumentation.progress``), which gives way to it while it runs.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from reference.instrumentation import progress
from reference.instrumentation.progress import BAR_WIDTH, POLL_SECONDS, _Bar, _is_terminal

MAX_FAILED_POLLS = 40
"""Polls that may fail in a row (a context starting or stopping) before the bar gives up."""


@dataclass(frozen=True)
class StageProgress:
    """One active stage: its id and task counts (from ``SparkStatusTracker.getStageInfo``)."""

    stage_id: int
    name: str
    num_tasks: int
    num_active: int
    num_completed: int
    num_failed: int = 0


@dataclass(frozen=True)
class JobProgress:
    """One running job: its id, description and active stages."""

    job_id: int
    description: str | None
    stages: tuple[StageProgress, ...]


def render_line(jobs: Sequence[JobProgress], elapsed: float, width: int = 120) -> str:
    """The progress line for a snapshot of running jobs ('' when nothing runs), at most ``width`` wide.

    Task counts are summed over every active stage of every job shown; the label is the first
    job's description (or its first stage's name).
    """
    stages = [s for j in jobs for s in j.stages]
    if not jobs or not stages:
        return ""
    total = sum(s.num_tasks for s in stages)
    done = min(sum(s.num_completed for s in stages), total)
    running = sum(s.num_active for s in stages)
    failed = sum(s.num_failed for s in stages)
    filled = BAR_WIDTH * done // total if total else 0
    bar = "━" * filled + "─" * (BAR_WIDTH - filled)
    ids = ",".join(str(s.stage_id) for s in stages)
    jobs_part = f"job {jobs[0].job_id}" if len(jobs) == 1 else f"jobs {','.join(str(j.job_id) for j in jobs)}"
    head = f"[{jobs_part} · stage{'s' if len(stages) > 1 else ''} {ids}]"
    tail = f"{bar} {done}/{total} tasks"
    if running:
        tail += f" ({running} running)"
    if failed:
        tail += f" ({failed} failed)"
    tail += f" {elapsed:.1f}s"
    label = jobs[0].description or stages[0].name
    room = width - len(head) - len(tail) - 2
    if room < 8:
        return f"{head} {tail}"[:width]
    if len(label) > room:
        label = label[: room - 1] + "…"
    return f"{head} {label} {tail}"


def snapshot(sc: Any) -> list[JobProgress]:
    """The running jobs of a SparkContext and their active stages, oldest job first."""
    tracker = sc.statusTracker()
    jobs: list[JobProgress] = []
    for job_id in sorted(tracker.getActiveJobsIds()):
        info = tracker.getJobInfo(job_id)
        if info is None:
            continue
        stages = []
        for stage_id in sorted(info.stageIds):
            st = tracker.getStageInfo(stage_id)
            if st is None or st.numTasks == 0 or (st.numCompletedTasks >= st.numTasks and st.numActiveTasks == 0):
                continue
            stages.append(StageProgress(st.stageId, st.name, st.numTasks, st.numActiveTasks, st.numCompletedTasks,
                                        st.numFailedTasks))
        jobs.append(JobProgress(job_id, _description(sc, job_id), tuple(stages)))
    return jobs


def _description(sc: Any, job_id: int) -> str | None:
    """The job's description as the application status store keeps it (None when unavailable)."""
    try:
        value = sc._jsc.sc().statusStore().job(job_id).description()
        return str(value.get()) if value.isDefined() else None
    except Exception:  # the status store is internal to Spark; the bar falls back to the stage name
        return None


def _active_context() -> Any:
    """The process's SparkContext if one is running (never creates one)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    return SparkContext._active_spark_context


class _SparkBar(_Bar):
    """The bar of the Spark jobs running now, polled from the active context."""

    def __init__(self, stream: TextIO, interval: float) -> None:
        super().__init__(stream, interval, self._run, "hudi-spec-progress")

    def _poll(self, started: dict[int, float]) -> str:
        sc = _active_context()
        jobs = snapshot(sc) if sc is not None else []
        now = time.monotonic()
        for j in jobs:
            started.setdefault(j.job_id, now)
        return render_line(jobs, now - started[jobs[0].job_id], self._width()) if jobs else ""

    def _run(self) -> None:
        started: dict[int, float] = {}
        failures = 0
        try:
            while not self.stop.wait(self.interval):
                try:
                    line = self._poll(started)
                    failures = 0
                except Exception:  # e.g. a SparkContext still starting or already stopping: skip this poll
                    failures += 1
                    if failures >= MAX_FAILED_POLLS:
                        break
                    line = ""
                self._draw(line)
        except Exception:  # the bar must never break the job it shows: stop drawing, quietly
            pass
        finally:
            with contextlib.suppress(Exception):
                self._draw("")


@contextlib.contextmanager
def spark_progress(stream: TextIO | None = None, interval: float = POLL_SECONDS) -> Iterator[bool]:
    """Show a progress line for Spark jobs run inside the block, when ``stream`` (default standard
    error) is a terminal. Yields whether the bar is on."""
    out = stream if stream is not None else sys.stderr
    if not _is_terminal(out):
        yield False
        return
    bar = _SparkBar(out, interval)
    progress._active.append(bar)
    bar.thread.start()
    try:
        yield True
    finally:
        bar.stop.set()
        bar.thread.join(timeout=2 * interval + 1)
        progress._active.remove(bar)

"""One-line progress bars on a terminal: for Spark jobs, and for any command that runs long.

``with spark_progress():`` starts a background thread that polls the active SparkContext's status
tracker a few times a second and redraws one line on standard error::

    [job 7 · stages 12,13] hudi commit 20250101080000000: upsert ━━━━━━━━━━──────── 9/16 tasks (2 running) 4.2s

It draws nothing and starts no thread unless the stream is a terminal, never starts Spark itself
(it waits for a session the command creates), and never lets an error of its own reach the job: a
failed poll is skipped, and after ``MAX_FAILED_POLLS`` failures in a row the bar stops. Jobs are
named by their description (``SparkContext.setJobDescription``, which the writer, the compactor
and the Spark reader set), or by their stage's name when they have none.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

POLL_SECONDS = 0.25
MAX_FAILED_POLLS = 40
"""Polls that may fail in a row (a context starting or stopping) before the bar gives up."""
BAR_WIDTH = 24
"""Characters of the bar itself; the description is shortened to fit the terminal."""


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


class _Bar:
    def __init__(self, stream: TextIO, interval: float) -> None:
        self.stream = stream
        self.interval = interval
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.shown = 0
        self.thread = threading.Thread(target=self._run, name="hudi-spec-progress", daemon=True)

    def _width(self) -> int:
        """The width of the terminal the bar is drawn on (one less, so the line never wraps)."""
        import os
        import shutil

        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = 0
        return max(40, (columns or shutil.get_terminal_size((120, 20)).columns) - 1)

    def _draw(self, line: str) -> None:
        with self.lock:
            if not line and not self.shown:
                return
            pad = max(0, self.shown - len(line))
            self.stream.write("\r" + line + " " * pad + ("\r" if not line else ""))
            self.stream.flush()
            self.shown = len(line)

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


_active: list[_Bar] = []


def clear() -> None:
    """Blank the progress line, if one is drawn, so that the caller can print a line of its own (the
    bar comes back at the next poll while a job still runs)."""
    for bar in [*_active, *(a.bar for a in _activity)]:
        with contextlib.suppress(Exception):
            bar._draw("")


def _is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a stream that cannot say, or is closed, is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def spark_progress(stream: TextIO | None = None, interval: float = POLL_SECONDS) -> Iterator[bool]:
    """Show a progress line for Spark jobs run inside the block, when ``stream`` (default standard
    error) is a terminal. Yields whether the bar is on."""
    out = stream if stream is not None else sys.stderr
    if not _is_terminal(out):
        yield False
        return
    bar = _Bar(out, interval)
    _active.append(bar)
    bar.thread.start()
    try:
        yield True
    finally:
        bar.stop.set()
        bar.thread.join(timeout=2 * interval + 1)
        _active.remove(bar)


# --- the progress line of a command that runs long, whatever runs it ----------------------------------------

SHOW_AFTER = 1.0
"""Seconds a command runs before its progress line appears: shorter commands draw nothing."""


def format_seconds(seconds: float) -> str:
    """``4.2s``, ``3m05s``, ``1h02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def activity_line(prefix: str, label: str | None, done: int, total: int | None, elapsed: float,
                  width: int = 120) -> str:
    """``PREFIX: LABEL 12/40 ━━━━━━──── 3.2s, about 8.0s left`` — a count and an estimate when the work is
    counted (the time left, at the pace so far), else the time it has run; at most ``width`` wide."""
    if total:
        filled = BAR_WIDTH * min(done, total) // total
        bar = "━" * filled + "─" * (BAR_WIDTH - filled)
        left = f", about {format_seconds(elapsed / done * (total - done))} left" if 0 < done < total else ""
        line = f"{prefix}: {label or 'working'} {done}/{total} {bar} {format_seconds(elapsed)}{left}"
    else:
        line = f"{prefix}: {label or 'working'}… {format_seconds(elapsed)}"
    return line if len(line) <= width else line[: width - 1] + "…"


class Activity:
    """The progress line of one command, on a terminal: after ``SHOW_AFTER`` seconds a thread redraws it a
    few times a second (``activity_line``) until the command prints its output (``finish``) or ends; it
    yields to a Spark bar while Spark jobs run. Commands count their work with ``task_progress``."""

    def __init__(self, prefix: str, stream: TextIO, interval: float = POLL_SECONDS,
                 show_after: float = SHOW_AFTER) -> None:
        self.prefix = prefix
        self.label: str | None = None
        self.done = 0
        self.total: int | None = None
        self.started = time.monotonic()
        self.show_after = show_after
        self.bar = _Bar(stream, interval)
        self.bar.thread = threading.Thread(target=self._run, name="hudi-spec-activity", daemon=True)

    def _line(self) -> str:
        elapsed = time.monotonic() - self.started
        if elapsed < self.show_after or _active:  # too soon to show, or a Spark bar is drawn
            return ""
        return activity_line(self.prefix, self.label, self.done, self.total, elapsed, self.bar._width())

    def _run(self) -> None:
        try:
            while not self.bar.stop.wait(self.bar.interval):
                self.bar._draw(self._line())
        except Exception:  # never let the line break the command
            pass
        finally:
            with contextlib.suppress(Exception):
                self.bar._draw("")

    def finish(self) -> None:
        """Stop drawing and blank the line (the command is about to print)."""
        self.bar.stop.set()
        if self.bar.thread.is_alive() and self.bar.thread is not threading.current_thread():
            self.bar.thread.join(timeout=2 * self.bar.interval + 1)


_activity: list[Activity] = []


@contextlib.contextmanager
def command_activity(prefix: str, stream: TextIO | None = None, interval: float | None = None,
                     show_after: float | None = None) -> Iterator[Activity | None]:
    """Run a command with its progress line (``Activity``; every ``interval``, default ``POLL_SECONDS``,
    after ``show_after``, default ``SHOW_AFTER``) when ``stream`` (default standard error) is a terminal;
    nothing otherwise, so that piped and redirected output stays the command's own."""
    out = stream if stream is not None else sys.stderr
    if not _is_terminal(out):
        yield None
        return
    activity = Activity(prefix, out, POLL_SECONDS if interval is None else interval,
                        SHOW_AFTER if show_after is None else show_after)
    _activity.append(activity)
    activity.bar.thread.start()
    try:
        yield activity
    finally:
        activity.finish()
        _activity.remove(activity)


@contextlib.contextmanager
def task_progress(label: str, total: int | None = None) -> Iterator[Callable[..., None]]:
    """Count a command's work on its progress line: ``with task_progress("file slices", n) as step:`` then
    ``step()`` per item (or ``step(done)``, the count so far). Without a command's line (not a terminal) it
    counts nothing and costs nothing."""
    activity = _activity[-1] if _activity else None
    if activity is None:
        yield lambda done=None: None
        return
    activity.label, activity.done, activity.total = label, 0, total

    def step(done: int | None = None) -> None:
        activity.done = activity.done + 1 if done is None else done

    try:
        yield step
    finally:
        activity.label, activity.total = None, None


def finish() -> None:
    """Blank every progress line before a command prints its output."""
    for activity in list(_activity):
        activity.finish()
    clear()

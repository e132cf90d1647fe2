"""One-line progress bars on a terminal: the line of any command that runs long, and the drawing both it
and the Spark jobs' bar (``reference.instrumentation.spark_progress``) share.

``with command_activity("hudi-spec read"):`` draws, once the command has run ``SHOW_AFTER`` seconds, one
line on standard error that the command counts its work on (``task_progress``)::

    hudi-spec read: file slices read 3/12 ━━━━━━────────────────── 6.0s, about 18.0s left

It draws nothing and starts no thread unless the stream is a terminal, and never lets an error of its own
reach the command. The Spark bar lives in a module of its own, so that a command that starts no Spark job
loads none of it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

POLL_SECONDS = 0.25
BAR_WIDTH = 24
"""Characters of the bar itself; the description is shortened to fit the terminal."""


class _Bar:
    """One line on ``stream``, redrawn in place (``_draw``) by a daemon thread that runs ``target`` every
    ``interval`` seconds until ``stop`` is set."""

    def __init__(self, stream: TextIO, interval: float, target: Callable[[], None] | None = None,
                 name: str = "hudi-spec-progress") -> None:
        self.stream = stream
        self.interval = interval
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.shown = 0
        self.thread = threading.Thread(target=target, name=name, daemon=True)

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


_active: list[_Bar] = []
"""The Spark bars drawn now (``spark_progress`` registers its own): a command's line yields to them."""


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
        self.bar = _Bar(stream, interval, self._run, "hudi-spec-activity")

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

"""The progress of ``hudi-conformance run`` on standard error: cases done, failures so far, an estimate.

On a terminal one line is redrawn after each case (and blanked at the end)::

    hudi-conformance run: 57/162 cases ━━━━━━━━──────────────── 1 failed · 1m20s, about 2m27s left

Otherwise (a log file, CI) a plain line is written every ``PLAIN_EVERY`` seconds, and nothing for a run
shorter than that. The estimate is the time left at the pace of the cases so far.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, TextIO

PLAIN_EVERY = 15.0
"""Seconds between two plain progress lines when standard error is not a terminal."""
BAR_WIDTH = 24


def format_seconds(seconds: float) -> str:
    """``4.2s``, ``3m05s``, ``1h02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def progress_line(done: int, total: int, failed: int, elapsed: float, bar: bool = True) -> str:
    """What the run has done: ``57/162 cases``, the bar, failures so far, time run and time left."""
    left = f", about {format_seconds(elapsed / done * (total - done))} left" if 0 < done < total else ""
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    drawn = f" {'━' * filled}{'─' * (BAR_WIDTH - filled)}" if bar else ","
    return (f"hudi-conformance run: {done}/{total} cases{drawn} {failed} failed · "
            f"{format_seconds(elapsed)}{left}")


class CaseProgress:
    """Called with each case's result (``conformance.runner.run_cases``'s ``progress``)."""

    def __init__(self, total: int, stream: TextIO | None = None, plain_every: float | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.terminal = self.stream.isatty()
        except (AttributeError, ValueError):
            self.terminal = False
        self.plain_every = PLAIN_EVERY if plain_every is None else plain_every
        self.started = time.monotonic()
        self.last_plain = self.started
        self.done = 0
        self.failed = 0
        self.shown = 0

    def __call__(self, result: Any) -> None:
        self.done += 1
        self.failed += getattr(getattr(result, "verdict", None), "name", "") in ("FAIL", "ERROR")
        now = time.monotonic()
        if self.terminal:
            width = max(40, shutil.get_terminal_size((120, 20)).columns - 1)
            line = progress_line(self.done, self.total, self.failed, now - self.started)[:width]
            self.stream.write("\r" + line + " " * max(0, self.shown - len(line)))
            self.shown = len(line)
        elif now - self.last_plain >= self.plain_every:
            self.stream.write(progress_line(self.done, self.total, self.failed, now - self.started, bar=False) + "\n")
            self.last_plain = now
        self.stream.flush()

    def close(self) -> None:
        """Blank the line on a terminal, so that the report starts on a clean line."""
        if self.terminal and self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()

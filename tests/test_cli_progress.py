"""The Spark progress line: rendered from a status snapshot, drawn only on a terminal, harmless when
polling fails."""

from __future__ import annotations

import io
import threading
import time
from typing import Any

import pytest

from reference.instrumentation import progress, spark_progress
from reference.instrumentation.spark_progress import JobProgress, StageProgress, render_line


def _job(job_id: int = 7, description: str | None = "hudi commit 20250101080000000: upsert",
         *stages: StageProgress) -> JobProgress:
    return JobProgress(job_id, description, stages or (StageProgress(12, "collect at x.py:1", 16, 2, 9),))


def test_line_of_one_job() -> None:
    line = render_line([_job()], elapsed=4.24)
    bar = "━" * (progress.BAR_WIDTH * 9 // 16) + "─" * (progress.BAR_WIDTH - progress.BAR_WIDTH * 9 // 16)
    assert line == f"[job 7 · stage 12] hudi commit 20250101080000000: upsert {bar} 9/16 tasks (2 running) 4.2s"


def test_line_sums_stages_and_jobs_and_names_failures() -> None:
    a = _job(3, None, StageProgress(5, "mapInArrow at read.py:9", 4, 0, 4), StageProgress(6, "collect", 4, 1, 1, 2))
    b = _job(4, "hudi read snapshot trips", StageProgress(8, "count", 2, 2, 0))
    line = render_line([a, b], elapsed=0.0)
    assert line.startswith("[jobs 3,4 · stages 5,6,8] mapInArrow at read.py:9 ")  # no description: the stage name
    assert line.endswith(" 5/10 tasks (3 running) (2 failed) 0.0s")


def test_long_descriptions_are_shortened_to_the_width() -> None:
    line = render_line([_job(description="hudi compaction 20250101080000000: " + "x" * 300)], 1.0, width=100)
    assert len(line) == 100 and "…" in line
    narrow = render_line([_job()], 1.0, width=30)  # no room for a label: ids and the bar, cut at the width
    assert narrow == "[job 7 · stage 12] ━━━━━━━━━━━"


def test_nothing_running_is_an_empty_line() -> None:
    assert render_line([], 1.0) == ""
    assert render_line([JobProgress(1, "idle", ())], 1.0) == ""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _FakeContext:
    """Enough of a SparkContext for the poller: one job that finishes after a few polls."""

    def __init__(self) -> None:
        self.polls = 0

    def statusTracker(self) -> Any:
        ctx = self

        class Tracker:
            def getActiveJobsIds(self) -> list[int]:
                ctx.polls += 1
                return [1] if ctx.polls < 4 else []

            def getJobInfo(self, job_id: int) -> Any:
                return type("J", (), {"stageIds": [2]})()

            def getStageInfo(self, stage_id: int) -> Any:
                return type("S", (), {"stageId": 2, "name": "collect", "numTasks": 4, "numActiveTasks": 1,
                                      "numCompletedTasks": ctx.polls, "numFailedTasks": 0})()

        return Tracker()


def test_silent_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_progress, "_active_context", lambda: _FakeContext())
    out = io.StringIO()
    threads = threading.active_count()
    with spark_progress.spark_progress(out, interval=0.01) as on:
        assert threading.active_count() == threads  # no poller started
        time.sleep(0.05)
    assert on is False and out.getvalue() == ""


def test_draws_on_a_terminal_and_clears_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_progress, "_active_context", lambda: _FakeContext())
    monkeypatch.setattr(spark_progress, "_description", lambda sc, job_id: "hudi commit T: insert")
    monkeypatch.setenv("COLUMNS", "120")  # the line's width is the terminal's: fixed here, whatever runs the test
    out = _Tty()
    with spark_progress.spark_progress(out, interval=0.01) as on:
        time.sleep(0.2)
    text = out.getvalue()
    assert on is True
    assert "\r[job 1 · stage 2] hudi commit T: insert " in text and "1/4 tasks (1 running)" in text
    assert text.endswith("\r")  # the line is blanked when the job ends


def test_a_failing_poll_never_reaches_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Any:
        raise RuntimeError("py4j gateway gone")

    monkeypatch.setattr(spark_progress, "_active_context", broken)
    monkeypatch.setattr(spark_progress, "MAX_FAILED_POLLS", 3)
    out = _Tty()
    with spark_progress.spark_progress(out, interval=0.01):
        time.sleep(0.1)
        assert not any(t.name == "hudi-spec-progress" for t in threading.enumerate())  # gave up
    assert out.getvalue() == ""


def test_a_context_that_fails_at_first_is_shown_once_it_works(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _FakeContext()
    calls = iter(range(1000))

    def starting() -> Any:
        if next(calls) < 3:
            raise AttributeError("'NoneType' object has no attribute 'statusTracker'")
        return ctx

    monkeypatch.setattr(spark_progress, "_active_context", starting)
    monkeypatch.setattr(spark_progress, "_description", lambda sc, job_id: None)
    out = _Tty()
    with spark_progress.spark_progress(out, interval=0.01):
        time.sleep(0.2)
    assert "\r[job 1 · stage 2] collect " in out.getvalue()


def test_no_spark_no_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_progress, "_active_context", lambda: None)
    out = _Tty()
    with spark_progress.spark_progress(out, interval=0.01):
        time.sleep(0.05)
    assert out.getvalue() == ""


def test_clear_blanks_the_line_for_the_callers_own_output(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _Tty()
    bar = progress._Bar(out, interval=1.0)  # not started: drawn by hand
    monkeypatch.setattr(progress, "_active", [bar])
    line = "[job 1 · stage 2] collect ━━── 1/2 tasks 0.1s"
    bar._draw(line)
    progress.clear()
    assert out.getvalue() == "\r" + line + "\r" + " " * len(line) + "\r"
    progress.clear()  # nothing drawn: nothing written
    assert out.getvalue().count("\r") == 3

"""The benchmark harness: every job in a fresh process, measured from outside; results as JSON and markdown.

A job has an optional ``prepare`` step and a ``run`` step. Each step runs in its own Python process
(so no job inherits another's memory, caches or JVM). ``prepare`` builds what the job needs (its base
table, shared cached tables) and is not measured at all. ``run`` loads its input, starts Spark if it
needs it, then times only the operation and returns a :class:`Measurement`; after the timer it counts
the rows of the result (untimed) so the harness can check them against what the data generator says
they must be.

Measured from outside, per job:

* wall time of the whole run process (``process_seconds``: imports, Spark start, input loading,
  the operation, the row check);
* peak memory: the peak RSS (``VmHWM``) of the run process, plus that of every descendant still alive
  when the job finished (the Spark JVM and its Python workers), read from ``/proc`` by the job itself.
  Summing peaks is an upper bound of the joint peak. (Not ``os.wait4``'s ``ru_maxrss``: Linux carries a
  process's high-water mark from before its ``exec`` into it, so that figure is at least the harness's
  own size at the fork — the generated inputs it holds — whatever the job used.) Without ``/proc`` the
  process's own ``ru_maxrss`` stands in;
* bytes on disk of the table the job left (every file under its folder, metadata included).

A job marked ``warm`` runs its run step twice in the same process, each time on a fresh copy of its
input table: the first run's seconds are the job's seconds (a one-shot job: for Spark, the first write
of a new session, which starts its Python workers and compiles its plans), the second's its warm
seconds (a long-lived writer). Peak memory then covers both runs.

Spark session start is a job of its own (``spark_session_start``); every other Spark job starts its
session before its timer, so its seconds exclude it.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.data import write_inputs
from bench.jobs import (
    FAILED,
    NOT_AVAILABLE,
    OK,
    ROOT,
    SKIPPED,
    SLOW_PEER_ROWS,
    Context,
    Job,
    NotAvailable,
    bytes_on_disk,
)


def all_jobs() -> dict[str, Job]:
    """Every job in table order: Spark start, our writer's entries, our whole processes, Apache Hudi's, the peers,
    then the scale jobs."""
    from bench import apache_hudi, cluster, ours, peers, processes

    jobs = [*peers.STARTUP_JOBS, *ours.JOBS, *processes.JOBS, *apache_hudi.JOBS, *peers.JOBS, *cluster.JOBS]
    registry = {j.name: j for j in jobs}
    if len(registry) != len(jobs):
        raise ValueError("two benchmark jobs share a name")
    return registry


# --- the job's side: one step in this process -----------------------------------------------------------

def _descendants_peak_kb(root: int) -> int:
    """Sum of the peak RSS (VmHWM, kB) of every live descendant of ``root``, from /proc."""
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    parents: dict[int, int] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    total = 0
    for pid in parents:
        p = parents.get(pid)
        while p is not None and p != root and p in parents:
            p = parents[p]
        if p == root:
            try:
                for line in (proc / str(pid) / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
            except OSError:
                continue
    return total


def _self_peak_kb() -> int:
    """This process's peak RSS since its ``exec`` (``VmHWM``, kB); ``ru_maxrss`` where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _child_step(step: str, job_name: str, n: int, work: Path) -> dict[str, Any]:
    job = all_jobs()[job_name]
    ctx = Context(n, work)
    try:
        if step == "prepare":
            if job.prepare is not None:
                job.prepare(ctx)
            return {"status": OK}
        m = job.run(ctx)
        # warm: the same run again in this process (its session, imports and workers already up), on its own
        # fresh table; its rows are checked as the first run's are
        again = job.run(ctx) if job.warm else None
    except NotAvailable as e:
        return {"status": NOT_AVAILABLE, "reason": str(e)}
    except Exception as e:
        traceback.print_exc()
        return {"status": FAILED, "reason": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
    if again is not None and again.rows_seen != again.rows_expected:
        return {"status": FAILED, "reason": f"warm run's rows check: saw {again.rows_seen}, "
                                            f"expected {again.rows_expected}"}
    return {"status": OK, "seconds": m.seconds, "warm_seconds": again.seconds if again is not None else None,
            "steps": m.steps, "warm_steps": again.steps if again is not None else None, "extra": m.extra,
            "rows": m.rows, "rows_seen": m.rows_seen, "rows_expected": m.rows_expected,
            "bytes": bytes_on_disk(m.table) if m.table is not None and m.table.exists() else None,
            "self_peak_kb": _self_peak_kb(),
            "descendants_peak_kb": _descendants_peak_kb(os.getpid())}


def child_main(argv: Sequence[str]) -> int:
    """``step job n work result``: run one step and write its JSON to ``result``; exits at once after."""
    step, job_name, n, work, result = argv
    out = _child_step(step, job_name, int(n), Path(work))
    Path(result).write_text(json.dumps(out))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # do not wait for a JVM to shut down: the harness waits for the process group instead


# --- the harness's side ------------------------------------------------------------------------------

CHILD_CODE = "import sys; from bench.harness import child_main; sys.exit(child_main(sys.argv[1:]))"


@dataclass
class StepOutcome:
    result: dict[str, Any]
    process_seconds: float
    maxrss_kb: int
    log: str


def _wait_group(pgid: int, limit: float = 60.0) -> None:
    """Wait until every process of the step's group (a JVM outliving its driver) is gone; kill it after."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.1)
    _kill_group(pgid)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return


def run_step(step: str, job: str, n: int, work: Path, timeout: float) -> StepOutcome:
    """Run one step of a job in a fresh process group (``os.wait4``'s ``ru_maxrss`` kept for reference)."""
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    result_file = logs / f"{job}.{step}.json"
    log_file = logs / f"{job}.{step}.log"
    result_file.unlink(missing_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    start = time.perf_counter()
    with log_file.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-c", CHILD_CODE, step, job, str(n), str(work), str(result_file)],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        timer = threading.Timer(timeout, _kill_group, (proc.pid,))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): the step's group must not outlive the harness
            _kill_group(proc.pid)
            raise
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    _wait_group(proc.pid)
    text = log_file.read_text(errors="replace")
    if result_file.exists():
        result = json.loads(result_file.read_text())
    else:
        why = "killed after the time limit" if seconds >= timeout else f"exit code {proc.returncode}"
        last = [ln for ln in text.splitlines() if ln.strip()][-1:] or [why]
        result = {"status": FAILED, "reason": f"the {step} process died ({why}): {last[0][:200]}"}
    return StepOutcome(result, seconds, int(usage.ru_maxrss), text)


@dataclass
class JobResult:
    """One row of the result table (and of the JSON file)."""

    job: str
    engine: str
    kind: str
    n: int
    status: str
    reason: str | None = None
    seconds: float | None = None
    rows: int | None = None
    rows_per_second: float | None = None
    vs: str | None = None
    ratio: float | None = None
    warm_seconds: float | None = None
    warm_ratio: float | None = None
    steps: dict[str, float] | None = None
    warm_steps: dict[str, float] | None = None
    peak_rss_mb: float | None = None
    bytes: int | None = None
    process_seconds: float | None = None
    rows_seen: int | None = None
    rows_expected: int | None = None
    rows_check: str | None = None
    spark: bool = False
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def rows_per_second(rows: int | None, seconds: float | None) -> float | None:
    """Rows divided by seconds; none when either is missing or zero."""
    if not rows or not seconds:
        return None
    return rows / seconds


def rows_check(seen: int | None, expected: int | None) -> str | None:
    """'ok' when the rows counted after the job equal the generator's prediction, else 'mismatch'."""
    if seen is None or expected is None:
        return None
    return "ok" if seen == expected else "mismatch"


def run_job(job: Job, n: int, work: Path, timeout: float, skip_reason: str | None = None) -> JobResult:
    """Prepare (unmeasured) and run (measured) one job at one row count."""
    res = JobResult(job.name, job.engine, job.kind, n, SKIPPED, vs=job.vs, spark=job.spark, note=job.note)
    if skip_reason:
        res.reason = skip_reason
        return res
    if job.prepare is not None:
        prep = run_step("prepare", job.name, n, work, timeout)
        if prep.result["status"] != OK:
            res.status, res.reason = prep.result["status"], "prepare: " + str(prep.result.get("reason"))
            if res.status == FAILED:
                res.extra = {"log_tail": prep.log.splitlines()[-40:]}
            return res
    out = run_step("run", job.name, n, work, timeout)
    r = out.result
    res.status, res.reason = r["status"], r.get("reason")
    res.process_seconds = round(out.process_seconds, 3)
    if res.status != OK:
        if res.status == FAILED:
            res.extra = {"log_tail": out.log.splitlines()[-40:]}
        return res
    res.seconds, res.rows, res.bytes = r["seconds"], r["rows"], r["bytes"]
    res.warm_seconds = r.get("warm_seconds")
    res.steps, res.warm_steps = r.get("steps"), r.get("warm_steps")
    res.rows_seen, res.rows_expected = r["rows_seen"], r["rows_expected"]
    res.rows_check = rows_check(res.rows_seen, res.rows_expected)
    res.rows_per_second = rows_per_second(res.rows, res.seconds)
    peak_kb = int(r["self_peak_kb"]) + int(r["descendants_peak_kb"])
    res.peak_rss_mb = round(peak_kb / 1024, 1)
    res.extra = {"self_peak_kb": r["self_peak_kb"], "wait4_maxrss_kb": out.maxrss_kb,
                 "descendants_peak_kb": r["descendants_peak_kb"], **(r.get("extra") or {})}
    if res.rows_check == "mismatch":
        res.status, res.reason = FAILED, f"rows check: saw {res.rows_seen:,}, expected {res.rows_expected:,}"
    return res


def add_ratios(results: Sequence[JobResult]) -> None:
    """Each job's seconds divided by its ``vs`` job's seconds at the same row count (both must be ok);
    likewise the warm seconds, where both jobs have them."""
    by = {(r.job, r.n): r for r in results}
    for r in results:
        base = by.get((r.vs, r.n)) if r.vs else None
        if base is None or base.status != OK:
            continue
        if r.seconds and base.seconds:
            r.ratio = r.seconds / base.seconds
        if r.warm_seconds and base.warm_seconds:
            r.warm_ratio = r.warm_seconds / base.warm_seconds


@contextmanager
def work_dir(keep: Path | None) -> Iterator[Path]:
    """The run's scratch folder: ``keep`` if given (left in place), else a temporary one removed after; absolute
    either way (Apache Hudi's Spark writer refuses a relative table path: "Relative path in absolute URI")."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep.resolve()
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="hudi-spec-bench-") as tmp:
        yield Path(tmp)


def skip_reason(job: Job, n: int, skip_slow_peers: bool) -> str | None:
    """Why a job is skipped at ``n`` rows: only slow peers, above SLOW_PEER_ROWS, when asked to."""
    if job.slow and skip_slow_peers and n > SLOW_PEER_ROWS:
        return f"slow peer above {SLOW_PEER_ROWS:,} rows (--skip-slow-peers)"
    return None


def runs_at(job: Job, n: int, rows: Sequence[int], scale_rows: Sequence[int] | None) -> bool:
    """Whether ``job`` runs at ``n`` rows: a scale job at the scale row counts (``rows`` when none are
    given), every other job at ``rows``."""
    return n in (scale_rows if job.scale and scale_rows is not None else rows)


def run_all(jobs: Sequence[Job], rows: Sequence[int], work: Path, timeout: float, skip_slow_peers: bool,
            progress: Callable[[JobResult], None] = lambda r: None, keep: bool = False,
            scale_rows: Sequence[int] | None = None) -> list[JobResult]:
    """Every job at every row count it runs at (``runs_at``), smallest count first, one at a time; each
    job's table removed after it (and each row count's inputs and cached tables after that row count)
    to bound disk use, unless ``keep``."""
    results: list[JobResult] = []
    for n in sorted({*rows, *(scale_rows or ())}):
        selected = [j for j in jobs if runs_at(j, n, rows, scale_rows)]
        if not selected:
            continue
        folder = work / str(n)
        write_inputs(n, folder / "inputs")
        for job in selected:
            r = run_job(job, n, folder, timeout, skip_reason(job, n, skip_slow_peers))
            if not keep:
                shutil.rmtree(folder / "tables" / job.name, ignore_errors=True)
            results.append(r)
            progress(r)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    add_ratios(results)
    return results


def result_dicts(results: Sequence[JobResult]) -> list[dict[str, Any]]:
    return [asdict(r) for r in results]

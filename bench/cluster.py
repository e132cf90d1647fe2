"""The scale jobs: the Spark engine on a standalone cluster, its driver's memory, at growing row counts, and
Apache Hudi's own Spark writer on the same cluster beside it.

Each job's run step starts a Spark standalone master and one worker on 127.0.0.1 from pyspark's own
distribution (``bin/spark-class``: ``deploy.master.Master`` and ``deploy.worker.Worker``, each its own
JVM; untimed), opens the session through ``spark://127.0.0.1:PORT`` (so the executors run in the worker's
JVM and their Python workers are forked there, apart from the driver), then runs the same write as its
``local[2]`` counterpart (``vs``): bulk_insert, copy-on-write and merge-on-read upsert, compaction. Ours
(``hudi_spec_cluster_*``) run ``bench.ours``'s jobs in a session with hudi-spec's defaults; Apache Hudi's
(``apache_hudi_cluster_*``) run ``bench.apache_hudi``'s in a session started with Hudi's bundle in
``spark.jars`` (the worker's executors fetch it from the driver) and Hudi's settings, on the same data and
options, with Hudi's defaults. ``bench.targets`` holds each of ours to Hudi's on the cluster.

Beside the seconds it reports:

* the driver's peak RSS during the operation, in two parts: the Python process (``VmHWM`` of the
  job's process) and the driver JVM pyspark launched (``VmHWM`` of the gateway's process); both
  high-water marks are reset (``/proc/PID/clear_refs``) just before the timer starts, so they cover
  the operation, the driver's idle size included, and not the untimed row check after it. The
  executors, the worker and the master are not the driver: they are left out;
* the file groups of the table the job left, so the time can be read against rows and groups.

They run at the scale row counts (``--scale-rows``: 1M, 5M and 20M by default), once each (the
cluster is the job's own, so there is no warm run).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import apache_hudi, ours
from bench.jobs import SERVICE, UPSERT, WRITE, Context, Job, Measurement, NotAvailable

CORES = 2
WORKER_MEMORY = "6g"
EXECUTOR_MEMORY = "4g"
ENGINE = "hudi-spec (Spark standalone cluster)"
HUDI_ENGINE = "Apache Hudi (Spark standalone cluster)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(log: Path, text: str, proc: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise RuntimeError(f"{text!r} not in {log.name} after {seconds:.0f} s: {tail}")


@contextmanager
def standalone_cluster(folder: Path, cores: int = CORES, memory: str = WORKER_MEMORY) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a master with one registered worker, both stopped on exit."""
    import pyspark

    home = Path(pyspark.__file__).parent
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(folder / "work")}
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(home / "bin" / "spark-class")
    started: list[subprocess.Popen[bytes]] = []
    try:
        with open(folder / "master.log", "wb") as out:
            started.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", "0"], env=env, stdout=out, stderr=subprocess.STDOUT))
        _wait_for(folder / "master.log", "I have been elected leader", started[0], 120)
        with open(folder / "worker.log", "wb") as out:
            started.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores",
                 str(cores), "--memory", memory, "--webui-port", "0"], env=env, stdout=out,
                stderr=subprocess.STDOUT))
        _wait_for(folder / "worker.log", "Successfully registered with master", started[1], 120)
        yield url
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _status_kb(pid: int | str, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _driver_jvm_pid(session: Any) -> int:
    """The process of the driver JVM pyspark launched for ``session`` (its py4j gateway)."""
    proc = getattr(session.sparkContext._gateway, "proc", None)
    if proc is None:
        raise RuntimeError("the driver JVM was not launched by this process")
    return int(proc.pid)


def reset_peaks(pids: list[int | str]) -> None:
    """Reset each process's peak RSS to its current RSS (Linux ``clear_refs``, value 5)."""
    for pid in pids:
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def driver_peaks(jvm: int) -> dict[str, int]:
    """The driver's peak RSS (kB) since the last reset: this Python process and its JVM."""
    return {"driver_python_peak_kb": _status_kb("self", "VmHWM"), "driver_jvm_peak_kb": _status_kb(jvm, "VmHWM")}


def file_groups(path: Path) -> int:
    """The file groups of the table at ``path`` (its latest file system view)."""
    from reference.executors.common import load_table, timeline_of
    from spec.file_group.file_system_view import FileSystemView

    storage, table = load_table(str(path))
    return len(FileSystemView.load(storage, table, timeline_of(storage, table)).groups)


def our_session(master: str) -> Any:
    """The session our cluster jobs run in: hudi-spec's defaults, on ``master``."""
    from reference.engines.spark_session import get_or_create_session

    return get_or_create_session(master=master, app_name="hudi-spec-bench-cluster")


def on_cluster(run: Callable[[Context], Measurement],
               session_on: Callable[[str], Any] = our_session) -> Callable[[Context], Measurement]:
    """``run`` (a job of ``bench.ours`` or ``bench.apache_hudi``, whose operation is timed by
    ``ours.timed_operation``) with the session ``session_on`` opens on a standalone cluster of its own; the
    driver's peaks of the timed operation and the table's file groups added to its measurement."""

    def job(ctx: Context) -> Measurement:
        if not Path("/proc/self/clear_refs").exists():
            raise NotAvailable("the driver's peak memory is read from /proc (Linux)")
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--conf spark.executor.memory={EXECUTOR_MEMORY} pyspark-shell"
        with standalone_cluster(ctx.work / "cluster" / str(os.getpid())) as url:
            session = session_on(url)
            jvm = _driver_jvm_pid(session)
            peaks: dict[str, int] = {}

            def start() -> None:
                reset_peaks(["self", jvm])

            def stop() -> None:
                peaks.update(driver_peaks(jvm))

            m = ours.with_operation_hooks(start, stop, lambda: run(ctx))
            if not peaks:
                raise RuntimeError("the job timed no operation through bench.ours.timed_operation: no driver peaks")
            executors = session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
            session.stop()
        groups = file_groups(m.table) if m.table is not None else None
        return replace(m, extra={**(m.extra or {}), **peaks, "file_groups": groups, "executors": executors,
                                 "master": "spark://127.0.0.1"})

    return job


def _upsert(job: str, base: Callable[[Context], Path], options: dict[str, str]) -> Callable[[Context], Measurement]:
    return lambda c: ours._upsert(c, job, base, options)


def _hudi(run: Callable[[Context], Measurement]) -> Callable[[Context], Measurement]:
    """One of Apache Hudi's jobs (``bench.apache_hudi``) on a standalone cluster of its own: its session started
    with Hudi's bundle and settings (``apache_hudi.hudi_session``) on the cluster's master."""
    return on_cluster(run, apache_hudi.hudi_session)


JOBS: tuple[Job, ...] = (
    Job("hudi_spec_cluster_bulk_insert", ENGINE, WRITE,
        on_cluster(lambda c: ours.bulk_insert(c, "hudi_spec_cluster_bulk_insert")), spark=True,
        vs="hudi_spec_bulk_insert", scale=True,
        note=f"{ours.DEFAULTS}; a master and a worker ({CORES} cores) from pyspark's distribution"),
    Job("hudi_spec_cluster_cow_upsert", ENGINE, UPSERT,
        on_cluster(_upsert("hudi_spec_cluster_cow_upsert", ours.cow_base, ours.OPTIONS)),
        prepare=ours.needs(ours.cow_base), spark=True, vs="hudi_spec_cow_upsert", scale=True,
        note=f"COW, the upsert batch; {ours.DEFAULTS}"),
    Job("hudi_spec_cluster_mor_upsert", ENGINE, UPSERT,
        on_cluster(_upsert("hudi_spec_cluster_mor_upsert", ours.mor_base, ours.MOR_OPTIONS)),
        prepare=ours.needs(ours.mor_base), spark=True, vs="hudi_spec_mor_upsert", scale=True,
        note=f"MOR, the upsert batch; {ours.DEFAULTS}"),
    Job("hudi_spec_cluster_compaction", ENGINE, SERVICE,
        on_cluster(lambda c: ours._compaction(c, "hudi_spec_cluster_compaction", local=False)),
        prepare=ours.prepare_compaction, spark=True, vs="hudi_spec_compaction", scale=True,
        note="the MOR table after the upsert (small-file limit 0): every log into new base files, gzip"),
    # Apache Hudi's own Spark writer on the same cluster, data and options as its local[2] jobs: each of ours above
    # is held to its counterpart here (bench.targets)
    Job("apache_hudi_cluster_bulk_insert", HUDI_ENGINE, WRITE,
        _hudi(lambda c: apache_hudi.bulk_insert(c, "apache_hudi_cluster_bulk_insert")), spark=True,
        vs="apache_hudi_bulk_insert", scale=True, note=f"COW, N rows into an empty table; {apache_hudi.NOTE}"),
    Job("apache_hudi_cluster_cow_upsert", HUDI_ENGINE, UPSERT,
        _hudi(lambda c: apache_hudi._upsert(c, "apache_hudi_cluster_cow_upsert", apache_hudi.cow_base, ours.OPTIONS)),
        prepare=ours.needs(apache_hudi.cow_base), spark=True, vs="apache_hudi_cow_upsert", scale=True,
        note=f"COW, the upsert batch; {apache_hudi.NOTE}"),
    Job("apache_hudi_cluster_mor_upsert", HUDI_ENGINE, UPSERT,
        _hudi(lambda c: apache_hudi._upsert(c, "apache_hudi_cluster_mor_upsert", apache_hudi.mor_base,
                                            ours.MOR_OPTIONS)),
        prepare=ours.needs(apache_hudi.mor_base), spark=True, vs="apache_hudi_mor_upsert", scale=True,
        note=f"MOR, the upsert batch; {apache_hudi.NOTE}"),
    Job("apache_hudi_cluster_compaction", HUDI_ENGINE, SERVICE,
        _hudi(lambda c: apache_hudi.compaction(c, "apache_hudi_cluster_compaction")),
        prepare=ours.needs(apache_hudi.mor_upserted), spark=True, vs="apache_hudi_compaction", scale=True,
        note="MOR table after the upsert (small-file limit 0, so it has logs): run_compaction, scheduled now"),
)

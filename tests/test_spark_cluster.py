"""The Spark engine on a standalone cluster: a master and a worker, each in its own JVM, on 127.0.0.1.

Started from pyspark's own distribution (``bin/spark-class``: ``deploy.master.Master`` and
``deploy.worker.Worker``), so the executors run in the worker's JVM and their Python workers are forked
there: nothing the write path hands a task can live in the driver's process or memory. A driver process
(``tests/cluster_child.py``) writes the engines test's sequence (insert, upserts, a delete), a
bulk_insert and, on merge-on-read, a compaction through ``spark://127.0.0.1:PORT``; the test writes the
same sequence on the local engine and the two tables must hold the same file groups, slices and records
(``test_local_engine``'s comparison), as ``local[2]`` must.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_local_engine import _groups, _records, _write_all

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parent.parent


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
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    raise AssertionError(f"{text!r} not in {log.name} after {seconds:.0f} s:\n{tail}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a running master with one registered worker (2 cores)."""
    pyspark = pytest.importorskip("pyspark")
    home = Path(pyspark.__file__).parent
    logs = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(logs / "work")}
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(home / "bin" / "spark-class")
    started: list[subprocess.Popen[bytes]] = []
    try:
        with open(logs / "master.log", "wb") as out:
            master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                       "--port", str(port), "--webui-port", "0"], env=env, stdout=out,
                                      stderr=subprocess.STDOUT)
        started.append(master)
        _wait_for(logs / "master.log", "I have been elected leader", master, 120)
        with open(logs / "worker.log", "wb") as out:
            worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host",
                                       "127.0.0.1", "--cores", "2", "--memory", "2g", "--webui-port", "0"],
                                      env=env, stdout=out, stderr=subprocess.STDOUT)
        started.append(worker)
        _wait_for(logs / "worker.log", "Successfully registered with master", worker, 120)
        yield url
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 6),
                                                     ("MERGE_ON_READ", 8)])
def test_writes_through_a_standalone_master_leave_the_local_engines_table(cluster: str, tmp_path: Path,
                                                                          table_type: str, version: int) -> None:
    remote = tmp_path / "cluster"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "HUDI_SPEC_SPARK_DRIVER_MEMORY": "1g"}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "cluster_child.py"), cluster, str(remote),
                           table_type, str(version)], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    info = json.loads(done.stdout.strip().splitlines()[-1])
    assert info["master"] == cluster
    assert len(info["block_managers"]) >= 2, "no executor joined: the driver alone did the work"
    _write_all(tmp_path / "local", "local", table_type, version)
    if table_type == "MERGE_ON_READ":
        from conformance.adapters.reference_spark import START_EPOCH, ReplayClock
        from reference.api import HudiTable

        HudiTable(str(tmp_path / "local"), clock=ReplayClock(START_EPOCH + 10_000), engine="local").compact()
    assert _groups(remote) == _groups(tmp_path / "local")
    assert _records(remote) == _records(tmp_path / "local")
    bulk = Path(f"{remote}-bulk")
    from reference.api import HudiTable

    rows = HudiTable(str(bulk)).read()
    assert sorted(rows.column("id").to_pylist()) == list(range(500))
    assert set(rows.column("_hoodie_partition_path").to_pylist()) == {"c0", "c1", "c2"}

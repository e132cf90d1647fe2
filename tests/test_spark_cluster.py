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
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_local_engine import _groups, _records, _write_all

from tests import processes

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a running master with one registered worker (2 cores, 2 GB), the bench's
    ``standalone_cluster``."""
    from bench.cluster import standalone_cluster

    with standalone_cluster(tmp_path_factory.mktemp("cluster"), cores=2, memory="2g") as url:
        yield url


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 6),
                                                     ("MERGE_ON_READ", 8)])
def test_writes_through_a_standalone_master_leave_the_local_engines_table(cluster: str, tmp_path: Path,
                                                                          table_type: str, version: int) -> None:
    remote = tmp_path / "cluster"
    env = processes.child_env(PYSPARK_PYTHON=sys.executable, HUDI_SPEC_SPARK_DRIVER_MEMORY="1g")
    done = processes.run(processes.python(str(ROOT / "tests" / "cluster_child.py"), cluster, str(remote), table_type,
                                          str(version)), env=env, cwd=ROOT, hang_after=1800).expect(0)
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

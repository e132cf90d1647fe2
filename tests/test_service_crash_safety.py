"""Crash safety of the table services: a compaction, clean or rollback killed with SIGKILL half way
is finished by the next one, as Apache Hudi finishes them.

Each trial copies a small table (local engine; MOR for compaction, COW or MOR for clean and
rollback; v6 or v8 in ``make test``, v6, v8 or v9 in ``make slow``), starts a process that runs the
service with a fault point armed (``reference.instrumentation.faults``: ``mid_compaction`` after one new
base file, ``mid_clean`` after the first delete, ``mid_rollback`` after the target is un-published and
its first file deleted or command block appended), and checks that the process died there, leaving the
service's instant pending. Then:

0. while it is pending, the spec reader and hudi-rs read what the table held before (a rollback: without
   the write it undoes, un-published first);
1. the same service runs again and succeeds: an inflight compaction is rolled back to requested
   and run again (``BaseHoodieTableServiceClient.compact``), a pending clean or rollback is
   re-run from its plan;
2. the next upsert succeeds, and the spec reader and hudi-rs read what the spec model predicts (a
   rollback undoes the latest write; compaction and clean change no row);
3. no instant is left pending, no lock remains, and ``hudi-conformance check`` finds no file that
   no instant accounts for.

CI runs ten trials with fixed seeds; ``make slow`` runs 100.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.checker import check_table
from reference.instrumentation.faults import FAULT_ENV
from reference.write.client import WriteClient
from spec.read.reader import read_table
from spec.storage.lock import LOCK_FILE
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action
from tests import processes
from tests.hudi_rs import hudi_rs_read
from tests.test_crash_safety import _model_rows, _rows, rec, seeds

ROOT = Path(__file__).resolve().parent.parent
SERVICES = {"compact": "mid_compaction", "clean": "mid_clean", "rollback": "mid_rollback"}
VERSIONS = (6, 8, 9)
"""The table versions the random trials (``make slow``) draw from."""
ACTIONS = {"compact": Action.COMPACTION, "clean": Action.CLEAN, "rollback": Action.ROLLBACK}

# three upserts over two partitions: every file group has three versions (COW) or a base and logs (MOR)
BASE = [[rec(i, 1) for i in range(12)], [rec(i, 2) for i in range(0, 12, 2)], [rec(i, 3) for i in range(0, 12, 3)]]
NEXT = [rec(i, 4) for i in range(6, 10)] + [rec(i, 4) for i in range(300, 302)]


def options(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "crash", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0", "hoodie.cleaner.commits.retained": "1",
            "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


_BASES: dict[tuple[str, int, bool], Path] = {}
COMPACTED = [rec(i, 5) for i in range(1, 12, 4)]
"""Written after a compaction in the tables a MOR clean runs on (whose older slices it then removes)."""


def base_batches(service: str, table_type: str) -> list[list[dict[str, Any]]]:
    return [*BASE, COMPACTED] if service == "clean" and table_type == "MERGE_ON_READ" else BASE


def base_table(tmp_path_factory: pytest.TempPathFactory, service: str, table_type: str, version: int) -> Path:
    from reference.executors.compaction import compact

    compacted = service == "clean" and table_type == "MERGE_ON_READ"
    key = (table_type, version, compacted)
    if key not in _BASES:
        path = tmp_path_factory.mktemp("service-crash-base") / "t"
        client = WriteClient(str(path), engine="local")
        for batch in BASE:
            client.write(pa.Table.from_pylist(batch), "upsert", options(table_type, version))
        if compacted:
            assert compact(client) is not None
            client.write(pa.Table.from_pylist(COMPACTED), "upsert", options(table_type, version))
        _BASES[key] = path
    return _BASES[key]


def run_killed(path: Path, service: str, table_type: str, version: int) -> processes.Ended:
    """Run the service in a new session (its own process group, which the fault kills whole); it must die
    there, killed by SIGKILL."""
    done = processes.run(processes.python(str(ROOT / "tests" / "crash_child.py"), str(path), service, "[]",
                                          json.dumps(options(table_type, version)), "local"),
                         env=processes.child_env(**{FAULT_ENV: SERVICES[service]}), new_session=True)
    return done.expect(-signal.SIGKILL, f"{service} killed at {SERVICES[service]}")


def rerun(path: Path, service: str, table_type: str, version: int) -> None:
    from reference.config.options import parse_options
    from reference.executors.clean import clean
    from reference.executors.compaction import compact
    from reference.executors.rollback import rollback
    from spec.write.service_configs import clean_config

    client = WriteClient(str(path), engine="local")
    table = client.table_config()
    assert table is not None
    if service == "compact":
        assert compact(client) is not None
    elif service == "clean":
        assert clean(client.storage, table, clean_config(parse_options(options(table_type, version)))).finished_pending
    else:
        assert rollback(client.storage, table).resumed


def service_trial(tmp_path_factory: pytest.TempPathFactory, work: Path, service: str, table_type: str,
                  version: int) -> None:
    path = work / "t"
    shutil.copytree(base_table(tmp_path_factory, service, table_type, version), path)
    run_killed(path, service, table_type, version)
    pending = [i for i in Timeline.load(str(path)).instants if i.action == ACTIONS[service] and not i.is_completed]
    assert pending, f"the killed {service} left no pending instant"
    base = base_batches(service, table_type)
    # 0. no row lost or reverted while the service is pending: a compaction or clean changes no row, a
    # rollback un-publishes its target before it deletes a file
    killed = _model_rows(table_type, version, base[:-1] if service == "rollback" else base)
    assert _rows(read_table(str(path))) == killed
    assert _rows(hudi_rs_read(str(path))) == killed
    # 1. the service runs again and finishes
    rerun(path, service, table_type, version)
    # 2. the next write succeeds; the readers agree with the model
    WriteClient(str(path), engine="local").write(pa.Table.from_pylist(NEXT), "upsert",
                                                 options(table_type, version))
    batches = [*base[:-1], NEXT] if service == "rollback" else [*base, NEXT]
    expected = _model_rows(table_type, version, batches)
    assert _rows(read_table(str(path))) == expected
    assert _rows(hudi_rs_read(str(path))) == expected
    # 3. nothing pending, nothing left behind
    timeline = Timeline.load(str(path))
    assert not [i for i in timeline.instants if not i.is_completed], timeline.instants
    assert [i.is_completed for i in timeline.instants if i.requested == pending[0].requested] == [True]
    lock = path / LOCK_FILE  # released: marked expired (Hudi's unlock), never left held
    assert not lock.exists() or json.loads(lock.read_bytes())["expired"] is True
    report = check_table(str(path))
    problems = [f for f in report.findings if f.level == "error" or f.code in ("pending-files", "orphan-file")]
    assert not problems, problems
    if service == "compact":  # the killed run was rolled back under a rollback instant, then run again
        assert any(i.action == Action.ROLLBACK for i in timeline.instants)


EVERY_KIND = [(s, t, v) for s in sorted(SERVICES) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for v in VERSIONS
              if s != "compact" or t == "MERGE_ON_READ"]
"""Every service on every table type it runs on and every version: the first random seeds go round them."""


def trial_for(seed: int) -> tuple[str, str, int]:
    """The CI seeds (0-9) go round the services, versions and table types; the next seeds go round
    ``EVERY_KIND``; later seeds draw them."""
    if 10 <= seed < 10 + len(EVERY_KIND):
        return EVERY_KIND[seed - 10]
    rng = random.Random(seed)
    services = sorted(SERVICES)
    service = services[seed % 3] if seed < 10 else rng.choice(services)
    version = (6, 8)[(seed // 3) % 2] if seed < 10 else rng.choice(VERSIONS)
    types = ("COPY_ON_WRITE", "MERGE_ON_READ")
    table_type = ("MERGE_ON_READ" if service == "compact" else types[seed // 6] if seed < 10 else rng.choice(types))
    return service, table_type, version


@pytest.mark.parametrize("seed", range(10))
def test_killed_service_is_finished(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, seed: int) -> None:
    service_trial(tmp_path_factory, tmp_path, *trial_for(seed))


def test_ci_seeds_cover_every_service_on_both_versions() -> None:
    """The ten fixed CI seeds kill each service on v6 and on v8, clean and rollback on both table types."""
    trials = {trial_for(seed) for seed in range(10)}
    assert {(s, v) for s, _, v in trials} == {(s, v) for s in SERVICES for v in (6, 8)}
    assert {(s, t) for s, t, _ in trials} == {("compact", "MERGE_ON_READ")} | {
        (s, t) for s in ("clean", "rollback") for t in ("COPY_ON_WRITE", "MERGE_ON_READ")}


@pytest.mark.slow
@pytest.mark.parametrize("seed", seeds(range(10, 110), in_ci=10))
def test_killed_service_is_finished_random(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                           seed: int) -> None:
    service_trial(tmp_path_factory, tmp_path, *trial_for(seed))

"""Crash safety of restore and archival: a process killed with SIGKILL half way through either loses no
row, reverts none, and leaves a table that reads and writes.

**Restore.** A table (COW or MOR; version 6, or 8 and 9 with their metadata table) takes two writes, a
savepoint of the second, and two more writes; a process restoring it to the savepoint is killed at a fault
point (``reference.instrumentation.faults``): ``restore_unpublished`` (every instant the restore undoes is
un-published, no
file deleted yet), ``mid_restore`` (the first instant undone) or ``mid_metadata_init`` (the metadata table
being listed anew, half built). Then:

1. readers see no intermediate state: the spec reader reads the savepoint's rows (a pending restore's plan
   is what the table means, ``spec.actions.restore``), and so does hudi-rs (every undone instant is
   un-published before any file goes, and the metadata table is marked as being rebuilt first);
2. the table is finished by the next writer, which completes the pending restore from its plan before it
   writes — or by running the restore again, which finishes the same restore instant (Hudi's
   ``scheduleAndGetRestorePlan``) — and then reads as the spec model predicts;
3. nothing is left pending, the lock is released, the metadata table lists the table again, and
   ``hudi-conformance check`` finds nothing wrong.

**Archival.** A table archiving after every commit (``hoodie.keep.min.commits`` 2, ``max`` 3) takes a write
whose automatic archival is killed at ``mid_archive`` (the history written and visible, the instants still
on the active timeline) or ``mid_archive_version`` (v8/v9: the new manifest written, not the version file).
The write had committed: the readers read it; the next write finishes the archival; no instant is archived
twice or lost from both timelines; a compaction after it (MOR) keeps every row.

``make test`` runs a few trials; ``make slow`` runs every point on every table type and version (those few
included).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.checker import check_table
from reference.executors.compaction import compact
from reference.executors.restore import restore
from reference.executors.savepoint import savepoint_create
from reference.instrumentation.faults import FAULT_ENV
from reference.write.client import WriteClient
from spec.actions.archive import archived_instants
from spec.config.table_config import TableConfig
from spec.metadata.metadata_table import FILES_PARTITION
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCK_FILE
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action
from tests.hudi_rs import hudi_rs_read
from tests.test_crash_safety import _model_rows, _rows, rec

ROOT = Path(__file__).resolve().parent.parent
KINDS = [(t, v) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for v in (6, 8, 9)]
RESTORE_POINTS = ("restore_unpublished", "mid_restore", "mid_metadata_init")
ARCHIVE_POINTS = ("mid_archive", "mid_archive_version")

BATCHES = [[rec(i, 1) for i in range(12)], [rec(i, 2) for i in range(0, 12, 2)],
           [rec(i, 3) for i in range(0, 12, 3)] + [rec(i, 3) for i in range(300, 303)],
           [rec(i, 4) for i in range(1, 12, 4)]]
SAVEPOINTED = 2
"""The savepoint keeps the table as the first two writes left it."""
NEXT = [rec(i, 5) for i in range(5, 9)] + [rec(i, 5) for i in range(500, 502)]


def options(table_type: str, version: int, **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "crash", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.write.table.version": str(version),
            "hoodie.parquet.small.file.limit": "0", **extra}


def archiving(table_type: str, version: int) -> dict[str, str]:
    """Archival after every commit past three, cleaning to one retained commit; on MOR every deltacommit
    counts as compacted enough for archival (``hoodie.compact.inline.max.delta.commits`` 1)."""
    return options(table_type, version, **{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                           "hoodie.cleaner.commits.retained": "1",
                                           "hoodie.compact.inline.max.delta.commits": "1"})


def run_killed(path: Path, operation: str, payload: Any, opts: dict[str, str], point: str) -> int:
    """Run ``operation`` in its own process group, killed at ``point``; its return code."""
    env = {**os.environ, FAULT_ENV: point, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "crash_child.py"), str(path), operation,
                             json.dumps(payload), json.dumps(opts), "local"],
                            env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=300)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL, f"{operation} was not killed at {point}: {err[-3000:]}"
    return proc.returncode


def both_readers(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    return _rows(read_table(str(path))), _rows(hudi_rs_read(str(path)))


def settled(path: Path) -> None:
    """Nothing pending, the lock released, nothing the checker finds wrong; the metadata table (v8, v9)
    listing the table again."""
    timeline = Timeline.load(str(path))
    assert not [i for i in timeline.instants if not i.is_completed], timeline.instants
    lock = path / LOCK_FILE
    assert not lock.exists() or json.loads(lock.read_bytes())["expired"] is True
    report = check_table(str(path))
    problems = [f for f in report.findings if f.level == "error" or f.code in ("pending-files", "orphan-file")]
    assert not problems, problems
    config = TableConfig.load(Storage(str(path)))
    if config.table_version >= 8:
        assert FILES_PARTITION in config.metadata_partitions
        assert not config.get("hoodie.table.metadata.partitions.inflight")


# --- restore -----------------------------------------------------------------------------------------

_RESTORE_BASES: dict[tuple[str, int], tuple[Path, str]] = {}


def restore_base(factory: pytest.TempPathFactory, table_type: str, version: int) -> tuple[Path, str]:
    if (table_type, version) not in _RESTORE_BASES:
        path = factory.mktemp("restore-crash-base") / "t"
        client = WriteClient(str(path), engine="local")
        savepoint = ""
        for n, batch in enumerate(BATCHES, 1):
            result = client.write(pa.Table.from_pylist(batch), "upsert", options(table_type, version))
            if n == SAVEPOINTED:
                savepoint = result.instant
                storage = Storage(str(path))
                savepoint_create(storage, TableConfig.load(storage), savepoint)
        _RESTORE_BASES[(table_type, version)] = (path, savepoint)
    return _RESTORE_BASES[(table_type, version)]


def restore_trial(factory: pytest.TempPathFactory, work: Path, table_type: str, version: int, point: str,
                  recovery: str) -> None:
    base, savepoint = restore_base(factory, table_type, version)
    path = work / "t"
    shutil.copytree(base, path)
    at_savepoint = _model_rows(table_type, version, BATCHES[:SAVEPOINTED])
    assert both_readers(path)[0] == _model_rows(table_type, version, BATCHES)
    run_killed(path, "restore", savepoint, options(table_type, version), point)
    pending = [i for i in Timeline.load(str(path)).instants if i.action == Action.RESTORE and not i.is_completed]
    assert pending, "the killed restore left no pending restore instant"
    # 1. no intermediate state: both readers read the savepoint's rows
    assert both_readers(path) == (at_savepoint, at_savepoint)
    # 2. finished by the next writer, or by the restore run again
    if recovery == "restore":
        storage = Storage(str(path))
        done = restore(storage, TableConfig.load(storage), savepoint)
        assert done.instant == pending[0].requested, "the restore run again is the pending one, finished"
        assert both_readers(path) == (at_savepoint, at_savepoint)
    WriteClient(str(path), engine="local").write(pa.Table.from_pylist(NEXT), "upsert", options(table_type, version))
    expected = _model_rows(table_type, version, [*BATCHES[:SAVEPOINTED], NEXT])
    assert both_readers(path) == (expected, expected)
    # 3. settled: the one restore completed
    timeline = Timeline.load(str(path))
    assert [(i.requested, i.is_completed) for i in timeline.instants if i.action == Action.RESTORE] == \
        [(pending[0].requested, True)]
    settled(path)


def restore_points(version: int) -> tuple[str, ...]:
    """The metadata table is rebuilt only where there is one (versions 8 and 9)."""
    return RESTORE_POINTS if version >= 8 else RESTORE_POINTS[:2]


CI_RESTORE = [("MERGE_ON_READ", 9, "mid_restore", "write"), ("COPY_ON_WRITE", 8, "mid_metadata_init", "write"),
              ("COPY_ON_WRITE", 6, "restore_unpublished", "restore")]


@pytest.mark.parametrize(("table_type", "version", "point", "recovery"), CI_RESTORE)
def test_killed_restore_is_finished(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, table_type: str,
                                    version: int, point: str, recovery: str) -> None:
    restore_trial(tmp_path_factory, tmp_path, table_type, version, point, recovery)


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "version", "point", "recovery"),
                         [(t, v, p, r) for t, v in KINDS for p in restore_points(v) for r in ("write", "restore")])
def test_killed_restore_is_finished_everywhere(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                               table_type: str, version: int, point: str, recovery: str) -> None:
    restore_trial(tmp_path_factory, tmp_path, table_type, version, point, recovery)


# --- archival ----------------------------------------------------------------------------------------

_ARCHIVE_BASES: dict[tuple[str, int], Path] = {}
ARCHIVE_BASE = [*BATCHES[:3], *([rec(i, 1) for i in range(600 + 3 * n, 603 + 3 * n)] for n in range(7))]
"""Ten writes, archived by none of them (the killed write's archival has them all to archive): on versions 8 and
9 enough for the metadata table's first compaction, before which the data table archives nothing
(``spec.actions.archive.metadata_table_retains``), and for it to run (and the metadata table's archival after it)
during the last of them, not during the killed write, whose kill would then stop the metadata table's archival."""
KILLED = BATCHES[3]


def archive_base(factory: pytest.TempPathFactory, table_type: str, version: int) -> Path:
    if (table_type, version) not in _ARCHIVE_BASES:
        path = factory.mktemp("archive-crash-base") / "t"
        client = WriteClient(str(path), engine="local")
        for batch in ARCHIVE_BASE:
            client.write(pa.Table.from_pylist(batch), "upsert",
                         {**archiving(table_type, version), "hoodie.archive.automatic": "false"})
        _ARCHIVE_BASES[(table_type, version)] = path
    return _ARCHIVE_BASES[(table_type, version)]


def archive_trial(factory: pytest.TempPathFactory, work: Path, table_type: str, version: int, point: str) -> None:
    path = work / "t"
    shutil.copytree(archive_base(factory, table_type, version), path)
    run_killed(path, "upsert", KILLED, archiving(table_type, version), point)
    storage = Storage(str(path))
    config = TableConfig.load(storage)
    # the write committed before its archival was killed: both readers read it
    expected = _model_rows(table_type, version, [*ARCHIVE_BASE, KILLED])
    assert both_readers(path) == (expected, expected)
    client = WriteClient(str(path), engine="local")
    client.write(pa.Table.from_pylist(NEXT), "upsert", archiving(table_type, version))
    expected = _model_rows(table_type, version, [*ARCHIVE_BASE, KILLED, NEXT])
    assert both_readers(path) == (expected, expected)
    archived = archived_instants(storage, config)
    assert archived, "nothing was archived"
    times = [a.requested for a in archived]
    assert len(times) == len(set(times)), "an instant archived twice"
    active = {i.requested for i in Timeline.load(storage, config.timeline_layout).instants}
    assert not active & set(times), "an instant both archived and active after the archival finished"
    if table_type == "MERGE_ON_READ":
        compact(client, options=archiving(table_type, version))
        assert both_readers(path) == (expected, expected)
    settled(path)


def archive_points(version: int) -> tuple[str, ...]:
    """Only the LSM timeline (versions 8 and 9) has a version file."""
    return ARCHIVE_POINTS if version >= 8 else ARCHIVE_POINTS[:1]


CI_ARCHIVE = [("MERGE_ON_READ", 8, "mid_archive"), ("COPY_ON_WRITE", 6, "mid_archive")]


@pytest.mark.parametrize(("table_type", "version", "point"), CI_ARCHIVE)
def test_killed_archival_is_finished(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, table_type: str,
                                     version: int, point: str) -> None:
    archive_trial(tmp_path_factory, tmp_path, table_type, version, point)


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "version", "point"),
                         [(t, v, p) for t, v in KINDS for p in archive_points(v)])
def test_killed_archival_is_finished_everywhere(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                                table_type: str, version: int, point: str) -> None:
    archive_trial(tmp_path_factory, tmp_path, table_type, version, point)


def test_the_trials_cover_every_table_type_version_and_point() -> None:
    """``make slow`` kills restore and archival at every point on every table type and version."""
    restore_trials = {(t, v, p) for t, v in KINDS for p in restore_points(v)}
    archive_trials = {(t, v, p) for t, v in KINDS for p in archive_points(v)}
    assert {(t, v) for t, v, _ in restore_trials} == set(KINDS) == {(t, v) for t, v, _ in archive_trials}
    assert len(restore_trials) * 2 + len(archive_trials) >= 40
    assert list(itertools.chain(CI_RESTORE, CI_ARCHIVE))


def test_a_metadata_table_left_half_built_is_rebuilt_by_the_next_write(tmp_path_factory: pytest.TempPathFactory,
                                                                        tmp_path: Path) -> None:
    """A table an earlier writer left with ``files`` named complete and its metadata table without its
    properties: readers refuse it with a typed error that says how to read it, and the next write (a failed
    write to roll back first) builds the metadata table again."""
    from spec.errors import InvalidTable
    from spec.metadata.metadata_table import METADATA_TABLE_PATH

    path = tmp_path / "t"
    shutil.copytree(restore_base(tmp_path_factory, "COPY_ON_WRITE", 8)[0], path)
    (path / METADATA_TABLE_PATH / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(InvalidTable) as info:
        read_table(str(path))
    assert "metadata table" in info.value.message and "use_metadata_table=False" in (info.value.hint or "")
    assert _rows(read_table(str(path), use_metadata_table=False)) == _model_rows("COPY_ON_WRITE", 8, BATCHES)
    run_killed(path, "upsert", NEXT, options("COPY_ON_WRITE", 8), "before_commit")
    WriteClient(str(path), engine="local").write(pa.Table.from_pylist(NEXT), "upsert", options("COPY_ON_WRITE", 8))
    expected = _model_rows("COPY_ON_WRITE", 8, [*BATCHES, NEXT])
    assert both_readers(path) == (expected, expected)
    settled(path)


def test_a_killed_restore_past_a_later_savepoint_is_finished(tmp_path_factory: pytest.TempPathFactory,
                                                             tmp_path: Path) -> None:
    """A later commit is savepointed too (its savepoint shares its time): the restore undoes the commit, not the
    savepoint's files, and removes the later savepoint."""
    base, savepoint = restore_base(tmp_path_factory, "MERGE_ON_READ", 8)
    path = tmp_path / "t"
    shutil.copytree(base, path)
    storage = Storage(str(path))
    later = next(i for i in Timeline.load(str(path)).commits_timeline().instants if i.requested > savepoint)
    savepoint_create(storage, TableConfig.load(storage), later.requested)
    run_killed(path, "restore", savepoint, options("MERGE_ON_READ", 8), "restore_unpublished")
    at_savepoint = _model_rows("MERGE_ON_READ", 8, BATCHES[:SAVEPOINTED])
    assert both_readers(path) == (at_savepoint, at_savepoint)
    WriteClient(str(path), engine="local").write(pa.Table.from_pylist(NEXT), "upsert", options("MERGE_ON_READ", 8))
    expected = _model_rows("MERGE_ON_READ", 8, [*BATCHES[:SAVEPOINTED], NEXT])
    assert both_readers(path) == (expected, expected)
    timeline = Timeline.load(str(path))
    assert [i.requested for i in timeline.instants if i.action == Action.SAVEPOINT] == [savepoint]
    assert not [i for i in timeline.instants if i.action == Action.ROLLBACK], "the restore undid it, not a rollback"
    settled(path)

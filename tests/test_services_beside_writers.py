"""Compaction and clean beside an ingesting writer, under optimistic concurrency control, on local
files and on S3 (moto on 127.0.0.1).

The service holds the table lock only to write its plan and to complete; it runs outside it, so a
writer starts and commits while it runs (with the lock held throughout, the writer could not). The
rival runs inside the other at a chosen step, so both orders of finishing are replayed exactly:

- the writer starts first and commits after the compaction was scheduled (or completed): before
  table version 8 it loses if the plan names a file group it wrote (``WriteConflict``, its instant left
  inflight as Apache Hudi leaves it, and rolled back by the next writer); from version 8 on both commit
  (its log files belong to the slice the compaction opens);
- the compaction is scheduled first and the writer commits while it runs: both commit;
- inserts into new file groups commit either way; inserts that land in existing groups follow the
  rule above for the groups they wrote;
- a clean planned while a write is pending, or deleting while a write runs: both commit.

After every scenario the spec reader and hudi-rs read exactly the rows of the writes that committed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.checker import check_table
from reference.api import HudiTable
from reference.executors import clean as clean_executor
from reference.executors import compaction as compaction_executor
from reference.write.client import WriteClient
from spec.actions.compaction import read_compaction_plan as compaction_plan
from spec.errors import WriteConflict
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action, State
from tests.hudi_rs import hudi_rs_read

OCC = {"hoodie.table.name": "svc", "hoodie.datasource.write.recordkey.field": "id",
       "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
       "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.wait_time_ms_between_retry": "50", "hoodie.clean.automatic": "false",
       "hoodie.cleaner.commits.retained": "1", "hoodie.archive.automatic": "false"}
KINDS = [("local", 6), ("local", 8), ("s3", 6), ("s3", 8)]
FAST = [("local", 6), ("s3", 8)]


def _rows(keys: range, part: str, ts: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": f"k{i}", "ts": ts, "p": part, "v": f"{part}{i}@{ts}"} for i in keys])


class Scene:
    """A table with two partitions (a: k0-k9, b: k10-k19) and log files in both, the rows expected
    of it, and clients for the writer and the service."""

    def __init__(self, where: str, s3_server: Any, tmp_path: Path, version: int,
                 table_type: str = "MERGE_ON_READ") -> None:
        self.path = f"s3://{s3_server.new_bucket()}/t" if where == "s3" else str(tmp_path / "t")
        self.s3 = s3_server if where == "s3" else None
        self.options = {**OCC, "hoodie.datasource.write.table.type": table_type,
                        "hoodie.write.table.version": str(version)}
        self.version = version
        self.expected: dict[str, str] = {}
        self.writer = WriteClient(self.path, engine="local")
        self.service = HudiTable(self.path, engine="local")
        self.write(self.writer, _rows(range(0, 10), "a", 1), "insert")
        self.write(self.writer, _rows(range(10, 20), "b", 1), "insert")
        self.write(self.writer, pa.concat_tables([_rows(range(0, 5), "a", 2), _rows(range(10, 15), "b", 2)]))

    def write(self, client: WriteClient, rows: pa.Table, op: str = "upsert") -> str:
        instant = client.write(rows, op, self.options).instant
        self.expected.update({r["id"]: r["v"] for r in rows.to_pylist()})
        return instant

    def check(self) -> None:
        got = {r["id"]: r["v"] for r in read_table(self.path).to_pylist()}
        assert got == self.expected
        theirs = hudi_rs_read(self.path, storage_options=self.s3.storage_options() if self.s3 else None)
        assert {r["id"]: r["v"] for r in (theirs.to_pylist() if theirs is not None else [])} == self.expected
        assert not Timeline.load(self.path).pending_writes().instants
        report = check_table(self.path)
        assert not [f for f in report.findings if f.level == "error"], report.findings

    def completed(self, action: str) -> list[str]:
        return [i.requested for i in Timeline.load(self.path).instants if i.action == action and i.is_completed]

    def rolled_back_by_the_next_writer(self, err: WriteConflict) -> None:
        """The losing write is left as Apache Hudi leaves it (its instant inflight, a failed write); the next
        write rolls it back, and nothing of it is left."""
        import re

        loser = re.search(r"write (\d{17})", str(err))
        assert loser is not None
        pending = Timeline.load(self.path).pending_writes().instants
        assert [i.state for i in pending if i.requested == loser.group(1)] == [State.INFLIGHT]
        self.write(self.writer, _rows(range(19, 20), "b", 9))
        self.nothing_left_of(err)

    def nothing_left_of(self, err: WriteConflict) -> None:
        """No file of the losing write is left (it was rolled back)."""
        import re

        loser = re.search(r"write (\d{17})", str(err))
        assert loser is not None
        names = [f.path for f in Storage(self.path).list("", recursive=True) if not f.is_dir]
        assert not any(loser.group(1) in n for n in names), "the losing write left files behind"


def _during_write(monkeypatch: pytest.MonkeyPatch, client: WriteClient, rival: Callable[[], None]) -> None:
    """Run ``rival`` once while ``client`` writes: after its data files are written, before it commits."""
    original = WriteClient._write

    def write(self: WriteClient, *args: Any) -> Any:
        md = original(self, *args)
        if self is client:
            monkeypatch.setattr(WriteClient, "_write", original)
            rival()
        return md

    monkeypatch.setattr(WriteClient, "_write", write)


def _during_compaction(monkeypatch: pytest.MonkeyPatch, rival: Callable[[], None]) -> None:
    """Run ``rival`` once while a compaction runs: its plan written, its base files not yet committed."""
    original = compaction_executor._run_operations

    def run(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(compaction_executor, "_run_operations", original)
        rival()
        return original(*args, **kwargs)

    monkeypatch.setattr(compaction_executor, "_run_operations", run)


def _plan_groups(scene: Scene, instant: str) -> set[tuple[str, str]]:
    return {(o.partition_path, o.file_id) for o in compaction_plan(Storage(scene.path), instant, 1 if scene.version < 8
                                                                    else 2).operations}


@pytest.mark.parametrize(("where", "version"), FAST)
def test_writer_started_first_commits_after_the_compaction(where: str, version: int, s3_server: Any,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _writer_then_compaction(where, version, s3_server, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize(("where", "version"), [k for k in KINDS if k not in FAST])
def test_writer_started_first_commits_after_the_compaction_every_kind(
        where: str, version: int, s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _writer_then_compaction(where, version, s3_server, tmp_path, monkeypatch)


def _writer_then_compaction(where: str, version: int, s3_server: Any, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer upserts into partition a; while it writes, a compaction is scheduled, runs and commits."""
    scene = Scene(where, s3_server, tmp_path, version)
    compacted: list[str | None] = []
    _during_write(monkeypatch, scene.writer, lambda: compacted.append(scene.service.compact(scene.options)))
    rows = _rows(range(0, 5), "a", 3)
    if version < 8:  # the compaction, scheduled after the writer began, planned the group it wrote
        with pytest.raises(WriteConflict, match="completed after it started") as err:
            scene.write(scene.writer, rows)
        assert compacted[0] is not None and compacted[0] in str(err.value)
        scene.rolled_back_by_the_next_writer(err.value)
    else:  # version 8: its log file is in the slice the compaction opened
        scene.write(scene.writer, rows)
    assert compacted[0] is not None and compacted[0] in scene.completed(Action.COMMIT)
    scene.check()


@pytest.mark.parametrize(("where", "version"), FAST)
def test_writer_commits_while_a_scheduled_compaction_is_pending(where: str, version: int, s3_server: Any,
                                                                tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer starts; a compaction is scheduled; the writer commits; then the compaction runs."""
    scene = Scene(where, s3_server, tmp_path, version)
    scheduled: list[str | None] = []
    def schedule() -> None:
        scheduled.append(compaction_executor.schedule_compaction(scene.writer, options=scene.options))

    _during_write(monkeypatch, scene.writer, schedule)
    rows = _rows(range(0, 5), "a", 3)
    if version < 8:
        with pytest.raises(WriteConflict, match="was scheduled after it started") as err:
            scene.write(scene.writer, rows)
        scene.rolled_back_by_the_next_writer(err.value)
    else:
        scene.write(scene.writer, rows)
    assert scheduled[0] is not None
    assert scene.service.run_compaction(scheduled[0], scene.options) == scheduled[0]
    scene.check()


@pytest.mark.parametrize(("where", "version"), FAST)
def test_compaction_scheduled_first_writer_commits_while_it_runs(where: str, version: int, s3_server: Any,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The compaction's plan is written; while its operations run (the lock free), a writer upserts into
    the groups it compacts, inserts into a new partition, and commits; then the compaction commits."""
    scene = Scene(where, s3_server, tmp_path, version)
    rival = WriteClient(scene.path, engine="local")
    _during_compaction(monkeypatch, lambda: (scene.write(rival, _rows(range(0, 5), "a", 3)),
                                             scene.write(rival, _rows(range(30, 33), "c", 1), "insert")))
    t = scene.service.compact(scene.options)
    assert t is not None and t in scene.completed(Action.COMMIT)
    assert len(scene.completed(Action.DELTA_COMMIT)) == 5  # three before, both of the rival's
    scene.check()


@pytest.mark.slow
@pytest.mark.parametrize(("where", "version"), KINDS)
def test_inserts_beside_a_compaction_follow_the_rule_for_the_groups_they_wrote(
        where: str, version: int, s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inserts of new keys into partition a (which may fill its existing groups) and into a new
    partition, while a compaction is scheduled and runs: the write loses only before version 8 and
    only when the compaction planned a group it wrote."""
    scene = Scene(where, s3_server, tmp_path, version)
    compacted: list[str | None] = []
    _during_write(monkeypatch, scene.writer, lambda: compacted.append(scene.service.compact(scene.options)))
    rows = pa.concat_tables([_rows(range(40, 45), "a", 1), _rows(range(50, 53), "d", 1)])
    try:
        scene.write(scene.writer, rows, "insert")
    except WriteConflict as err:
        assert version < 8
        t = compacted[0]
        assert t is not None
        named = {g for g in _plan_groups(scene, t) if g[1] in str(err)}
        assert named, f"{err} names no group of compaction {t}'s plan"
        scene.rolled_back_by_the_next_writer(err)
    else:
        if version < 8:
            t = compacted[0]
            assert t is not None
            written = {(s.partition_path, s.file_id) for s in _last_commit_groups(scene)}
            assert not written & _plan_groups(scene, t)
    scene.check()


def _last_commit_groups(scene: Scene) -> list[Any]:
    from spec.timeline.commit_metadata import parse_commit_metadata
    from spec.timeline.layout import read_instant_content

    tl = Timeline.load(scene.path)
    last = [i for i in tl.instants if i.action == Action.DELTA_COMMIT and i.is_completed][-1]
    md = parse_commit_metadata(read_instant_content(Storage(scene.path), last, tl.layout))
    return [s for stats in md.partition_to_write_stats.values() for s in stats]


# --- clean -------------------------------------------------------------------------------------------


def _older_slices(scene: Scene) -> None:
    """Slices the cleaner may delete: merge-on-read tables are compacted (their groups get a second
    slice), then both kinds take one more upsert."""
    if scene.options["hoodie.datasource.write.table.type"] == "MERGE_ON_READ":
        assert scene.service.compact(scene.options) is not None
    scene.write(scene.writer, _rows(range(0, 5), "a", 3))


@pytest.mark.parametrize(("where", "table_type"), [("local", "COPY_ON_WRITE"), ("s3", "MERGE_ON_READ")])
def test_clean_planned_while_a_write_is_pending(where: str, table_type: str, s3_server: Any, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean runs whole while a write is pending; the write then commits."""
    scene = Scene(where, s3_server, tmp_path, 8, table_type)
    _older_slices(scene)
    cleaned: list[Any] = []
    _during_write(monkeypatch, scene.writer, lambda: cleaned.append(scene.service.clean(scene.options)))
    scene.write(scene.writer, pa.concat_tables([_rows(range(0, 10), "a", 4), _rows(range(60, 62), "a", 1)]))
    assert cleaned[0].instant is not None and cleaned[0].instant in scene.completed(Action.CLEAN)
    scene.check()


@pytest.mark.parametrize(("where", "table_type"), [("s3", "COPY_ON_WRITE"), ("local", "MERGE_ON_READ")])
def test_writer_commits_while_the_cleaner_deletes(where: str, table_type: str, s3_server: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The cleaner's plan is written; after its first delete (the lock free) a writer upserts the same
    file groups and commits; then the clean completes."""
    scene = Scene(where, s3_server, tmp_path, 6 if table_type == "MERGE_ON_READ" else 8, table_type)
    _older_slices(scene)
    rival = WriteClient(scene.path, engine="local")
    original = clean_executor.fault_point
    ran: list[str] = []

    def rival_after_first_delete(name: str) -> None:
        if name == "mid_clean" and not ran:
            rows = pa.concat_tables([_rows(range(0, 10), "a", 4), _rows(range(10, 12), "b", 4)])
            ran.append(scene.write(rival, rows))
        original(name)

    monkeypatch.setattr(clean_executor, "fault_point", rival_after_first_delete)
    result = scene.service.clean(scene.options)
    assert ran and result.instant is not None and result.instant in scene.completed(Action.CLEAN)
    scene.check()


def test_without_optimistic_concurrency_a_compaction_holds_the_lock_throughout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Single-writer mode is unchanged: while a compaction runs, no writer can take the lock."""
    scene = Scene("local", None, tmp_path, 8)
    rival = WriteClient(scene.path, engine="local")
    errors: list[str] = []

    def try_write() -> None:
        try:
            rival.write(_rows(range(0, 2), "a", 9), "upsert",
                        {**scene.options, "hoodie.write.lock.wait_time_ms": "200"})
        except WriteConflict as err:
            errors.append(str(err))

    _during_compaction(monkeypatch, try_write)
    single = {k: v for k, v in scene.options.items() if k != "hoodie.write.concurrency.mode"}
    assert scene.service.compact(single) is not None
    assert errors and "holds the table lock" in errors[0]
    scene.check()


# --- threads: the service and the writer at the same moment ------------------------------------------


def _threaded_trials(where: str, version: int, s3_server: Any, tmp_path: Path, trials: int) -> dict[str, int]:
    """A compaction (then a clean) in one thread and an upsert into the compacted groups in another,
    started together, ``trials`` times: the service always completes; the writer commits, or (before
    version 8 only) loses with WriteConflict, its write left inflight for the cleaner or the next writer to roll
    back; the table holds exactly the rows of the writes that committed."""
    import threading

    scene = Scene(where, s3_server, tmp_path, version)
    outcomes = {"ok": 0, "conflict": 0}
    for t in range(trials):
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []
        rows = _rows(range(0, 5), "a", 10 + t)
        lost: WriteConflict | None = None

        def service(barrier: threading.Barrier, errors: list[BaseException]) -> None:
            try:
                barrier.wait(timeout=60)
                scene.service.compact(scene.options)
                scene.service.clean(scene.options)
            except BaseException as err:  # reported by the main thread
                errors.append(err)

        runner = threading.Thread(target=service, args=(barrier, errors))
        runner.start()
        barrier.wait(timeout=60)
        try:
            scene.write(scene.writer, rows)
            outcomes["ok"] += 1
        except WriteConflict as err:
            assert version < 8, f"trial {t}: from version 8 on a writer never loses to a compaction: {err}"
            lost = err
            outcomes["conflict"] += 1
        runner.join(timeout=300)
        assert not errors, f"trial {t}: the service failed: {errors[0]!r}"
        scene.write(scene.writer, _rows(range(10, 12), "b", 10 + t))  # logs for the next trial's compaction
        if lost is not None:  # rolled back by the clean (its heartbeat stopped) or by the write just now
            scene.nothing_left_of(lost)
        scene.check()
    return outcomes


@pytest.mark.parametrize(("where", "version"), [("s3", 8)])
def test_compaction_and_clean_in_a_thread_beside_an_upserting_writer(where: str, version: int, s3_server: Any,
                                                                     tmp_path: Path) -> None:
    outcomes = _threaded_trials(where, version, s3_server, tmp_path, 2)
    assert outcomes == {"ok": 2, "conflict": 0}


@pytest.mark.slow
@pytest.mark.parametrize(("where", "version"), KINDS)
def test_compaction_and_clean_in_a_thread_beside_an_upserting_writer_every_kind(
        where: str, version: int, s3_server: Any, tmp_path: Path) -> None:
    outcomes = _threaded_trials(where, version, s3_server, tmp_path, 5)
    assert sum(outcomes.values()) == 5
    if version >= 8:
        assert outcomes["conflict"] == 0


@pytest.mark.parametrize("where", ["s3", "local"])
def test_the_cleaner_rolls_back_a_dead_writers_write_but_not_a_live_ones(
        where: str, s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the LAZY failed-writes policy the cleaner rolls back failed writes first (Hudi's
    ``CleanerUtils.rollbackFailedWrites``). While a live writer's write is pending (its heartbeat
    renewed every second), another writer is killed after it started; once its heartbeat has expired
    a clean runs: it rolls the dead write back and leaves the live one, which then commits.

    The clean judges the heartbeats at a fixed moment, just past the dead one's expiry (1 s × 2 misses after
    its last beat, as the storage dates it; S3 dates to the second), once the live writer has beaten since:
    on a loaded machine a heartbeat thread can fall seconds behind, which must not decide the verdict."""
    import json
    import signal
    import time
    from types import SimpleNamespace

    from reference.instrumentation.faults import FAULT_ENV
    from reference.transaction import heartbeat
    from spec.storage.heartbeat import HEARTBEAT_FOLDER
    from tests import processes

    scene = Scene(where, s3_server, tmp_path, 8, "COPY_ON_WRITE")
    quick = {**scene.options, "hoodie.client.heartbeat.interval_in_ms": "1000",
             "hoodie.client.heartbeat.tolerable.misses": "2"}
    scene.options = quick
    root = Path(__file__).resolve().parents[1]
    seen: dict[str, Any] = {}

    def a_writer_dies_then_the_cleaner_runs() -> None:
        before = {i.requested for i in Timeline.load(scene.path).pending_writes().instants}
        processes.run(processes.python(str(root / "tests" / "crash_child.py"), scene.path, "upsert",
                                       json.dumps(_rows(range(0, 3), "a", 7).to_pylist()), json.dumps(quick), "local"),
                      env=processes.child_env(**{FAULT_ENV: "after_start"}),
                      new_session=True).expect(-signal.SIGKILL, "the writer killed after it started")
        pending = {i.requested for i in Timeline.load(scene.path).pending_writes().instants}
        (dead,) = pending - before
        (live,) = before
        storage = Storage(scene.path)

        def beats() -> dict[str, int]:
            return {f.name: f.mtime_ms for f in storage.list(HEARTBEAT_FOLDER) if not f.is_dir}

        dead_beat = beats().get(dead, 0)
        hang_guard = time.monotonic() + 300
        while beats().get(live, 0) <= dead_beat:  # the live writer beats on, after the dead one's last beat
            assert time.monotonic() < hang_guard, "hang: the live writer's heartbeat stopped"
            time.sleep(0.2)
        with monkeypatch.context() as m:  # the moment the clean judges heartbeats at: the dead one just expired
            m.setattr(heartbeat, "time", SimpleNamespace(time=lambda: (dead_beat + 2 * 1000 + 1) / 1000))
            seen["clean"] = scene.service.clean(quick)
        seen.update(dead=dead, live=before, after={i.requested for i in
                                                   Timeline.load(scene.path).pending_writes().instants})

    _during_write(monkeypatch, scene.writer, a_writer_dies_then_the_cleaner_runs)
    live = scene.write(scene.writer, _rows(range(10, 12), "b", 8))
    assert seen["live"] == {live} and seen["after"] == {live}  # the dead write gone, the live one kept
    timeline = Timeline.load(scene.path)
    rollbacks = [i for i in timeline.instants if i.action == Action.ROLLBACK and i.is_completed]
    assert len(rollbacks) == 1 and live in scene.completed(Action.COMMIT)
    assert seen["dead"] not in {i.requested for i in timeline.instants if i.action == Action.COMMIT}
    scene.check()

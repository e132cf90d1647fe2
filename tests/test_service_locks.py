"""Every action that takes the table lock takes the configured provider's (``make_lock``, fed ``WriteConfig.lock``).

With ``hoodie.write.lock.provider`` = ``FileSystemBasedLockProvider`` and ``.hoodie/lock`` held, each
table service run on its own — clean (single writer and beside writers), compaction, rollback, restore,
savepoint create and delete, archival, through the API and the command line — waits for that lock, then
refuses naming it and changes nothing: not a data file, not an instant, and no other provider's lock
file is created (before, a clean or rollback run alone took the default storage lock and ran). Released,
the same services run. Apache Hudi's ``FileSystemBasedLockProvider`` holds the same file
(``tests/test_hudi_lock_providers.py`` measures that both ways); our own provider holds it here, no Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import EXIT_BAD_INPUT, EXIT_OK, main
from reference.config.options import parse_options
from reference.executors.archive import archive
from reference.executors.clean import clean
from reference.executors.common import load_table
from reference.executors.restore import restore
from reference.executors.rollback import rollback
from reference.executors.savepoint import savepoint_create, savepoint_delete
from reference.transaction.lock import make_lock
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.errors import LockProviderMismatch, WriteConflict
from spec.storage.file_system_lock import crc_content
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCK_FILE
from spec.storage.lock_provider import FILE_SYSTEM_BASED, STORAGE_BASED
from spec.timeline.active_timeline import Timeline

FS = {"hoodie.write.lock.provider": FILE_SYSTEM_BASED}
OPTIONS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
           "hoodie.cleaner.commits.retained": "1", "hoodie.clean.automatic": "false",
           "hoodie.archive.automatic": "false", "hoodie.compact.inline": "false", **FS}
OCC = {**OPTIONS, "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.wait_time_ms": "300", "hoodie.write.lock.wait_time_ms_between_retry": "100"}
HELD = ".hoodie/lock"


def _files(base: Path) -> dict[str, bytes]:
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file() and p.name not in ("lock", ".lock.crc")}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A merge-on-read table with a savepoint at its first commit, then two more writes to the same key: a
    rollback, restore, clean and compaction each have work to do."""
    base = tmp_path / "t"
    t = HudiTable(str(base), engine="local")
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1]}), "upsert", OPTIONS)
    storage, cfg = load_table(str(base))
    savepoint_create(storage, cfg, lock=parse_options(FS).lock)
    for ts in (2, 3):
        t.write(pa.table({"id": ["a"], "ts": [ts]}), "upsert", OPTIONS)
    assert not (base / ".hoodie" / "lock").exists()  # every write released the lock it took
    return base


def _services(base: Path) -> dict[str, Callable[[], object]]:
    lock = parse_options(FS).lock
    savepoint = Timeline.load(str(base)).filter(lambda i: i.action == "savepoint").instants[0].requested

    storage, cfg = load_table(str(base))
    return {
        "clean (single writer)": lambda: HudiTable(str(base), engine="local").clean(OPTIONS),
        "clean (beside writers)": lambda: HudiTable(str(base), engine="local").clean(OCC),
        "compaction": lambda: HudiTable(str(base), engine="local").compact(OPTIONS),
        "schedule compaction": lambda: HudiTable(str(base), engine="local").schedule_compaction(options=OPTIONS),
        "rollback": lambda: rollback(storage, cfg, lock=lock),
        "restore": lambda: restore(storage, cfg, savepoint, lock=lock),
        "savepoint": lambda: savepoint_create(storage, cfg, lock=lock),
        "savepoint delete": lambda: savepoint_delete(storage, cfg, savepoint, lock=lock),
        "archive": lambda: archive(storage, cfg, ArchiveConfig(1, 2), lock=lock),
        "clean (executor)": lambda: clean(storage, cfg, CleanConfig(commits_retained=1), lock=lock),
    }


def _cli(base: Path) -> dict[str, list[str]]:
    savepoint = Timeline.load(str(base)).filter(lambda i: i.action == "savepoint").instants[0].requested
    opt = ["--option", f"hoodie.write.lock.provider={FILE_SYSTEM_BASED}"]
    return {"clean": ["clean", str(base), "--retained", "1", *opt],
            "compact": ["compact", str(base), *opt],
            "compact --schedule": ["compact", str(base), "--schedule", *opt],
            "rollback": ["rollback", str(base), *opt],
            "savepoint create": ["savepoint", "create", str(base), *opt],
            "savepoint restore": ["savepoint", "restore", str(base), savepoint, *opt],
            "savepoint delete": ["savepoint", "delete", str(base), savepoint, *opt],
            "archived --run": ["archived", str(base), "--run", "--keep-min", "1", "--keep-max", "2", *opt]}


def test_each_service_run_alone_waits_for_the_configured_providers_lock_and_touches_nothing(
        table: Path, capsys: pytest.CaptureFixture[str]) -> None:
    holder = make_lock(Storage(str(table)), parse_options(FS).lock)
    assert holder.try_lock()
    before = _files(table)
    for name, run in _services(table).items():
        with pytest.raises(WriteConflict, match=r"\.hoodie/lock") as err:
            run()
        assert "did not start" in str(err.value), name
        assert _files(table) == before, name
        assert not (table / LOCK_FILE).exists(), f"{name} took the storage-based lock"
    for name, argv in _cli(table).items():
        capsys.readouterr()
        assert main(argv) == EXIT_BAD_INPUT, name
        err = capsys.readouterr().err
        assert "WriteConflict" in err and HELD in err, (name, err)
        assert _files(table) == before, name
        assert not (table / LOCK_FILE).exists(), f"hudi-spec {name} took the storage-based lock"
    assert holder.holds()  # nobody took it over
    holder.unlock()
    # released, the same services run, each taking and releasing the file-system lock
    assert main(_cli(table)["compact"]) == EXIT_OK
    assert HudiTable(str(table), engine="local").clean(OPTIONS).plan is not None  # the savepoint keeps the rest
    assert main(_cli(table)["savepoint create"]) == EXIT_OK
    assert not (table / ".hoodie" / "lock").exists() and not (table / LOCK_FILE).exists()
    assert sorted(HudiTable(str(table)).read().column("id").to_pylist()) == ["a", "b"]


def test_a_writer_on_the_other_provider_than_the_lock_held_is_refused(tmp_path: Path) -> None:
    """The mismatch a user falls into: ours on the default storage-based lock beside a writer on the
    file-system lock (Hudi 1.2.0's lock file: empty, with Hadoop's checksum), and the reverse — refused
    with ``LockProviderMismatch`` saying to name the same provider, the table untouched and our lock
    released. A released or another provider's stale lock is no mismatch."""
    base = tmp_path / "t"
    default = {k: v for k, v in OPTIONS.items() if k != "hoodie.write.lock.provider"}
    HudiTable(str(base), engine="local").write(pa.table({"id": ["a"], "ts": [1]}), "upsert", default)
    assert (base / LOCK_FILE).exists()  # the default provider's lock, released (expired: true)
    HudiTable(str(base), engine="local").write(pa.table({"id": ["a"], "ts": [2]}), "upsert", OPTIONS)  # no mismatch
    (base / ".hoodie" / "lock").write_bytes(b"")  # a Hudi writer on FileSystemBasedLockProvider holds it
    (base / ".hoodie" / ".lock.crc").write_bytes(crc_content(b""))
    before = _files(base)
    for options in (default, {**OCC, "hoodie.write.lock.provider": STORAGE_BASED}):
        with pytest.raises(LockProviderMismatch,
                           match=r"\(\.hoodie/lock\) while this one takes .*StorageBasedLockProvider") as err:
            HudiTable(str(base), engine="local").write(pa.table({"id": ["b"], "ts": [1]}), "upsert", options)
        assert f"hoodie.write.lock.provider ({FILE_SYSTEM_BASED}" in (err.value.hint or "")
        with pytest.raises(LockProviderMismatch):
            HudiTable(str(base), engine="local").clean(options)
        assert _files(base) == {**before, LOCK_FILE: (base / LOCK_FILE).read_bytes()}
        assert b'"expired":true' in (base / LOCK_FILE).read_bytes()  # ours released at once
    (base / ".hoodie" / "lock").unlink()
    (base / ".hoodie" / ".lock.crc").unlink()

    holder = make_lock(Storage(str(base)), parse_options(default).lock)  # another writer of ours, default lock
    assert holder.try_lock()
    before = _files(base)
    with pytest.raises(LockProviderMismatch,
                       match=r"table_lock\.json\) while this one takes the lock of .*FileSystemBasedLockProvider"):
        HudiTable(str(base), engine="local").write(pa.table({"id": ["b"], "ts": [1]}), "upsert", OPTIONS)
    with pytest.raises(LockProviderMismatch):
        rollback(*load_table(str(base)), lock=parse_options(FS).lock)
    assert _files(base) == before and not (base / ".hoodie" / "lock").exists()
    holder.unlock()
    HudiTable(str(base), engine="local").write(pa.table({"id": ["b"], "ts": [1]}), "upsert", OPTIONS)
    assert sorted(HudiTable(str(base)).read().column("id").to_pylist()) == ["a", "b"]

"""A refusal decided before any change leaves the table exactly as it was: every file's bytes and
modification time, every folder — the table lock's file included.

Rolling back or restoring to an instant the table does not have, deleting a savepoint it does not have,
and a write whose schema change the table refuses are each decided from what is on storage before
anything is written; none of them takes the table lock (whose file a lock and release rewrite), as
Hudi's write client validates before its transaction begins.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.executors.restore import restore
from reference.executors.rollback import rollback
from reference.executors.savepoint import savepoint_delete
from reference.write.client import WriteClient
from spec.config.table_config import TableConfig
from spec.errors import HudiSpecError, InstantNotFound, SchemaMismatch
from spec.storage.hoodie_storage import Storage
from spec.storage.lock import LOCK_FILE

UNKNOWN = "20990101000000000"
KINDS = [("COPY_ON_WRITE", 6), ("MERGE_ON_READ", 8), ("COPY_ON_WRITE", 9)]


def options(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "refused", "hoodie.datasource.write.table.type": table_type,
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.write.table.version": str(version)}


def state(root: Path) -> dict[str, tuple[str, bytes | None, int]]:
    """Every folder and file under ``root`` with its bytes and modification time (nanoseconds)."""
    out: dict[str, tuple[str, bytes | None, int]] = {}
    for folder, _dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        out[rel + "/"] = ("dir", None, 0)
        for f in files:
            p = Path(folder, f)
            out[os.path.join(rel, f)] = ("file", p.read_bytes(), p.stat().st_mtime_ns)
    return out


_TABLES: dict[tuple[str, int], Path] = {}


@pytest.fixture
def table(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Callable[[str, int], Path]:
    def get(table_type: str, version: int) -> Path:
        if (table_type, version) not in _TABLES:
            path = tmp_path_factory.mktemp("refusals") / "t"
            client = WriteClient(str(path), engine="local")
            for ts in (1, 2):
                client.write(pa.Table.from_pylist([{"id": "k1", "ts": ts, "city": "sf", "n": ts}]), "upsert",
                             options(table_type, version))
            _TABLES[(table_type, version)] = path
        copy = tmp_path / "t"
        shutil.copytree(_TABLES[(table_type, version)], copy)
        assert (copy / LOCK_FILE).exists(), "the table has a lock file to leave alone"
        return copy
    return get


def _refusals(path: Path, table_type: str, version: int) -> dict[str, tuple[Callable[[], Any], type[HudiSpecError]]]:
    storage = Storage(str(path))
    config = TableConfig.load(storage)
    changed_type = [{"id": "k1", "ts": 3, "city": "sf", "n": True}]  # n: long → boolean
    return {
        "rollback of an unknown instant": (lambda: rollback(storage, config, UNKNOWN), InstantNotFound),
        "restore to an unknown savepoint": (lambda: restore(storage, config, UNKNOWN), InstantNotFound),
        "delete of an unknown savepoint": (lambda: savepoint_delete(storage, config, UNKNOWN), InstantNotFound),
        "refused schema change": (lambda: WriteClient(str(path), engine="local").write(
            pa.Table.from_pylist(changed_type), "upsert", options(table_type, version)), SchemaMismatch),
    }


@pytest.mark.parametrize(("table_type", "version"), KINDS)
@pytest.mark.parametrize("refusal", ["rollback of an unknown instant", "restore to an unknown savepoint",
                                     "delete of an unknown savepoint", "refused schema change"])
def test_a_refusal_touches_nothing(table: Callable[[str, int], Path], refusal: str, table_type: str,
                                   version: int) -> None:
    path = table(table_type, version)
    before = state(path)
    call, error = _refusals(path, table_type, version)[refusal]
    with pytest.raises(error) as info:
        call()
    assert info.value.hint, "a typed error says what to do"
    after = state(path)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, f"the refused {refusal} changed {changed}"

"""Kill trials in every operation, on every table type and version: the inventory ``make slow`` runs.

The write operations other than ``upsert`` (``insert``, ``bulk_insert``, ``delete``, ``insert_overwrite``)
are killed here, on the local engine, at every fault point each one passes (``reference.instrumentation.faults``:
``after_start``, half way through a base file — or, for a merge-on-read delete, half way through its log
block —, ``before_commit``, ``mid_commit``), on copy-on-write and merge-on-read tables of versions 6, 8
and 9. Each trial is ``tests.test_crash_safety.crash_trial``: both readers read the table as before the
killed write, the next write rolls it back and succeeds, the readers then read what the spec model
predicts (no row lost, none reverted, none duplicated), and nothing is left pending or behind.

Upserts are killed in ``tests/test_crash_safety.py``, compactions, cleans and rollbacks in
``tests/test_service_crash_safety.py``, restores and archival in ``tests/test_restore_archive_crash_safety.py``.
``test_make_slow_kills_every_operation_on_every_table_type_and_version`` counts them all from their
parameters: every operation on every table type it runs on and every version, and at least 100 trials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.write.client import WriteClient
from tests import test_crash_safety, test_restore_archive_crash_safety, test_service_crash_safety
from tests.test_crash_safety import BASE, crash_trial, options, write_trial_for

TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
VERSIONS = (6, 8, 9)
OPERATIONS = ("insert", "bulk_insert", "delete", "insert_overwrite")


def points(operation: str, table_type: str) -> tuple[str, ...]:
    """The fault points a write passes: a merge-on-read delete appends a delete block to log files (it
    writes no base file); every other operation here writes base files."""
    data = "mid_log_block" if (operation, table_type) == ("delete", "MERGE_ON_READ") else "mid_base_file"
    return ("after_start", data, "before_commit", "mid_commit")


TRIALS = [(o, t, v, p) for o in OPERATIONS for t in TYPES for v in VERSIONS for p in points(o, t)]
CI_TRIALS = [("insert_overwrite", "MERGE_ON_READ", 9, "mid_base_file")]
"""The one trial ``make test`` runs; ``make slow`` runs the rest."""

_BASES: dict[tuple[str, int], Path] = {}


def base_table(factory: pytest.TempPathFactory, table_type: str, version: int) -> Path:
    """``BASE`` written by the local engine, once per table type and version."""
    if (table_type, version) not in _BASES:
        path = factory.mktemp("kill-base") / "t"
        client = WriteClient(str(path), engine="local")
        for batch in BASE:
            client.write(pa.Table.from_pylist(batch), "upsert", options(table_type, version))
        _BASES[(table_type, version)] = path
    return _BASES[(table_type, version)]


@pytest.mark.parametrize(("operation", "table_type", "version", "point"), CI_TRIALS)
def test_killed_operation_loses_nothing(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, operation: str,
                                        table_type: str, version: int, point: str) -> None:
    crash_trial(None, base_table(tmp_path_factory, table_type, version), tmp_path, table_type, version, point,
                "local", operation)


SLOW_CI_TRIALS = [("insert", "COPY_ON_WRITE", 6, "mid_commit"),
                  ("bulk_insert", "MERGE_ON_READ", 8, "mid_base_file"),
                  ("delete", "MERGE_ON_READ", 9, "mid_log_block"),
                  ("insert_overwrite", "COPY_ON_WRITE", 8, "before_commit")]
"""The trials ``make ci-slow`` runs (one per operation); ``make slow`` runs every one."""


@pytest.mark.slow
@pytest.mark.parametrize(("operation", "table_type", "version", "point"),
                         [t if t in SLOW_CI_TRIALS else pytest.param(*t, marks=pytest.mark.explore)
                          for t in TRIALS if t not in CI_TRIALS])
def test_killed_operation_loses_nothing_everywhere(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                                   operation: str, table_type: str, version: int,
                                                   point: str) -> None:
    crash_trial(None, base_table(tmp_path_factory, table_type, version), tmp_path, table_type, version, point,
                "local", operation)


# --- the inventory -----------------------------------------------------------------------------------


def parameters(test: Callable[..., Any]) -> list[Any]:
    """The parameter sets of a test's one ``parametrize`` mark, unwrapped from ``pytest.param``."""
    (mark,) = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
    return [p.values if hasattr(p, "values") and hasattr(p, "marks") else p for p in mark.args[1]]


def slow(test: Callable[..., Any]) -> bool:
    return any(m.name == "slow" for m in getattr(test, "pytestmark", []))


def make_slow_trials() -> list[tuple[str, str, int]]:
    """Every kill trial ``make slow`` runs (the tests marked slow), as (operation, table type, version)."""
    trials: list[tuple[str, str, int]] = []
    crash, services, restore = test_crash_safety, test_service_crash_safety, test_restore_archive_crash_safety
    assert slow(crash.test_killed_write_loses_nothing_random)
    for (seed,) in _one_each(parameters(crash.test_killed_write_loses_nothing_random)):
        table_type, version, _ = write_trial_for(seed)
        trials.append(("upsert", table_type, version))
    assert slow(services.test_killed_service_is_finished_random)
    for (seed,) in _one_each(parameters(services.test_killed_service_is_finished_random)):
        service, table_type, version = services.trial_for(seed)
        trials.append((service, table_type, version))
    assert slow(restore.test_killed_restore_is_finished_everywhere)
    trials += [("restore", t, v) for t, v, _, _ in parameters(restore.test_killed_restore_is_finished_everywhere)]
    assert slow(restore.test_killed_archival_is_finished_everywhere)
    trials += [("archive", t, v) for t, v, _ in parameters(restore.test_killed_archival_is_finished_everywhere)]
    assert slow(test_killed_operation_loses_nothing_everywhere)
    trials += [(o, t, v) for o, t, v, _ in parameters(test_killed_operation_loses_nothing_everywhere)]
    return trials


def _one_each(values: Iterable[Any]) -> list[tuple[Any, ...]]:
    return [v if isinstance(v, tuple) else (v,) for v in values]


def test_make_slow_kills_every_operation_on_every_table_type_and_version() -> None:
    """Every write operation, table service, restore and archival is killed on every table type it runs on
    (compaction: merge-on-read) and every table version, at least 100 trials in all."""
    trials = make_slow_trials()
    every = {(o, t, v) for o in ("upsert", *OPERATIONS, "clean", "rollback", "restore", "archive")
             for t in TYPES for v in VERSIONS} | {("compact", "MERGE_ON_READ", v) for v in VERSIONS}
    assert set(trials) == every, sorted(every - set(trials))
    assert len(trials) >= 100

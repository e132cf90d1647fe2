"""The suite has teeth: copies of the spec model adapter with one deliberate bug each, every one
caught by the fixture cases (a FAIL naming the first diverging step), while the faithful adapter
passes the same cases."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar
from unittest import mock

import pytest

import spec.model.table_model
import spec.model.writes
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.interface.ops import CreateTable, Op
from conformance.runner import FixtureCase, Verdict, load_cases, run_case
from spec.model.operations import Write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class BuggyAdapter(SpecModelAdapter):
    """The spec model with a bug: ``patches`` are active while an operation applies; ``bend_config``
    and ``bend_op`` change what the table is created with or what an operation does."""

    name: ClassVar[str] = "buggy"

    def patches(self) -> Sequence[Any]:
        return ()

    def bend_config(self, config: CreateTable) -> CreateTable:
        return config

    def bend_op(self, op: Op) -> Op:
        return op

    def create(self, config: CreateTable, workdir: Path) -> None:
        super().create(self.bend_config(config), workdir)

    def apply(self, op: Op) -> None:
        with contextlib.ExitStack() as stack:
            for p in self.patches():
                stack.enter_context(p)
            super().apply(self.bend_op(op))


class IgnoresOrderingField(BuggyAdapter):
    """Merges by arrival, not by the ordering field (the latest write always wins)."""

    def bend_config(self, config: CreateTable) -> CreateTable:
        return replace(config, merge_mode="COMMIT_TIME_ORDERING")


class KeepsFailedWrites(BuggyAdapter):
    """Never rolls back a failed write before the next one starts."""

    def patches(self) -> Sequence[Any]:
        return [mock.patch.object(spec.model.table_model, "rollback_failed_writes",
                                  lambda state, env, floor=None: state)]


class RoutesIntoPendingCompaction(BuggyAdapter):
    """Treats a file group under a pending compaction as a small file that takes inserts (its new,
    still empty slice looks like a tiny base file without logs)."""

    def patches(self) -> Sequence[Any]:
        real = spec.model.writes.select_small_files

        def ignore_pending(candidates: Sequence[Any], *args: Any) -> Any:
            bent = [replace(c, under_pending_compaction=False, has_log_files=False, log_sizes=(),
                            base_size=c.base_size or 1) if c.under_pending_compaction else c for c in candidates]
            return real(bent, *args)

        return [mock.patch.object(spec.model.writes, "select_small_files", ignore_pending)]


class CleansRetainedSlices(BuggyAdapter):
    """The cleaner keeps only the latest slice of each group, whatever the retained commits need."""

    def bend_config(self, config: CreateTable) -> CreateTable:
        return replace(config, clean_policy="KEEP_LATEST_FILE_VERSIONS", clean_file_versions_retained=1)


class LosesLastLogBlock(BuggyAdapter):
    """The append handle loses the last block it buffered (a delete block, or the last data block)."""

    def patches(self) -> Sequence[Any]:
        real: Callable[..., Any] = spec.model.writes._log_files

        def lossy(*args: Any, **kwargs: Any) -> Any:
            files = list(real(*args, **kwargs))
            if files and len(files[-1].blocks) > 1:
                files[-1] = replace(files[-1], blocks=files[-1].blocks[:-1])
            elif files:  # its only block: the log file is never written
                files.pop()
            return files

        return [mock.patch.object(spec.model.writes, "_log_files", lossy)]


class UpsertWithoutIndex(BuggyAdapter):
    """Writes upserts as bulk inserts (no index lookup: an updated key is written a second time)."""

    def bend_op(self, op: Op) -> Op:
        return replace(op, operation="bulk_insert") if isinstance(op, Write) and op.operation == "upsert" else op


BUGS: dict[str, tuple[type[BuggyAdapter], str]] = {
    "ordering-field-ignored": (IgnoresOrderingField, "insert-upsert-delete-mor-v6"),
    "failed-write-not-rolled-back": (KeepsFailedWrites, "crash-then-write-cow-v8"),
    "insert-into-pending-compaction": (RoutesIntoPendingCompaction, "pending-compaction-mor-v6"),
    "clean-deletes-retained-slice": (CleansRetainedSlices, "clean-latest-commits-cow-v6"),
    "last-log-block-lost": (LosesLastLogBlock, "compaction-mor-v8"),
    "duplicates-after-upsert": (UpsertWithoutIndex, "insert-upsert-delete-cow-v6"),
}


@pytest.fixture(scope="module")
def cases() -> dict[str, FixtureCase]:
    return {fc.case.id: fc for fc in load_cases(FIXTURES)}


@contextlib.contextmanager
def _no_leak() -> Iterator[None]:
    """The patched functions are the real ones again after a buggy run."""
    before = (spec.model.table_model.rollback_failed_writes, spec.model.writes.select_small_files,
              spec.model.writes._log_files)
    yield
    assert (spec.model.table_model.rollback_failed_writes, spec.model.writes.select_small_files,
            spec.model.writes._log_files) == before


@pytest.mark.parametrize("bug", list(BUGS))
def test_each_injected_bug_is_caught(bug: str, cases: dict[str, FixtureCase]) -> None:
    adapter, case_id = BUGS[bug]
    fixture = cases[case_id]
    assert run_case(fixture, SpecModelAdapter).verdict == Verdict.PASS
    with _no_leak():
        result = run_case(fixture, adapter)
    assert result.verdict == Verdict.FAIL, f"{bug} went unnoticed by {case_id}"
    assert result.first_divergence is not None and 1 <= result.first_divergence <= len(fixture.case.ops)
    assert f"step {result.first_divergence}" in result.diff
    assert any(r.verdict == Verdict.FAIL for r in result.layers)


@pytest.mark.parametrize("bug", list(BUGS))
def test_each_bug_fails_some_case_of_the_whole_corpus_run(bug: str, cases: dict[str, FixtureCase]) -> None:
    """Not only the chosen case: over its suite, the bug makes at least one case fail and never
    turns a case into a skip."""
    adapter, case_id = BUGS[bug]
    suite = cases[case_id].suite
    results = [run_case(fc, adapter) for fc in cases.values() if fc.suite == suite]
    assert any(r.verdict == Verdict.FAIL for r in results)
    assert all(r.verdict != Verdict.SKIP for r in results)


def test_where_the_ordering_bug_shows() -> None:
    """The ordering bug diverges at the upsert whose older ordering value must lose: in the rows (L0)
    and in that commit's write stats (L4: an update counted where the stored row was kept), not in the
    timeline or the layout."""
    fixture = next(fc for fc in load_cases(FIXTURES, "writes") if fc.case.id == "insert-upsert-delete-cow-v6")
    result = run_case(fixture, IgnoresOrderingField)
    assert result.first_divergence == 2
    verdicts = {r.layer: r.verdict for r in result.layers}
    assert verdicts == {"L0": Verdict.FAIL, "L1": Verdict.PASS, "L2": Verdict.PASS, "L4": Verdict.FAIL}
    assert "'a'/'2'" in result.diff  # key 2 was upserted with ts 0 < 1
    assert "commits t2 stats" in result.diff


# --- bugs injected into copies of the reference adapter ----------------------------------------------

class BuggyReference:
    """Mixin over ``ReferenceSparkAdapter``: ``patches`` are active while an operation applies (they
    replace driver-side functions of the reference), ``bend_options`` changes the write options the
    table is written with, ``bend_op`` what an operation does (None: the operation is lost)."""

    def patches(self) -> Sequence[Any]:
        return ()

    def bend_options(self, options: dict[str, str]) -> dict[str, str]:
        return options

    def bend_op(self, op: Op) -> Op | None:
        return op


def _buggy_reference(bug: type[BuggyReference], spark: Any, engine: str = "spark") -> Callable[[], Any]:
    from conformance.adapters.reference_spark import ReferenceLocalAdapter, ReferenceSparkAdapter

    base = ReferenceSparkAdapter if engine == "spark" else ReferenceLocalAdapter

    class Adapter(bug, base):  # type: ignore[misc, valid-type]
        name: ClassVar[str] = f"{base.name}+{bug.__name__}"
        known_failures: ClassVar[dict[str, str]] = {}

        def create(self, config: CreateTable, workdir: Path) -> None:
            super().create(config, workdir)
            self.options = self.bend_options(dict(self.options))

        def apply(self, op: Op) -> None:
            bent = self.bend_op(op)
            if bent is None:
                return
            with contextlib.ExitStack() as stack:
                for p in self.patches():
                    stack.enter_context(p)
                super().apply(bent)

    return lambda: Adapter(spark)


class RefIgnoresOrdering(BuggyReference):
    """bug:ordering-field-ignored — the writer merges by arrival (the latest write wins)."""

    def bend_options(self, options: dict[str, str]) -> dict[str, str]:
        return {**options, "hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"}


class RefUpsertWithoutIndex(BuggyReference):
    """bug:duplicates-after-upsert — upserts skip the index (written as bulk inserts)."""

    def bend_op(self, op: Op) -> Op | None:
        return replace(op, operation="bulk_insert") if isinstance(op, Write) and op.operation == "upsert" else op


class RefLosesDeletes(BuggyReference):
    """bug:deleted-rows-reappear — delete batches never reach the table."""

    def bend_op(self, op: Op) -> Op | None:
        return None if isinstance(op, Write) and op.operation == "delete" else op


class RefKeepsFailedWrites(BuggyReference):
    """bug:uncommitted-log-blocks / rollback — a write killed half way is never rolled back."""

    def patches(self) -> Sequence[Any]:
        import reference.write.client

        return [mock.patch.object(reference.write.client.WriteClient, "rollback_failed_writes",
                                  lambda self, table, timeline, after=None: [])]


class RefCleanerIgnoresRetention(BuggyReference):
    """bug:cleaner-removes-needed-files — the cleaner keeps one slice per group, whatever the retained
    commits read."""

    def patches(self) -> Sequence[Any]:
        import reference.executors.clean
        from spec.actions.clean import CleanConfig

        real = reference.executors.clean.clean

        def clean(storage: Any, table: Any, config: Any = None, **kw: Any) -> Any:
            return real(storage, table, CleanConfig("KEEP_LATEST_FILE_VERSIONS", 1, 1, 0), **kw)

        return [mock.patch.object(reference.executors.clean, "clean", clean)]


class RefCleanerIgnoresSavepoints(BuggyReference):
    """bug:cleaner-removes-needed-files — savepointed files are not protected from the cleaner."""

    def patches(self) -> Sequence[Any]:
        import reference.executors.clean

        return [mock.patch.object(reference.executors.clean, "savepointed_files",
                                  lambda storage, timeline: frozenset())]


class RefIgnoresPendingCompaction(BuggyReference):
    """bug:slice-visibility-pending-compaction — writes do not see pending compactions: log files join
    the slice being compacted instead of starting a new one (visible in v6, whose log file names carry
    their slice's base instant; v8 names them by their own deltacommit)."""

    def patches(self) -> Sequence[Any]:
        import reference.write.client

        return [mock.patch.object(reference.write.client, "pending_compaction_groups", lambda storage, timeline: {})]


class RefCompactionDropsLogs(BuggyReference):
    """bug:compaction-drops-log-updates — the compaction plan leaves out each slice's newest log file."""

    def patches(self) -> Sequence[Any]:
        import reference.executors.compaction

        real = reference.executors.compaction.plan_compaction

        def plan(*args: Any, **kwargs: Any) -> Any:
            p = real(*args, **kwargs)
            if p is None:
                return None
            ops = tuple(replace(o, log_files=o.log_files[:-1]) for o in p.operations if len(o.log_files) > 1)
            return replace(p, operations=ops) if ops else None

        return [mock.patch.object(reference.executors.compaction, "plan_compaction", plan)]


REFERENCE_BUGS: dict[str, tuple[type[BuggyReference], str]] = {
    "ordering-field-ignored": (RefIgnoresOrdering, "insert-upsert-delete-cow-v6"),
    "duplicates-after-upsert": (RefUpsertWithoutIndex, "insert-upsert-delete-cow-v6"),
    "deleted-rows-reappear": (RefLosesDeletes, "delete-reinsert-cow-v6"),
    "failed-write-not-rolled-back": (RefKeepsFailedWrites, "crash-then-write-logs-mor-v8"),
    "cleaner-ignores-retained-commits": (RefCleanerIgnoresRetention, "clean-latest-commits-cow-v6"),
    "cleaner-ignores-savepoints": (RefCleanerIgnoresSavepoints, "clean-savepoint-cow-v8"),
    "slice-visibility-pending-compaction": (RefIgnoresPendingCompaction, "pending-compaction-logs-mor-v6"),
    "compaction-drops-log-updates": (RefCompactionDropsLogs, "compaction-logs-mor-v6"),
}
"""Eight bugs from the bug-class list (CONFORMANCE.md), each in a copy of the reference adapter, and a
case that catches it. The faithful reference passes each of these cases (tests/test_conformance_reference.py
runs them all in CI)."""


def test_reference_bug_cases_are_cases_the_faithful_reference_passes() -> None:
    from conformance.adapters.reference_spark import KNOWN_FAILURES
    from tests.test_conformance_reference import CI_SUBSET

    chosen = {case_id for _, case_id in REFERENCE_BUGS.values()}
    assert chosen <= set(CI_SUBSET)
    assert not chosen & set(KNOWN_FAILURES)
    assert len(REFERENCE_BUGS) >= 8


@pytest.mark.parametrize("bug", list(REFERENCE_BUGS))
def test_each_bug_injected_into_the_reference_is_caught(bug: str, cases: dict[str, FixtureCase]) -> None:
    """Each bug in the reference on the local engine (make test: the bugs are in what both engines share,
    its options, operations, rollback, cleaner and compaction planning); on Spark in the test below."""
    adapter, case_id = REFERENCE_BUGS[bug]
    result = run_case(cases[case_id], _buggy_reference(adapter, None, engine="local"))
    assert result.verdict == Verdict.FAIL, f"{bug} went unnoticed by {case_id}"
    assert result.first_divergence is not None and f"step {result.first_divergence}" in result.diff


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("bug", list(REFERENCE_BUGS))
def test_each_bug_injected_into_the_reference_on_spark_is_caught(spark: Any, bug: str,
                                                                 cases: dict[str, FixtureCase]) -> None:
    adapter, case_id = REFERENCE_BUGS[bug]
    result = run_case(cases[case_id], _buggy_reference(adapter, spark))
    assert result.verdict == Verdict.FAIL, f"{bug} went unnoticed by {case_id}"
    assert result.first_divergence is not None and f"step {result.first_divergence}" in result.diff

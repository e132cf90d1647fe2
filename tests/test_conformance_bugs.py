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

import spec.model
import spec.model_write
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.ops import CreateTable, Op, Write
from conformance.runner import FixtureCase, Verdict, load_cases, run_case

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
        return [mock.patch.object(spec.model, "rollback_failed_writes", lambda state, env, floor=None: state)]


class RoutesIntoPendingCompaction(BuggyAdapter):
    """Treats a file group under a pending compaction as a small file that takes inserts (its new,
    still empty slice looks like a tiny base file without logs)."""

    def patches(self) -> Sequence[Any]:
        real = spec.model_write.select_small_files

        def ignore_pending(candidates: Sequence[Any], *args: Any) -> Any:
            bent = [replace(c, under_pending_compaction=False, has_log_files=False, log_sizes=(),
                            base_size=c.base_size or 1) if c.under_pending_compaction else c for c in candidates]
            return real(bent, *args)

        return [mock.patch.object(spec.model_write, "select_small_files", ignore_pending)]


class CleansRetainedSlices(BuggyAdapter):
    """The cleaner keeps only the latest slice of each group, whatever the retained commits need."""

    def bend_config(self, config: CreateTable) -> CreateTable:
        return replace(config, clean_policy="KEEP_LATEST_FILE_VERSIONS", clean_file_versions_retained=1)


class LosesLastLogBlock(BuggyAdapter):
    """The append handle loses the last block it buffered (a delete block, or the last data block)."""

    def patches(self) -> Sequence[Any]:
        real: Callable[..., Any] = spec.model_write._log_files

        def lossy(*args: Any, **kwargs: Any) -> Any:
            files = list(real(*args, **kwargs))
            if files and len(files[-1].blocks) > 1:
                files[-1] = replace(files[-1], blocks=files[-1].blocks[:-1])
            elif files:  # its only block: the log file is never written
                files.pop()
            return files

        return [mock.patch.object(spec.model_write, "_log_files", lossy)]


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
    before = (spec.model.rollback_failed_writes, spec.model_write.select_small_files, spec.model_write._log_files)
    yield
    assert (spec.model.rollback_failed_writes, spec.model_write.select_small_files,
            spec.model_write._log_files) == before


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
    """The ordering bug diverges at the upsert whose older ordering value must lose, in the rows (L0)
    and only there."""
    fixture = next(fc for fc in load_cases(FIXTURES, "writes") if fc.case.id == "insert-upsert-delete-cow-v6")
    result = run_case(fixture, IgnoresOrderingField)
    assert result.first_divergence == 2
    verdicts = {r.layer: r.verdict for r in result.layers}
    assert verdicts == {"L0": Verdict.FAIL, "L1": Verdict.PASS, "L2": Verdict.PASS}
    assert "'a'/'2'" in result.diff  # key 2 was upserted with ts 0 < 1

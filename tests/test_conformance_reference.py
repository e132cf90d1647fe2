"""The reference implementation and hudi-rs against the corpus.

The reference declares every capability of the case language: copy-on-write and merge-on-read writes,
streams, compaction, clean, rollback, savepoint, restore, archival, the services run inline, and
crashes (a child process killed by SIGKILL). In CI a representative subset runs on the shared Spark
session — a few cases per capability, each capability once in ``make test``, the rest in ``make ci-slow`` —
and on the local engine; under ``-m slow`` the whole corpus runs: every case passes or
is on the reference's list of known failures, and every listed failure still fails (a fixed bug
must leave the list). hudi-rs reads the tables the reference wrote and must return the predicted rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.hudi_rs import PENDING_COMPACTION_LOGS, HudiRsAdapter
from conformance.adapters.reference_spark import (
    CAPABILITIES,
    KNOWN_FAILURES,
    ReferenceLocalAdapter,
    ReferenceLocalRowsAdapter,
    ReferenceSparkAdapter,
    write_options,
)
from conformance.adapters.spec_model import ALL_CAPABILITIES
from conformance.interface.adapter import DEFAULT_LAYERS, missing_capabilities, required_capabilities
from conformance.interface.ops import CreateTable
from conformance.runner import FixtureCase, Verdict, load_cases, render_text, run_case, run_cases

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

CI_SUBSET = (
    # writes: every operation, both versions, an expected error
    "insert-upsert-delete-cow-v6", "insert-overwrite-cow-v8", "delete-partition-cow-v6", "bulk-insert-upsert-cow-v8",
    "delete-reinsert-cow-v6", "expect-error-write-cow-v6",
    # merge-on-read: log appends, compaction (also while a write lands), rollback of log appends
    "insert-upsert-delete-logs-mor-v8", "compaction-logs-mor-v6", "pending-compaction-logs-mor-v6",
    "rollback-latest-logs-mor-v6", "inline-compaction-mor-v8",  # small-file routing on: updates elsewhere log
    # streams, services, a crash
    "stream-buckets-mor-v6", "rollback-latest-cow-v6", "clean-latest-commits-cow-v6", "clean-savepoint-cow-v8",
    "archive-cow-v6", "auto-clean-cow-v8", "crash-then-write-logs-mor-v8",
    # Hudi's rules the reference once departed from: duplicates, schema changes, deletes in a stream
    "duplicates-insert-overwrite-table-cow-v6", "schema-change-mor-v8", "stream-deletes-mor-v8",
    # a global index: keys moved across partitions (merge-on-read)
    "global-simple-index-moves-mor-v9",
)
"""A few cases per capability (the injected-bug tests use these cases too)."""

ON_SPARK_IN_MAKE_TEST = (
    "insert-upsert-delete-cow-v6", "insert-overwrite-cow-v8", "delete-partition-cow-v6", "bulk-insert-upsert-cow-v8",
    "duplicates-insert-overwrite-table-cow-v6", "insert-upsert-delete-logs-mor-v8", "inline-compaction-mor-v8",
    "rollback-latest-logs-mor-v6", "stream-buckets-mor-v6", "archive-cow-v6", "clean-savepoint-cow-v8",
    "auto-clean-cow-v8", "crash-then-write-logs-mor-v8", "global-simple-index-moves-mor-v9",
)
"""The cases of the CI subset that ``make test`` runs on the Spark engine too: each capability of the subset
once (every Spark job starts the session's work afresh, the suite's costliest); the others run on Spark
under ``make ci-slow``, and every one of them on the local engine in ``make test``."""


def _on_spark(case_id: str) -> Any:
    return case_id if case_id in ON_SPARK_IN_MAKE_TEST else pytest.param(case_id, marks=pytest.mark.slow)



@pytest.fixture(scope="module")
def cases() -> dict[str, FixtureCase]:
    return {fc.case.id: fc for fc in load_cases(FIXTURES)}


def test_capabilities_cover_the_case_language(cases: dict[str, FixtureCase]) -> None:
    assert ALL_CAPABILITIES - {"keygen:TIMESTAMP", "keygen:CUSTOM"} <= CAPABILITIES
    runnable = [fc for fc in cases.values() if not missing_capabilities(fc.case, CAPABILITIES)]
    assert len(runnable) == len(cases)
    needed = set().union(*(required_capabilities(fc.case) for fc in cases.values() if fc.case.id in CI_SUBSET))
    for capability in ("MERGE_ON_READ", "compact", "stream", "crash", "clean", "rollback", "savepoint", "archive",
                       "auto_clean", "write:insert_overwrite", "write:bulk_insert", "delete_partition"):
        assert capability in needed, f"no CI case exercises {capability}"
    assert set(ON_SPARK_IN_MAKE_TEST) <= set(CI_SUBSET)
    on_spark = [required_capabilities(cases[c].case) for c in ON_SPARK_IN_MAKE_TEST]
    assert set().union(*on_spark) == needed, f"not run on Spark in make test: {needed - set().union(*on_spark)}"


def test_known_failures_name_cases_of_the_corpus_with_a_reason(cases: dict[str, FixtureCase]) -> None:
    assert set(KNOWN_FAILURES) <= set(cases)
    assert all(reason for reason in KNOWN_FAILURES.values())
    assert not set(CI_SUBSET) & set(KNOWN_FAILURES)


def test_the_reference_has_no_known_failure() -> None:
    """The reference follows Apache Hudi on every case: time travel reads the schema at the instant,
    stream deletes are ``_hoodie_is_deleted`` rows in the model too (both once known failures)."""
    assert KNOWN_FAILURES == {}


def test_write_options_name_the_configuration() -> None:
    opts = write_options(CreateTable(table_version=8, record_key_fields=("id", "name"), partition_fields=("p",),
                                     hive_style=True, max_file_size=1000, options=(("hoodie.x", "1"),)))
    assert opts["hoodie.datasource.write.recordkey.field"] == "id,name"
    assert opts["hoodie.datasource.write.keygenerator.type"] == "COMPLEX"
    assert opts["hoodie.write.table.version"] == "8"
    assert opts["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert opts["hoodie.parquet.max.file.size"] == "1000" and opts["hoodie.x"] == "1"
    # services run when the case says: the automatic ones are off unless asked for
    assert opts["hoodie.clean.automatic"] == "false" and opts["hoodie.archive.automatic"] == "false"
    assert opts["hoodie.compact.inline"] == "false"
    inline = write_options(CreateTable(table_type="MERGE_ON_READ", inline_compact=True, compact_max_delta_commits=2))
    assert inline["hoodie.compact.inline"] == "true" and inline["hoodie.compact.inline.max.delta.commits"] == "2"


@pytest.mark.parametrize("case_id", [_on_spark(c) for c in CI_SUBSET])
def test_reference_passes_representative_cases(spark: Any, cases: dict[str, FixtureCase], case_id: str) -> None:
    result = run_case(cases[case_id], lambda: ReferenceSparkAdapter(spark))
    assert result.verdict == Verdict.PASS, result.diff
    assert [r.verdict for r in result.layers] == [Verdict.PASS] * len(DEFAULT_LAYERS)


@pytest.mark.slow
def test_a_crash_that_a_killed_process_cannot_stage_is_refused(spark: Any, tmp_path: Path) -> None:
    """``crash`` after some but not all of a write's files: the adapter says so instead of passing."""
    from conformance.interface.ops import Case
    from conformance.runner import execute
    from spec.model.operations import Crash, Write

    rec = [{"id": i, "ts": 1, "p": p, "v": "x"} for i, p in ((1, "a"), (2, "b"))]
    case = Case("partial-crash", config=CreateTable(partition_fields=("p",)),
                ops=(Write("insert", tuple(rec)), Crash(1), Write("upsert", tuple(rec))))
    steps = list(execute(ReferenceSparkAdapter(spark), case, ("L1",), tmp_path))
    assert steps[-1].stop and "after 1 of its 2 files" in steps[-1].outcome


@pytest.mark.parametrize("case_id", ["insert-upsert-delete-cow-v8", "delete-reinsert-logs-mor-v6"])
def test_hudi_rs_reads_the_predicted_rows(spark: Any, cases: dict[str, FixtureCase], case_id: str) -> None:
    result = run_case(cases[case_id], lambda: HudiRsAdapter(lambda: ReferenceSparkAdapter(spark)))
    assert result.verdict == Verdict.PASS, result.diff
    verdicts = {r.layer: r.verdict for r in result.layers}
    assert verdicts == {"L0": Verdict.PASS, "L1": Verdict.SKIP, "L2": Verdict.SKIP, "L4": Verdict.SKIP}


def test_hudi_rs_divergence_is_caught(spark: Any, cases: dict[str, FixtureCase]) -> None:
    """hudi-rs does not read the log files of a version 6 table written while a compaction is pending: a known
    failure of the hudi-rs adapter, still failing, in the snapshot."""
    result = run_case(cases["pending-compaction-mor-v6"],
                      lambda: HudiRsAdapter(lambda: ReferenceSparkAdapter(spark)))
    assert result.verdict == Verdict.XFAIL and result.reason == PENDING_COMPACTION_LOGS
    assert "snapshot" in result.diff


@pytest.mark.slow
@pytest.mark.timeout(3600)  # the whole corpus on Spark
def test_reference_passes_every_case_but_its_known_failures(spark: Any, cases: dict[str, FixtureCase]) -> None:
    run = run_cases(list(cases.values()), lambda: ReferenceSparkAdapter(spark))
    for c in run.cases:
        if c.case_id in KNOWN_FAILURES:
            assert c.verdict == Verdict.XFAIL, f"{c.case_id} passes now: take it off the known failures"
        else:
            assert c.verdict == Verdict.PASS, render_text(run)
    assert run.ok and run.count(Verdict.SKIP) == 0


@pytest.mark.parametrize("case_id", CI_SUBSET)
def test_the_local_engine_passes_representative_cases(spark: Any, cases: dict[str, FixtureCase], case_id: str) -> None:
    """The CI subset on the reference with ``engine="local"``; the whole corpus is the slow test below."""
    result = run_case(cases[case_id], lambda: ReferenceLocalAdapter(spark))
    assert result.verdict == Verdict.PASS, result.diff


@pytest.mark.slow
def test_the_local_engine_passes_every_case_but_the_known_failures(spark: Any, cases: dict[str, FixtureCase]) -> None:
    """The whole corpus on the reference with ``engine="local"`` (batch writes and compaction without
    Spark; the session serves the streams): the same verdicts as on Spark."""
    run = run_cases(list(cases.values()), lambda: ReferenceLocalAdapter(spark))
    for c in run.cases:
        if c.case_id in KNOWN_FAILURES:
            assert c.verdict == Verdict.XFAIL, f"{c.case_id} passes now on the local engine"
        else:
            assert c.verdict == Verdict.PASS, render_text(run)
    assert run.ok and run.count(Verdict.SKIP) == 0


@pytest.mark.slow
def test_the_local_engines_record_by_record_paths_pass_every_case_but_the_known_failures(
        spark: Any, cases: dict[str, FixtureCase]) -> None:
    """The corpus again with the local engine's column-at-a-time fast paths off (the merge and the log
    encoder record by record, as for columns the fast paths do not cover): the same verdicts."""
    run = run_cases(list(cases.values()), lambda: ReferenceLocalRowsAdapter(spark))
    assert {c.case_id for c in run.cases if c.verdict == Verdict.XFAIL} == set(KNOWN_FAILURES), render_text(run)
    assert run.count(Verdict.PASS) == len(cases) - len(KNOWN_FAILURES), render_text(run)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # the writes and logs suites on Spark, read by hudi-rs
def test_hudi_rs_reads_every_reference_table(spark: Any, cases: dict[str, FixtureCase]) -> None:
    chosen = [fc for fc in cases.values() if fc.suite in ("writes", "logs") and fc.case.id not in KNOWN_FAILURES]
    run = run_cases(chosen, lambda: HudiRsAdapter(lambda: ReferenceSparkAdapter(spark)))
    assert run.ok and run.count(Verdict.FAIL) == 0, render_text(run)
    assert all(c.verdict == Verdict.PASS for c in run.cases if c.case_id not in HudiRsAdapter.known_failures)
    assert run.executed >= 30

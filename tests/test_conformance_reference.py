"""The reference implementation and hudi-rs against the corpus.

In CI a representative subset (every write operation, v6 and v8, an expected error, a split insert)
runs on the shared Spark session; the whole corpus runs under ``-m slow``: every copy-on-write case
within the reference's capabilities passes (or is a listed known failure), every other case is
SKIPped with the missing capabilities as the reason. hudi-rs reads the tables the reference wrote
and must return the predicted rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.adapter import missing_capabilities
from conformance.adapters.hudi_rs import HudiRsAdapter
from conformance.adapters.reference_spark import CAPABILITIES, ReferenceSparkAdapter, write_options
from conformance.ops import CreateTable
from conformance.runner import FixtureCase, Verdict, load_cases, render_text, run_case, run_cases

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

CI_SUBSET = ("insert-upsert-delete-cow-v6", "insert-overwrite-cow-v8", "delete-partition-cow-v6",
             "bulk-insert-upsert-cow-v8", "expect-error-write-cow-v6", "rollback-latest-cow-v6",
             "clean-savepoint-cow-v8")
"""Every write operation and delete_partition, both table versions, an expected error, rollback, savepoint
and clean."""


@pytest.fixture(scope="module")
def cases() -> dict[str, FixtureCase]:
    return {fc.case.id: fc for fc in load_cases(FIXTURES)}


def test_capabilities_are_copy_on_write_writes_of_both_versions(cases: dict[str, FixtureCase]) -> None:
    assert {"COPY_ON_WRITE", "v6", "v8", "delete_partition", "clean", "rollback", "savepoint", "restore"} \
        <= CAPABILITIES
    assert "MERGE_ON_READ" not in CAPABILITIES and "compact" not in CAPABILITIES and "crash" not in CAPABILITIES
    runnable = [fc for fc in cases.values() if not missing_capabilities(fc.case, CAPABILITIES)]
    assert len(runnable) >= 30
    assert all(fc.case.config.table_type == "COPY_ON_WRITE" for fc in runnable)
    assert set(CI_SUBSET) <= {fc.case.id for fc in runnable}


def test_write_options_name_the_configuration() -> None:
    opts = write_options(CreateTable(table_version=8, record_key_fields=("id", "name"), partition_fields=("p",),
                                     hive_style=True, max_file_size=1000, options=(("hoodie.x", "1"),)))
    assert opts["hoodie.datasource.write.recordkey.field"] == "id,name"
    assert opts["hoodie.datasource.write.keygenerator.type"] == "COMPLEX"
    assert opts["hoodie.write.table.version"] == "8"
    assert opts["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert opts["hoodie.parquet.max.file.size"] == "1000" and opts["hoodie.x"] == "1"


@pytest.mark.parametrize("case_id", CI_SUBSET)
def test_reference_passes_representative_cases(spark: Any, cases: dict[str, FixtureCase], case_id: str) -> None:
    result = run_case(cases[case_id], lambda: ReferenceSparkAdapter(spark))
    assert result.verdict == Verdict.PASS, result.diff
    assert [r.verdict for r in result.layers] == [Verdict.PASS] * 3


def test_reference_skips_what_it_cannot_do(cases: dict[str, FixtureCase]) -> None:
    result = run_case(cases["pending-compaction-mor-v8"], ReferenceSparkAdapter)
    assert result.verdict == Verdict.SKIP
    assert result.reason == "reference lacks MERGE_ON_READ, compact"
    crash = run_case(cases["crash-then-write-cow-v6"], ReferenceSparkAdapter)
    assert crash.verdict == Verdict.SKIP and "crash" in crash.reason


@pytest.mark.parametrize("case_id", ["insert-upsert-delete-cow-v8", "insert-overwrite-cow-v6"])
def test_hudi_rs_reads_the_predicted_rows(spark: Any, cases: dict[str, FixtureCase], case_id: str) -> None:
    result = run_case(cases[case_id], lambda: HudiRsAdapter(lambda: ReferenceSparkAdapter(spark)))
    assert result.verdict == Verdict.PASS, result.diff
    verdicts = {r.layer: r.verdict for r in result.layers}
    assert verdicts == {"L0": Verdict.PASS, "L1": Verdict.SKIP, "L2": Verdict.SKIP}


@pytest.mark.slow
def test_reference_passes_every_case_within_its_capabilities(spark: Any, cases: dict[str, FixtureCase]) -> None:
    run = run_cases(list(cases.values()), lambda: ReferenceSparkAdapter(spark))
    for c in run.cases:
        fc = cases[c.case_id]
        missing = missing_capabilities(fc.case, CAPABILITIES)
        if missing:
            assert c.verdict == Verdict.SKIP and c.reason == f"reference lacks {', '.join(missing)}"
        elif c.case_id in ReferenceSparkAdapter.known_failures:
            assert c.verdict in (Verdict.XFAIL, Verdict.PASS)
        else:
            assert c.verdict == Verdict.PASS, render_text(run)
    assert run.ok and run.executed >= 20


@pytest.mark.slow
def test_hudi_rs_reads_every_reference_table(spark: Any, cases: dict[str, FixtureCase]) -> None:
    writes = [fc for fc in cases.values() if fc.suite == "writes"]
    run = run_cases(writes, lambda: HudiRsAdapter(lambda: ReferenceSparkAdapter(spark)))
    assert run.ok and run.count(Verdict.FAIL) == 0, render_text(run)
    assert run.executed >= 20

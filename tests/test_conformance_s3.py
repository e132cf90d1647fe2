"""The conformance corpus on S3 (moto on 127.0.0.1): the reference with the local engine writes each
case's table in a fresh bucket, and every observation layer must show what the spec model predicts —
a representative handful in ``make test`` (merge-on-read writes and compaction, a copy-on-write clean),
the cases ``tests/test_conformance_reference.py`` runs in CI and then the whole
corpus under ``slow``. Streams run on Spark (the shared session is started only for those)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.adapters.reference_spark import KNOWN_FAILURES, ReferenceLocalAdapter
from conformance.interface.ops import CreateTable
from conformance.runner import FixtureCase, Verdict, load_cases, render_text, run_cases
from tests.test_conformance_reference import CI_SUBSET

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class ReferenceS3Adapter(ReferenceLocalAdapter):
    """The local-engine reference with every table in a fresh bucket of the test's S3 server."""

    name: ClassVar[str] = "reference_local_s3"
    server: ClassVar[Any] = None

    def create(self, config: CreateTable, workdir: Path) -> None:
        super().create(config, workdir)
        from reference.write.client import WriteClient

        self.path = f"s3://{self.server.new_bucket()}/{config.table_name}"
        self.client = WriteClient(self.path, self.spark, self.clock, self.ids, engine=self.engine)


@pytest.fixture(scope="module")
def cases() -> dict[str, FixtureCase]:
    return {fc.case.id: fc for fc in load_cases(FIXTURES)}


def _run(spark: Any, s3_server: Any, chosen: list[FixtureCase]) -> None:
    ReferenceS3Adapter.server = s3_server
    run = run_cases(chosen, lambda: ReferenceS3Adapter(spark))
    for c in run.cases:
        if c.case_id in KNOWN_FAILURES:
            assert c.verdict == Verdict.XFAIL, f"{c.case_id} passes now on S3"
        else:
            assert c.verdict == Verdict.PASS, render_text(run)
    assert run.count(Verdict.SKIP) == 0


FAST = ("insert-upsert-delete-logs-mor-v8", "compaction-logs-mor-v6", "clean-latest-commits-cow-v6")


def test_representative_cases_on_s3(s3_server: Any, cases: dict[str, FixtureCase]) -> None:
    _run(None, s3_server, [cases[c] for c in FAST])


@pytest.mark.slow
def test_the_ci_cases_on_s3(spark: Any, s3_server: Any, cases: dict[str, FixtureCase]) -> None:
    _run(spark, s3_server, [cases[c] for c in CI_SUBSET if c not in FAST])


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_case_on_s3(spark: Any, s3_server: Any, cases: dict[str, FixtureCase]) -> None:
    _run(spark, s3_server, [fc for fc in cases.values() if fc.case.id not in CI_SUBSET])

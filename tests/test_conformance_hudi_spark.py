"""``--impl hudi_spark``: Apache Hudi's Spark datasource and SQL procedures.

No bundle here: every case SKIPs with the reason (never PASS), and the op → datasource options / SQL
mapping (``plan_op``) is checked as the pure function it is, against Hudi's option and procedure names.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.adapters import resolve_impl
from conformance.adapters.hudi_spark import (
    BUNDLE_ENV,
    CAPABILITIES,
    COMPACT_NOW,
    KNOWN_FAILURES,
    HudiSparkAdapter,
    SparkAction,
    call,
    plan_op,
)
from conformance.adapters.hudi_spark_crash import DIRECT_MARKERS, FAILING_VALIDATOR, crash_options
from conformance.adapters.hudi_spark_refusals import refused
from conformance.adapters.spec_model import SpecModelAdapter
from conformance.interface.adapter import missing_capabilities
from conformance.interface.ops import CreateTable
from conformance.observe import Normalizer, fixed_times
from conformance.runner import CREATED_AT, Verdict, load_cases, run_cases
from spec.errors import ConfigConflict, InvalidConfig, InvalidOperation, SchemaMismatch
from spec.model.operations import (
    Archive,
    Clean,
    Compact,
    Crash,
    DeletePartition,
    Operation,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    StreamRecord,
    Write,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MOR = CreateTable(table_type="MERGE_ON_READ", table_version=8, partition_fields=("p",), clean_commits_retained=2,
                  keep_min_commits=3, keep_max_commits=4)


def test_without_a_bundle_every_case_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(BUNDLE_ENV, str(tmp_path / "no-bundle.jar"))
    cases = [fc for fc in load_cases(FIXTURES) if fc.case.id.startswith("insert-upsert-delete")]
    result = run_cases(cases, resolve_impl("hudi_spark"))
    assert result.count(Verdict.SKIP) == len(cases) and not result.ok
    assert all(BUNDLE_ENV in c.reason for c in result.cases)


def test_a_bundle_path_that_is_no_file_is_no_bundle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(BUNDLE_ENV, str(tmp_path / "missing.jar"))
    assert HudiSparkAdapter().unavailable
    (tmp_path / "hudi.jar").write_bytes(b"PK")
    monkeypatch.setenv(BUNDLE_ENV, str(tmp_path / "hudi.jar"))
    assert HudiSparkAdapter().unavailable is None


def test_without_the_variable_the_newest_cached_bundle_of_the_installed_spark_line_is_used(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from conformance.adapters import hudi_spark

    monkeypatch.delenv(BUNDLE_ENV, raising=False)
    monkeypatch.setattr(hudi_spark, "BUNDLE_CACHE", tmp_path)
    monkeypatch.setattr(hudi_spark, "spark_line", lambda: "3.5")
    assert hudi_spark.bundle() is None
    for name in ("hudi-spark3.5-bundle_2.12-1.2.0.jar", "hudi-spark3.5-bundle_2.12-1.10.1.jar",
                 "hudi-spark4.0-bundle_2.13-9.0.0.jar"):
        (tmp_path / name).write_bytes(b"PK")
    assert hudi_spark.bundle() == str(tmp_path / "hudi-spark3.5-bundle_2.12-1.10.1.jar")
    monkeypatch.setattr(hudi_spark, "spark_line", lambda: None)  # no pyspark: no bundle to run
    assert hudi_spark.bundle() is None


def test_writes_go_through_the_datasource_with_the_tables_options() -> None:
    action = plan_op(Write("upsert", ({"id": 1, "p": "a", "ts": 1},)), MOR, "t")
    assert action.kind == "write" and action.records == ({"id": 1, "p": "a", "ts": 1},)
    opts = action.options
    assert opts["hoodie.datasource.write.operation"] == "upsert"
    assert opts["hoodie.datasource.write.table.type"] == "MERGE_ON_READ"
    assert opts["hoodie.datasource.write.recordkey.field"] == "id"
    assert opts["hoodie.datasource.write.precombine.field"] == "ts"
    assert opts["hoodie.datasource.write.partitionpath.field"] == "p"
    assert opts["hoodie.write.table.version"] == "8"
    own = plan_op(Write("upsert", ({"id": 1, "p": "a", "ts": 1},), options=(("hoodie.datasource.write.recordkey.field",
                                                                           "v"),)), MOR, "t").options
    assert own["hoodie.datasource.write.recordkey.field"] == "v"  # the write's own options over the table's
    commit_time = CreateTable(table_version=8, merge_mode="COMMIT_TIME_ORDERING")
    assert {k: v for k, v in plan_op(Write("insert", ({"id": 1},)), commit_time, "t").options.items()
            if "merge.mode" in k} == {"hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"}
    drop = plan_op(DeletePartition(("a", "b")), MOR, "t").options
    assert drop["hoodie.datasource.write.operation"] == "delete_partition"
    assert drop["hoodie.datasource.write.partitions.to.delete"] == "a,b"


@pytest.mark.parametrize(("op", "sql"), [
    (Compact(), "CALL run_compaction(op => 'scheduleandexecute', table => 't')"),
    (Compact("schedule"), "CALL run_compaction(op => 'schedule', table => 't')"),
    (Compact("run", "20240101000003000"), "CALL run_compaction(op => 'execute', table => 't', "
                                          "timestamp => 20240101000003000)"),
    (Compact("run"), "CALL run_compaction(op => 'execute', table => 't', limit => 1)"),
    (Clean(), "CALL run_clean(table => 't', clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 2, "
              "hours_retained => 24, file_versions_retained => 3)"),
    (Rollback("20240101000001000"), "CALL rollback_to_instant(table => 't', instant_time => '20240101000001000')"),
    (Rollback(), "CALL rollback_to_instant(table => 't', instant_time => '20240101000009000')"),
    (Savepoint(), "CALL create_savepoint(table => 't')"),
    (Savepoint("20240101000001000"), "CALL create_savepoint(table => 't', commit_time => '20240101000001000')"),
    (Restore("20240101000001000"), "CALL rollback_to_savepoint(table => 't', instant_time => '20240101000001000')"),
    (Archive(), "CALL archive_commits(table => 't', min_commits => 3, max_commits => 4, retain_commits => 2)"),
])
def test_services_are_hudis_sql_procedures(op: object, sql: str) -> None:
    action = plan_op(op, MOR, "t", latest_write="20240101000009000")  # type: ignore[arg-type]
    assert (action.kind, action.sql) == ("sql", sql)


def test_what_hudi_cannot_express_is_refused() -> None:
    with pytest.raises(InvalidOperation, match="chooses its own instant times"):
        plan_op(Write("insert", ({"id": 1},), "20240101000001000"), MOR, "t")
    with pytest.raises(InvalidOperation, match="does not map"):
        plan_op(Stream(((StreamRecord("upsert", {"id": 1}),),)), MOR, "t")
    with pytest.raises(InvalidOperation, match="nothing to roll back"):
        plan_op(Rollback(), MOR, "t")
    assert call("x", table="it's") == "CALL x(table => 'it''s')"


def test_capabilities_leave_out_streams_alone() -> None:
    assert "stream" not in CAPABILITIES and "crash" in CAPABILITIES
    cases = load_cases(FIXTURES)
    runnable = [fc for fc in cases if not missing_capabilities(fc.case, CAPABILITIES)]
    assert len(cases) - len(runnable) == sum(fc.suite == "stream" for fc in cases)


def test_a_crash_is_hudis_own_failure_at_the_point_the_case_names() -> None:
    """Before the first data file: direct markers (the marker root is made a file); after the last: a pre-commit
    validation that fails. The crash arms the next write, which the adapter stops with those options."""
    assert crash_options(0) == DIRECT_MARKERS
    assert crash_options(2) == FAILING_VALIDATOR
    assert FAILING_VALIDATOR["hoodie.precommit.validators.single.value.sql.queries"].endswith("where 1 = 0#1")
    assert plan_op(Crash(2), MOR, "t") == SparkAction("crash", options={"after_files": "2"})


def test_version_6_rollbacks_and_archival_by_a_trigger_of_its_own_go_through_hudis_write_client() -> None:
    """The procedures' bugs are gone around with the client they wrap (``ROLLBACK_ON_VERSION_6``,
    ``ARCHIVE_PROCEDURE_IGNORES_OPTIONS``); every other table keeps the procedures."""
    v6 = replace(MOR, table_version=6)
    assert plan_op(Rollback("20240101000001000"), v6, "t") == SparkAction(
        "client", options={"rollback": "20240101000001000"})
    assert plan_op(Archive(), replace(MOR, compact_max_delta_commits=1), "t") == SparkAction(
        "client", options={"archive": ""})
    assert plan_op(Archive(), v6, "t").kind == plan_op(Rollback("20240101000001000"), MOR, "t").kind == "sql"
    assert {"rollback-latest-cow-v6", "compaction-after-archive-mor-v6"}.isdisjoint(KNOWN_FAILURES)


def test_a_compaction_the_case_asks_for_is_scheduled_now() -> None:
    assert plan_op(Compact("schedule"), MOR, "t").options == COMPACT_NOW
    assert COMPACT_NOW["hoodie.compact.inline.max.delta.commits"] == "1"
    assert plan_op(Clean(), MOR, "t").options == {}


class _JavaError:
    """A stand-in for a Java exception seen through py4j: class name, message, cause."""

    def __init__(self, name: str, message: str, cause: _JavaError | None = None) -> None:
        self.name, self.message, self.cause = name, message, cause

    def getClass(self) -> _JavaError:
        return self

    def getSimpleName(self) -> str:
        return self.name

    def getMessage(self) -> str:
        return self.message

    def getCause(self) -> _JavaError | None:
        return self.cause


class _Py4JError(Exception):
    def __init__(self, java: _JavaError) -> None:
        super().__init__(java.message)
        self.java_exception = java


class _ChoosesItsOwnTimes(SpecModelAdapter):
    """The spec model as an implementation that picks its own instant times, as Hudi's datasource does: a time
    the case names to write at never reaches it (it would write there if it did)."""

    chooses_instant_times = True
    named: ClassVar[list[str]] = []

    def apply(self, op: Operation) -> None:
        if type(op) in CREATED_AT and getattr(op, "instant_time", None) is not None:
            self.named.append(str(op.instant_time))
        super().apply(op)


@pytest.mark.parametrize("case_id", ["fixed-instants-cow-v8", "fixed-instants-cow-v6"])
def test_an_implementation_choosing_its_instant_times_runs_the_cases_that_name_them(case_id: str) -> None:
    """The runner maps the case's named instants to the implementation's by order: the writes run at the
    implementation's times, a rollback of a named write rolls back the implementation's instant of it, and the
    timeline shows the case's names (Apache Hudi's datasource: ``HudiSparkAdapter.chooses_instant_times``)."""
    cases = [fc for fc in load_cases(FIXTURES) if fc.case.id == case_id]
    assert len(cases) == 1 and fixed_times(cases[0].case)
    _ChoosesItsOwnTimes.named = []
    result = run_cases(cases, _ChoosesItsOwnTimes)
    assert [c.verdict for c in result.cases] == [Verdict.PASS], [c.diff for c in result.cases]
    assert _ChoosesItsOwnTimes.named == []  # no time to write at reached the implementation


def test_a_named_instant_nothing_was_written_at_is_passed_on_as_named() -> None:
    """A rollback of an instant that never was reaches the implementation as the case names it, to be refused."""
    norm = Normalizer(["20240601000000000", "20000101000000000"])
    norm.bind("20240601000000000", "20261127000000000")
    assert norm.actual("20240601000000000") == "20261127000000000"
    assert norm.instant("20261127000000000") == "20240601000000000"
    assert norm.actual("20000101000000000") == "20000101000000000"
    norm.learn_instants(["20261127000001000"])
    assert norm.instant("20261127000001000") == "t1"  # the first time of its own, labelled as the spec labels it


def test_hudis_refusals_become_the_specs_error_kinds_by_exception_class() -> None:
    schema = _Py4JError(_JavaError("SparkException", "job failed",
                                   _JavaError("SchemaBackwardsCompatibilityException", "reader union lacking")))
    assert isinstance(refused(schema), SchemaMismatch)
    conflict = refused(_Py4JError(_JavaError("HoodieException", "Config conflict(key current existing)")))
    assert isinstance(conflict, ConfigConflict) and "Config conflict" in str(conflict)
    assert isinstance(refused(_Py4JError(_JavaError("HoodieNotSupportedException", "no"))), InvalidOperation)
    # pyspark turns java.lang.IllegalArgumentException into its own exception, the Java one its origin
    converted = ValueError("No enum constant")
    converted._origin = _JavaError("IllegalArgumentException",  # type: ignore[attr-defined]
                                   "No enum constant org.apache.hudi.common.model.HoodieTableType.copy_on_write")
    assert isinstance(refused(converted), InvalidConfig)
    # anything else stays what it is: a crash, never a refusal
    assert refused(_Py4JError(_JavaError("HoodieIOException", "Failed to scan metadata"))) is None
    assert refused(ValueError("not Java")) is None


# cases Apache Hudi 1.2.0 passes through the datasource and its procedures, run for real: clean and savepoint;
# and a merge-on-read table whose logs hold updates that lose their merge, a delete block and a compaction
# (the incremental rule, delete blocks' ordering values and version 6 compaction stats the spec took from
# Hudi); a crash before the first data file and a version 6 rollback by Hudi's write client. Three: a case
# observes every query after every step, minutes on a busy machine; the corpus runs
# through `hudi-conformance run --impl hudi_spark`
HUDI_PASSES = ("clean-savepoint-mor-v8", "compaction-logs-mor-v6", "crash-then-rollback-cow-v6")


@pytest.mark.spark
def test_apache_hudi_runs_cases_of_the_corpus_and_passes_them(apache_hudi: object) -> None:
    cases = [fc for fc in load_cases(FIXTURES) if fc.case.id in HUDI_PASSES]
    assert len(cases) == len(HUDI_PASSES)
    result = run_cases(cases, resolve_impl("hudi_spark"))
    assert {c.case_id: c.verdict for c in result.cases} == dict.fromkeys(HUDI_PASSES, Verdict.PASS), \
        [c.diff for c in result.cases]


# The whole corpus through Apache Hudi: 200 cases in about 23 minutes on a 2-core machine at load 5-9 (about 7 s a
# case), so in `make ci-slow`, which CI runs; the committed matrix's Apache Hudi row is the same run
# (tests/test_conformance_report.py checks every verdict of it).
@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(2 * 3600)
def test_apache_hudi_runs_the_whole_corpus_with_every_difference_decided(apache_hudi: object) -> None:
    """Every case of the corpus through Apache Hudi's datasource and procedures ends PASS, a known failure
    (``HudiSparkAdapter.known_failures``: Hudi's bug, with its reproducer) or a SKIP naming what Hudi's Spark
    datasource cannot be asked to do (streams, Flink's writer): no undecided FAIL."""
    from conformance.runner import render_text

    run = run_cases(load_cases(FIXTURES), resolve_impl("hudi_spark"))
    undecided = [c.case_id for c in run.cases if c.verdict == Verdict.FAIL]
    assert not undecided, render_text(run)
    for c in run.cases:
        if c.case_id in HudiSparkAdapter.known_failures:
            assert c.verdict == Verdict.XFAIL, f"{c.case_id} passes now: take it off the known failures"
        elif c.verdict == Verdict.SKIP:
            assert c.suite == "stream", (c.case_id, c.reason)
        else:
            assert c.verdict == Verdict.PASS, (c.case_id, c.diff)


def _hudi_table(tmp_path: Path, config: CreateTable, upserts: int) -> HudiSparkAdapter:
    """A table Apache Hudi writes through its datasource: an insert and ``upserts`` upserts of one key."""
    adapter = HudiSparkAdapter()
    adapter.create(config, tmp_path)
    adapter.apply(Write("insert", ({"id": 1, "p": "a", "ts": 0},)))
    for n in range(1, upserts + 1):
        adapter.apply(Write("upsert", ({"id": 1, "p": "a", "ts": n},)))
    return adapter


# Hudi's procedure bugs the adapter goes around with the write client they wrap, reproduced as their reasons
# say: when a release fixes one, its test fails, and the adapter goes back to the procedure.
@pytest.mark.slow
@pytest.mark.spark
def test_hudis_rollback_procedure_cannot_roll_back_a_version_6_table_and_its_write_client_can(
        apache_hudi: Any, tmp_path: Path) -> None:
    """``ROLLBACK_ON_VERSION_6``."""
    from py4j.protocol import Py4JJavaError

    adapter = _hudi_table(tmp_path, replace(MOR, table_type="COPY_ON_WRITE", table_version=6), upserts=1)
    latest = adapter._latest_write()
    assert latest is not None
    adapter._register()
    with pytest.raises(Py4JJavaError, match="Failed to scan metadata"):
        apache_hudi.sql(call("rollback_to_instant", table=adapter.table, instant_time=latest)).collect()
    adapter.apply(Rollback(latest))
    assert latest not in [r for r, _, _, _ in adapter.timeline()]
    adapter.close()


@pytest.mark.slow
@pytest.mark.spark
def test_hudis_archive_procedure_ignores_the_tables_compaction_trigger_and_its_write_client_reads_it(
        apache_hudi: Any, tmp_path: Path) -> None:
    """``ARCHIVE_PROCEDURE_IGNORES_OPTIONS``: a merge-on-read table compacting after every delta commit."""
    config = replace(MOR, table_version=6, compact_max_delta_commits=1, keep_min_commits=2, keep_max_commits=3,
                     clean_commits_retained=1)
    adapter = _hudi_table(tmp_path, config, upserts=4)
    before = adapter.timeline()
    adapter._procedure(SparkAction("sql", sql=call("archive_commits", table=adapter.table, min_commits=2,
                                                   max_commits=3, retain_commits=1)))
    assert adapter.timeline() == before  # nothing archived: the default trigger's five delta commits are kept
    adapter.apply(Archive())
    assert len(adapter.timeline()) < len(before)
    adapter.close()

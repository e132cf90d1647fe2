"""Reads both ways, measured against Apache Hudi itself (its Spark bundle, the ``apache_hudi`` fixture).

- Apache Hudi's Spark datasource reads every table the reference writer leaves in the conformance corpus —
  snapshot, read-optimized, time travel to every completed write the model keeps, incremental (from the start
  and between consecutive writes) — as the spec model predicts (``conformance.reader_rows.read_final_table``
  with ``conformance.adapters.hudi_spark_reader``): the local engine on every case (versions 6 and 8, COW and
  MOR, metadata table on (version 8) and off (version 6), after compaction, clean, rollback, restore and
  archival); the Spark engine on the CI subset; version 9 and version 8 without a metadata table on the
  version-8 cases of the CI subset and the services suite.
- Hudi's own checks on those tables: ``validate_metadata_table_files`` finds every file of the file system in
  the metadata table and no other; ``show_commits``, ``show_fsview_all`` and ``show_archived_commits`` agree
  with ``hudi-spec timeline``, ``fsview`` and ``archived``.
- The spec reader reads tables Apache Hudi writes (the corpus's cases through ``--impl hudi_spark``) as Hudi's
  own datasource does (``conformance.reader_rows.cross_read``).

Differences are decided one by one (``conformance.adapters.hudi_spark_reader.KNOWN_FAILURES``): each is a
known failure with its reason, and a known failure that passes fails its test. ``make test`` runs a few
representative cases; the whole matrix is ``slow`` (``make ci-slow``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.hudi_spark_reader import (
    KNOWN_FAILURES,
    KNOWN_FAILURES_OF_HUDIS_TABLES,
    HudiSparkReaderAdapter,
    align_completion_times,
    hudi_rows,
    procedure,
)
from conformance.adapters.reference_spark import ReferenceLocalAdapter, ReferenceSparkAdapter
from conformance.adapters.spec_reader import spec_rows
from conformance.interface.adapter import Query
from conformance.reader_rows import cross_read, final_plan, read_final_table
from conformance.runner import CaseResult, FixtureCase, Verdict, execute, load_cases
from reference.cli import main as hudi_spec
from spec.config.table_config import TableConfig
from spec.errors import InvalidTable
from tests.test_conformance_reference import CI_SUBSET

pytestmark = pytest.mark.spark

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = {fc.case.id: fc for fc in load_cases(FIXTURES)}
WRITERS: dict[str, type[ReferenceLocalAdapter] | type[ReferenceSparkAdapter]] = {
    "local": ReferenceLocalAdapter, "spark": ReferenceSparkAdapter}

FAST = ("archive-cow-v6",)
"""``make test``'s case: cleaning and archival (version 6), Hudi's procedures on its active and archived
timelines."""


def at_version_9(fc: FixtureCase) -> FixtureCase:
    """A version-8 case replayed at version 9 (the model's expectations computed live)."""
    case = replace(fc.case, id=fc.case.id.replace("-v8", "-v9"), config=replace(fc.case.config, table_version=9))
    return FixtureCase(case, fc.suite)


def without_metadata_table(fc: FixtureCase) -> FixtureCase:
    """A version-8 case whose table has no metadata table (``hoodie.metadata.enable=false``); reads are the
    same as with one, so the fixture's expectations stand."""
    config = replace(fc.case.config, options=(*fc.case.config.options, ("hoodie.metadata.enable", "false")))
    return FixtureCase(replace(fc.case, id=fc.case.id.replace("-v8", "-v8-nomdt"), config=config), fc.suite,
                       fc.expected)


def known(case_id: str) -> str | None:
    return KNOWN_FAILURES.get(re.sub(r"-v(8|9)-nomdt$", r"-v\1", case_id).replace("-v9", "-v8"))


def decided(result: CaseResult) -> None:
    """PASS, or the known failure with its reason (pytest's xfail); any other difference fails, and so does a
    known failure that passes."""
    reason = result.reason if result.verdict == Verdict.XFAIL else known(result.case_id)
    if reason is not None:
        assert result.verdict == Verdict.XFAIL, f"{result.case_id} passes: it is no longer a known failure"
        pytest.xfail(reason)
    assert result.verdict == Verdict.PASS, result.diff


# --- Hudi's procedures against hudi-spec -----------------------------------------------------------


def hudi_spec_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    assert hudi_spec([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


LOG_NAME = re.compile(r"\.[^/\s,\[\]]+\.log\.\d+_[\w-]+")
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def check_procedures(spark: Any, path: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Hudi's ``show_commits``, ``show_fsview_all``, ``show_archived_commits`` say what hudi-spec says; with a
    metadata table, ``validate_metadata_table_files`` finds it listing exactly the files on storage."""
    align_completion_times(path)
    layout2 = TableConfig.load(path).timeline_layout == 2
    ours = hudi_spec_json(capsys, "timeline", path, "--all")["instants"]
    mine = sorted((i["instant_time"], i["action"], i["completion_time"] if layout2 else None) for i in ours
                  if i["state"] == "COMPLETED" and i["action"] in WRITE_ACTIONS)
    theirs = sorted((r["commit_time"], r["action"], r["state_transition_time"] if layout2 else None)
                    for r in procedure(spark, path, "show_commits", limit=10_000))
    assert theirs == mine
    view = hudi_spec_json(capsys, "fsview", path)
    mine_view = sorted((v["partition"], v["file_id"], v["base_instant"], v["data_file"] or "",
                        tuple(sorted(v["delta_files"]))) for v in view)
    theirs_view = sorted((r["partition"], r["file_id"], r["base_instant"], Path(r["data_file"] or "").name,
                          tuple(sorted(LOG_NAME.findall(r["delta_files"] or "")))) for r in
                         procedure(spark, path, "show_fsview_all", limit=10_000))
    assert theirs_view == mine_view
    archived = hudi_spec_json(capsys, "archived", path)["instants"]
    mine_archived = sorted(i["instant_time"] for i in archived
                           if i["state"] == "COMPLETED" and i["action"] in WRITE_ACTIONS)
    theirs_archived = sorted(r["commit_time"] for r in procedure(
        spark, path, "show_archived_commits", start_ts="0", end_ts="99999999999999999", limit=10_000))
    assert theirs_archived == mine_archived
    if (Path(path) / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file():
        files = procedure(spark, path, "validate_metadata_table_files", verbose=True)
        assert files, "validate_metadata_table_files listed nothing"
        bad = [f for f in files if not (f["is_present_in_fs"] and f["is_present_in_metadata"])
               or f["fs_size"] != f["metadata_size"]]
        assert bad == []


# --- Hudi reads the corpus's tables ----------------------------------------------------------------


def read_and_check(spark: Any, fc: FixtureCase, engine: str, tmp_path: Path,
                   capsys: pytest.CaptureFixture[str] | None) -> None:
    writer = WRITERS[engine]
    factory: Callable[[], HudiSparkReaderAdapter] = functools.partial(
        HudiSparkReaderAdapter, (lambda: writer(spark)) if engine == "spark" else writer)
    reason = known(fc.case.id)
    result = read_final_table(fc, factory, workdir=tmp_path, known={fc.case.id: reason} if reason else None)
    table = tmp_path / fc.case.config.table_name
    if capsys is not None and (table / ".hoodie" / "hoodie.properties").is_file():
        check_procedures(spark, str(table), capsys)
    decided(result)


@pytest.mark.parametrize("case_id", FAST)
def test_apache_hudi_reads_the_reference_writers_corpus_tables_fast(
        apache_hudi: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    read_and_check(apache_hudi, CASES[case_id], "local", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.explore  # the corpus case by case through Apache Hudi: make slow
@pytest.mark.parametrize("case_id", [c for c in CASES if c not in FAST])
def test_apache_hudi_reads_every_corpus_table_of_the_local_engine(
        apache_hudi: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    read_and_check(apache_hudi, CASES[case_id], "local", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.explore  # the corpus case by case through Apache Hudi: make slow
@pytest.mark.parametrize("case_id", CI_SUBSET)
def test_apache_hudi_reads_corpus_tables_of_the_spark_engine(
        apache_hudi: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    read_and_check(apache_hudi, CASES[case_id], "spark", tmp_path, None)


V8_SELECTION = sorted(c for c, fc in CASES.items() if c.endswith("-v8") and fc.suite != "stream"
                      and (c in CI_SUBSET or fc.suite == "services"))
V9_REPLAYED = [c for c in V8_SELECTION if c.removesuffix("-v8") + "-v9" not in CASES]
"""The version 8 cases of the selection replayed at version 9: those the corpus has no version 9 case of (its own
are read with every corpus table)."""


@pytest.mark.slow
@pytest.mark.explore  # the corpus case by case through Apache Hudi: make slow
@pytest.mark.parametrize("case_id", V9_REPLAYED)
def test_apache_hudi_reads_version_9_corpus_tables(apache_hudi: Any, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    read_and_check(apache_hudi, at_version_9(CASES[case_id]), "local", tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.explore  # the corpus case by case through Apache Hudi: make slow
@pytest.mark.parametrize("case_id", V8_SELECTION)
def test_apache_hudi_reads_corpus_tables_without_a_metadata_table(
        apache_hudi: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    fc = without_metadata_table(CASES[case_id])
    read_and_check(apache_hudi, fc, "local", tmp_path, capsys)
    assert not (tmp_path / "t" / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").exists()


def test_known_failures_name_corpus_cases_with_a_reason() -> None:
    assert set(KNOWN_FAILURES) <= set(CASES)
    assert all(len(reason) > 80 for reason in KNOWN_FAILURES.values())
    assert not set(FAST) & set(KNOWN_FAILURES)


def test_the_final_plan_keeps_every_write_and_the_consecutive_windows() -> None:
    travel = ("t1", "t3", "t5")
    windows = tuple((b, e) for e in travel for b in (None, *travel) if b is None or b < e)
    assert final_plan((travel, windows)) == (travel, (("t1", "t3"), (None, "t5"), ("t3", "t5")))
    assert final_plan(((), ())) == ((), ())


# --- the spec reader reads Apache Hudi's tables ------------------------------------------------------


def hudi_reads_of(spark: Any) -> Callable[[str, Query], Any]:
    def read(path: str, query: Query) -> Any:
        return hudi_rows(spark, path, query)
    return read


HUDI_WRITES = sorted(c for c, fc in CASES.items() if fc.suite in ("writes", "logs", "services", "timeline")
                     and (c in CI_SUBSET or fc.suite == "services") and "crash" not in c)


def cross_check(spark: Any, case_id: str, tmp_path: Path) -> None:
    from conformance.adapters.hudi_spark import HudiSparkAdapter

    reason = KNOWN_FAILURES_OF_HUDIS_TABLES.get(case_id) or known(case_id)
    result = cross_read(CASES[case_id], HudiSparkAdapter, hudi_reads_of(spark), spec_rows, workdir=tmp_path,
                        known={case_id: reason} if reason else None)
    if result.verdict == Verdict.SKIP:
        pytest.skip(result.reason)
    decided(result)


@pytest.mark.slow
@pytest.mark.explore  # the corpus case by case through Apache Hudi: make slow
@pytest.mark.parametrize("case_id", HUDI_WRITES)
def test_the_spec_reader_reads_apache_hudis_corpus_tables_as_hudi_does(apache_hudi: Any, tmp_path: Path,
                                                                       case_id: str) -> None:
    cross_check(apache_hudi, case_id, tmp_path)


# --- named differences ---------------------------------------------------------------------------------


def test_hudi_takes_a_version_6_completion_time_from_the_files_modification_time(apache_hudi: Any,
                                                                                 tmp_path: Path) -> None:
    """Why ``align_completion_times`` exists: the same version-6 merge-on-read table (written with instant
    times of 2024 and files of now) read by Apache Hudi before and after its timeline files' modification
    times are set to their instant times. Before, Hudi places the logs written after the compaction in the
    wrong file slice and loses the record they reinsert; after, it reads what the spec reads."""
    from spec.read.reader import read_table

    fc = CASES["compaction-mor-v6"]
    writer = ReferenceLocalAdapter()
    for step in execute(writer, fc.case, ("L1",), tmp_path):
        assert not step.stop, step.outcome
    path = writer.path
    spec = sorted((r["id"], r["v"]) for r in read_table(path).to_pylist())
    assert spec == [(1, "v1@2"), (2, "v2@4"), (3, "back")]
    before = sorted((r["id"], r["v"]) for r in hudi_rows(apache_hudi, path, Query("snapshot")))
    assert before == [(1, "v1@2"), (2, "v2@4")]
    align_completion_times(path)
    after = sorted((r["id"], r["v"]) for r in hudi_rows(apache_hudi, path, Query("snapshot")))
    assert after == spec


def _reads_of(reader: Callable[[], Any], case_id: str, tmp_path: Path) -> CaseResult:
    return read_final_table(CASES[case_id], reader, workdir=tmp_path)


@pytest.mark.slow
def test_hudi_rs_and_apache_hudi_read_lost_merges_in_incremental_queries_as_the_spec_does(
        apache_hudi: Any, tmp_path: Path) -> None:
    """hudi-rs's former known failure ``ORDERING_IN_INCREMENTAL`` measured against Apache Hudi itself: on a
    merge-on-read table whose log holds an update that lost its merge, Hudi's incremental query returns that
    record as written, as hudi-rs's does, and the spec follows Hudi (``MergeOnReadIncrementalRelationV2``), so
    all three read the case alike. A version-6 table with logs written while a compaction is pending: Hudi
    reads its final table as the spec does."""
    from conformance.adapters.hudi_rs import HudiRsAdapter

    def hudi() -> HudiSparkReaderAdapter:
        return HudiSparkReaderAdapter(ReferenceLocalAdapter)

    def hudi_rs() -> HudiRsAdapter:
        return HudiRsAdapter(ReferenceLocalAdapter)

    theirs = _reads_of(hudi, "pending-compaction-mor-v6", tmp_path / "a")
    assert theirs.verdict == Verdict.PASS, theirs.diff
    apache, rs = (_reads_of(r, "insert-upsert-delete-mor-v8", tmp_path / n) for r, n in ((hudi, "c"), (hudi_rs, "d")))
    assert apache.verdict == Verdict.PASS, apache.diff
    assert rs.verdict == Verdict.PASS, rs.diff


@pytest.mark.slow
def test_both_reader_rows_of_the_matrix_through_apache_hudi(apache_hudi: Any) -> None:
    """``hudi-conformance report``'s two reader rows on one case, with Apache Hudi's bundle: Hudi's datasource
    reads the final table the reference (local engine) leaves, as the model predicts; the spec reader reads the
    table Apache Hudi writes as Hudi's datasource does. The entries name their writers and merge."""
    from conformance.report import merge_matrices, render_matrix, run_matrix

    case = [CASES["compaction-mor-v9"]]
    hudi_reads = run_matrix(["hudi_spark_reader"], case, 4, writer="reference_local")
    spec_reads = run_matrix(["spec_reader"], case, 4, writer="hudi_spark")
    (theirs,), (ours,) = hudi_reads["implementations"], spec_reads["implementations"]
    assert (theirs["name"], theirs["writer"], theirs["counts"]["PASS"]) == ("hudi_spark_reader", "reference_local", 1)
    assert (ours["name"], ours["writer"], ours["counts"]["PASS"]) == ("spec_reader", "hudi_spark", 1), ours
    page = render_matrix(merge_matrices([hudi_reads, spec_reads]))
    assert "| `spec_reader on hudi_spark` | `hudi_spark` | 1 |" in page


def test_without_a_bundle_the_reader_row_skips_every_case_with_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    from conformance.adapters import resolve_impl
    from conformance.reader_rows import run_reader_rows

    monkeypatch.setenv("HUDI_SPARK_BUNDLE", str(tmp_path / "no-bundle.jar"))
    assert resolve_impl("hudi_spark_reader") is HudiSparkReaderAdapter
    cases = [CASES["archive-cow-v6"], CASES["compaction-mor-v8"]]
    row = run_reader_rows("hudi_spark_reader", cases, functools.partial(read_final_table,
                                                                         factory=HudiSparkReaderAdapter))
    assert row.count(Verdict.SKIP) == 2 and not row.ok
    assert all("make apache-hudi" in c.reason for c in row.cases)


@pytest.mark.slow
def test_apache_hudis_reader_cannot_merge_a_null_ordering_value_with_a_long_one(apache_hudi: Any,
                                                                                tmp_path: Path) -> None:
    """Apache Hudi 1.2.0's bug (``hudi_spark_reader.NULL_ORDERING_MERGE``), on a table Hudi writes itself: a
    merge-on-read table ordered by a long column, a record inserted with a null ordering value and upserted with
    3 (a log record). Its file group reader takes the null as ``Integer 0`` and compares it with the log record's
    ``Long``: the snapshot query fails with ClassCastException; read-optimized (no merge) answers, and the spec
    reader merges the two (3 wins over null). Asserted exactly, so this test fails once Hudi fixes it."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from spec.read.reader import read_table

    schema = StructType([StructField("id", LongType()), StructField("p", StringType()),
                         StructField("ts", LongType()), StructField("v", StringType())])
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.table.ordering.fields": "ts"}
    for operation, record, mode in (("insert", (2, "a", None, "n"), "overwrite"),
                                    ("upsert", (2, "a", 3, "3"), "append")):
        (apache_hudi.createDataFrame([record], schema).write.format("hudi").options(**options)
         .option("hoodie.datasource.write.operation", operation).mode(mode).save(path))
    assert [(r["id"], r["v"]) for r in hudi_rows(apache_hudi, path, Query("read_optimized"))] == [(2, "n")]
    with pytest.raises(InvalidTable) as refused:
        hudi_rows(apache_hudi, path, Query("snapshot"))
    assert "java.lang.Integer cannot be cast to class java.lang.Long" in str(refused.value.__cause__)
    assert [(r["id"], r["ts"], r["v"]) for r in read_table(path).to_pylist()] == [(2, 3, "3")]

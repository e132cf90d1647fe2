"""The benchmark harness's accounting (not its timings): data shape, row checks, rows/s, ratios, JSON, markdown.

One tiny run of every job at 2,000 rows (each job in its own processes, as ``make bench`` runs them) is
shared by the smoke tests; the rest are pure checks on the generator and the report.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from bench import report
from bench.__main__ import main
from bench.data import PARTITIONS, SCHEMA, UpsertShape, base_rows, upsert_rows, write_inputs
from bench.harness import JobResult, add_ratios, all_jobs, rows_check, rows_per_second, run_job, run_step, skip_reason
from bench.jobs import (
    FAILED,
    NOT_AVAILABLE,
    OK,
    SCHEMA_ID,
    SKIPPED,
    SLOW_PEER_ROWS,
    STARTUP,
    UPSERT,
    WRITE,
    Context,
    NotAvailable,
)
from bench.processes import SMALL_ROWS

N = 2_000

# --- the generator ----------------------------------------------------------------------------------------


def test_base_rows_have_the_documented_shape() -> None:
    t = base_rows(N)
    assert t.schema == SCHEMA
    assert [str(f.type) for f in t.schema] == ["string", "string", "int64", "int32", "double", "date32[day]",
                                               "timestamp[us, tz=UTC]", "string"]
    assert t.num_rows == N
    assert pc.count_distinct(t["key"]).as_py() == N
    assert sorted(pc.unique(t["part"]).to_pylist()) == [f"p{i}" for i in range(PARTITIONS)]
    # a key's partition is fixed by its number, so an update lands in the partition of the row it replaces
    for k, p in zip(t["key"].to_pylist()[:50], t["part"].to_pylist()[:50], strict=True):
        assert p == f"p{int(k[1:]) % PARTITIONS}"
    assert t.equals(base_rows(N)), "the generator must be deterministic"


def test_upsert_batch_is_a_tenth_half_updates_half_new_keys() -> None:
    base, batch = base_rows(N), upsert_rows(N)
    shape = UpsertShape(N)
    assert (shape.batch, shape.updates, shape.inserts, shape.rows_after) == (200, 100, 100, 2_100)
    assert batch.num_rows == 200 and batch.schema == SCHEMA
    old_keys = set(base["key"].to_pylist())
    keys = batch["key"].to_pylist()
    assert len(set(keys)) == 200
    assert sum(k in old_keys for k in keys) == 100
    # every update is newer than every base row (so any merge rule keeps the batch's values)
    assert pc.min(batch["ts"]).as_py() > pc.max(base["ts"]).as_py()
    by_key = dict(zip(base["key"].to_pylist(), base["part"].to_pylist(), strict=True))
    for k, p in zip(keys, batch["part"].to_pylist(), strict=True):
        if k in by_key:
            assert by_key[k] == p
    assert batch.equals(upsert_rows(N))


def test_odd_sizes_keep_the_counts_consistent() -> None:
    for n in (10, 11, 99, 1_001):
        shape = UpsertShape(n)
        batch = upsert_rows(n)
        assert batch.num_rows == shape.batch == shape.updates + shape.inserts
        assert shape.rows_after == n + shape.inserts
    with pytest.raises(ValueError, match="at least one row"):
        base_rows(0)


def test_inputs_are_written_once(tmp_path: Path) -> None:
    inputs = write_inputs(N, tmp_path)
    first = inputs.base.stat().st_mtime_ns
    assert write_inputs(N, tmp_path).base.stat().st_mtime_ns == first
    import pyarrow.parquet as pq

    assert pq.read_table(inputs.base).equals(base_rows(N))
    assert pq.read_table(inputs.upsert).num_rows == UpsertShape(N).batch


# --- the accounting, on hand-made results ------------------------------------------------------------------


def _result(job: str, seconds: float | None, vs: str | None = None, status: str = OK, n: int = N) -> JobResult:
    return JobResult(job, "e", WRITE, n, status, seconds=seconds, rows=n, vs=vs)


def test_rows_per_second_and_row_check() -> None:
    assert rows_per_second(1_000, 4.0) == 250.0
    assert rows_per_second(0, 4.0) is None and rows_per_second(10, 0.0) is None
    assert rows_per_second(10, None) is None
    assert rows_check(5, 5) == "ok" and rows_check(5, 6) == "mismatch" and rows_check(None, 6) is None


def test_ratios_divide_by_the_baseline_at_the_same_row_count() -> None:
    rs = [_result("base", 2.0, vs="base"), _result("mine", 5.0, vs="base"),
          _result("base", 10.0, vs="base", n=5 * N), _result("mine", 15.0, vs="base", n=5 * N),
          _result("orphan", 1.0, vs="missing"), _result("down", None, vs="base", status=NOT_AVAILABLE)]
    add_ratios(rs)
    assert [r.ratio for r in rs] == [1.0, 2.5, 1.0, 1.5, None, None]
    failed_base = [_result("base", None, vs="base", status=FAILED), _result("mine", 5.0, vs="base")]
    add_ratios(failed_base)
    assert failed_base[1].ratio is None


def test_slow_peers_are_skipped_only_above_the_threshold_and_only_when_asked() -> None:
    iceberg = all_jobs()["pyiceberg_upsert"]
    assert iceberg.slow
    assert skip_reason(iceberg, SLOW_PEER_ROWS, True) is None
    assert skip_reason(iceberg, SLOW_PEER_ROWS + 1, False) is None
    assert "--skip-slow-peers" in str(skip_reason(iceberg, SLOW_PEER_ROWS + 1, True))
    assert skip_reason(all_jobs()["delta_rs_merge"], 10 * SLOW_PEER_ROWS, True) is None
    skipped = run_job(iceberg, 5 * SLOW_PEER_ROWS, Path("unused"), 10.0, "because")
    assert (skipped.status, skipped.reason, skipped.seconds) == (SKIPPED, "because", None)


def test_a_job_without_a_number_says_why_in_the_table() -> None:
    r = JobResult("hudi_spec_mor_upsert", "hudi-spec (Spark)", UPSERT, N, NOT_AVAILABLE, reason="no MOR writer")
    cells = report.row(r)
    assert cells[3] == "not available: no MOR writer"
    assert all(c == "" for c in cells[4:])
    assert len(cells) == len(report.COLUMNS)


def test_markers_are_replaced_and_the_rest_of_the_page_kept() -> None:
    page = f"# Performance\n\nintro\n\n{report.BEGIN_MARK}\nold table\n{report.END_MARK}\n\nanalysis\n"
    new = report.replace_between_markers(page, "| new |")
    assert new.startswith("# Performance\n\nintro\n\n") and new.endswith(f"{report.END_MARK}\n\nanalysis\n")
    assert "| new |" in new and "old table" not in new
    assert report.replace_between_markers(new, "| new |") == new
    with pytest.raises(ValueError, match="markers"):
        report.replace_between_markers("no markers here", "x")


def test_the_docs_page_has_the_markers() -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
    report.replace_between_markers(page.read_text(), "")


def test_shared_tables_are_built_once_and_an_unbuildable_one_is_not_retried(tmp_path: Path) -> None:
    ctx = Context(N, tmp_path)
    calls: list[str] = []

    def build(path: Path) -> None:
        calls.append("built")
        path.mkdir()
        (path / "f").write_text("x")

    first = ctx.cached("t", build)
    assert ctx.cached("t", build) == first and calls == ["built"] and (first / "f").read_text() == "x"
    copy = ctx.copy_of(first, "job")
    assert copy == ctx.table_dir("job") and (copy / "f").read_text() == "x"

    def missing(path: Path) -> None:
        calls.append("tried")
        raise NotAvailable("no such writer yet")

    for _ in range(2):
        with pytest.raises(NotAvailable, match="no such writer yet"):
            ctx.cached("u", missing)
    assert calls == ["built", "tried"]


def test_a_kept_scratch_folder_given_relative_is_used_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--work`` relative to the current folder: the jobs get it absolute (Apache Hudi's writer refuses a relative
    table path)."""
    from bench.harness import work_dir

    monkeypatch.chdir(tmp_path)
    with work_dir(Path("kept")) as work:
        assert work == tmp_path / "kept" and work.is_absolute() and work.is_dir()


def test_a_process_that_dies_is_reported_failed_with_its_error(tmp_path: Path) -> None:
    out = run_step("run", "no_such_job", N, tmp_path, timeout=120)
    assert out.result["status"] == FAILED
    assert "no_such_job" in out.result["reason"] and "died" in out.result["reason"]
    assert out.maxrss_kb > 0


# --- one tiny run of every job ------------------------------------------------------------------------------


# The core run (make test): every peer without Spark, our bulk insert on the local engine (a write with its
# steps table) and one Spark job, the session start (one JVM: a live descendant whose memory is counted). Each
# Spark job starts a JVM of its own, which is most of a run's time: the full run (make slow, make ci-slow) adds
# the Spark writes (plain Spark's is the writes' baseline), every other entry of ours and the naive rewrite.
CORE = ("spark_session_start", "hudi_spec_local_bulk_insert", "delta_rs_write", "delta_rs_merge", "pyiceberg_append",
        "pyiceberg_upsert", "pyarrow_dataset_write", "pyarrow_dataset_read")
MUST_RUN = {*CORE, "hudi_spec_bulk_insert", "spark_parquet_write", "spark_naive_full_rewrite", "hudi_spec_cow_upsert",
            "hudi_spec_snapshot_read_spec_engine", "hudi_rs_read_our_cow_table"}


# Apache Hudi's entries (a JVM with Hudi's bundle each, and shared tables Hudi writes) run apart, in a smoke run of
# their own with our incremental read beside them, so that neither run nears the tests' time limit
APACHE_HUDI = ("apache_hudi_", "hudi_spec_incremental_read")


BASELINES = ("spark_session_start", "hudi_spec_local_bulk_insert", "delta_rs_write", "delta_rs_merge")
"""The jobs every smoke run holds: the Spark session start, a write of ours (with its steps) and the baseline of
the ratios."""


def _smoke_jobs(run: str) -> list[str]:
    if run == "core":
        return [j for j in all_jobs() if j in CORE]
    if run == "apache_hudi":
        return [j for j in all_jobs() if j.startswith(APACHE_HUDI) or j in BASELINES]
    return [j for j in all_jobs() if not j.startswith(APACHE_HUDI)]


@pytest.fixture(scope="module", params=[pytest.param("core", marks=pytest.mark.spark),
                                        pytest.param("all", marks=[pytest.mark.spark, pytest.mark.slow]),
                                        pytest.param("apache_hudi", marks=[pytest.mark.spark, pytest.mark.slow,
                                                                           pytest.mark.timeout(1800)])])
def smoke(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("bench")
    docs = folder / "performance.md"
    docs.write_text(f"# Performance\n\nintro\n\n{report.BEGIN_MARK}\n{report.END_MARK}\n\nafter\n")
    selected = _smoke_jobs(request.param)
    # the core run leaves out the object-store request counts (tests/test_bench_requests.py counts them)
    only = ["--only", *selected, *(["--no-requests"] if request.param == "core" else [])]
    code = main(["--rows", str(N), *only, "--out", str(folder / "results.json"), "--docs", str(docs)])
    data = json.loads((folder / "results.json").read_text())
    return {"code": code, "data": data, "docs": docs.read_text(), "selected": selected,
            "by": {r["job"]: r for r in data["results"]}}


@pytest.mark.spark
def test_smoke_run_writes_the_documented_json(smoke: dict[str, Any]) -> None:
    data = smoke["data"]
    assert smoke["code"] == 0, [r for r in data["results"] if r["status"] == FAILED]
    assert data["schema"] == SCHEMA_ID
    assert data["rows"] == [N]
    assert set(data) >= {"command", "started", "finished", "machine", "versions", "results", "markdown"}
    assert data["machine"]["cpus"] and data["versions"]["pyarrow"] == pa.__version__
    assert [r["job"] for r in data["results"]] == smoke["selected"]
    for r in data["results"]:
        assert r["status"] in (OK, NOT_AVAILABLE), r
        if r["status"] == NOT_AVAILABLE:
            assert r["reason"] and r["seconds"] is None and r["peak_rss_mb"] is None


@pytest.mark.spark
def test_every_peer_and_entry_handles_the_rows_it_was_given(smoke: dict[str, Any]) -> None:
    shape = UpsertShape(N)
    jobs = all_jobs()
    ran = [r for r in smoke["data"]["results"] if r["status"] == OK]
    must = MUST_RUN & set(smoke["selected"])
    assert must <= {r["job"] for r in ran}, "the peers and our COW entries must run"
    for r in ran:
        kind = jobs[r["job"]].kind
        if kind == WRITE:
            assert r["rows"] == N and r["rows_seen"] == r["rows_expected"] == N, r
        elif kind == UPSERT:
            assert r["rows"] == shape.batch and r["rows_seen"] == r["rows_expected"] == shape.rows_after, r
        elif r["job"] == "pyarrow_dataset_read":
            assert r["rows"] == r["rows_seen"] == N
        elif r["job"].endswith("incremental_read") or r["job"] == "hudi_spec_incremental_read_spec_engine":
            assert r["rows"] == r["rows_seen"] == r["rows_expected"] == shape.batch, r  # the upsert's commit alone
        elif r["job"] in ("hudi_spec_cli_read_first_row", "hudi_rs_one_line_read"):  # a small table of its own
            assert r["rows"] == r["rows_seen"] == r["rows_expected"] == SMALL_ROWS, r
        elif kind == "read" or kind == "service":
            assert r["rows"] == r["rows_seen"] == r["rows_expected"] == shape.rows_after, r
        if r["rows_expected"] is not None:
            assert r["rows_check"] == "ok"


@pytest.mark.spark
def test_rates_ratios_memory_and_bytes_add_up(smoke: dict[str, Any]) -> None:
    by = smoke["by"]
    for r in by.values():
        if r["status"] != OK:
            continue
        assert r["seconds"] > 0 and r["process_seconds"] >= r["seconds"]
        if r["rows"]:
            assert math.isclose(r["rows_per_second"], r["rows"] / r["seconds"], rel_tol=1e-12)
        base = by.get(r["vs"]) if r["vs"] else None
        if base is not None and base["status"] == OK:
            assert math.isclose(r["ratio"], r["seconds"] / base["seconds"], rel_tol=1e-12)
        else:
            assert r["ratio"] is None
        assert r["peak_rss_mb"] > 20
        ex = r["extra"]
        assert r["peak_rss_mb"] == round((ex["self_peak_kb"] + ex["descendants_peak_kb"]) / 1024, 1)
        if all_jobs()[r["job"]].kind != STARTUP:  # a start-up job (Spark's session, --help, an import) writes nothing
            assert r["bytes"] > 0
    assert by["delta_rs_merge"]["ratio"] == 1.0  # a baseline divides by itself
    if "spark_parquet_write" in by:
        assert by["spark_parquet_write"]["ratio"] == 1.0
    # Spark jobs hold a JVM: it is a live descendant whose peak is counted
    spark_jobs = [r for r in by.values() if r["status"] == OK and r["spark"]]
    assert spark_jobs and all(r["extra"]["descendants_peak_kb"] > 100_000 for r in spark_jobs)
    assert by["delta_rs_write"]["extra"]["descendants_peak_kb"] == 0
    # the session start is not inside a Spark job's seconds: its process spent at least that long outside them
    # (Apache Hudi's entries start their session, with Hudi's bundle, before the timer in code of their own:
    # bench.apache_hudi.hudi_session; its start, with Hudi's classes, is not the plain session's)
    # (the bound is the smaller of half the session job's start and 2 s: two processes' seconds on a loaded
    # machine are compared only where no load can reverse them, a JVM start taking seconds in any process)
    start = by["spark_session_start"]["seconds"]
    for r in by.values():
        if (r["status"] == OK and r["spark"] and r["job"] != "spark_session_start"
                and not r["job"].startswith("apache_hudi_")):
            assert r["process_seconds"] - r["seconds"] > min(0.5 * start, 2.0), r["job"]


@pytest.mark.spark
def test_markdown_goes_to_stdout_json_and_between_the_docs_markers(smoke: dict[str, Any]) -> None:
    md = smoke["data"]["markdown"]
    assert smoke["docs"].startswith("# Performance\n\nintro\n\n" + report.BEGIN_MARK)
    assert smoke["docs"].endswith(report.END_MARK + "\n\nafter\n")
    assert md.strip() in smoke["docs"]
    assert f"#### {N:,} rows" in md and "excluded from every Spark job's seconds" in md
    assert f"python -m bench --rows {N}" in md
    lines: dict[str, str] = {}
    for ln in md.splitlines():  # the results table's row of each job (the steps table comes after it)
        if ln.startswith("| "):
            lines.setdefault(ln.split(" | ")[0].lstrip("| "), ln)
    # where our writes spent their time: a first and a warm row per write, the total the sum of the steps
    # (its own table only: the targets and the standalone cluster's scale table follow under headings of their own)
    section = md.split("Where our writes spent their time", 1)[1].split("\n####", 1)[0]
    steps = [ln for ln in section.splitlines() if ln.startswith("| hudi")]
    by_run = {tuple(ln.split(" | ")[:2]): ln for ln in steps}
    for r in smoke["data"]["results"]:
        if r["status"] == OK and r["steps"]:
            for run, values in (("first", r["steps"]), ("warm", r["warm_steps"])):
                if values is None:  # run once (the scale jobs on the standalone cluster): no warm row
                    assert (f"| {r['job']}", run) not in by_run
                    continue
                cells = by_run[(f"| {r['job']}", run)].strip("| ").split(" | ")
                assert cells[-1] == f"{sum(values.values()):,.2f}"
    ours = {f"| {r['job']}" for r in smoke["data"]["results"]
            if r["status"] == OK and r["job"].startswith("hudi_spec") and r["kind"] in (WRITE, UPSERT)}
    assert ours and {job for job, _ in by_run} == ours
    for r in smoke["data"]["results"]:
        line = lines[r["job"]]
        if r["status"] == OK:
            assert f"| {r['seconds']:,.2f} |" in line
            if r["bytes"]:
                assert f"| {r['bytes']:,} |" in line
        else:
            assert f"| {r['status']}: " in line


def test_recorded_command_names_no_output_folder() -> None:
    from bench.__main__ import measured_args

    assert measured_args(["--rows", "1000", "--out", "x/r.json", "--work=w", "--only", "a", "--docs", "p.md"]) == [
        "--rows", "1000", "--only", "a"]


# --- the published set, the scale jobs and the targets ------------------------------------------------------


def test_the_published_set_is_the_default_and_rows_alone_sets_the_scale_too() -> None:
    from bench.__main__ import DEFAULT_ROWS, DEFAULT_SCALE_ROWS, parse_args
    from bench.harness import runs_at

    plain = parse_args([])
    assert (plain.rows, plain.scale_rows) == (DEFAULT_ROWS, DEFAULT_SCALE_ROWS) == (
        [1_000_000, 5_000_000], [1_000_000, 5_000_000, 20_000_000])
    small = parse_args(["--rows", "100"])
    assert (small.rows, small.scale_rows) == ([100], [100])
    both = parse_args(["--rows", "100", "--scale-rows", "100", "400"])
    assert both.scale_rows == [100, 400]
    jobs = all_jobs()
    cluster, local = jobs["hudi_spec_cluster_cow_upsert"], jobs["hudi_spec_cow_upsert"]
    assert cluster.scale and not local.scale and cluster.vs == local.name
    assert [n for n in (100, 400) if runs_at(cluster, n, [100], [100, 400])] == [100, 400]
    assert [n for n in (100, 400) if runs_at(local, n, [100], [100, 400])] == [100]


def test_every_target_compares_two_jobs_of_the_bench() -> None:
    from bench.targets import TARGETS

    jobs = all_jobs()
    assert len(TARGETS) == 30
    assert {t.base for t in TARGETS if (t.base or "").startswith("apache_hudi_")} == {
        name for name in jobs if name.startswith("apache_hudi_") and "snapshot_read" not in name} | {
        "apache_hudi_cow_snapshot_read"}  # every Apache Hudi entry is a base of ours (the MOR read: no Spark read)
    for t in TARGETS:
        assert t.job in jobs and (t.base is None or t.base in jobs), t
        assert t.limit is None or 0 < t.limit <= 2.0
    absolute = {t.job: t.limit for t in TARGETS if t.base is None}  # seconds, whole processes
    assert absolute == {"hudi_spec_cli_help": 0.3, "hudi_spec_import_reader": 0.15}


def _r(job: str, seconds: float | None, warm: float | None = None, status: str = OK, n: int = N,
       steps: dict[str, float] | None = None) -> dict[str, Any]:
    return {"job": job, "n": n, "status": status, "reason": None if status == OK else "why", "seconds": seconds,
            "warm_seconds": warm, "engine": "e", "steps": steps, "warm_steps": steps}


def test_targets_are_judged_from_the_results_first_and_warm() -> None:
    from bench.targets import MET, MISSED, TARGETS, targets_table, verdicts

    results = [_r("delta_rs_merge", 2.0, 1.0), _r("hudi_spec_local_mor_upsert", 1.8, 1.2,
                                                  steps={"handles": 0.9, "index lookup": 0.2}),
               _r("hudi_spec_local_cow_upsert", 3.0, 1.5), _r("hudi_spec_local_cow_upsert_tuned", None, status=FAILED),
               _r("hudi_spec_bulk_insert", 4.0, 2.0), _r("hudi_spec_cluster_bulk_insert", 6.0)]
    judged = verdicts(results, [N])
    assert len(judged) == len(TARGETS)
    assert all(v.result == "not run" for v in judged if (v.target.base or "").startswith("apache_hudi_"))
    by = {(v.target.job, v.n): v for v in judged if not (v.target.base or "").startswith("apache_hudi_")}
    mor = by[("hudi_spec_local_mor_upsert", N)]  # 0.9x first, 1.2x warm against a limit of 1.0x
    assert (mor.result, round(mor.first or 0, 2), round(mor.warm or 0, 2)) == (MISSED, 0.9, 1.2)
    assert "warm 1.20x > 1.00x" in mor.why and "first" not in mor.why.split(";")[0]
    assert "slowest step: handles, 0.90 s of 1.10 s" in mor.why
    cow = by[("hudi_spec_local_cow_upsert", N)]  # 1.5x / 1.5x against 2.0x
    assert cow.result == MET and cow.why == "first 1.50x ≤ 2.00x, warm 1.50x ≤ 2.00x"
    assert by[("hudi_spec_local_cow_upsert_tuned", N)].result == FAILED
    assert by[("hudi_spec_local_mor_upsert_tuned", N)].result == "not run"
    cluster = by[("hudi_spec_cluster_bulk_insert", N)]  # no limit: it completed; the ratio to local[2] shown
    assert (cluster.result, cluster.first, cluster.warm) == (MET, 1.5, None)
    assert by[("hudi_spec_bulk_insert", N)].result == "not run"  # its baseline did not run
    table = targets_table(results, [N])
    assert table.count("\n") == len(TARGETS) + 1 and "| 0.90x | 1.20x | **missed** |" in table


def test_paired_and_absolute_targets_are_judged_from_the_jobs_own_figures() -> None:
    """The command-line read's verdict is the median of its own pairs' ratios (not two separate series), the
    floor shown beside it; ``--help`` and importing the reader are held to seconds."""
    from bench.targets import MET, MISSED, verdicts

    def spread(median: float) -> dict[str, float]:
        return {"min": median / 2, "median": median, "max": median * 2}

    cli = {**_r("hudi_spec_cli_read_first_row", 0.2), "extra": {
        "wall_ratio": spread(1.25), "cpu_ratio": spread(1.2), "floor_wall_ratio": spread(0.97),
        "floor_cpu_ratio": spread(0.96)}}
    results = [cli, _r("hudi_rs_one_line_read", 0.25), _r("hudi_spec_cli_help", 0.31),
               {**_r("hudi_spec_import_reader", 0.12), "extra": {"wall_seconds": spread(0.12),
                                                                  "cpu_seconds": spread(0.1),
                                                                  "floor_wall_seconds": spread(0.11)}}]
    by = {v.target.job: v for v in verdicts(results, [N])}
    read = by["hudi_spec_cli_read_first_row"]  # 0.80x by the two series' seconds; the pairs say 1.25x
    assert (read.result, read.first, read.warm) == (MISSED, 1.25, None)
    assert read.why == "1.25x > 1.00x (CPU 1.20x); the floor, the libraries alone doing the same, 0.97x (CPU 0.96x)"
    assert (by["hudi_spec_cli_help"].result, by["hudi_spec_cli_help"].why) == (MISSED, "0.31 s > 0.30 s")
    imported = by["hudi_spec_import_reader"]
    assert (imported.result, imported.why) == (MET, "0.12 s ≤ 0.15 s (CPU 0.10 s); the floor, the libraries alone "
                                                    "doing the same, 0.11 s")
    unkept = verdicts([_r("hudi_spec_cli_read_first_row", 0.2), _r("hudi_rs_one_line_read", 0.25)], [N])
    assert next(v for v in unkept if v.target.job == "hudi_spec_cli_read_first_row").result == "no figure"


def test_the_scale_table_and_curves_show_the_driver_and_the_file_groups() -> None:
    from bench.charts import charts_from_json, curve_svg

    def cluster(n: int, seconds: float, groups: int) -> JobResult:
        r = JobResult("hudi_spec_cluster_cow_upsert", "c", UPSERT, n, OK, seconds=seconds, ratio=1.25,
                      steps={"index lookup": 1.0, "handles": seconds - 1.0})
        r.extra = {"file_groups": groups, "driver_python_peak_kb": 200 * 1024, "driver_jvm_peak_kb": 800 * 1024}
        return r

    hudi = JobResult("apache_hudi_cluster_cow_upsert", "h", UPSERT, 4_000, OK, seconds=4.0, bytes=123_456)
    hudi.extra = {"file_groups": 20, "driver_python_peak_kb": 100 * 1024, "driver_jvm_peak_kb": 900 * 1024}
    results = [hudi, cluster(1_000, 2.0, 10), cluster(4_000, 5.0, 20),
               JobResult("x", "e", WRITE, 1_000, OK, seconds=1.0)]
    table = report.scale_table(results)
    assert "| hudi_spec_cluster_cow_upsert | 1,000 | 10 | 2.00 | 1.25x |  | 200 | 800 |" in table  # no Hudi at 1,000
    # Apache Hudi's on the same cluster right after ours at each row count; ours over Hudi's: 5.0 s / 4.0 s
    lines = [ln.split(" | ")[:2] for ln in table.splitlines()[2:]]
    assert lines == [["| hudi_spec_cluster_cow_upsert", "1,000"], ["| hudi_spec_cluster_cow_upsert", "4,000"],
                     ["| apache_hudi_cluster_cow_upsert", "4,000"]]
    assert "| hudi_spec_cluster_cow_upsert | 4,000 | 20 | 5.00 | 1.25x | 1.25x | 200 | 800 |" in table
    assert "| apache_hudi_cluster_cow_upsert | 4,000 | 20 | 4.00 |  |  | 100 | 900 | 123,456 |" in table
    assert "| x |" not in table and report.target_sizes(results) == [1_000]
    assert report.scale_sizes(results) == [4_000, 1_000]
    dicts = report.result_dicts(results)
    svg = curve_svg(dicts, "scale_seconds")  # Apache Hudi's line dashed, named by its operation too
    assert svg.count("<circle") == 3 and "20 groups" in svg and ">cow_upsert<" in svg
    assert ">Apache Hudi cow_upsert<" in svg and svg.count('stroke-dasharray="5 3"') == 1
    assert "1,000" in curve_svg(dicts[1:], "scale_driver_mb")  # 1,000 MB at both sizes: the driver did not grow
    assert "no scale job ran" in curve_svg(dicts[3:], "scale_seconds")
    page = Path(__file__).resolve().parents[1] / "docs" / "performance.json"
    assert set(charts_from_json(page)) == {"seconds", "peak_rss_mb", "scale_seconds", "scale_driver_mb"}


CLUSTER_OPERATIONS = ("bulk_insert", "cow_upsert", "mor_upsert", "compaction")


def test_apache_hudis_cluster_jobs_mirror_ours_and_ours_are_held_to_them() -> None:
    """Apache Hudi's scale jobs: its local[2] job's run on the standalone cluster (the same prepare, data and
    options), each one the base of a ≤ 1.0x target of our cluster job of the same operation."""
    from bench.targets import TARGETS

    jobs = all_jobs()
    for op in CLUSTER_OPERATIONS:
        ours, theirs, local = (jobs[f"hudi_spec_cluster_{op}"], jobs[f"apache_hudi_cluster_{op}"],
                               jobs[f"apache_hudi_{op}"])
        assert theirs.scale and theirs.spark and not theirs.warm and theirs.vs == local.name
        assert theirs.kind == ours.kind == local.kind and theirs.engine != ours.engine
        assert theirs.prepare is not None if op != "bulk_insert" else theirs.prepare is None
    scale = {name for name, job in jobs.items() if job.scale}
    held = {(t.job, t.base, t.limit) for t in TARGETS if t.scale}
    assert held == {(f"hudi_spec_cluster_{op}", f"apache_hudi_cluster_{op}", 1.0) for op in CLUSTER_OPERATIONS}
    for t in TARGETS:  # a scale target is one between two scale jobs, and only that
        assert t.scale == (t.job in scale and t.base in scale), t


def test_apache_hudis_cluster_session_carries_the_bundle_to_the_master(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session of Hudi's cluster jobs is opened on the cluster's master with Hudi's bundle in ``spark.jars``
    (so the worker's executors fetch it) and Hudi's settings; without a bundle the job is not available."""
    from bench import apache_hudi
    from conformance.adapters import hudi_spark
    from reference.engines import spark_session

    opened: list[tuple[str | None, dict[str, str]]] = []

    class Session:
        def sql(self, text: str) -> Session:
            return self

        def collect(self) -> list[Any]:
            return []

    def fake(master: str | None = None, app_name: str = "", conf: dict[str, str] | None = None) -> Session:
        opened.append((master, dict(conf or {})))
        return Session()

    monkeypatch.setattr(spark_session, "get_or_create_session", fake)
    monkeypatch.setattr(hudi_spark, "bundle", lambda: "hudi-bundle.jar")
    apache_hudi.hudi_session("spark://127.0.0.1:7077")
    master, conf = opened[0]
    assert master == "spark://127.0.0.1:7077" and conf["spark.jars"] == "hudi-bundle.jar"
    assert conf["spark.sql.extensions"] == hudi_spark.HUDI_CONF["spark.sql.extensions"]
    monkeypatch.setattr(hudi_spark, "bundle", lambda: None)
    with pytest.raises(NotAvailable, match="no hudi-spark bundle"):
        apache_hudi.hudi_session("spark://127.0.0.1:7077")
    assert len(opened) == 1


def test_the_cluster_targets_are_judged_at_the_scale_row_counts() -> None:
    """Our cluster jobs against Apache Hudi's on the cluster, at the row counts the scale jobs ran at (not the
    others'); a run of the cluster jobs alone still has its targets table."""
    from bench.targets import MET, MISSED, verdicts

    big = 4 * N
    results = [_r("hudi_spec_cluster_cow_upsert", 8.0, n=big), _r("apache_hudi_cluster_cow_upsert", 10.0, n=big),
               _r("hudi_spec_cluster_mor_upsert", 9.0, n=big), _r("apache_hudi_cluster_mor_upsert", 6.0, n=big),
               _r("hudi_spec_cow_upsert", 2.0, 1.0), _r("apache_hudi_cow_upsert", 4.0, 2.0)]
    judged = verdicts(results, [N], [big])
    scale = [v for v in judged if v.target.scale]
    assert scale and {v.n for v in scale} == {big} and {v.n for v in judged if not v.target.scale} == {N}
    by = {v.target.job: v for v in scale}
    assert (by["hudi_spec_cluster_cow_upsert"].result, by["hudi_spec_cluster_cow_upsert"].first) == (MET, 0.8)
    assert (by["hudi_spec_cluster_mor_upsert"].result, by["hudi_spec_cluster_mor_upsert"].first) == (MISSED, 1.5)
    assert by["hudi_spec_cluster_bulk_insert"].result == "not run"
    local = next(v for v in judged
                 if (v.target.job, v.target.base) == ("hudi_spec_cow_upsert", "apache_hudi_cow_upsert"))
    assert (local.result, local.first, local.warm) == (MET, 0.5, 0.5)

    def result(job: str, seconds: float) -> JobResult:
        return JobResult(job, "e", UPSERT, big, OK, seconds=seconds, rows=big)

    info = report.RunInfo("python -m bench", "s", "f", report.machine(), report.versions())
    md = report.markdown([result("hudi_spec_cluster_cow_upsert", 8.0), result("apache_hudi_cluster_cow_upsert", 10.0)],
                         info)
    targets = md.split("#### Targets", 1)[1].split("\n####", 1)[0]
    row = next(ln for ln in targets.splitlines() if "COW upsert ≤ 1.0x Apache Hudi on the same cluster" in ln)
    assert f"| {big:,} | 0.80x | — | **met** |" in row
    assert "spec reader" not in targets  # no other job ran: no other target is judged


def test_the_command_line_read_runs_beside_hudi_rs_in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-process job: ``hudi-spec read TABLE --limit 1`` and the one-line hudi-rs read of the same
    table (version 9, the writer's default), in turn, each pair's ratio kept; what ours printed is checked."""
    from bench import processes

    monkeypatch.setattr(processes, "PAIRS", 2)
    ctx = Context(N, tmp_path)
    table = processes.small_table(ctx)
    assert "hoodie.table.version=9" in (table / ".hoodie" / "hoodie.properties").read_text()
    m = processes.cli_read_first_row(ctx)
    assert m.rows == m.rows_seen == m.rows_expected == SMALL_ROWS and m.extra is not None
    assert m.extra["pairs"] == 2 and m.seconds == m.extra["wall_seconds"]["median"] > 0
    floor = processes.floor_command(table)  # the base files of the snapshot, one per partition of this table
    assert len(floor) - 3 == 10 and all(f.endswith(".parquet") and Path(f).is_file() for f in floor[3:])
    for key in ("wall_ratio", "cpu_ratio", "floor_wall_ratio", "floor_cpu_ratio"):
        spread = m.extra[key]
        assert 0 < spread["min"] <= spread["median"] <= spread["max"], key
    assert processes.hudi_rs_command(table)[-1] == str(table) and processes.cli_command(table)[1:] == [
        "read", str(table), "--limit", "1"]


def test_the_start_up_jobs_time_help_and_importing_the_reader(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``hudi-spec --help`` and ``import spec.read.reader`` as whole processes: the median of the runs, their
    spreads kept; a process that fails is an error, not a time."""
    from bench import processes

    monkeypatch.setattr(processes, "STARTUP_RUNS", 3)
    for job in (processes.cli_help, processes.import_spec_reader):
        m = job(Context(N, tmp_path))
        assert m.extra is not None and m.extra["runs"] == 3 and m.rows == 0
        assert m.seconds == m.extra["wall_seconds"]["median"] > 0 and m.extra["cpu_seconds"]["min"] > 0
        assert ("floor_cpu_seconds" in m.extra) == (job is processes.import_spec_reader)  # import pyarrow
    with pytest.raises(RuntimeError, match="exited 2"):
        processes._median_process([str(Path(sys.executable).parent / "hudi-spec"), "--no-such-option"])

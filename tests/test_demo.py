"""``make demo``: the reference writer builds a merge-on-read table step by step, and after every step
the Spark reader, the spec reader and hudi-rs read the rows the demo meant to write."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.checker import check_table
from reference import demo
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action

pytestmark = pytest.mark.spark


# the demo's default, table version 9, in make test; versions 6 and 8 (the other timeline layout and the
# version before it) under make ci-slow
@pytest.mark.parametrize("version", [pytest.param(6, marks=pytest.mark.slow),
                                     pytest.param(8, marks=pytest.mark.slow), 9])
def test_demo_builds_and_checks_a_mor_table(spark: Any, version: int, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "trips"
    result = demo.run(path, version, rows=400, spark=spark)
    out = capsys.readouterr().out
    assert (path / ".hoodie" / "hoodie.properties").is_file()
    timeline = Timeline.load(str(path))
    assert timeline.layout == (1 if version == 6 else 2)
    actions = [i.action for i in timeline.instants]
    assert actions == [Action.DELTA_COMMIT] * 3 + [Action.COMMIT, Action.DELTA_COMMIT, Action.CLEAN]
    assert all(i.is_completed for i in timeline.instants)
    assert timeline.origin_action(result.instants["compaction"]) == Action.COMPACTION
    assert list(result.instants) == ["insert", "upsert", "delete", "compaction", "upsert again", "clean"]
    # a check after each of the six steps, then one per query type
    assert len(result.checks) == 10
    assert f"All {len(result.checks)} checks passed" in out and "FAILED" not in out
    assert out.count("[spark = spec = hudi-rs]") == 10
    # read before the clean: Apache Hudi refuses time travel to the compaction once a clean retains later commits
    for step in ("1. spark", "2. generate", "3. insert", "6. compact", "8. read", "9. clean", "11. timeline"):
        assert step in out
    assert check_table(str(path)).ok
    for line in demo.closing_hints(path):  # suggestions runnable as printed (tests/test_cli_newcomer.py runs them)
        assert line in out
    assert "11. timeline" in out and f"{demo.hudi_spec_command()} timeline {path}" in out


def test_a_reader_that_disagrees_fails_the_demo(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    real = demo.read_hudi_rs

    def one_row_short(*args: Any, **kwargs: Any) -> pa.Table | None:
        table = real(*args, **kwargs)
        return table.slice(1) if table is not None else None

    monkeypatch.setattr(demo, "read_hudi_rs", one_row_short)
    assert demo.main(["--path", str(tmp_path / "trips"), "--rows", "40"], spark=spark) == 1
    captured = capsys.readouterr()
    assert "demo FAILED: after insert: hudi-rs read 39 rows, the spec reader 40; missing from it:" in captured.err
    assert "3. insert" not in captured.out  # the step that failed is not reported as done


def test_canonical_rows_ignore_order_and_normalize_values() -> None:
    a = pa.table({"k": ["b", "a"], "d": [dt.date(2025, 1, 2), dt.date(2025, 1, 1)], "x": [0.1, 2.0]})
    b = pa.table({"x": [2.0, 0.1], "k": ["a", "b"], "d": [dt.date(2025, 1, 1), dt.date(2025, 1, 2)]})
    assert demo.canonical(a) == demo.canonical(b)
    assert demo.canonical(a, ("k",)) == ['{"k": "a"}', '{"k": "b"}']
    utc = pa.table({"t": pa.array([dt.datetime(2025, 1, 1, 8)], pa.timestamp("us", tz="UTC"))})
    naive = pa.table({"t": pa.array([dt.datetime(2025, 1, 1, 8)], pa.timestamp("us"))})
    assert demo.canonical(utc) == demo.canonical(naive)
    assert demo.canonical(None) == []


def test_the_dataset_is_seeded() -> None:
    one, two = demo.Trips(), demo.Trips()
    assert one.new(50, ts=1) == two.new(50, ts=1)
    assert demo.Trips.table(one.new(5, ts=1)).schema == demo.TRIP_SCHEMA

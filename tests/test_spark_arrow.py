"""Arrow into and out of Spark without pandas (``reference.engines.spark_arrow``): no value changes on the way, and
the grouped map calls its function once per key with all of that key's rows."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from reference.engines.spark_arrow import apply_in_arrow, arrow_to_spark, groups, spark_to_arrow

ROWS = pa.table({
    "i": pa.array([1, None, 2**62 + 1], pa.int64()),
    "n": pa.array([None, 7, -3], pa.int32()),
    "d": pa.array([0.1, None, float("inf")], pa.float64()),
    "s": pa.array(["a", "", None], pa.string()),
    "b": pa.array([b"\x00\xff", None, b""], pa.binary()),
    "t": pa.array([True, None, False], pa.bool_()),
    "day": pa.array([dt.date(1970, 1, 1), None, dt.date(2024, 2, 29)], pa.date32()),
    "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=dt.UTC), None, dt.datetime(1969, 12, 31, 23, 59, 59,
                                                                                              tzinfo=dt.UTC)],
                   pa.timestamp("us", tz="UTC")),
    "dec": pa.array([Decimal("1.50"), None, Decimal("-99999999.99")], pa.decimal128(10, 2)),
    "l": pa.array([[1, None], None, []], pa.list_(pa.int64())),
    "st": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": None}],
                   pa.struct([("x", pa.int64()), ("y", pa.string())])),
})


@pytest.mark.spark
def test_rows_go_into_spark_and_back_unchanged(spark: Any) -> None:
    df = arrow_to_spark(spark, ROWS)
    assert df.count() == 3
    back = spark_to_arrow(df.orderBy("dec"))
    assert back.sort_by("dec").to_pylist() == ROWS.sort_by("dec").to_pylist()
    assert back.schema.field("i").type == pa.int64() and back.schema.field("ts").type == pa.timestamp("us", tz="UTC")


@pytest.mark.spark
def test_an_empty_table_keeps_its_schema(spark: Any) -> None:
    df = arrow_to_spark(spark, ROWS.slice(0, 0))
    assert df.columns == ROWS.column_names and df.count() == 0
    empty = spark_to_arrow(df)
    assert empty.num_rows == 0 and empty.schema.names == ROWS.column_names


@pytest.mark.spark
def test_the_grouped_map_calls_once_per_key_with_all_its_rows(spark: Any) -> None:
    rows = pa.table({"k": [i % 5 if i % 7 else None for i in range(200)], "v": list(range(200))})
    df = arrow_to_spark(spark, rows).repartition(3)

    def summary(group: pa.Table) -> pa.Table:
        keys = set(group.column("k").to_pylist())
        assert len(keys) == 1
        return pa.table({"k": [str(keys.pop())], "n": [group.num_rows], "total": [sum(group.column("v").to_pylist())]})

    out = apply_in_arrow(df, "k", summary, "k string, n long, total long").collect()
    expected: dict[str, tuple[int, int]] = {}
    for k, v in zip(rows.column("k").to_pylist(), rows.column("v").to_pylist(), strict=True):
        n, total = expected.get(str(k), (0, 0))
        expected[str(k)] = (n + 1, total + v)
    assert {r["k"]: (r["n"], r["total"]) for r in out} == expected


def test_groups_cut_a_sorted_stream_at_every_change_of_key_across_batches() -> None:
    keys = [None, None, "a", "a", "a", "b", "c", "c"]
    table = pa.table({"k": keys, "v": range(len(keys))})
    empty = pa.RecordBatch.from_pylist([], schema=table.schema)
    stream = [*table.slice(0, 3).to_batches(), empty, *table.slice(3, 1).to_batches(), *table.slice(4).to_batches()]
    out = [(g.column("k")[0].as_py(), g.column("v").to_pylist()) for g in groups(iter(stream), "k")]
    assert out == [(None, [0, 1]), ("a", [2, 3, 4]), ("b", [5]), ("c", [6, 7])]

"""Which parquet columns are dictionary-encoded (``spec.config.parquet_dictionary``): parquet-mr's first-page
rule, the writer's files following it, and (slow) Apache Hudi's own files decided the same way."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.data import base_rows
from reference.api import HudiTable
from spec.config.parquet_dictionary import (
    PAGE_ROW_COUNT_LIMIT,
    VARIABLE,
    dictionary_columns,
    first_page_keeps_dictionary,
    plain_width,
    rle_hybrid_size,
)
from spec.file_group.log_file.log_blocks import parquet_data_block

# --- the ids' encoding, counted by hand from parquet-mr's RunLengthBitPackingHybridEncoder ------------------


def test_eight_equal_ids_are_one_rle_run() -> None:
    assert rle_hybrid_size([0] * 8, 1) == 2  # varint(8 << 1) and the value in one byte
    assert rle_hybrid_size([3] * 200, 2) == 3  # varint(400) takes two bytes


def test_ids_that_change_are_bit_packed_in_groups_of_eight() -> None:
    assert rle_hybrid_size([0, 1] * 4, 1) == 2  # a header byte, one group of 8 one-bit values
    assert rle_hybrid_size([0, 1, 2], 2) == 3  # the last group padded to 8 values: 2 bytes, and the header
    assert rle_hybrid_size([0, 1] * 256, 1) == 2 + 64  # 64 groups: a run holds at most 63, so two headers


def test_a_run_starting_inside_a_group_fills_the_group_first() -> None:
    # 5 then nine 0s: the 0s fill the first group (7), the 2 left are a second, padded, bit-packed group
    assert rle_hybrid_size([5] + [0] * 9, 3) == 1 + 3 + 3
    # 5 then 7 + 8 zeros: the first group is full after 7 of them, the 8 left are an RLE run
    assert rle_hybrid_size([5] + [0] * 15, 3) == (1 + 3) + (1 + 1)


# --- the first page decides -----------------------------------------------------------------------------------


def test_unique_values_are_written_plain_few_values_keep_their_dictionary() -> None:
    n = 30_000
    assert not first_page_keeps_dictionary(pa.array([f"k{i:010d}" for i in range(n)]), VARIABLE)
    assert not first_page_keeps_dictionary(pa.array(range(n), pa.int64()), 8)
    assert first_page_keeps_dictionary(pa.array([f"p{i % 10}" for i in range(n)]), VARIABLE)
    assert first_page_keeps_dictionary(pa.array([i % 1000 for i in range(n)], pa.int32()), 4)


def test_only_the_first_page_counts() -> None:
    # unique values on the first page, one value after it: plain, though a dictionary would win on the whole
    first = [f"unique-{i:08d}" for i in range(PAGE_ROW_COUNT_LIMIT)]
    assert not first_page_keeps_dictionary(pa.chunked_array([first, ["same"] * 200_000]), VARIABLE)
    assert first_page_keeps_dictionary(pa.chunked_array([["same"] * PAGE_ROW_COUNT_LIMIT, first]), VARIABLE)


def test_the_dictionary_must_be_smaller_not_equal() -> None:
    # two int32 values alternating: 2 x 4 bytes of dictionary + 1 + bit-packed ids, against 4 bytes a value
    assert first_page_keeps_dictionary(pa.array([0, 1] * 8, pa.int32()), 4)  # 8 + 1 + 3 = 12 < 64
    assert not first_page_keeps_dictionary(pa.array([7], pa.int32()), 4)  # 4 of dictionary + 1 is not < 4


def test_plain_widths_are_parquets() -> None:
    assert plain_width(pa.string()) == VARIABLE
    assert plain_width(pa.int32()) == plain_width(pa.date32()) == plain_width(pa.float32()) == 4
    assert plain_width(pa.int64()) == plain_width(pa.timestamp("us", tz="UTC")) == plain_width(pa.float64()) == 8
    assert plain_width(pa.decimal128(10, 2)) == 5  # 10 digits need 5 bytes of two's complement
    assert plain_width(pa.bool_()) is None and plain_width(pa.list_(pa.int32())) is None


def test_nested_leaves_keep_the_dictionary() -> None:
    t = pa.table({"s": pa.array([{"x": "a"}] * 10), "k": [f"k{i}" for i in range(10)]})
    assert dictionary_columns(t) == ["s.x"]


# --- the files the writer leaves ----------------------------------------------------------------------------


def _dictionary_encoded(source: Any) -> list[str]:
    rg = pq.ParquetFile(source).metadata.row_group(0)
    return [rg.column(i).path_in_schema for i in range(rg.num_columns) if rg.column(i).dictionary_page_offset]


OPTIONS = {"hoodie.table.name": "dict", "hoodie.datasource.write.recordkey.field": "key",
           "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts"}
LOW_CARDINALITY = ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name", "part", "qty", "day"]


def test_base_files_keep_dictionaries_only_where_parquet_mr_does(tmp_path: Path) -> None:
    HudiTable(str(tmp_path), engine="local").write(base_rows(50_000), "bulk_insert", OPTIONS)
    files = sorted(p for p in tmp_path.rglob("*.parquet") if ".hoodie" not in p.parts)
    assert files
    for f in files:
        assert _dictionary_encoded(f) == LOW_CARDINALITY  # keys, seqnos, ts, price, at, payload: plain


def test_parquet_log_blocks_follow_the_rule() -> None:
    rows = base_rows(5_000)
    block = parquet_data_block("20240101000000000", "{}", rows)
    assert _dictionary_encoded(io.BytesIO(block.content)) == ["part", "qty", "day"]


# --- Apache Hudi's own files ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.spark
def test_apache_hudis_files_are_dictionary_encoded_where_the_rule_says(apache_hudi: Any, tmp_path: Path) -> None:
    source = tmp_path / "in.parquet"
    pq.write_table(base_rows(60_000), source)
    (apache_hudi.read.parquet(str(source)).write.format("hudi").options(**OPTIONS)
     .option("hoodie.datasource.write.hive_style_partitioning", "true")
     .option("hoodie.datasource.write.operation", "bulk_insert").mode("append").save(str(tmp_path / "t")))
    files = sorted(p for p in (tmp_path / "t").rglob("*.parquet") if ".hoodie" not in p.parts)
    assert files
    for f in files:
        table = pq.read_table(f)
        assert _dictionary_encoded(f) == dictionary_columns(table), f.name

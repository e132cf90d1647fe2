"""Parquet compression as Hudi writes it (``spec.config.parquet_codec``), on every write path.

Every parquet file the writer leaves — base files of both engines, compacted base files, parquet log
blocks — must be compressed with ``hoodie.parquet.compression.codec`` at the level parquet-mr runs it
at (gzip: zlib's 6, not Arrow's 9). A file does not record its level, so each check rewrites the
file's own rows with pyarrow at the expected level and at Arrow's default, with otherwise the same
writer settings, and compares the compressed size of every column chunk: equal to the expected
level's, and the data chosen so that the two levels differ (otherwise the check could not fail).
"""

from __future__ import annotations

import io
import random
import string
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference.api import HudiTable
from reference.io.handles import writer_compression
from spec.config.parquet_codec import CODECS, ParquetCompression, parquet_compression
from spec.config.parquet_dictionary import dictionary_columns
from spec.errors import InvalidConfig
from spec.file_group.log_file.log_blocks import parquet_data_block

# --- the rule ------------------------------------------------------------------------------------


def test_gzip_runs_at_zlibs_default_level_and_zstd_at_parquet_mrs() -> None:
    assert parquet_compression() == ParquetCompression("gzip", 6)  # Hudi's default codec
    assert parquet_compression("GZIP") == ParquetCompression("gzip", 6)
    assert parquet_compression("zstd") == ParquetCompression("zstd", 3)
    assert parquet_compression("snappy") == ParquetCompression("snappy", None)
    assert parquet_compression("lz4") == ParquetCompression("lz4", None)
    assert parquet_compression("uncompressed") == ParquetCompression("none", None)


def test_an_unknown_codec_is_refused() -> None:
    with pytest.raises(InvalidConfig, match=r"hoodie\.parquet\.compression\.codec"):
        parquet_compression("brotli9")


@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_takes_every_codec_at_its_level(codec: str) -> None:
    sink = io.BytesIO()
    pq.write_table(pa.table({"a": list(range(100))}), sink, **writer_compression(codec))
    meta = pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata
    expected = {"uncompressed": "UNCOMPRESSED"}.get(codec, codec.upper())
    assert meta.row_group(0).column(0).compression == expected


# --- the files the writer leaves -----------------------------------------------------------------


def _rows(n: int, seed: int, ts: int = 1, first: int = 0) -> pa.Table:
    rnd = random.Random(seed)
    words = ["".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(3, 9))) for _ in range(400)]
    return pa.table({
        "key": [f"k{i:07d}" for i in range(first, first + n)],
        "part": [f"p{i % 2}" for i in range(first, first + n)],
        "ts": pa.array([ts] * n, pa.int64()),
        "qty": pa.array([rnd.randint(0, 10_000) for _ in range(n)], pa.int32()),
        "payload": [" ".join(rnd.choices(words, k=8)) for _ in range(n)],
    })


OPTIONS = {"hoodie.table.name": "codec", "hoodie.datasource.write.recordkey.field": "key",
           "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts"}


def _chunk_sizes(source: Any) -> list[tuple[str, str, int]]:
    meta = pq.ParquetFile(source).metadata
    return [(meta.row_group(g).column(c).path_in_schema, meta.row_group(g).column(c).compression,
             meta.row_group(g).column(c).total_compressed_size)
            for g in range(meta.num_row_groups) for c in range(meta.num_columns)]


def _rewritten(table: pa.Table, compression: str, level: int | None) -> list[tuple[str, str, int]]:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression=compression, compression_level=level,
                   use_dictionary=dictionary_columns(table))
    return _chunk_sizes(io.BytesIO(sink.getvalue()))


def assert_compressed_like(source: Any, codec: str = "gzip") -> None:
    """``source``'s column chunks are exactly as large as its rows rewritten at Hudi's level for
    ``codec``, and not as large as at Arrow's default level (which the data tells apart)."""
    expected = parquet_compression(codec)
    table = pq.read_table(source)
    ours = _chunk_sizes(source)
    assert ours == _rewritten(table, expected.codec, expected.level)
    assert ours != _rewritten(table, expected.codec, None), "the data does not tell the levels apart"


def _base_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.parquet") if ".hoodie" not in p.parts)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_local_engine_base_and_compacted_files_are_gzip_at_level_6(tmp_path: Path, table_type: str) -> None:
    table = HudiTable(str(tmp_path), engine="local")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    table.write(_rows(3000, 1), "bulk_insert", options)
    created = _base_files(tmp_path)
    assert created
    table.write(_rows(600, 2, ts=2), "upsert", {**options, "hoodie.parquet.small.file.limit": "0"})
    for f in _base_files(tmp_path):
        assert_compressed_like(f)
    if table_type == "MERGE_ON_READ":
        assert table.compact() is not None
        compacted = set(_base_files(tmp_path)) - set(created)
        assert compacted
        for f in compacted:
            assert_compressed_like(f)
    else:
        assert set(_base_files(tmp_path)) - set(created), "the upsert wrote no merged base file"


def test_the_codec_option_reaches_every_base_file(tmp_path: Path) -> None:
    table = HudiTable(str(tmp_path), engine="local")
    table.write(_rows(2000, 3), "bulk_insert", {**OPTIONS, "hoodie.parquet.compression.codec": "zstd"})
    for f in _base_files(tmp_path):
        assert_compressed_like(f, "zstd")


def test_a_parquet_log_block_is_gzip_at_level_6() -> None:
    rows = _rows(3000, 4)
    block = parquet_data_block("20240101000000000", "{}", rows)
    assert_compressed_like(io.BytesIO(block.content))
    zstd = parquet_data_block("20240101000000000", "{}", rows, "zstd")
    assert_compressed_like(io.BytesIO(zstd.content), "zstd")


@pytest.mark.spark
def test_spark_engine_base_and_compacted_files_are_gzip_at_level_6(spark: Any, tmp_path: Path) -> None:
    table = HudiTable(str(tmp_path), spark)
    options = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    table.write(_rows(3000, 5), "bulk_insert", options)
    created = _base_files(tmp_path)
    table.write(_rows(600, 6, ts=2), "upsert", {**options, "hoodie.parquet.small.file.limit": "0"})
    assert table.compact() is not None
    assert set(_base_files(tmp_path)) - set(created), "compaction wrote no base file"
    for f in _base_files(tmp_path):
        assert_compressed_like(f)

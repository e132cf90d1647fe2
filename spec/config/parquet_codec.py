"""Parquet compression as Hudi writes it: the codec, and the level the codec runs at.

Hudi names the codec of every parquet file it writes (base files, compacted base files, parquet log
blocks) with one option, ``hoodie.parquet.compression.codec``, default **gzip**. It has no option for
the level: the level is parquet-mr's, and parquet-mr takes it from the Hadoop configuration, whose
defaults Hudi leaves alone:

- **gzip**: Hadoop's ``GzipCodec`` compresses with a ``ZlibCompressor`` at ``zlib.compress.level``,
  default ``DEFAULT_COMPRESSION`` — zlib's default level, **6**;
- **zstd**: parquet-mr's ``ZstandardCodec`` at ``parquet.compression.codec.zstd.level``, default **3**;
- **snappy**, **lz4** and **uncompressed** have no level.

A writer that leaves the level to its library writes different bytes at a different speed: Arrow's
defaults are gzip level 9 and zstd level 1. At gzip level 9 a file is within about 1% of its size at
level 6 and takes several times as long to write, so a writer that wants Hudi's files (and Hudi's
write cost) passes the level explicitly.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieStorageConfig``
(``PARQUET_COMPRESSION_CODEC_NAME``, default ``gzip``; no level option), ``HoodieParquetConfig`` and
``HoodieWriteConfig.getParquetCompressionCodec`` (the codec handed to parquet-mr, also for
``HoodieParquetDataBlock``); parquet-mr's ``CodecFactory`` (``zlib.compress.level``), Hadoop's
``GzipCodec``, ``ZlibFactory.getCompressionLevel`` and ``ZlibCompressor.CompressionLevel``, and
parquet-mr's ``ZstandardCodec`` (``DEFAULT_PARQUET_COMPRESS_ZSTD_LEVEL = 3``). Hudi's development
branch later moves the default codec away from gzip; the 0.15.x, 1.0.x and 1.1.x releases write gzip.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec.errors import InvalidConfig

# --8<-- [start:codec]
DEFAULT_CODEC = "gzip"  # hoodie.parquet.compression.codec
CODECS = ("gzip", "snappy", "zstd", "lz4", "uncompressed")
ZLIB_DEFAULT_LEVEL = 6  # zlib.compress.level = DEFAULT_COMPRESSION (-1), which zlib runs at level 6
ZSTD_DEFAULT_LEVEL = 3  # parquet.compression.codec.zstd.level


@dataclass(frozen=True)
class ParquetCompression:
    """What a parquet writer is given: the codec (Arrow's name for it) and its level (None: the
    codec has no level)."""

    codec: str
    level: int | None


def parquet_compression(codec: str = DEFAULT_CODEC) -> ParquetCompression:
    """The codec and level parquet-mr compresses with when Hudi writes with
    ``hoodie.parquet.compression.codec = codec`` (any case): gzip at zlib's default level 6, zstd at
    parquet-mr's default level 3, snappy and lz4 with no level, uncompressed as ``none``."""
    name = codec.strip().lower()
    if name not in CODECS:
        raise InvalidConfig(f"hoodie.parquet.compression.codec={codec!r} is not valid",
                            hint=f"use one of {', '.join(CODECS)}")
    if name == "gzip":
        return ParquetCompression("gzip", ZLIB_DEFAULT_LEVEL)
    if name == "zstd":
        return ParquetCompression("zstd", ZSTD_DEFAULT_LEVEL)
    if name == "uncompressed":
        return ParquetCompression("none", None)
    return ParquetCompression(name, None)
# --8<-- [end:codec]


__all__ = ["CODECS", "DEFAULT_CODEC", "ZLIB_DEFAULT_LEVEL", "ZSTD_DEFAULT_LEVEL", "ParquetCompression",
           "parquet_compression"]

"""A local table's files reached with ``os``, with the answers ``pyarrow.fs.LocalFileSystem`` gives, and a whole
parquet file read by the reader ``pyarrow.parquet.ParquetFile`` wraps, with its settings: a read of a local table
imports neither ``pyarrow.parquet`` nor ``pyarrow.fs`` (whose ``pyarrow._fs`` imports ``ssl``), 4% of the
instructions of a first look at a small table (``docs/performance.md``). No documented pyarrow entry point reads a
parquet file without ``pyarrow.fs``; ``spec.storage.hoodie_storage.Storage`` uses these for a local base path.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieWrapperFileSystem`` (0.15.x)
and ``HoodieHadoopStorage`` (1.x), which reach a local table through Hadoop's ``LocalFileSystem``: a folder's
entries listed with their sizes and modification times, a file read whole.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

import pyarrow as pa


def list_entries(prefix: str, folder: str, recursive: bool) -> Iterator[tuple[str, int, int, bool]]:
    """(path, size, modification time in ms, is a folder) of each entry of ``folder`` (and below it,
    ``recursive``), as ``pyarrow.fs.LocalFileSystem`` lists them: paths relative to ``prefix``, a folder's size 0;
    nothing for a folder that does not exist, nor for an entry gone before it is looked at (a broken link, a file
    deleted meanwhile); NotADirectoryError for a file."""
    try:
        entries = os.scandir(folder)
    except FileNotFoundError:
        return
    with entries:
        for entry in entries:
            try:
                found = entry.stat()
            except FileNotFoundError:
                continue
            is_dir = stat.S_ISDIR(found.st_mode)
            path = entry.path[len(prefix):] if entry.path.startswith(prefix) else entry.path
            yield path, 0 if is_dir else found.st_size, found.st_mtime_ns // 1_000_000, is_dir
            if recursive and is_dir:
                yield from list_entries(prefix, entry.path, recursive)


def read(path: str) -> bytes:
    """The whole content of the file ``path``."""
    with open(path, "rb") as f:
        return f.read()


def size(path: str) -> int:
    """The size of the file ``path``; 0 for a folder or a path that does not exist."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return 0
    return 0 if stat.S_ISDIR(found.st_mode) else found.st_size


def read_parquet(path: str, threaded_rows: int) -> pa.Table:
    """Every row of the local parquet file ``path``: what ``pq.ParquetFile(path).read()`` gives, read by the reader
    it wraps (``pyarrow._parquet.ParquetReader``) with ``ParquetFile``'s settings, decoded on pyarrow's threads
    when the file has at least ``threaded_rows`` rows."""
    from pyarrow._parquet import ParquetReader

    reader = ParquetReader()
    with pa.OSFile(path) as source:
        reader.open(source, pre_buffer=False, arrow_extensions_enabled=True)  # ParquetFile's defaults
        return reader.read_all(use_threads=reader.metadata.num_rows >= threaded_rows)

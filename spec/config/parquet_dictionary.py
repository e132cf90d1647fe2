"""Parquet dictionary encoding as Hudi writes it: which columns of a file are dictionary-encoded.

Hudi writes every parquet file with parquet-mr, dictionary encoding on (``hoodie.parquet.dictionary.enabled``,
default true) and the page size and dictionary page size both ``hoodie.parquet.page.size`` (default 1 MiB).
parquet-mr does not keep a dictionary for every column: each column chunk starts dictionary-encoded, and
**the first page decides**. When the first page is complete, its dictionary-encoded size (one byte of bit
width, then the dictionary ids in the RLE/bit-packing hybrid) plus the dictionary's size (the plain size of
its distinct values) must be smaller than the page's values written plain; otherwise the whole chunk falls
back to plain encoding. A column of near-unique values (record keys, sequence numbers, timestamps,
doubles, free text) is written plain; a column of few values (partition paths, commit times, small ranges)
keeps its dictionary. Later in the chunk a dictionary that grows past the dictionary page size falls back
for the pages after it (Arrow's writer does the same at the same 1 MiB).

Arrow's writer keeps the dictionary of every column until it outgrows 1 MiB: for a column of unique values
it writes a dictionary page of all of them and ids besides, which gzip compresses worse than the plain
values (measured on the benchmark's 100,000-row files: 1.20x the bytes of Hudi's file, 1.00x with this rule).

The first page: the first 20,000 rows (parquet-mr's ``parquet.page.row.count.limit``) or fewer, as many as
fill the page size with plain values (parquet-mr checks the size every so often, so its first page can end
a little later; the decision is the same unless the two sizes are within a few bytes).

Plain sizes: a byte array is 4 bytes of length and its bytes; a fixed-length byte array its length; INT32
and FLOAT 4, INT64 and DOUBLE 8. BOOLEAN is never dictionary-encoded. The leaves of nested columns (lists,
structs, maps) keep Arrow's choice (the dictionary).

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x alike, and 1.2.0, checked on its files): ``HoodieBaseParquetWriter``
(page size, dictionary page size and dictionary encoding from ``HoodieParquetConfig``), ``HoodieStorageConfig``
(``hoodie.parquet.page.size``, ``hoodie.parquet.dictionary.enabled``); parquet-mr 1.12 and 1.13 (Spark's):
``FallbackValuesWriter.getBytes`` (the first page decides), ``DictionaryValuesWriter.isCompressionSatisfying``
and ``shouldFallBack``, ``RunLengthBitPackingHybridEncoder`` (the ids' encoding), ``ParquetProperties``
(``DEFAULT_PAGE_ROW_COUNT_LIMIT``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

# --8<-- [start:dictionary]
PAGE_SIZE = 1024 * 1024  # hoodie.parquet.page.size, also the dictionary page size
PAGE_ROW_COUNT_LIMIT = 20_000  # parquet.page.row.count.limit
VARIABLE = -1
"""The plain size of a byte array: 4 bytes of length and its bytes."""


def plain_width(t: pa.DataType) -> int | None:
    """The plain size in bytes of one value of Arrow type ``t`` as Arrow writes it to parquet (``VARIABLE``: a
    byte array), or None: not judged (booleans, which no writer dictionary-encodes, and nested types)."""
    if pa.types.is_dictionary(t):
        return plain_width(t.value_type)
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t) or pa.types.is_binary_view(t)):
        return VARIABLE
    if pa.types.is_fixed_size_binary(t):
        return int(t.byte_width)
    if pa.types.is_decimal(t):  # a fixed-length byte array of the fewest bytes holding the precision
        return next(n for n in itertools.count(1) if 2 ** (8 * n - 1) > 10 ** t.precision - 1)
    if pa.types.is_float16(t):
        return 2
    if pa.types.is_integer(t):
        return 8 if t.bit_width == 64 else 4
    if pa.types.is_float32(t) or pa.types.is_date(t) or pa.types.is_time32(t):
        return 4
    if pa.types.is_float64(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return 8
    return None


def rle_hybrid_size(ids: Sequence[int], bit_width: int) -> int:
    """Bytes of ``ids`` in parquet-mr's RLE/bit-packing hybrid at ``bit_width`` (``runs_size`` of its runs)."""
    return runs_size([sum(1 for _ in run) for _, run in itertools.groupby(ids)], bit_width)


def runs_size(runs: Sequence[int], bit_width: int) -> int:
    """Bytes of ids in parquet-mr's RLE/bit-packing hybrid at ``bit_width``, given the lengths of their runs of
    equal ids: values go in groups of 8; 8 or more equal values from a group's start are one RLE run (a varint
    header and the value in whole bytes), every other group is bit-packed (``bit_width`` bytes a group, one
    header byte per run of up to 63 groups, the last group padded)."""
    size, buffered, groups = 0, 0, 0  # groups: of the bit-packed run being written (0: none)

    def pack() -> None:
        nonlocal size, groups
        if groups == 0 or groups >= 63:
            size, groups = size + 1, 0
        size, groups = size + bit_width, groups + 1

    for left in runs:
        if buffered:
            take = min(left, 8 - buffered)
            buffered, left = buffered + take, left - take
            if buffered < 8:
                continue
            pack()
            buffered = 0
        if left >= 8:
            size += len(_varint(left << 1)) + (bit_width + 7) // 8
            groups = 0
        else:
            buffered = left
    if buffered:
        pack()
    return size


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def first_page_keeps_dictionary(column: pa.ChunkedArray | pa.Array, width: int) -> bool:
    """Whether parquet-mr keeps the dictionary of a column whose values are ``width`` bytes plain (``VARIABLE``:
    byte arrays): on its first page, dictionary-encoded ids plus the dictionary are smaller than plain."""
    head = column.slice(0, PAGE_ROW_COUNT_LIMIT)
    values = (head.combine_chunks() if isinstance(head, pa.ChunkedArray) else head).drop_null()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if width == VARIABLE:
        sizes = pc.add(pc.binary_length(values), 4).cast(pa.int64())
        fits = int(pc.sum(pc.less_equal(pc.cumulative_sum(sizes), PAGE_SIZE)).as_py() or 0)
        values, sizes = values.slice(0, max(fits, 1)), sizes.slice(0, max(fits, 1))
        raw = int(pc.sum(sizes).as_py() or 0)
    else:
        values = values.slice(0, max(PAGE_SIZE // width, 1))
        raw = width * len(values)
    if not len(values):
        return True  # no value: nothing to decide (Arrow writes an empty dictionary)
    encoded = pc.dictionary_encode(values)
    distinct = encoded.dictionary
    dictionary = int(pc.sum(pc.add(pc.binary_length(distinct), 4)).as_py()) if width == VARIABLE \
        else width * len(distinct)
    bit_width = (len(distinct) - 1).bit_length()
    groups = (len(values) + 7) // 8
    if dictionary + 1 + groups * bit_width + (groups + 62) // 63 < raw:  # even with every id bit-packed
        return True
    ends = pc.run_end_encode(encoded.indices).run_ends
    runs = pc.subtract(ends, pa.concat_arrays([pa.array([0], ends.type), ends.slice(0, len(ends) - 1)]))
    short = int(pc.sum(pc.if_else(pc.less(runs, 8), runs, 0)).as_py() or 0)  # always bit-packed
    if dictionary + 1 + short * bit_width // 8 >= raw:
        return False
    return dictionary + 1 + runs_size(runs.to_pylist(), bit_width) < raw


def _leaf_paths(name: str, t: pa.DataType) -> Iterator[str]:
    """The parquet column paths Arrow writes a field of type ``t`` to."""
    if pa.types.is_struct(t):
        for f in t:
            yield from _leaf_paths(f"{name}.{f.name}", f.type)
    elif pa.types.is_map(t):
        yield from _leaf_paths(f"{name}.key_value.key", t.key_type)
        yield from _leaf_paths(f"{name}.key_value.value", t.item_type)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        yield from _leaf_paths(f"{name}.list.element", t.value_type)
    else:
        yield name


def dictionary_columns(table: pa.Table) -> list[str]:
    """The parquet column paths of ``table`` to write dictionary-encoded (pyarrow's ``use_dictionary``): the
    top-level columns whose first page keeps its dictionary in parquet-mr, and every nested leaf."""
    keep: list[str] = []
    for field, column in zip(table.schema, table.columns, strict=True):
        width = plain_width(field.type)
        if width is None:
            keep.extend(_leaf_paths(field.name, field.type))
        elif first_page_keeps_dictionary(column, width):
            keep.append(field.name)
    return keep
# --8<-- [end:dictionary]


__all__ = ["PAGE_ROW_COUNT_LIMIT", "PAGE_SIZE", "VARIABLE", "dictionary_columns", "first_page_keeps_dictionary",
           "plain_width", "rle_hybrid_size", "runs_size"]

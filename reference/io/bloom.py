"""Bloom filters for base-file footers, vectorized with numpy.

The rule is ``spec.file_group.bloom_filter`` (pure Python, checked bit for bit on real files); this module
computes the same filter for many keys at once, grouping keys by byte length and running the
murmur rounds on uint32 arrays. Tests assert both give identical bytes.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from spec.errors import MetadataFormatError
from spec.file_group.bloom_filter import (
    DEFAULT_FPP,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_NUM_ENTRIES,
    DYNAMIC_V0,
    FOOTER_KEY,
    FOOTER_TYPE_KEY,
    MURMUR_HASH,
    bit_size,
    deserialize_dynamic,
    num_hashes,
)

_Array = npt.NDArray[Any]
"""A numpy array of any element type."""

_M = np.uint32(0x5BD1E995)
HASH_CHUNK = 16_384
"""Keys hashed at once: their chain of hashes (30 per key by default) fits in a processor's cache."""


def _prepare(block: _Array) -> tuple[list[_Array], _Array | None]:
    """The parts of Hadoop's murmur that do not depend on the seed: each 4-byte word of every key,
    mixed (``k *= m; k ^= k >>> 24; k *= m``), and the sign-extended tail bytes (those present: bytes
    length-3, length-2, length-1), shifted by 16, 8, 0 and xor-ed together (None: no tail)."""
    length = block.shape[1]
    u32 = block.astype(np.uint32)
    words = []
    for i in range(length >> 2):
        k = u32[:, 4 * i] | (u32[:, 4 * i + 1] << 8) | (u32[:, 4 * i + 2] << 16) | (u32[:, 4 * i + 3] << 24)
        k = k * _M
        k ^= k >> np.uint32(24)
        words.append(k * _M)
    left = length & 3
    signed = block.view(np.int8).astype(np.int32).view(np.uint32)
    tail = None
    for i in range(left):
        t = signed[:, length - left + i] << np.uint32(8 * (left - 1 - i))
        tail = t if tail is None else tail ^ t
    return words, tail


def _murmur(length: int, words: list[_Array], tail: _Array | None, seed: _Array) -> _Array:
    """Hadoop murmur of rows of equal-length keys (``length`` bytes; ``_prepare``'s words and tail),
    per-row seeds (a new array; ``seed`` is left as it is)."""
    h = seed ^ np.uint32(length)
    for k in words:
        h *= _M
        h ^= k
    if tail is not None:
        h ^= tail
        h *= _M
    h ^= h >> np.uint32(13)
    h *= _M
    h ^= h >> np.uint32(15)
    return h


def _utf8_rows(keys: Sequence[str] | pa.Array | pa.ChunkedArray) -> tuple[_Array, _Array, _Array]:
    """The keys' UTF-8 bytes as one buffer, with each key's start offset and byte length."""
    arr = keys if isinstance(keys, pa.Array | pa.ChunkedArray) else pa.array(list(keys), pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(
        0, dtype=np.uint8)
    return data, offsets[:-1], np.diff(offsets)


def positions_by_hash(keys: Sequence[str] | pa.Array | pa.ChunkedArray, hashes: int, bits: int) -> _Array:
    """Bit positions of every key, one row per hash (hashes × n, int32), as
    ``spec.file_group.bloom_filter.positions`` computes them: Hadoop's ``Math.abs(h % bits)`` of each hash of the
    chain, in 32 bits as Java does."""
    data, starts, lengths = _utf8_rows(keys)
    out = np.empty((hashes, len(starts)), dtype=np.int32)
    modulus = np.int32(bits)
    lengths_present = np.unique(lengths)
    one_length = len(lengths_present) == 1  # the common case: no selection, no scatter
    with np.errstate(over="ignore"):
        for length in lengths_present:
            idx = None if one_length else np.flatnonzero(lengths == length)
            first = starts if idx is None else starts[idx]
            block = (data[first[:, None] + np.arange(length)] if length
                     else np.zeros((len(first), 0), dtype=np.uint8))
            words, tail = _prepare(block)
            h = np.zeros(len(first), dtype=np.uint32)
            chain = np.empty((hashes, len(first)), dtype=np.uint32)
            for j in range(hashes):  # each hash is seeded with the one before
                h = _murmur(int(length), words, tail, h)
                chain[j] = h
            # a remainder is smaller than the modulus, so its absolute value cannot overflow
            found = np.abs(np.fmod(chain.view(np.int32), modulus))
            if idx is None:
                out[:] = found
            else:
                out[:, idx] = found
    return out


def _layout(n: int, row_entries: int, max_entries: int) -> tuple[int, int]:
    """The dynamic filter's bookkeeping after ``n`` keys: how many rows it has, and the keys counted in
    its last row. A new row opens every ``row_entries`` keys until the rows hold ``max_entries``; then
    the last row takes the rest, its count starting again from 0 every ``row_entries`` keys."""
    max_rows = max(1, -(-max_entries // row_entries))
    rows = min(max(1, -(-n // row_entries)), max_rows)
    return rows, (n - 1) % row_entries + 1 if n else 0


def _footer_of(rows_on: list[_Array], start: int, keys: Sequence[str] | pa.Array | pa.ChunkedArray,
               row_entries: int, fpp: float, max_entries: int) -> dict[str, str]:
    """The filter whose rows' bits are ``rows_on`` after ``start`` keys, with ``keys`` added after them
    (key ``i`` of the whole sequence lands in row ``min(i // row_entries, last row)``)."""
    bits, hashes = bit_size(row_entries, fpp), num_hashes(bit_size(row_entries, fpp), row_entries)
    nbytes = (bits + 7) // 8
    n = start + len(keys)
    rows, count = _layout(n, row_entries, max_entries)
    on = [rows_on[r] if r < len(rows_on) else np.zeros(nbytes * 8, dtype=bool) for r in range(rows)]
    # key i of the whole sequence lands in row min(i // row_entries, last row); the keys are hashed a chunk at a
    # time, so each chunk's hash chain stays in the processor's cache
    for c0 in range(0, len(keys), HASH_CHUNK):
        c1 = min(c0 + HASH_CHUNK, len(keys))
        pos = positions_by_hash(keys[c0:c1], hashes, bits)
        for r in range(rows):
            first = max(r * row_entries - start, c0)
            last = c1 if r == rows - 1 else min(max((r + 1) * row_entries - start, 0), c1)
            if first < last:
                on[r][pos[:, first - c0:last - c0].ravel()] = True
    out = [struct.pack(">iibiiii", -1, hashes, MURMUR_HASH, bits, row_entries, count, rows)]
    for r in range(rows):
        data = np.packbits(on[r], bitorder="little")  # bit i is bit i % 8 of byte i // 8
        out += [struct.pack(">iibi", -1, hashes, MURMUR_HASH, bits), data.tobytes()]
    return {FOOTER_KEY: base64.b64encode(b"".join(out)).decode("ascii"), FOOTER_TYPE_KEY: DYNAMIC_V0}


def footer(keys: Sequence[str] | pa.Array | pa.ChunkedArray, row_entries: int = DEFAULT_NUM_ENTRIES,
           fpp: float = DEFAULT_FPP, max_entries: int = DEFAULT_MAX_ENTRIES) -> dict[str, str]:
    """The DYNAMIC_V0 filter of ``keys`` as footer key/values (same bytes as the spec's filter)."""
    return _footer_of([], 0, keys, row_entries, fpp, max_entries)


def extended_footer(stored: Mapping[bytes, bytes] | None, stored_keys: int,
                    keys: Sequence[str] | pa.Array | pa.ChunkedArray, row_entries: int = DEFAULT_NUM_ENTRIES,
                    fpp: float = DEFAULT_FPP, max_entries: int = DEFAULT_MAX_ENTRIES) -> dict[str, str] | None:
    """The footer filter of a file whose keys are a stored file's ``stored_keys`` keys, in their order,
    followed by ``keys``: the stored file's filter (``stored``: its footer metadata) with ``keys``
    added, the same bytes as ``footer`` of the whole sequence (``spec.file_group.bloom_filter``: adding a key only
    sets bits of the current row). None when the stored filter cannot be continued: absent, not a
    ``DYNAMIC_V0`` filter of these settings, or its bookkeeping does not match ``stored_keys``."""
    if not stored or stored.get(FOOTER_TYPE_KEY.encode()) != DYNAMIC_V0.encode() \
            or FOOTER_KEY.encode() not in stored or not stored_keys:
        return None
    try:
        raw = base64.b64decode(stored[FOOTER_KEY.encode()], validate=True)
        held = deserialize_dynamic(raw)
    except (ValueError, MetadataFormatError):
        return None
    bits = bit_size(row_entries, fpp)
    hashes = num_hashes(bits, row_entries)
    rows, count = _layout(stored_keys, row_entries, max_entries)
    # the spec's parse, held to its format byte for byte (markers, hash type, no trailing bytes)
    if held.serialize() != raw or (held.row_entries, held.current_row_count, len(held.rows)) != (
            row_entries, count, rows) or any((r.bits, r.hashes) != (bits, hashes) for r in held.rows):
        return None
    rows_on = [np.unpackbits(np.frombuffer(bytes(r.data), dtype=np.uint8), bitorder="little").astype(bool)
               for r in held.rows]
    return _footer_of(rows_on, stored_keys, keys, row_entries, fpp, max_entries)

"""Bloom filters for base-file footers, vectorized with numpy.

The rule is ``spec.bloom_filter`` (pure Python, checked bit for bit on real files); this module
computes the same filter for many keys at once, grouping keys by byte length and running the
murmur rounds on uint32 arrays. Tests assert both give identical bytes.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence

import numpy as np

from spec.bloom_filter import (
    DEFAULT_FPP,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_NUM_ENTRIES,
    DYNAMIC_V0,
    FOOTER_KEY,
    FOOTER_TYPE_KEY,
    MURMUR_HASH,
    bit_size,
    num_hashes,
)

_M = np.uint32(0x5BD1E995)


def _murmur(block: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Hadoop murmur over rows of equal-length keys (``block``: n × L uint8), per-row seeds."""
    length = block.shape[1]
    h = seed ^ np.uint32(length)
    u32 = block.astype(np.uint32)
    for i in range(length >> 2):
        k = u32[:, 4 * i] | (u32[:, 4 * i + 1] << 8) | (u32[:, 4 * i + 2] << 16) | (u32[:, 4 * i + 3] << 24)
        k = k * _M
        k ^= k >> np.uint32(24)
        k = k * _M
        h = h * _M
        h ^= k
    left = length & 3
    if left:
        signed = block.view(np.int8).astype(np.int32).view(np.uint32)
        if left >= 3:
            h ^= signed[:, length - 3] << np.uint32(16)
        if left >= 2:
            h ^= signed[:, length - 2] << np.uint32(8)
        h ^= signed[:, length - 1]
        h = h * _M
    h ^= h >> np.uint32(13)
    h = h * _M
    h ^= h >> np.uint32(15)
    return h


def key_positions(keys: Sequence[str], hashes: int, bits: int) -> np.ndarray:
    """Bit positions of every key (n × hashes), as ``spec.bloom_filter.positions`` computes them."""
    out = np.empty((len(keys), hashes), dtype=np.int64)
    encoded = [k.encode("utf-8") for k in keys]
    by_len: dict[int, list[int]] = {}
    for i, e in enumerate(encoded):
        by_len.setdefault(len(e), []).append(i)
    with np.errstate(over="ignore"):
        for length, idx in by_len.items():
            block = (np.frombuffer(b"".join(encoded[i] for i in idx), dtype=np.uint8).reshape(len(idx), length)
                     if length else np.zeros((len(idx), 0), dtype=np.uint8))
            h = np.zeros(len(idx), dtype=np.uint32)
            for j in range(hashes):
                h = _murmur(block, h)
                out[idx, j] = np.abs(h.view(np.int32).astype(np.int64)) % bits
    return out


def footer(keys: Sequence[str], row_entries: int = DEFAULT_NUM_ENTRIES, fpp: float = DEFAULT_FPP,
           max_entries: int = DEFAULT_MAX_ENTRIES) -> dict[str, str]:
    """The DYNAMIC_V0 filter of ``keys`` as footer key/values (same bytes as the spec's filter)."""
    bits, hashes = bit_size(row_entries, fpp), num_hashes(bit_size(row_entries, fpp), row_entries)
    pos = key_positions(keys, hashes, bits)
    # which row each key lands in, and the count in the last row (the dynamic filter's bookkeeping)
    row_of = np.empty(len(keys), dtype=np.int64)
    rows, count = 1, 0
    for i in range(len(keys)):
        if count >= row_entries:
            if rows * row_entries < max_entries:
                rows += 1
            count = 0
        row_of[i] = rows - 1
        count += 1
    nbytes = (bits + 7) // 8
    out = [struct.pack(">iibiiii", -1, hashes, MURMUR_HASH, bits, row_entries, count, rows)]
    for r in range(rows):
        p = pos[row_of == r].ravel()
        data = np.zeros(nbytes, dtype=np.uint8)
        np.bitwise_or.at(data, p >> 3, (1 << (p & 7)).astype(np.uint8))
        out += [struct.pack(">iibi", -1, hashes, MURMUR_HASH, bits), data.tobytes()]
    return {FOOTER_KEY: base64.b64encode(b"".join(out)).decode("ascii"), FOOTER_TYPE_KEY: DYNAMIC_V0}

"""Deterministic benchmark data: N rows, 10 partitions, 8 columns of mixed types, and an upsert batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

PARTITIONS = 10


def base_rows(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(n, dtype=np.int64)
    return pa.table({
        "key": pa.array([f"k{i:09d}" for i in ids]),
        "part": pa.array([f"p{i % PARTITIONS}" for i in ids]),
        "ts": pa.array(np.ones(n, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
        "price": pa.array(rng.random(n) * 100),
        "day": pa.array((rng.integers(18000, 20000, n)).astype("datetime64[D]")),
        "at": pa.array((rng.integers(0, 10**15, n)).astype("datetime64[us]")),
        "note": pa.array([f"note-{i % 1000}" for i in ids]),
    })


def upsert_rows(n: int, seed: int = 11) -> pa.Table:
    """10% of n rows: half updates of existing keys (ts=2), half new keys."""
    m = max(2, n // 10)
    rng = np.random.default_rng(seed)
    old = rng.choice(n, m // 2, replace=False).astype(np.int64)
    new = np.arange(n, n + (m - m // 2), dtype=np.int64)
    ids = np.concatenate([old, new])
    return pa.table({
        "key": pa.array([f"k{i:09d}" for i in ids]),
        "part": pa.array([f"p{i % PARTITIONS}" for i in ids]),
        "ts": pa.array(np.full(len(ids), 2, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 1000, len(ids), dtype=np.int32)),
        "price": pa.array(rng.random(len(ids)) * 100),
        "day": pa.array((rng.integers(18000, 20000, len(ids))).astype("datetime64[D]")),
        "at": pa.array((rng.integers(0, 10**15, len(ids))).astype("datetime64[us]")),
        "note": pa.array([f"upd-{i % 1000}" for i in ids]),
    })

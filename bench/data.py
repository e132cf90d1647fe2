"""Deterministic benchmark data: N rows in 10 partitions, 8 columns of mixed types, and an upsert batch.

Columns: ``key`` (string record key), ``part`` (partition string), ``ts`` (long ordering field),
``qty`` (int), ``price`` (double), ``day`` (date), ``at`` (timestamp, microseconds, UTC) and
``payload`` (string of 40 to 60 characters). Row ``i`` has key ``k`` + ``i`` zero-padded to 10 digits
and partition ``p`` + ``i % 10``, so a key always lives in the same partition.

The upsert batch is 10% of N: half of it updates keys drawn without replacement from the base rows
(in their own partition, with a larger ``ts`` and new values), half inserts keys N, N+1, ... that
the base rows do not have. After the upsert a table holds N + (number of new keys) rows.

Generation is vectorized (numpy + Arrow compute) so 5M rows take seconds, and seeded so every job
of a run, and every run, sees the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

PARTITIONS = 10
KEY_DIGITS = 10
BASE_SEED = 7
UPSERT_SEED = 11
UPSERT_FRACTION = 10  # the batch is N // 10 rows
TS_UPDATE_OFFSET = 10**9  # every update's ts is above every base row's ts

SCHEMA = pa.schema([
    pa.field("key", pa.string(), nullable=False),
    pa.field("part", pa.string(), nullable=False),
    pa.field("ts", pa.int64(), nullable=False),
    pa.field("qty", pa.int32()),
    pa.field("price", pa.float64()),
    pa.field("day", pa.date32()),
    pa.field("at", pa.timestamp("us", tz="UTC")),
    pa.field("payload", pa.string()),
])


@dataclass(frozen=True)
class UpsertShape:
    """How many rows an upsert batch of a base of ``n`` rows has, and how many of them are new keys."""

    n: int

    @property
    def batch(self) -> int:
        return max(2, self.n // UPSERT_FRACTION)

    @property
    def updates(self) -> int:
        return self.batch // 2

    @property
    def inserts(self) -> int:
        return self.batch - self.updates

    @property
    def rows_after(self) -> int:
        return self.n + self.inserts


def _keys(ids: npt.NDArray[Any]) -> pa.Array:
    digits = pc.utf8_lpad(pc.cast(pa.array(ids, pa.int64()), pa.string()), KEY_DIGITS, "0")
    return pc.binary_join_element_wise("k", digits, "")


def _parts(ids: npt.NDArray[Any]) -> pa.Array:
    return pc.binary_join_element_wise("p", pc.cast(pa.array(ids % PARTITIONS, pa.int64()), pa.string()), "")


def _rows(ids: npt.NDArray[Any], ts: npt.NDArray[Any], rng: np.random.Generator, tag: str) -> pa.Table:
    m = len(ids)
    filler = pc.utf8_lpad(pc.cast(pa.array(rng.integers(0, 10**12, m), pa.int64()), pa.string()), 12, "0")
    pad = pa.array(np.where(rng.random(m) < 0.5, "x" * 20, "y" * 40).astype(object), pa.string())
    payload = pc.binary_join_element_wise(f"{tag}-", filler, "-", pad, "")
    days = rng.integers(18_000, 20_000, m).astype("datetime64[D]")
    micros = rng.integers(1_500_000_000_000_000, 1_800_000_000_000_000, m).astype("datetime64[us]")
    return pa.table([
        _keys(ids),
        _parts(ids),
        pa.array(ts, pa.int64()),
        pa.array(rng.integers(0, 1_000, m, dtype=np.int32), pa.int32()),
        pa.array(rng.random(m) * 100.0, pa.float64()),
        pa.array(days, pa.date32()),
        pa.array(micros, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        payload,
    ], schema=SCHEMA)


def base_rows(n: int, seed: int = BASE_SEED) -> pa.Table:
    """N rows, keys 0 .. N-1, ordering values below ``TS_UPDATE_OFFSET``."""
    if n < 1:
        raise ValueError(f"the benchmark needs at least one row, got {n}")
    rng = np.random.default_rng(seed)
    ids = np.arange(n, dtype=np.int64)
    return _rows(ids, rng.integers(1, TS_UPDATE_OFFSET, n), rng, "base")


def upsert_rows(n: int, seed: int = UPSERT_SEED) -> pa.Table:
    """The upsert batch for a base of N rows: updates of existing keys, then new keys, shuffled."""
    shape = UpsertShape(n)
    if shape.updates > n:
        raise ValueError(f"a base of {n} rows is too small for an upsert batch of {shape.batch}")
    rng = np.random.default_rng(seed)
    old = rng.choice(n, shape.updates, replace=False).astype(np.int64)
    new = np.arange(n, n + shape.inserts, dtype=np.int64)
    ids = rng.permutation(np.concatenate([old, new]))
    ts = TS_UPDATE_OFFSET + rng.integers(1, TS_UPDATE_OFFSET, len(ids))
    return _rows(ids, ts, rng, "upd")


@dataclass(frozen=True)
class Inputs:
    """The two input files of one row count, written once per run and read by every job."""

    base: Path
    upsert: Path


def write_inputs(n: int, folder: Path) -> Inputs:
    """Write ``base.parquet`` and ``upsert.parquet`` for N rows into ``folder`` (once; reused if present)."""
    folder.mkdir(parents=True, exist_ok=True)
    inputs = Inputs(folder / "base.parquet", folder / "upsert.parquet")
    for path, make in ((inputs.base, base_rows), (inputs.upsert, upsert_rows)):
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            pq.write_table(make(n), tmp, compression="snappy")
            tmp.rename(path)
    return inputs

"""Reading tables with hudi-rs (the ``hudi`` package), normalized for comparison with our reader."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa


def hudi_rs_read(path: str, *, read_optimized: bool = False, as_of: str | None = None,
                 incremental: tuple[str | None, str] | None = None,
                 storage_options: dict[str, str] | None = None) -> pa.Table | None:
    """Rows hudi-rs reads for one query (None when it returns no batches); ``storage_options`` reach
    an object store (endpoint, keys, region)."""
    import hudi
    from hudi import HudiQueryType, HudiReadOptions

    builder = hudi.HudiTableBuilder.from_base_uri(path)
    if storage_options:
        builder = builder.with_storage_options(storage_options)
    table = builder.build()
    opts = HudiReadOptions()
    if read_optimized:
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if as_of:
        opts = opts.with_as_of_timestamp(as_of)
    if incremental:
        opts = opts.with_query_type(HudiQueryType.Incremental)
        if incremental[0]:
            opts = opts.with_start_timestamp(incremental[0])
        opts = opts.with_end_timestamp(incremental[1])
    batches = table.read(opts)
    return pa.Table.from_batches(batches) if batches else None


def as_multiset(table: pa.Table | None, drop: tuple[str, ...] = ()) -> list[str]:
    """A table's rows as a sorted list of canonical JSON strings (a multiset over all columns)."""
    if table is None or table.num_columns == 0:
        return []
    keep = [c for c in table.column_names if c not in drop]
    return sorted(json.dumps(r, sort_keys=True, default=_plain) for r in table.select(keep).to_pylist())


def _plain(value: Any) -> str:
    return repr(value)

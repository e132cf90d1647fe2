"""The model's inputs to bucketing: the sizes of earlier commits (the average record size,
``spec.write.partitioner``) and a table's bucket index (``spec.index.bucket_index``: its settings and the file
group of every bucket), used by the model's batch and streaming writes (``spec.model.writes``,
``spec.model.table_model``).

Source (Apache Hudi 1.2.0, measured; 0.15.x, 1.0.x and 1.1.x not measured here): ``AverageRecordSizeUtils`` (the
write stats it reads), ``HoodieIndexConfig`` (``BUCKET_INDEX_*``) and ``HoodieSimpleBucketIndex``
(``loadBucketIdToFileIdMappingForPartition``).
"""

from __future__ import annotations

from typing import Any

from spec.errors import UnsupportedOption
from spec.index.bucket_index import (
    DEFAULT_NUM_BUCKETS,
    SIMPLE_ENGINE,
    UNSUPPORTED_OPERATIONS,
    BucketIndexConfig,
    bucket_file_groups,
    bucket_index_config,
)
from spec.model.queries import view
from spec.model.state import TableState
from spec.timeline.instant import Action


def commit_totals(state: TableState) -> list[tuple[int, int]]:
    """(bytes, records) of the base files each completed commit / replacecommit wrote, oldest first
    (the write stats ``AverageRecordSizeUtils`` reads)."""
    out = []
    for inst in state.timeline:
        if inst.is_completed and inst.action in (Action.COMMIT, Action.REPLACE_COMMIT):
            files = [b for g in state.groups for b in g.base_files if b.instant == inst.requested]
            out.append((sum(b.size for b in files), sum(len(b.rows) for b in files)))
    return out


def model_bucket_index(config: Any, operation: str) -> BucketIndexConfig | None:
    """A table's bucket index (``spec.index.bucket_index``; None: BLOOM or SIMPLE, which tag alike): its
    ``index_type`` and the ``hoodie.bucket.index.*`` / ``hoodie.index.bucket.engine`` settings among its options
    (Hudi's defaults); an operation the writer does not write through a bucket index is refused as it is."""
    options = dict(config.options)
    bucket = bucket_index_config(
        str(getattr(config, "index_type", None) or "").upper(),
        options.get("hoodie.index.bucket.engine", SIMPLE_ENGINE).upper(),
        int(options.get("hoodie.bucket.index.num.buckets", str(DEFAULT_NUM_BUCKETS))),
        tuple(f.strip() for f in options.get("hoodie.bucket.index.hash.field", "").split(",") if f.strip()),
        tuple(config.record_key_fields))
    if bucket is not None and operation in UNSUPPORTED_OPERATIONS:
        raise UnsupportedOption(f"{operation} with hoodie.index.type=BUCKET is not built by this writer",
                                hint="write with upsert or insert (delete and delete_partition also work), or "
                                     "run this operation with Apache Hudi")
    return bucket


def bucket_groups(state: TableState) -> dict[str, dict[int, str]]:
    """Per partition, bucket number → file group, from the latest file slices (``spec.index.bucket_index``)."""
    ids: dict[str, list[str]] = {}
    for g in view(state):
        if g.latest_slice is not None:
            ids.setdefault(g.partition_path, []).append(g.file_id)
    return {p: bucket_file_groups(p, fids) for p, fids in ids.items()}

"""Steps 4 and 5 for many records at once, on Arrow columns: each record's file group from the index
(``tag``), the workload profile (``counts``), and each record's bucket, by ``spec.write.partitioner.route``'s
rule (``route_batch``).

The rule is ``spec.write.partitioner`` (one record at a time, written to be read); this module applies it
to Arrow columns with numpy: an update goes to its file group's UPDATE bucket; an insert's bucket
is where ``floorMod(md5 hash, partition inserts) / partition inserts`` falls among the partition's
cumulative insert weights (``searchsorted`` left = Java ``binarySearch``: an exact hit is that
bucket, else the first weight above it, else the first bucket). Tests check both give the same
bucket for every record.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from reference.io.handles import DELETE_FLAG, FILE_ID
from reference.io.index import BUCKET_ID, BucketLookup, bucket_tags
from spec.errors import InvalidRecord
from spec.schema.table_schema import PARTITION_PATH, RECORD_KEY
from spec.write.partitioner import BucketAssignment


def key_hashes(keys: list[str]) -> npt.NDArray[Any]:
    """``spec.write.partitioner.key_hash`` of every key: the first 8 MD5 bytes, little-endian, signed."""
    digests = b"".join(hashlib.md5(k.encode("utf-8")).digest()[:8] for k in keys)
    return np.frombuffer(digests, dtype="<i8")


def route_buckets(partitions: pa.Array | pa.ChunkedArray, bucket_ids: pa.Array | pa.ChunkedArray,
                  assignment: BucketAssignment) -> npt.NDArray[Any]:
    """A bucket index's routing (``spec.write.bucket_index_partitioner.route_bucket``) of every record, from its
    partition and bucket number."""
    assert assignment.bucket_of is not None
    table = assignment.bucket_of
    try:
        return np.array([table[(p, b)] for p, b in zip(partitions.to_pylist(), bucket_ids.to_pylist(), strict=True)],
                        dtype=np.int32)
    except KeyError as err:
        raise InvalidRecord(f"(partition, bucket) {err.args[0]!r} has no bucket of this write",
                            hint="count every record's bucket before assigning buckets") from err


def route_batch(keys: pa.Array | pa.ChunkedArray, partitions: pa.Array | pa.ChunkedArray,
                file_ids: pa.Array | pa.ChunkedArray, assignment: BucketAssignment,
                bucket_ids: pa.Array | pa.ChunkedArray | None = None) -> npt.NDArray[Any]:
    """The bucket (int32) of every record: ``route(key, partition, file id, assignment)`` vectorised; a bucket
    index's assignment routes by ``bucket_ids`` (``route_buckets``)."""
    if assignment.bucket_of is not None:
        assert bucket_ids is not None, "a bucket index's routing needs each record's bucket number"
        return route_buckets(partitions, bucket_ids, assignment)
    n = len(keys)
    out = np.full(n, -1, dtype=np.int32)
    located = pc.is_valid(file_ids).to_numpy(zero_copy_only=False)
    if located.any():
        fids = pc.filter(file_ids, located)
        known = list(assignment.update_bucket)
        at = pc.index_in(fids, value_set=pa.array(known, pa.string()))
        if at.null_count:
            missing = pc.filter(fids, pc.is_null(at))[0].as_py()
            raise InvalidRecord(f"file group {missing!r} has no update bucket",
                                hint="count the update in the workload profile before assigning buckets")
        pos = at.to_numpy(zero_copy_only=False).astype(np.int64)
        table = np.array([assignment.update_bucket[f] for f in known], dtype=np.int32)
        out[located] = table[pos]
    inserts = ~located
    if inserts.any():
        ins_idx = np.flatnonzero(inserts)
        ins_parts = pc.take(partitions, pa.array(ins_idx))
        if isinstance(ins_parts, pa.ChunkedArray):
            ins_parts = ins_parts.combine_chunks()
        encoded = ins_parts.dictionary_encode()
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        partitions_in = encoded.dictionary.to_pylist()
        for partition in partitions_in:
            if not assignment.insert_buckets.get(partition):
                raise InvalidRecord(f"partition {partition!r} has no insert bucket",
                                    hint="count the insert in the workload profile before assigning buckets")
        # a partition with one insert bucket sends every insert there, whatever the hash: hash the rest only
        hashed = np.isin(codes, [c for c, p in enumerate(partitions_in) if len(assignment.insert_buckets[p]) > 1])
        hashes = np.zeros(len(ins_idx), dtype=np.int64)
        if hashed.any():
            hashes[hashed] = key_hashes(pc.take(keys, pa.array(ins_idx[hashed])).to_pylist())
        for code, partition in enumerate(partitions_in):
            targets = assignment.insert_buckets[partition]
            mine = codes == code
            if len(targets) == 1:
                out[ins_idx[mine]] = targets[0].bucket
                continue
            total = max(1, assignment.inserts.get(partition, 0))
            r = np.mod(hashes[mine], np.int64(total)).astype(np.float64) / float(total)
            weights = np.array([t.cumulative_weight for t in targets], dtype=np.float64)
            at = np.searchsorted(weights, r, side="left")
            at[at >= len(targets)] = 0
            out[ins_idx[mine]] = np.array([t.bucket for t in targets], dtype=np.int32)[at]
    return out


__all__ = ["counts", "key_hashes", "new_buckets", "route_batch", "route_buckets", "tag", "tag_buckets"]


def tag(table: pa.Table, located: pa.Table | None, delete: bool) -> pa.Table:
    """Each record's current file group (``__file_id``, null for an insert) from the index's
    (partition, key, file id) rows; a delete keeps only records that exist."""
    if located is None or located.num_rows == 0:
        fids = pa.nulls(table.num_rows, pa.string())
    else:
        joined_key = pc.binary_join_element_wise(table.column(PARTITION_PATH), table.column(RECORD_KEY), "\x00")
        index_key = pc.binary_join_element_wise(located.column(PARTITION_PATH), located.column(RECORD_KEY), "\x00")
        at = pc.index_in(joined_key, value_set=index_key.combine_chunks() if isinstance(
            index_key, pa.ChunkedArray) else index_key)
        fids = pc.take(located.column(FILE_ID), at)
    out = table.append_column(FILE_ID, fids).append_column(DELETE_FLAG, pa.array(np.full(table.num_rows, delete)))
    if delete:
        out = out.filter(pc.is_valid(out.column(FILE_ID)))
    return out


def tag_buckets(table: pa.Table, lookup: BucketLookup, delete: bool) -> pa.Table:
    """The bucket index's tags (``reference.io.index.bucket_tags``): each record's file group and bucket number;
    a delete keeps only the records whose bucket has a group."""
    fids, numbers = bucket_tags(lookup, table.column(RECORD_KEY), table.column(PARTITION_PATH))
    out = (table.append_column(FILE_ID, fids).append_column(DELETE_FLAG, pa.array(np.full(table.num_rows, delete)))
           .append_column(BUCKET_ID, numbers))
    if delete:
        out = out.filter(pc.is_valid(out.column(FILE_ID)))
    return out


def new_buckets(table: pa.Table) -> set[tuple[str, int]]:
    """The (partition, bucket number) of the records a bucket index found no group for."""
    inserts = table.filter(pc.is_null(table.column(FILE_ID))).select([PARTITION_PATH, BUCKET_ID])
    grouped = inserts.group_by([PARTITION_PATH, BUCKET_ID]).aggregate([])
    return set(zip(grouped.column(PARTITION_PATH).to_pylist(), grouped.column(BUCKET_ID).to_pylist(), strict=True))


def counts(table: pa.Table) -> dict[tuple[str, str | None], int]:
    """The workload profile's input: records per (partition, current file group)."""
    grouped = table.group_by([PARTITION_PATH, FILE_ID]).aggregate([([], "count_all")])
    return {(p, f): int(c) for p, f, c in zip(grouped.column(PARTITION_PATH).to_pylist(),
                                              grouped.column(FILE_ID).to_pylist(),
                                              grouped.column("count_all").to_pylist(), strict=True)}

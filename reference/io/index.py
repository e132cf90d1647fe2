"""The index: which file group holds each incoming record key (step 4 of the write path).

- SIMPLE: read the record keys of every latest base file and join.
- BLOOM (Hudi's default): for each latest base file, read only its footer — the min/max record key
  and the bloom filter; a key is a candidate for a file when it is in the file's key range and the
  filter may contain it; then read the keys of the files that have candidates and keep exact hits.
- BUCKET (``spec.index.bucket_index``): no file is read; a record goes to the file group of its key's bucket
  among its partition's latest file slices (``bucket_tags``), whether or not that group holds the key.

BLOOM and SIMPLE give the same answer; BLOOM reads far fewer bytes when a write touches few files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from reference.io.bloom import positions_by_hash
from spec.file_group.bloom_filter import FOOTER_KEY, from_footer
from spec.file_group.file_system_view import FileSystemView
from spec.index.bucket_identifier import bucket_id
from spec.index.bucket_index import BucketIndexConfig, bucket_file_groups
from spec.schema.table_schema import PARTITION_PATH, RECORD_KEY
from spec.storage.hoodie_storage import Storage

FILE_ID = "__file_id"
BUCKET_ID = "__bucket_id"
"""A bucket index's column: each record's bucket number (``spec.index.bucket_identifier.bucket_id``)."""
EMPTY = pa.schema([(PARTITION_PATH, pa.string()), (RECORD_KEY, pa.string()), (FILE_ID, pa.string())])


@dataclass(frozen=True)
class IndexLookup:
    """What an upsert or delete looks its keys up in (Hudi's ``HoodieIndex.tagLocation`` arguments): the table at
    ``base_path`` (``storage``), the latest base files of ``view``, by BLOOM footers when ``bloom`` (else SIMPLE);
    ``delete``: the batch deletes, so a key the table does not hold is dropped."""

    base_path: str
    storage: Storage
    view: FileSystemView
    bloom: bool
    delete: bool
    bucket: BucketLookup | None = None
    """The bucket index's lookup (``bloom`` is then unused)."""
    global_index: Any = None
    """A global index's lookup (``reference.io.global_index.GlobalLookup``, which imports this module; ``bloom`` is
    then unused)."""
    located: pa.Table | None = None
    """(partition, key, file id) of every key the partitioned record index holds (``hoodie.index.type=
    RECORD_LEVEL_INDEX``, ``record_level_locations``): the records are tagged by it, partition by partition
    (``bloom`` is then unused)."""


@dataclass(frozen=True)
class BucketLookup:
    """What the bucket index tags with (``spec.index.bucket_index``): its settings and, per partition, the file
    ids of the latest file slices (``of``: a partition's bucket → file id, checked when first asked)."""

    config: BucketIndexConfig
    file_ids: Mapping[str, tuple[str, ...]]

    @staticmethod
    def of_view(config: BucketIndexConfig, view: FileSystemView) -> BucketLookup:
        """From the latest file slices of every partition of ``view`` (log-only slices included)."""
        file_ids: dict[str, list[str]] = {}
        for sl in view.latest_slices():
            file_ids.setdefault(sl.partition_path, []).append(sl.file_id)
        return BucketLookup(config, {p: tuple(ids) for p, ids in file_ids.items()})

    def groups(self, partition: str) -> dict[int, str]:
        return bucket_file_groups(partition, self.file_ids.get(partition, ()))


def bucket_tags(lookup: BucketLookup, keys: pa.Array | pa.ChunkedArray,
                partitions: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """Each record's file group (null: its bucket has none) and bucket number, by ``spec.index.bucket_index``:
    the bucket of a distinct key computed once."""
    cfg = lookup.config
    numbers: dict[str, int] = {}
    groups: dict[str, dict[int, str]] = {}
    fids: list[str | None] = []
    out: list[int] = []
    for key, partition in zip(keys.to_pylist(), partitions.to_pylist(), strict=True):
        n = numbers.get(key)
        if n is None:
            n = numbers[key] = bucket_id(key, cfg.hash_fields, cfg.num_buckets)
        g = groups.get(partition)
        if g is None:
            g = groups[partition] = lookup.groups(partition)
        fids.append(g.get(n))
        out.append(n)
    return pa.array(fids, pa.string()), pa.array(out, pa.int32())


@dataclass(frozen=True)
class IndexStats:
    """How much the lookup read: files whose footers were read, files whose keys were read."""

    files: int
    footers_read: int
    key_files_read: int


def _keys_of(storage: Storage, path: str) -> pa.Array:
    return storage.read_parquet(path, [RECORD_KEY]).column(0).cast(pa.string())


def _rows(partition: str, keys: pa.Array, file_id: str) -> pa.Table:
    n = len(keys)
    return pa.table([pa.array([partition] * n, pa.string()), keys, pa.array([file_id] * n, pa.string())],
                    schema=EMPTY)


def record_level_locations(storage: Storage) -> pa.Table:
    """(partition, key, file id) of every entry of the table's partitioned record index
    (``spec.metadata.partitioned_record_index.read_partitioned_record_index``): a key is found in its partition."""
    from spec.metadata.partitioned_record_index import read_partitioned_record_index

    found = read_partitioned_record_index(storage)
    return pa.table([pa.array([p for p, _ in found], pa.string()), pa.array([k for _, k in found], pa.string()),
                     pa.array([loc.file_id for loc in found.values()], pa.string())], schema=EMPTY)


def simple_index(storage: Storage, view: FileSystemView) -> pa.Table:
    """(partition, key, file id) of every key in the latest base files."""
    parts = [_rows(sl.partition_path, _keys_of(storage, sl.base_file.path), sl.file_id)
             for sl in view.latest_slices() if sl.base_file is not None]
    return pa.concat_tables(parts) if parts else EMPTY.empty_table()


def _keys_by_partition(incoming: Iterable[tuple[str, str]] | pa.Table) -> dict[str, pa.Array]:
    """The distinct incoming keys of each partition (from pairs or a two-column Arrow table): the keys
    ordered by partition once, then each partition's run of them made distinct."""
    if isinstance(incoming, pa.Table):
        table = incoming.select([PARTITION_PATH, RECORD_KEY]).combine_chunks()
        encoded = table.column(PARTITION_PATH).combine_chunks().dictionary_encode()
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        order = np.argsort(codes, kind="stable")
        keys = table.column(RECORD_KEY).combine_chunks().take(pa.array(order)).cast(pa.string())
        bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
        return {str(partition): pc.unique(keys.slice(int(bounds[c]), int(bounds[c + 1] - bounds[c])))
                for c, partition in enumerate(encoded.dictionary.to_pylist())
                if bounds[c + 1] > bounds[c]}
    lists: dict[str, list[str]] = {}
    for partition, key in incoming:
        lists.setdefault(partition, []).append(key)
    return {p: pa.array(sorted(set(ks)), pa.string()) for p, ks in lists.items()}


def might_contain(positions: npt.NDArray[Any], bits: npt.NDArray[Any], alive: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Of the keys ``alive`` (indices into ``positions``, hashes × n), those whose every bit is set in
    one filter row (``bits``, its bytes): tested hash by hash on the keys still alive, as most keys
    that are not in the filter fail within a few hashes."""
    for j in range(positions.shape[0]):
        if not len(alive):
            break
        at = positions[j, alive]
        alive = alive[((bits[at >> 3] >> (at & 7)) & 1).astype(bool)]
    return alive


def base_files(view: FileSystemView, partition: str) -> list[tuple[str, str]]:
    """(file id, base file path) of each latest slice of ``partition`` that has a base file: all a
    partition's lookup needs of the view."""
    return [(sl.file_id, sl.base_file.path) for sl in view.latest_slices([partition]) if sl.base_file is not None]


def lookup_partition(storage: Storage, files: Sequence[tuple[str, str]], partition: str, keys: pa.Array,
                     bloom: bool) -> pa.Table:
    """(partition, key, file id) of the incoming ``keys`` of one partition found in its base ``files``
    (``base_files``): by footer pruning (BLOOM), or by reading every file's keys (SIMPLE). Runs where the
    keys are (e.g. in a Spark task): nothing but ``files`` comes from the driver."""
    keys = pc.unique(keys.cast(pa.string()).drop_null())
    if bloom:
        parts = _bloom_partition(storage, files, partition, keys)[0]
    else:
        parts = []
        for file_id, path in files:
            stored = _keys_of(storage, path)
            hits = stored.filter(pc.is_in(stored, value_set=keys))
            if len(hits):
                parts.append(_rows(partition, hits, file_id))
    return pa.concat_tables(parts) if parts else EMPTY.empty_table()


def _bloom_partition(storage: Storage, files: Sequence[tuple[str, str]], partition: str,
                     keys_arr: pa.Array) -> tuple[list[pa.Table], int, int, int]:
    """One partition's lookup: (located rows, files, footers read, key files read)."""
    parts: list[pa.Table] = []
    footers = key_files = 0
    positions: npt.NDArray[Any] | None = None
    for file_id, path in files:
        meta = storage.parquet_file(path).metadata.metadata or {}
        footers += 1
        candidates = keys_arr
        lo, hi = meta.get(b"hoodie_min_record_key"), meta.get(b"hoodie_max_record_key")
        if lo is not None and hi is not None:
            in_range = pc.and_(pc.greater_equal(keys_arr, lo.decode()), pc.less_equal(keys_arr, hi.decode()))
            candidates = keys_arr.filter(in_range)
        bloom_text = meta.get(FOOTER_KEY.encode())
        if bloom_text is not None and len(candidates):
            bloom = from_footer(bloom_text.decode())
            row = bloom.rows[0]
            if positions is None or positions.shape[1] != len(keys_arr):
                positions = positions_by_hash(keys_arr, row.hashes, row.bits)
            start = (np.flatnonzero(in_range.to_numpy(zero_copy_only=False)) if lo is not None and hi is not None
                     else np.arange(len(keys_arr)))
            mask_all = np.zeros(len(keys_arr), dtype=bool)
            for r in bloom.rows:  # a key may be in any row of a dynamic filter
                mask_all[might_contain(positions, np.frombuffer(bytes(r.data), dtype=np.uint8), start)] = True
            candidates = keys_arr.filter(pa.array(mask_all))
        if not len(candidates):
            continue
        stored = _keys_of(storage, path)
        key_files += 1
        # the file's keys that are candidates (a set of the few candidates, probed by the file's keys)
        hits = stored.filter(pc.is_in(stored, value_set=candidates))
        if len(hits):
            parts.append(_rows(partition, hits, file_id))
    return parts, len(files), footers, key_files


def bloom_index(storage: Storage, view: FileSystemView,
                incoming: Iterable[tuple[str, str]] | pa.Table) -> tuple[pa.Table, IndexStats]:
    """(partition, key, file id) for the incoming (partition, key) pairs that exist, by footer pruning.
    Partitions are looked up side by side on a few threads (footer and key reads release the GIL)."""
    by_partition = _keys_by_partition(incoming)
    workers = min(len(by_partition), os.cpu_count() or 1, 4)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hudi-index") as pool:
            results = list(pool.map(lambda item: _bloom_partition(storage, base_files(view, item[0]), *item),
                                    by_partition.items()))
    else:
        results = [_bloom_partition(storage, base_files(view, p), p, k) for p, k in by_partition.items()]
    parts = [t for r in results for t in r[0]]
    table = pa.concat_tables(parts) if parts else EMPTY.empty_table()
    return table, IndexStats(sum(r[1] for r in results), sum(r[2] for r in results), sum(r[3] for r in results))

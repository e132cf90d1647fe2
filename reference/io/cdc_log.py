"""The merge handle's change-data-capture log (``spec.write.cdc_logger``), written beside the base file it rewrote
on a table with ``hoodie.table.cdc.enabled`` (Hudi's ``HoodieMergeHandleWithChangeLog``)."""

from __future__ import annotations

import posixpath

import pyarrow as pa

from spec.file_group.log_file.log_format import encode_blocks
from spec.schema.table_schema import COMMIT_TIME, RECORD_KEY
from spec.storage.hoodie_storage import Storage
from spec.write import markers
from spec.write.cdc_logger import DELETE, INSERT, UPDATE, Change, cdc_data_block, cdc_log_name


def merge_changes(instant: str, old: pa.Table, new: pa.Table, data_schema: pa.Schema) -> list[Change]:
    """Every change between the stored file ``old`` and the new file ``new`` of one merge: a key whose row the write
    wrote (its commit time ``instant``) an update, a stored key gone a delete, a new key an insert; a stored row kept
    as it was (a stale update) no change. The changes in the order the merge handle puts them: the stored file's
    order, the inserts after them. Images are the rows' data columns (a column the stored file lacks is null)."""
    names = [f.name for f in data_schema]
    old_rows = old.select([n for n in [RECORD_KEY, *names] if n in old.column_names]).to_pylist()
    new_keys = [str(k) for k in new.column(RECORD_KEY).to_pylist()]
    new_times = new.column(COMMIT_TIME).to_pylist()
    new_rows = new.select(names).to_pylist()
    written = {k: r for k, t, r in zip(new_keys, new_times, new_rows, strict=True) if t == instant}
    kept = set(new_keys)
    changes: list[Change] = []
    held: set[str] = set()
    for row in old_rows:
        key = str(row[RECORD_KEY])
        held.add(key)
        before = {n: row.get(n) for n in names}
        if key in written:
            changes.append(Change(UPDATE, key, before, written[key]))
        elif key not in kept:
            changes.append(Change(DELETE, key, before, None))
    return changes + [Change(INSERT, k, None, r) for k, r in written.items() if k not in held]


def write_cdc_log(storage: Storage, instant: str, mode: str, avro_schema_json: str, partition: str, file_id: str,
                  write_token: str, old: pa.Table, new: pa.Table, data_schema: pa.Schema) -> dict[str, int]:
    """Write the CDC log of one merge (its marker first) and return its ``cdcStats`` entry {path: size}."""
    name = cdc_log_name(file_id, instant, write_token)
    rel = posixpath.join(partition, name) if partition else name
    storage.create_if_absent(markers.marker_path(instant, rel, markers.IOType.APPEND), b"")
    block = cdc_data_block(mode, instant, avro_schema_json, merge_changes(instant, old, new, data_schema))
    storage.write_atomic(rel, encode_blocks([block]))
    return {rel: storage.size(rel)}

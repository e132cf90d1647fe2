"""The merge handle's change-data-capture log (``spec.write.cdc_logger``), written beside the base file it rewrote
on a table with ``hoodie.table.cdc.enabled`` (Hudi's ``HoodieMergeHandleWithChangeLog``)."""

from __future__ import annotations

import json
import posixpath

import pyarrow as pa

from spec.file_group.log_file.log_format import encode_blocks
from spec.schema.table_schema import COMMIT_TIME, META_FIELDS, RECORD_KEY, arrow_to_avro_records
from spec.storage.hoodie_storage import Storage
from spec.write import markers
from spec.write.cdc_logger import DELETE, INSERT, UPDATE, Change, cdc_data_block, cdc_log_name


def merge_changes(instant: str, old: pa.Table, new: pa.Table, avro_schema_json: str) -> list[Change]:
    """Every change between the stored file ``old`` and the new file ``new`` of one merge: a key whose row the write
    wrote (its commit time ``instant``) an update, a stored key gone a delete, a new key an insert; a stored row kept
    as it was (a stale update) no change. The changes in the order the merge handle puts them: the stored file's
    order, the inserts after them. Images are the rows' data columns as Avro values of the table's schema
    (``avro_schema_json`` less its meta fields; a column the stored file lacks is null)."""
    schema = json.loads(avro_schema_json)
    data = {**schema, "fields": [f for f in schema["fields"] if f["name"] not in META_FIELDS]}
    old_keys = [str(k) for k in old.column(RECORD_KEY).to_pylist()]
    old_rows = arrow_to_avro_records(old, data)
    new_keys = [str(k) for k in new.column(RECORD_KEY).to_pylist()]
    new_times = new.column(COMMIT_TIME).to_pylist()
    written = {k: r for k, t, r in zip(new_keys, new_times, arrow_to_avro_records(new, data), strict=True)
               if t == instant}
    kept = set(new_keys)
    changes: list[Change] = []
    for key, before in zip(old_keys, old_rows, strict=True):
        if key in written:
            changes.append(Change(UPDATE, key, before, written[key]))
        elif key not in kept:
            changes.append(Change(DELETE, key, before, None))
    held = set(old_keys)
    return changes + [Change(INSERT, k, None, r) for k, r in written.items() if k not in held]


def write_cdc_log(storage: Storage, instant: str, mode: str, avro_schema_json: str, partition: str, file_id: str,
                  write_token: str, old: pa.Table, new: pa.Table, table_version: int) -> dict[str, int]:
    """Write the CDC log of one merge (its marker first) and return its ``cdcStats`` entry {path: size}. The marker
    is a log file's as Hudi's log writer makes it (``createLogMarkerIfNotExists``): ``APPEND`` on table version 6
    (``DirectWriteMarkersV1``), ``CREATE`` on versions 8 and 9 (``WriteMarkers``)."""
    name = cdc_log_name(file_id, instant, write_token)
    rel = posixpath.join(partition, name) if partition else name
    io_type = markers.IOType.APPEND if table_version < 8 else markers.IOType.CREATE
    storage.create_if_absent(markers.marker_path(instant, rel, io_type), b"")
    block = cdc_data_block(mode, instant, avro_schema_json, merge_changes(instant, old, new, avro_schema_json))
    storage.write_atomic(rel, encode_blocks([block]))
    return {rel: storage.size(rel)}

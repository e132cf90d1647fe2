"""The merge handle's change-data-capture log (``spec.write.cdc_logger``), written beside the base file it rewrote
on a table with ``hoodie.table.cdc.enabled`` (Hudi's ``HoodieMergeHandleWithChangeLog``)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence

import pyarrow as pa

from spec.file_group.file_naming import is_log_file_name, parse_log_file_name
from spec.file_group.log_file.log_format import encode_blocks
from spec.read.cdc import DELETE, INSERT, UPDATE
from spec.schema.table_schema import COMMIT_TIME, META_FIELDS, RECORD_KEY, arrow_to_avro_records
from spec.storage.hoodie_storage import Storage
from spec.write import markers
from spec.write.cdc_logger import Change, cdc_data_block, cdc_log_name


def merge_changes(old: pa.Table, new: pa.Table, fresh: Sequence[bool], avro_schema_json: str) -> list[Change]:
    """Every change between the stored file ``old`` and the new file ``new`` of one merge: a key whose row the write
    wrote (``fresh``, per row of ``new``) an update, a stored key gone a delete, a new key an insert; a stored row
    kept as it was (a stale update) no change. The changes in the order the merge handle puts them: the stored file's
    order, the inserts after them. Images are the rows' data columns as Avro values of the table's schema
    (``avro_schema_json`` less its meta fields; a column the stored file lacks is null)."""
    schema = json.loads(avro_schema_json)
    data = {**schema, "fields": [f for f in schema["fields"] if f["name"] not in META_FIELDS]}
    old_keys = [str(k) for k in old.column(RECORD_KEY).to_pylist()]
    old_rows = arrow_to_avro_records(old, data)
    new_keys = [str(k) for k in new.column(RECORD_KEY).to_pylist()]
    written = {k: r for k, f, r in zip(new_keys, fresh, arrow_to_avro_records(new, data), strict=True) if f}
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
                  write_token: str, old: pa.Table | None, new: pa.Table, table_version: int,
                  fresh: Sequence[bool] | None = None) -> dict[str, int]:
    """Write the CDC log of one merge (its marker first) and return its ``cdcStats`` entry {path: size}. ``fresh``:
    which rows of ``new`` the merge wrote (by default those whose commit time is ``instant``: a merge handle's; a
    compaction's keep their deltacommit's time); ``old`` None: no stored file (every row an insert). The marker
    is a log file's as Hudi's log writer makes it (``createLogMarkerIfNotExists``): ``APPEND`` on table version 6
    (``DirectWriteMarkersV1``), ``CREATE`` on versions 8 and 9 (``WriteMarkers``)."""
    name = cdc_log_name(file_id, instant, write_token)
    rel = posixpath.join(partition, name) if partition else name
    io_type = markers.IOType.APPEND if table_version < 8 else markers.IOType.CREATE
    storage.create_if_absent(markers.marker_path(instant, rel, io_type), b"")
    if fresh is None:
        fresh = [t == instant for t in new.column(COMMIT_TIME).to_pylist()]
    stored = old if old is not None else new.schema.empty_table()
    block = cdc_data_block(mode, instant, avro_schema_json, merge_changes(stored, new, fresh, avro_schema_json))
    storage.write_atomic(rel, encode_blocks([block]))
    return {rel: storage.size(rel)}


def slice_cdc_logs(storage: Storage, partition: str, file_id: str, base_instant: str | None) -> list[str]:
    """The CDC logs of the slice an append joins: those of its file group named with its base instant (a
    compaction's, or a merge handle's beside the base file)."""
    names = [f.name for f in storage.list(partition) if not f.is_dir and f.name.endswith(".cdc")]
    return sorted(n for n in names if is_log_file_name(n) and parse_log_file_name(n).file_id == file_id
                  and parse_log_file_name(n).instant == base_instant)

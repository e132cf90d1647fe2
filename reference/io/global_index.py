"""The write client's global index (``hoodie.index.type=GLOBAL_BLOOM`` / ``GLOBAL_SIMPLE`` / ``RECORD_INDEX``,
``spec.index.global_index``): a batch's keys looked up in the latest base files of every partition, the latest
file slice of a location read merged where the rule asks for a merged lookup, and the records the rule routes —
each record tagged with its file group (``FILE_ID``, null: an insert) and whether it is a delete
(``DELETE_FLAG``), a move adding a delete at the old location.

Both global indexes give the same answer, so both look keys up by reading every latest base file's keys
(``reference.io.index.simple_index``; Hudi's GLOBAL_BLOOM prunes files by their footers first); RECORD_INDEX reads
the keys' locations from the metadata table's record index (``spec.metadata.record_index.read_record_index``).
The tagging runs where the batch is, on Arrow rows one at a time: the Spark engine brings the batch to the driver for it
(``reference.engines.spark``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reference.config.options import WriteConfig
from reference.io.handles import DELETE_FLAG, FILE_ID
from reference.io.index import simple_index
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import FileSystemView
from spec.index.global_index import (
    RECORD_INDEX,
    GlobalIndexConfig,
    Location,
    MergeOutcome,
    Written,
    global_index_config,
    needs_merged_lookup,
    route,
)
from spec.metadata.record_index import RECORD_INDEX_PARTITION, read_record_index
from spec.read.merge import IS_DELETED_FIELD, MergeRule, Version, as_version, merge_handle_keeps_stored
from spec.schema.table_schema import META_FIELDS, PARTITION_PATH, RECORD_KEY
from spec.storage.hoodie_storage import Storage


def global_index_of(cfg: WriteConfig, table: TableConfig) -> GlobalIndexConfig | None:
    """The write's global index (None: another index), from its ``hoodie.index.type`` and option."""
    options = {"hoodie.bloom.index.update.partition.path": str(cfg.bloom_index_update_partition_path).lower(),
               "hoodie.simple.index.update.partition.path": str(cfg.simple_index_update_partition_path).lower(),
               "hoodie.record.index.update.partition.path": str(cfg.record_index_update_partition_path).lower()}
    return global_index_config(cfg.index_type, options, bool(table.partition_fields))


@dataclass(frozen=True)
class GlobalLookup:
    """What a global index tags with: its settings, the table (its merge rule, its type) and its latest slices."""

    config: GlobalIndexConfig
    storage: Storage
    view: FileSystemView
    table: TableConfig


def _stored_rows(lookup: GlobalLookup, loc: Location) -> dict[str, dict[str, Any]]:
    """The rows of a location's latest file slice, merged (Hudi's ``HoodieFileGroupReader``), by key."""
    from spec.read.reader import TableReader

    reader = TableReader(lookup.storage)
    sl = next((s for s in lookup.view.latest_slices([loc.partition]) if s.file_id == loc.file_id), None)
    rows = reader.read_slice(sl) if sl is not None else None
    return {} if rows is None else {str(r[RECORD_KEY]): r for r in rows.to_pylist()}


def global_tag(frame: pa.Table, lookup: GlobalLookup, delete: bool) -> pa.Table:
    """The batch (one record per key) routed by ``spec.index.global_index``, each record with ``FILE_ID`` and
    ``DELETE_FLAG``; a delete keeps only what it finds."""
    rule = MergeRule.from_config(lookup.table)
    event_time = rule.ordering_field is not None and not rule.log_wins_over_base
    keys = frame.column(RECORD_KEY)
    by_key: dict[str, list[Location]] = {}
    if lookup.config.index_type == RECORD_INDEX and RECORD_INDEX_PARTITION in lookup.table.metadata_partitions:
        wanted = set(keys.cast(pa.string()).to_pylist())
        for k, loc in read_record_index(lookup.storage).items():
            if k in wanted:
                by_key[k] = [Location(loc.partition_path, loc.file_id)]
    else:  # GLOBAL_BLOOM, GLOBAL_SIMPLE, or a record index not built yet (Hudi falls back to GLOBAL_SIMPLE)
        located = simple_index(lookup.storage, lookup.view)
        located = located.filter(pc.is_in(located.column(RECORD_KEY), value_set=pc.unique(keys.cast(pa.string()))))
        for p, k, f in zip(*(located.column(c).to_pylist() for c in (PARTITION_PATH, RECORD_KEY, FILE_ID)),
                           strict=True):
            by_key.setdefault(k, []).append(Location(p, f))
    stored: dict[Location, dict[str, dict[str, Any]]] = {}

    def stored_row(loc: Location, key: str) -> dict[str, Any] | None:
        if loc not in stored:
            stored[loc] = _stored_rows(lookup, loc)
        return stored[loc].get(key)

    def outcome(row: dict[str, Any], loc: Location) -> MergeOutcome:
        held = stored_row(loc, str(row[RECORD_KEY]))
        if held is None:
            return MergeOutcome.ABSENT
        version = Version(None, None, natural=True) if delete else as_version(row, rule)
        if merge_handle_keeps_stored(held, version, rule):
            return MergeOutcome.STORED
        return MergeOutcome.DELETE if version.is_delete else MergeOutcome.INCOMING

    out: list[dict[str, Any]] = []
    fids: list[str | None] = []
    flags: list[bool] = []
    for row in frame.to_pylist():
        key, partition = str(row[RECORD_KEY]), str(row[PARTITION_PATH])
        is_delete = delete or row.get(IS_DELETED_FIELD) is True
        found = [(loc, outcome(row, loc) if needs_merged_lookup(lookup.config, lookup.table.is_mor, event_time,
                                                                  partition, is_delete, loc) else None)
                 for loc in by_key.get(key, ())]
        for routed in route(lookup.config, partition, found):
            if routed.written is Written.STORED:
                held = stored_row(Location(routed.partition, routed.file_id or ""), key)
                assert held is not None
                new = {**row, **{c: v for c, v in held.items() if c in row and c not in META_FIELDS}}
            else:
                new = dict(row)
            new[PARTITION_PATH] = routed.partition
            if delete and routed.file_id is None:
                continue  # a delete of a key the table does not hold
            out.append(new)
            fids.append(routed.file_id)
            flags.append(delete or routed.written is Written.DELETE)
    table = pa.Table.from_pylist(out, schema=frame.schema) if out else frame.schema.empty_table()
    return table.append_column(FILE_ID, pa.array(fids, pa.string())).append_column(
        DELETE_FLAG, pa.array(np.array(flags, dtype=bool)))


__all__ = ["GlobalLookup", "global_index_of", "global_tag"]

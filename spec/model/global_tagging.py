"""The model's tagging under a global index (``spec.index.global_index``): where each record of an upsert or
delete goes when its key may live in any partition — the locations of its key in the latest base files of every
partition, the merged read of a location where the rule asks for one, and the records the rule routes.

Source (Apache Hudi 1.2.0, measured; 0.15.x, 1.0.x and 1.1.x not measured here):
``HoodieIndexUtils.tagGlobalLocationBackToRecords`` and ``mergeForPartitionUpdatesAndDeletionsIfNeeded``
(``spec.index.global_index``), ``HoodieGlobalSimpleIndex`` / ``HoodieGlobalBloomIndex``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
from spec.model.files import META_COLUMNS, RECORD_KEY, Incoming, Row
from spec.model.queries import index_locations, key_locations, merge_rule, ordering_type, read_slice, view
from spec.model.state import TableState
from spec.read.merge import Version, merge_handle_keeps_stored


def model_global_index(config: Any) -> GlobalIndexConfig | None:
    """A table's global index (None: another index): its ``index_type`` and update-partition-path option."""
    return global_index_config(str(getattr(config, "index_type", None) or "").upper(), dict(config.options),
                               bool(config.partition_fields))


def _outcome(state: TableState, stored: Row | None, incoming: Incoming) -> MergeOutcome:
    """The merge of an incoming record with a location's stored record (``spec.read.merge.merge_handle_keeps_stored``,
    the rule the write path merges by)."""
    if stored is None:
        return MergeOutcome.ABSENT
    version = Version(incoming.data, incoming.ordering, ordering_type(state), natural=incoming.ordering is None)
    if merge_handle_keeps_stored(stored, version, merge_rule(state.config)):
        return MergeOutcome.STORED
    return MergeOutcome.DELETE if incoming.data is None else MergeOutcome.INCOMING


def tag_global(state: TableState, config: GlobalIndexConfig, recs: Sequence[Incoming]
               ) -> list[tuple[Incoming, str | None]]:
    """Each record the write routes, with its file group (None: an insert), by ``spec.index.global_index.route``."""
    by_key: dict[str, list[Location]] = {}
    # the record index holds where each key is read from; the other global indexes find it in base files
    held = key_locations(state) if config.index_type == RECORD_INDEX else index_locations(state)
    for (partition, key), fids in sorted(held.items()):
        by_key.setdefault(key, []).extend(Location(partition, f) for f in fids)
    slices = {(g.partition_path, g.file_id): g.latest_slice for g in view(state)}
    stored: dict[Location, dict[str, Row]] = {}

    def stored_row(loc: Location, key: str) -> Row | None:
        if loc not in stored:
            sl = slices[(loc.partition, loc.file_id)]
            rows = read_slice(state, sl, None) if sl is not None else ()
            stored[loc] = {str(r[RECORD_KEY]): r for r in rows}
        return stored[loc].get(key)

    rule = merge_rule(state.config)
    event_time = rule.ordering_field is not None and not rule.log_wins_over_base
    out: list[tuple[Incoming, str | None]] = []
    for r in recs:
        found = [(loc, _outcome(state, stored_row(loc, r.key), r)
                  if needs_merged_lookup(config, state.config.is_mor, event_time, r.partition, r.data is None, loc)
                  else None) for loc in by_key.get(r.key, ())]
        for routed in route(config, r.partition, found):
            if routed.written is Written.DELETE:
                rec = Incoming(routed.partition, r.key, None)
            elif routed.written is Written.STORED:
                row = stored_row(Location(routed.partition, routed.file_id or ""), r.key)
                assert row is not None
                data = {k: v for k, v in row.items() if k not in META_COLUMNS}
                rec = Incoming(routed.partition, r.key, data,
                               data.get(rule.ordering_field) if rule.ordering_field else None)
            else:
                rec = Incoming(routed.partition, r.key, r.data, r.ordering)
            out.append((rec, routed.file_id))
    return out

"""The global indexes (``hoodie.index.type=GLOBAL_BLOOM`` / ``GLOBAL_SIMPLE``): a record key is unique across all
partitions, and an upsert or delete finds its key in whichever partition holds it.

1. **settings** (``global_index_config``): ``hoodie.bloom.index.update.partition.path`` (GLOBAL_BLOOM) or
   ``hoodie.simple.index.update.partition.path`` (GLOBAL_SIMPLE), both true by default in Apache Hudi 1.2.0
   (``HoodieIndexConfig``, measured: ``tests/test_global_index_hudi.py``); a non-partitioned table never updates
   a partition path (``HoodieTable.isPartitioned``).
2. **lookup**: the keys of the latest base files of **every** partition (GLOBAL_BLOOM prunes by footers first,
   GLOBAL_SIMPLE reads every key: the same answer); a key deleted by a merge-on-read log block is still found in
   its base file, and a merge-on-read key moved to another partition is found in both until compaction.
3. **tag** (``needs_merged_lookup``, ``route``): a key found at a location is either tagged there directly
   (the record's partition path becomes the location's: with the option off an upsert naming another partition
   updates the key where it is, the partition column keeping the value it was given), or, on a *merged lookup*,
   the incoming record is merged with the stored one (``HoodieFileGroupReader`` over the location's latest file
   slice, then the table's merger) and routed by the result (``MergeOutcome``):

   - the location no longer holds the key (a merge-on-read log deleted it): the incoming record is **new**,
     an insert into its own partition;
   - the merge is a delete: a delete of the key at its location, whatever partition the delete named;
   - the stored record wins (event-time ordering, a smaller ordering value): the **stored** record is written
     again at its location (a copy-on-write row gets the new commit time);
   - the incoming record wins in the location's partition: an update there; in another partition with the
     option on: a **delete** at the old location plus an insert of the incoming record into its partition; with
     the option off (merge-on-read only): the merged record keyed to the old partition but **not tagged** — an
     insert into the old partition, beside the row the base file still holds.

   A merged lookup is made when the option is on or the table is merge-on-read, for every located key of a
   merge-on-read table, for a key named with another partition (option on), and for a delete under event-time
   ordering.

Source (Apache Hudi 1.2.0, measured on table versions 6, 8 and 9: its writer on the corpus cases ``global-*-index-*``,
``tests/test_global_index_hudi.py``; 0.15.x,
1.0.x and 1.1.x not measured here: their ``HoodieIndexUtils`` merged before moving a key but not before deleting one):
``org.apache.hudi.index.HoodieIndexUtils`` (``tagGlobalLocationBackToRecords``,
``mergeForPartitionUpdatesAndDeletionsIfNeeded``, ``mergeIncomingWithExistingRecord``, ``inferPartitionPath``,
``createNewTaggedHoodieRecord``), ``HoodieGlobalSimpleIndex`` / ``HoodieGlobalBloomIndex``
(``tagLocationBacktoRecords``: ``mayContainDuplicateLookup`` is the table being merge-on-read),
``HoodieWriteHelper.deduplicateRecords`` / ``HoodieDeleteHelper`` (a global index combines a batch's versions
of a key by record key alone) and ``org.apache.hudi.config.HoodieIndexConfig``
(``BLOOM_INDEX_UPDATE_PARTITION_PATH_ENABLE``, ``SIMPLE_INDEX_UPDATE_PARTITION_PATH_ENABLE``). RECORD_INDEX is a
global index too (``SparkMetadataTableRecordIndex``): its lookup is the metadata table's record index
(``spec.metadata.record_index``), one location per key, and its option ``hoodie.record.index.update.partition.path``
is false by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

from spec.errors import InvalidConfig, UnsupportedOption

GLOBAL_BLOOM: Final = "GLOBAL_BLOOM"
GLOBAL_SIMPLE: Final = "GLOBAL_SIMPLE"
RECORD_INDEX: Final = "RECORD_INDEX"
GLOBAL_INDEX_TYPES: Final = (GLOBAL_BLOOM, GLOBAL_SIMPLE, RECORD_INDEX)
"""``hoodie.index.type`` values of the global indexes (``HoodieIndex.IndexType``)."""
UPDATE_PARTITION_PATH: Final = {GLOBAL_BLOOM: "hoodie.bloom.index.update.partition.path",
                                GLOBAL_SIMPLE: "hoodie.simple.index.update.partition.path",
                                RECORD_INDEX: "hoodie.record.index.update.partition.path"}
"""Each global index's option: whether an upsert naming another partition moves its key there."""
DEFAULT_UPDATE_PARTITION_PATH: Final = {GLOBAL_BLOOM: "true", GLOBAL_SIMPLE: "true", RECORD_INDEX: "false"}
"""The options' defaults (``HoodieIndexConfig``, Apache Hudi 1.2.0, measured through py4j; all table versions):
true for GLOBAL_BLOOM and GLOBAL_SIMPLE, false for RECORD_INDEX."""


# --8<-- [start:config]
@dataclass(frozen=True)
class GlobalIndexConfig:
    """A global index of a write: its type and whether it moves a key to the partition an upsert names."""

    index_type: str
    update_partition_path: bool


def global_index_config(index_type: str, options: Mapping[str, str], partitioned: bool) -> GlobalIndexConfig | None:
    """The global index a write's settings ask for (None: another index); a value of the option that is no
    boolean is refused."""
    if index_type not in GLOBAL_INDEX_TYPES:
        return None
    key = UPDATE_PARTITION_PATH[index_type]
    value = str(options.get(key, DEFAULT_UPDATE_PARTITION_PATH[index_type])).strip().lower()
    if value not in ("true", "false"):
        raise InvalidConfig(f"{key}={options.get(key)!r} is not a boolean", hint=f"set {key} to true or false")
    return GlobalIndexConfig(index_type, value == "true" and partitioned)
# --8<-- [end:config]


def refuse_streaming(config: GlobalIndexConfig | None) -> None:
    """A streaming writer (Flink's bucket assigner) on a globally indexed table is not built here: Flink keys its
    global index by its own state (``index.global.enabled``), not by this rule."""
    if config is not None:
        raise UnsupportedOption(f"a streaming write with hoodie.index.type={config.index_type} is not built by this "
                                "writer", hint="write the batch with upsert, or stream into a table with another "
                                                "index")


class MergeOutcome(Enum):
    """What merging an incoming record with the stored one of a location gives (``mergeIncomingWithExistingRecord``
    and ``inferPartitionPath``)."""

    ABSENT = "absent"  # the location's merged read no longer holds the key
    DELETE = "delete"  # the merge is a delete (an incoming delete that wins, or an incoming delete record)
    STORED = "stored"  # the stored record wins: the merged record is it, in its partition
    INCOMING = "incoming"  # the incoming record wins: the merged record is it, in the partition it names


class Written(Enum):
    """Which record a routed entry writes."""

    INCOMING = "incoming"  # the incoming record (a delete, if it is one)
    STORED = "stored"  # the stored record, written again
    DELETE = "delete"  # a delete of the key (a move's delete at its old location)


@dataclass(frozen=True)
class Location:
    """A file group holding a key in its latest base file."""

    partition: str
    file_id: str


@dataclass(frozen=True)
class Routed:
    """One record a write routes for an incoming one: written in ``partition`` (its key's partition path),
    into the file group ``file_id`` (None: an insert, placed by the partitioner)."""

    partition: str
    file_id: str | None
    written: Written


# --8<-- [start:tag]
def needs_merged_lookup(config: GlobalIndexConfig, is_mor: bool, event_time: bool, incoming_partition: str,
                        incoming_is_delete: bool, location: Location) -> bool:
    """Whether a key found at ``location`` is merged with its stored record before it is routed
    (``tagGlobalLocationBackToRecords``: ``requiresMergingWithOlderRecordVersion`` and
    ``shouldDoMergedLookUpThenTag``). ``mayContainDuplicateLookup`` is the table being merge-on-read for
    GLOBAL_BLOOM and GLOBAL_SIMPLE (a key may be found in two base files), false for RECORD_INDEX, which holds one
    location per key (``SparkMetadataTableRecordIndex.tagLocation``)."""
    is_mor = is_mor and config.index_type != RECORD_INDEX
    if not (config.update_partition_path or is_mor):
        return False
    return (is_mor or (config.update_partition_path and incoming_partition != location.partition)
            or (event_time and incoming_is_delete))


def route(config: GlobalIndexConfig, incoming_partition: str,
          found: Sequence[tuple[Location, MergeOutcome | None]]) -> tuple[Routed, ...]:
    """Where an incoming record goes, from each location holding its key and, where ``needs_merged_lookup``,
    what the merge there gave (None: tagged directly). No location: an insert into its partition; merged
    lookups none of which still holds the key: the same."""
    out: list[Routed] = []
    merged_absent = False
    for loc, outcome in found:
        if outcome is None:
            out.append(Routed(loc.partition, loc.file_id, Written.INCOMING))
        elif outcome is MergeOutcome.ABSENT:
            merged_absent = True
        elif outcome is MergeOutcome.DELETE:
            out.append(Routed(loc.partition, loc.file_id, Written.INCOMING))
        elif outcome is MergeOutcome.STORED or incoming_partition == loc.partition:
            out.append(Routed(loc.partition, loc.file_id,
                              Written.STORED if outcome is MergeOutcome.STORED else Written.INCOMING))
        elif config.update_partition_path:
            out += [Routed(loc.partition, loc.file_id, Written.DELETE), Routed(incoming_partition, None,
                                                                              Written.INCOMING)]
        else:
            out.append(Routed(loc.partition, None, Written.INCOMING))
    if not out and (merged_absent or not found):
        out.append(Routed(incoming_partition, None, Written.INCOMING))
    return tuple(out)
# --8<-- [end:tag]

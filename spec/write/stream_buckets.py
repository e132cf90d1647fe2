"""Streaming bucket assignment: Flink's ``BucketAssigner``, checkpoint by checkpoint.

A streaming writer commits once per checkpoint. Each record is sent to a bucket (a file group)
and tagged, in its ``HoodieRecordLocation``'s instant field, **I** or **U**:

1. **a key the index holds** goes to its file group, tagged U (``addUpdate``: the group's bucket
   stays what it already is in this checkpoint, else becomes an UPDATE bucket);
2. **a new key** (``addInsert``) goes, in this order:

   a. to a **small file** of its partition: a group already on disk that is under the small-file
      limit, taking ``(max file size - size) // average record size`` more records (U, UPDATE);
   b. to the partition's **current new file group** while it has taken fewer than
      ``max file size // average record size`` records: I if that group was opened in this
      checkpoint (its INSERT bucket is reused), else U (UPDATE: opened in the last checkpoint);
   c. else to a **new file group** (I, INSERT bucket), which becomes the current new file group.

At a checkpoint the buckets are forgotten (``reset``), the small files are recomputed from the
table (``reload``), and the current new file groups are forgotten at every second checkpoint
(so a group opened just before a checkpoint goes on filling during the next one).

An INSERT bucket is written by a create handle; within one checkpoint a second flush of the same
INSERT bucket reuses it and appends instead of updating — ``I, U | U, U``: a key
inserted and updated in one mini-batch, updated twice in the next, all in one insert bucket.
From the next checkpoint on the group is an UPDATE bucket (merge handle; MOR: append handle).

With a bucket index (``hoodie.index.type=BUCKET``: Flink's bucket stream writer, ``BucketStreamWriteFunction``) the
assigner is ``BucketStreamAssigner``: a record goes to the file group of its key's bucket by the batch writer's rule
(``spec.index.bucket_index``), tagged U when the group is on disk; a bucket with no group gets a new one, whose file
id starts with the bucket number (``spec.index.bucket_identifier.bucket_file_id_prefix``), an INSERT bucket for the
rest of the checkpoint (I); no small files, no capacity. A delete whose bucket has no group is dropped. (The bucket
rule is measured on Apache Hudi's Spark writer; Flink's writer is not run here.)

Sizes are counted in records (a file of ``r`` records is ``r × average record size`` bytes), so a
small file's room is ``capacity - r``: ``(M - r·a) // a = M // a - r`` exactly.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): Flink's
``BucketAssigner`` (``addUpdate``, ``addInsert``, ``reset``, ``reload``) and
``BucketAssignFunction``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from spec.errors import InvalidConfig
from spec.index.bucket_identifier import bucket_file_id_prefix, bucket_id
from spec.index.bucket_index import BucketIndexConfig, locate


@dataclass(frozen=True)
class StreamFileGroup:
    """A file group the assigner knows: its records so far and the checkpoint that opened it
    (0: before the stream started)."""

    file_id: str
    records: int
    opened_in: int


@dataclass(frozen=True)
class StreamBucket:
    """Where one record goes: partition, file group, the record's tag (``bucket_type``: I or U) and
    the bucket's type in this checkpoint (``kind``: INSERT, written by a create handle, or UPDATE)."""

    partition: str
    file_id: str
    bucket_type: str
    kind: str = "UPDATE"


@dataclass(frozen=True)
class _Slot:
    """A small file's or a new file group's assignment state: ``assigned`` of ``room`` records."""

    file_id: str
    room: int
    assigned: int = 0

    @property
    def can_assign(self) -> bool:
        return self.room > 0 and self.room > self.assigned


# --8<-- [start:state]
@dataclass(frozen=True)
class StreamBucketAssigner:
    """The assigner's state; ``assign`` and ``checkpoint`` return new states.

    ``capacity``: records per file group (``max file size // average record size``).
    ``small_file_limit_records``: a group on disk is a small file while it holds fewer records
    (COW: ``small file limit // average record size``; MOR, where Flink's index covers log
    files: ``capacity``, the default).
    """

    capacity: int
    checkpoint_id: int = 1
    groups: Mapping[str, tuple[StreamFileGroup, ...]] = field(default_factory=dict)
    key_index: Mapping[tuple[str, str], str] = field(default_factory=dict)
    opened: int = 0
    small_file_limit_records: int | None = None
    insert_buckets: frozenset[tuple[str, str]] = frozenset()  # this checkpoint's INSERT buckets
    new_files: Mapping[str, _Slot] = field(default_factory=dict)  # partition → current new file group
    small_files: Mapping[str, tuple[_Slot, ...]] = field(default_factory=dict)  # computed at first insert
    completed: int = 0  # checkpoints completed since the new file groups were last forgotten

    def __post_init__(self) -> None:
        if self.capacity <= 0:
            raise InvalidConfig("a file group's capacity must be positive",
                                hint="capacity = max file size // average record size")

    def assign(self, partition: str, key: str,
               new_file_id: Callable[[int], str] | None = None) -> tuple[StreamBucketAssigner, StreamBucket]:
        """The bucket of one record, and the state after it. ``new_file_id(n)`` names the n-th
        group the assigner opens (default ``stream-fg-<n>``)."""
        known = self.key_index.get((partition, key))
        if known is not None:
            kind = "INSERT" if (partition, known) in self.insert_buckets else "UPDATE"
            return self, StreamBucket(partition, known, "U", kind)
        state = self if partition in self.small_files else replace(
            self, small_files={**self.small_files, partition: self._small_files(partition)})
        smalls = list(state.small_files[partition])
        slot = next((i for i, s in enumerate(smalls) if s.can_assign), None)
        if slot is not None:
            smalls[slot] = replace(smalls[slot], assigned=smalls[slot].assigned + 1)
            state = replace(state, small_files={**state.small_files, partition: tuple(smalls)})
            return state._placed(partition, key, smalls[slot].file_id, "U", "UPDATE")
        current = state.new_files.get(partition)
        if current is not None and current.can_assign:
            taken = replace(current, assigned=current.assigned + 1)
            state = replace(state, new_files={**state.new_files, partition: taken})
            if (partition, current.file_id) in state.insert_buckets:
                return state._placed(partition, key, current.file_id, "I", "INSERT")
            return state._placed(partition, key, current.file_id, "U", "UPDATE")
        file_id = new_file_id(state.opened) if new_file_id else f"stream-fg-{state.opened}"
        group = StreamFileGroup(file_id, 0, state.checkpoint_id)
        state = replace(state, opened=state.opened + 1,
                        groups={**state.groups, partition: (*state.groups.get(partition, ()), group)},
                        insert_buckets=state.insert_buckets | {(partition, file_id)},
                        new_files={**state.new_files, partition: _Slot(file_id, self.capacity, 1)})
        return state._placed(partition, key, file_id, "I", "INSERT")

    def location(self, partition: str, key: str) -> str | None:
        """The file group the index holds the key in (None: a new key)."""
        return self.key_index.get((partition, key))

    def checkpoint(self) -> StreamBucketAssigner:
        """A checkpoint completes: its groups are on disk; buckets and small files are forgotten;
        the new file groups too at every second completed checkpoint."""
        forget = self.completed + 1 > 1
        return replace(self, checkpoint_id=self.checkpoint_id + 1, insert_buckets=frozenset(),
                       small_files={}, new_files={} if forget else self.new_files,
                       completed=0 if forget else self.completed + 1)

    def _small_files(self, partition: str) -> tuple[_Slot, ...]:
        limit = self.capacity if self.small_file_limit_records is None else self.small_file_limit_records
        return tuple(_Slot(g.file_id, self.capacity - g.records) for g in self.groups.get(partition, ())
                     if g.opened_in < self.checkpoint_id and g.records < limit)

    def _placed(self, partition: str, key: str, file_id: str, tag: str,
                kind: str) -> tuple[StreamBucketAssigner, StreamBucket]:
        groups = tuple(replace(g, records=g.records + 1) if g.file_id == file_id else g
                       for g in self.groups.get(partition, ()))
        state = replace(self, groups={**self.groups, partition: groups},
                        key_index={**self.key_index, (partition, key): file_id})
        return state, StreamBucket(partition, file_id, tag, kind)
# --8<-- [end:state]


# --8<-- [start:bucket_index]
@dataclass(frozen=True)
class BucketStreamAssigner:
    """The assigner of a bucket-indexed table (see the module docstring): ``groups``, per partition, bucket number →
    file group (on disk or opened by the stream); ``insert_buckets``, the groups this checkpoint opened."""

    config: BucketIndexConfig
    groups: Mapping[str, Mapping[int, str]] = field(default_factory=dict)
    insert_buckets: frozenset[tuple[str, str]] = frozenset()

    def location(self, partition: str, key: str) -> str | None:
        """The group of the key's bucket (``spec.index.bucket_index.locate``), the key held there or not."""
        return locate(self.config, self.groups.get(partition, {}), key)

    def assign(self, partition: str, key: str,
               new_file_id: Callable[[int], str] | None = None) -> tuple[BucketStreamAssigner, StreamBucket]:
        """The bucket of one record: its bucket's group, else a new group of that bucket (``new_file_id(n)`` a
        new random file id, its first 8 characters replaced by the bucket number)."""
        number = bucket_id(key, self.config.hash_fields, self.config.num_buckets)
        known = self.groups.get(partition, {}).get(number)
        if known is not None:
            if (partition, known) in self.insert_buckets:
                return self, StreamBucket(partition, known, "I", "INSERT")
            return self, StreamBucket(partition, known, "U", "UPDATE")
        opened = sum(len(g) for g in self.groups.values())
        file_id = bucket_file_id_prefix(number, new_file_id(opened) if new_file_id else f"stream-fg-{opened}")
        state = replace(self, groups={**self.groups, partition: {**self.groups.get(partition, {}), number: file_id}},
                        insert_buckets=self.insert_buckets | {(partition, file_id)})
        return state, StreamBucket(partition, file_id, "I", "INSERT")

    def checkpoint(self) -> BucketStreamAssigner:
        """A checkpoint completes: its new groups are on disk, UPDATE buckets from now on."""
        return replace(self, insert_buckets=frozenset())
# --8<-- [end:bucket_index]


# --8<-- [start:handle]
def write_handle(table_type: str, kind: str, flushed_before: bool) -> str:
    """The handle that writes one flush of a bucket. MOR: always the append handle (new groups
    start as log files). COW: an INSERT bucket's first flush a create handle, a later flush in the
    same checkpoint reuses it and appends (``I, U | U, U``); an UPDATE bucket a merge
    handle (a later flush merges into the file the first one wrote)."""
    if table_type == "MERGE_ON_READ":
        return "append"
    if kind == "INSERT":
        return "create-append" if flushed_before else "create"
    return "merge"
# --8<-- [end:handle]


def assign_checkpoints(capacity: int, checkpoints: list[list[tuple[str, str]]],
                       small_file_limit_records: int | None = None) -> list[list[StreamBucket]]:
    """Buckets for every (partition, key) of every checkpoint, in order."""
    state = StreamBucketAssigner(capacity, small_file_limit_records=small_file_limit_records)
    out: list[list[StreamBucket]] = []
    for records in checkpoints:
        buckets = []
        for partition, key in records:
            state, bucket = state.assign(partition, key)
            buckets.append(bucket)
        out.append(buckets)
        state = state.checkpoint()
    return out

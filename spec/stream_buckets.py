"""Streaming bucket assignment: Flink's BucketAssigner, checkpoint by checkpoint (seed 000).

A streaming writer commits once per checkpoint. Each record is tagged with its bucket — a file
group — and a bucket type:

- **U** (update): the file group already exists on disk (written by an earlier checkpoint);
- **I** (insert): the file group is new in this checkpoint and is written by a create handle.

Rules:

1. a key the table already holds goes to its file group;
2. a new key goes to the first file group of its partition with room left (``capacity`` records,
   Hudi's ``max file size / average record size``); if none has room, a new file group opens;
3. within one checkpoint, a record for a file group opened in that checkpoint is an **I** record,
   even if it updates a key inserted earlier in the same checkpoint: the insert bucket is reused
   and appended to, not turned into an update;
4. at the checkpoint the new file groups are committed; from the next checkpoint on their records
   are **U** records, and the group keeps taking new keys until it is full.

So a key's operations ``I, U | U, U`` (two per checkpoint) all land in one file group: the first
checkpoint's bucket is an insert bucket used twice, the second checkpoint's an update bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from spec.errors import InvalidConfig


@dataclass(frozen=True)
class StreamFileGroup:
    """A file group the assigner knows: its records so far and the checkpoint that opened it."""

    file_id: str
    records: int
    opened_in: int


@dataclass(frozen=True)
class StreamBucket:
    """Where one record goes: partition, file group, and I (new in this checkpoint) or U."""

    partition: str
    file_id: str
    bucket_type: str  # "I" or "U"


# --8<-- [start:state]
@dataclass(frozen=True)
class StreamBucketAssigner:
    """The assigner's state; ``assign`` and ``checkpoint`` return new states."""

    capacity: int
    checkpoint_id: int = 1
    groups: Mapping[str, tuple[StreamFileGroup, ...]] = field(default_factory=dict)
    key_index: Mapping[tuple[str, str], str] = field(default_factory=dict)
    opened: int = 0

    def __post_init__(self) -> None:
        if self.capacity <= 0:
            raise InvalidConfig("a file group's capacity must be positive",
                                hint="capacity = max file size // average record size")

    def assign(self, partition: str, key: str,
               new_file_id: Callable[[int], str] | None = None) -> tuple[StreamBucketAssigner, StreamBucket]:
        """The bucket of one record, and the state after it."""
        groups = list(self.groups.get(partition, ()))
        known = self.key_index.get((partition, key))
        if known is not None:
            group = next(g for g in groups if g.file_id == known)
            return self, StreamBucket(partition, known, self._type(group))
        index = next((i for i, g in enumerate(groups) if g.records < self.capacity), None)
        opened = self.opened
        if index is None:
            file_id = new_file_id(opened) if new_file_id else f"stream-fg-{opened}"
            groups.append(StreamFileGroup(file_id, 0, self.checkpoint_id))
            index = len(groups) - 1
            opened += 1
        group = groups[index]
        groups[index] = replace(group, records=group.records + 1)
        state = replace(self, groups={**self.groups, partition: tuple(groups)},
                        key_index={**self.key_index, (partition, key): group.file_id}, opened=opened)
        return state, StreamBucket(partition, group.file_id, self._type(group))

    def checkpoint(self) -> StreamBucketAssigner:
        """Commit the checkpoint: groups opened so far exist on disk from now on."""
        return replace(self, checkpoint_id=self.checkpoint_id + 1)

    def _type(self, group: StreamFileGroup) -> str:
        return "I" if group.opened_in == self.checkpoint_id else "U"
# --8<-- [end:state]


def assign_checkpoints(capacity: int, checkpoints: list[list[tuple[str, str]]]) -> list[list[StreamBucket]]:
    """Buckets for every (partition, key) of every checkpoint, in order."""
    state = StreamBucketAssigner(capacity)
    out: list[list[StreamBucket]] = []
    for records in checkpoints:
        buckets = []
        for partition, key in records:
            state, bucket = state.assign(partition, key)
            buckets.append(bucket)
        out.append(buckets)
        state = state.checkpoint()
    return out

"""Streaming buckets (Flink's BucketAssigner): I and U tags, insert buckets reused within a
checkpoint, groups filled across checkpoints through the small-file and new-file-group states."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidConfig
from spec.write.stream_buckets import StreamBucket, StreamBucketAssigner, assign_checkpoints, write_handle


def run(
    state: StreamBucketAssigner, records: list[str], partition: str = "p"
) -> tuple[StreamBucketAssigner, list[StreamBucket]]:
    out = []
    for key in records:
        state, bucket = state.assign(partition, key)
        out.append(bucket)
    return state, out


def test_seed_sequence_i_u_then_u_u() -> None:
    """Seed 000: ``I, U | U, U`` — key k inserted and updated in mini-batch 1, updated twice in
    mini-batch 2 of the same checkpoint: one INSERT bucket, created then appended to; in the next
    checkpoint the same group is an UPDATE bucket."""
    state = StreamBucketAssigner(10)
    state, batch1 = run(state, ["k", "k"])
    state, batch2 = run(state, ["k", "k"])
    assert [b.bucket_type for b in batch1 + batch2] == ["I", "U", "U", "U"]
    assert {b.kind for b in batch1 + batch2} == {"INSERT"} and len({b.file_id for b in batch1 + batch2}) == 1
    assert [write_handle("COPY_ON_WRITE", "INSERT", flushed) for flushed in (False, True)] == [
        "create",
        "create-append",
    ]
    state, next_cp = run(state.checkpoint(), ["k", "k"])
    assert [(b.bucket_type, b.kind, b.file_id) for b in next_cp] == [("U", "UPDATE", batch1[0].file_id)] * 2
    assert write_handle("COPY_ON_WRITE", "UPDATE", False) == "merge"
    assert {write_handle("MERGE_ON_READ", k, f) for k in ("INSERT", "UPDATE") for f in (False, True)} == {
        "append"
    }


def test_new_keys_share_the_insert_bucket_and_a_full_one_opens_another() -> None:
    (cp1,) = assign_checkpoints(2, [[("p", "a"), ("p", "b"), ("p", "c"), ("q", "a")]])
    assert [(b.file_id, b.bucket_type, b.kind) for b in cp1] == [
        ("stream-fg-0", "I", "INSERT"),
        ("stream-fg-0", "I", "INSERT"),  # the INSERT bucket is reused
        ("stream-fg-1", "I", "INSERT"),  # stream-fg-0 holds max file size // record size = 2 records
        ("stream-fg-2", "I", "INSERT"),
    ]  # partitions have their own groups


def test_next_checkpoint_appends_to_the_group_as_a_small_file() -> None:
    cp1, cp2 = assign_checkpoints(3, [[("p", "a"), ("p", "b")], [("p", "c"), ("p", "d")]])
    assert {b.file_id for b in cp1} == {"stream-fg-0"}
    # c: stream-fg-0 is on disk with 2 of 3 records, a small file with room (3 - 2) = 1
    assert (cp2[0].file_id, cp2[0].bucket_type, cp2[0].kind) == ("stream-fg-0", "U", "UPDATE")
    # d: the small file is full, but stream-fg-0 is still the partition's new file group, with
    # 2 of 3 assigned: Hudi books it a second time (4 records in a 3-record group)
    assert (cp2[1].file_id, cp2[1].bucket_type) == ("stream-fg-0", "U")


def test_new_file_group_is_kept_for_one_checkpoint_only() -> None:
    """No small files (COW, small-file limit 0): the group opened in checkpoint 1 takes checkpoint
    2's new keys through the new-file state (U), until full; after the second completed checkpoint
    the state is forgotten and a new key opens a new group although the old one has room."""
    buckets = assign_checkpoints(
        4,
        [[("p", "a")], [("p", "b"), ("p", "c"), ("p", "d"), ("p", "e")], [("p", "f")]],
        small_file_limit_records=0,
    )
    assert [(b.file_id, b.bucket_type, b.kind) for cp in buckets for b in cp] == [
        ("stream-fg-0", "I", "INSERT"),
        ("stream-fg-0", "U", "UPDATE"),
        ("stream-fg-0", "U", "UPDATE"),
        ("stream-fg-0", "U", "UPDATE"),
        ("stream-fg-1", "I", "INSERT"),  # stream-fg-0 took its 4 records
        ("stream-fg-2", "I", "INSERT"),
    ]  # stream-fg-1 (1 of 4) forgotten at the second checkpoint


def test_groups_before_the_stream_are_small_files() -> None:
    from spec.write.stream_buckets import StreamFileGroup

    state = StreamBucketAssigner(
        5,
        groups={"p": (StreamFileGroup("old-big", 5, 0), StreamFileGroup("old", 3, 0))},
        key_index={("p", "x"): "old-big"},
    )
    state, out = run(state, ["x", "n1", "n2", "n3"])
    assert [(b.file_id, b.bucket_type) for b in out] == [
        ("old-big", "U"),
        ("old", "U"),
        ("old", "U"),
        ("stream-fg-0", "I"),
    ]


def test_capacity_must_be_positive() -> None:
    with pytest.raises(InvalidConfig, match="capacity"):
        StreamBucketAssigner(0)


_checkpoints = st.lists(
    st.lists(
        st.tuples(st.sampled_from(["p", "q"]), st.text("abcdefgh", min_size=1, max_size=2)), max_size=14
    ),
    max_size=5,
)


@given(st.integers(1, 5), _checkpoints, st.sampled_from([None, 0, 2]))
def test_every_record_lands_in_one_group_within_capacity(
    capacity: int, checkpoints: list[list[tuple[str, str]]], small_limit: int | None
) -> None:
    """Every record gets exactly one bucket; a key always the same group; each assignment path
    stays within its room. Without small files a group never exceeds its capacity; with them
    Hudi's double booking (small file and new file group at once) bounds it by 2 × capacity - 1."""
    state = StreamBucketAssigner(capacity, small_file_limit_records=small_limit)
    home: dict[tuple[str, str], str] = {}
    n = 0
    for records in checkpoints:
        for partition, key in records:
            before = state
            state, bucket = state.assign(partition, key)
            n += 1
            assert home.setdefault((partition, key), bucket.file_id) == bucket.file_id
            assert bucket.bucket_type in ("I", "U") and bucket.kind in ("INSERT", "UPDATE")
            assert (bucket.bucket_type == "I") <= (bucket.kind == "INSERT")
            if (partition, key) in before.key_index:
                assert state == before  # an update changes nothing
        for slots in list(state.small_files.values()) + [(s,) for s in state.new_files.values()]:
            assert all(s.assigned <= s.room for s in slots)
        state = state.checkpoint()
    sizes = [g.records for gs in state.groups.values() for g in gs]
    assert sum(sizes) == len(home) and n == sum(len(r) for r in checkpoints)
    assert all(s <= (capacity if small_limit == 0 else 2 * capacity - 1) for s in sizes)

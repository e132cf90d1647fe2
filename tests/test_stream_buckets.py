"""Streaming buckets (seed 000): I and U buckets, insert buckets reused across checkpoints."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidConfig
from spec.stream_buckets import StreamBucketAssigner, assign_checkpoints


def test_seed_sequence_i_u_then_u_u() -> None:
    # a key inserted and updated in checkpoint 1, updated twice in checkpoint 2
    cp1, cp2 = assign_checkpoints(10, [[("p", "k"), ("p", "k")], [("p", "k"), ("p", "k")]])
    assert [b.bucket_type for b in cp1] == ["I", "I"]  # the insert bucket is reused, not turned into U
    assert [b.bucket_type for b in cp2] == ["U", "U"]
    assert len({b.file_id for b in cp1 + cp2}) == 1


def test_insert_bucket_is_appended_to_in_the_next_checkpoint() -> None:
    cp1, cp2 = assign_checkpoints(3, [[("p", "a"), ("p", "b")], [("p", "c"), ("p", "d")]])
    assert {b.file_id for b in cp1} == {cp2[0].file_id}  # c fills the group opened in checkpoint 1 ...
    assert cp2[0].bucket_type == "U"
    assert cp2[1].file_id != cp2[0].file_id and cp2[1].bucket_type == "I"  # ... d opens a new one


def test_partitions_have_their_own_groups() -> None:
    (cp1,) = assign_checkpoints(5, [[("p1", "a"), ("p2", "a")]])
    assert cp1[0].file_id != cp1[1].file_id


@given(st.integers(1, 5), st.lists(st.lists(st.tuples(st.sampled_from(["p", "q"]), st.text("abcdef", min_size=1,
                                                                                         max_size=2)),
                                             max_size=12), max_size=4))
def test_every_key_in_one_group_and_groups_never_overfill(capacity: int,
                                                          checkpoints: list[list[tuple[str, str]]]) -> None:
    state = StreamBucketAssigner(capacity)
    home: dict[tuple[str, str], str] = {}
    for records in checkpoints:
        for partition, key in records:
            state, bucket = state.assign(partition, key)
            assert home.setdefault((partition, key), bucket.file_id) == bucket.file_id
        state = state.checkpoint()
    for groups in state.groups.values():
        assert all(g.records <= capacity for g in groups)
    assert sum(g.records for gs in state.groups.values() for g in gs) == len(home)


def test_capacity_must_be_positive() -> None:
    with pytest.raises(InvalidConfig):
        StreamBucketAssigner(0)

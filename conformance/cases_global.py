"""The corpus's cases of the global indexes (``hoodie.index.type=GLOBAL_SIMPLE`` / ``GLOBAL_BLOOM`` / ``RECORD_INDEX``;
``spec.index.global_index``): a key is unique across partitions. An upsert naming another partition moves the key (a
delete at the old location, an insert in the new partition) when the index's update-partition-path option is on, and
updates it where it is (the partition column keeping the value it was given) when it is off; an upsert that loses
its merge rewrites the stored row where it is; a delete naming another partition deletes the key wherever it is; a
key deleted and upserted again in another partition is inserted there; a flagged delete (``_hoodie_is_deleted``)
naming another partition deletes the key where it is; a batch's two records of a new key in two partitions are
combined by key. ``conformance.generate.corpus`` places them in the writes suite."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.case_kit import COW, MOR, rec, w
from conformance.case_kit import config as _config
from conformance.case_kit import make_case as _case
from conformance.interface.ops import Case
from spec.index.global_index import GLOBAL_BLOOM, GLOBAL_SIMPLE, RECORD_INDEX, UPDATE_PARTITION_PATH
from spec.model.operations import Compact, Write


def _ops(tt: str) -> list[Write | Compact]:
    ops: list[Write | Compact] = [
        w("insert", rec(1, 5), rec(2, 5), rec(3, 5), rec(4, 5, "b")),
        w("upsert", rec(1, 6, "b", v="moved"), rec(2, 1, "c", v="older"), rec(5, 6, "c")),
        w("delete", rec(3, 9, "z"), rec(99, 9, "z")),
        w("upsert", rec(1, 7, "a", v="back"), rec(3, 8, "b", v="again")),
        # a flagged delete naming another partition; a new key twice in one batch, in two partitions (combined by
        # key: the newer is written, in its partition)
        w("upsert", rec(5, 9, "a", _hoodie_is_deleted=True), rec(6, 8, "b", _hoodie_is_deleted=False),
          rec(6, 7, "a", _hoodie_is_deleted=False)),
    ]
    if tt == MOR:
        ops.append(Compact())
    return ops


def build(index: str, update: bool, tt: str, v: int) -> Case:
    short = {GLOBAL_BLOOM: "global-bloom", GLOBAL_SIMPLE: "global-simple", RECORD_INDEX: "record"}[index]
    name = f"{short}-index-{'moves' if update else 'stays'}"
    options: tuple[tuple[str, str], ...] = ((UPDATE_PARTITION_PATH[index], str(update).lower()),)
    if index == RECORD_INDEX:  # the metadata table's record index, kept by every write (spec.metadata.record_index)
        options += (("hoodie.metadata.record.index.enable", "true"),)
    what = ("moves a key named with another partition there (a delete where it was, an insert where it goes)"
            if update else "updates a key named with another partition where it is (its partition column keeps "
            "the value given)")
    return _case(name, tt, v, f"hoodie.index.type={index}, {UPDATE_PARTITION_PATH[index]}={str(update).lower()}: "
                 f"{what}; an upsert losing its merge in another partition rewrites the stored row where it is; a "
                 "delete naming another partition deletes the key where it is; a deleted key upserted in another "
                 "partition is inserted there",
                 [f"index:{index}", "write:insert", "write:upsert", "write:delete"],
                 _config(tt, v, index_type=index, options=options),
                 _ops(tt))


def global_cases() -> Iterator[Case]:
    """GLOBAL_SIMPLE moving keys on COW and MOR, versions 6 and 8/9; GLOBAL_BLOOM keeping them, COW v8 and MOR v8."""
    for tt, v in ((COW, 6), (COW, 8), (MOR, 6), (MOR, 9)):
        yield build(GLOBAL_SIMPLE, True, tt, v)
    for tt, v in ((COW, 8), (MOR, 8)):
        yield build(GLOBAL_BLOOM, False, tt, v)


def record_index_cases() -> Iterator[Case]:
    """RECORD_INDEX keeping keys where they are (its default) on COW v8 and v9 (the version 9 case is the version 8
    one replayed) and MOR v8; moving them (hoodie.record.index.update.partition.path=true) on COW v8 and MOR v8."""
    for tt, v in ((COW, 8), (COW, 9), (MOR, 8)):
        yield build(RECORD_INDEX, False, tt, v)
    for tt, v in ((COW, 8), (MOR, 8)):
        yield build(RECORD_INDEX, True, tt, v)

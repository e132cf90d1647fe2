"""The corpus's concurrency cases (suite ``concurrency``): writers at once under optimistic concurrency control
(``spec.model.operations.Concurrent``), one case per conflict rule of ``spec.timeline.conflict_resolution``
and per table service beside a writer.

Every case starts from a table with partition ``a`` (keys 1, 2: one file group) and ``b`` (key 3: another), so
two writes to keys 1 and 2 share a file group and writes to keys 1 and 3 do not.
"""

from __future__ import annotations

from typing import Final

from conformance.case_kit import COW, MOR, Builder, clean_config, config, make_case, rec, w
from conformance.interface.ops import Case
from spec.model.operations import Clean, Compact, Concurrent, Write

FIRST: Final = w("insert", rec(1, 1), rec(2, 1), rec(3, 1, "b"))
TAGS: Final = ("concurrent", "write:upsert", "occ")


def _upsert(i: int, ts: int, p: str = "a", v: str | None = None) -> Write:
    return w("upsert", rec(i, ts, p, v))


def same_group(tt: str, v: int) -> Case:
    """Two upserts to one file group, the first to start commits first: the second aborts."""
    return make_case("concurrent-same-group", tt, v, "two upserts to one file group at once: the later to commit "
                     "aborts with write_conflict, its files written and its instant left inflight (a failed write), "
                     "which the next write rolls back before it starts",
                     [*TAGS, "conflict:common-file-group"], config(tt, v),
                     [FIRST,
                      Concurrent((_upsert(1, 2, v="first"), _upsert(2, 2, v="second")), (0, 1),
                                 ("ok", "write_conflict")),
                      _upsert(2, 3, v="after")])


def same_group_reversed(tt: str, v: int) -> Case:
    """Two upserts to one file group, the later to start commits first: the earlier aborts, and the next write
    rolls it back (a failed write older than a completed one). Apache Hudi's next write, a single writer's
    (failed writes rolled back eagerly), refuses that rollback: ``hudi_spark_bugs.EAGER_ROLLBACK_BEHIND_A_COMMIT``."""
    return make_case("concurrent-same-group-reversed", tt, v, "two upserts to one file group at once, the later "
                     "to start commits first: the earlier to start aborts with write_conflict, left inflight behind "
                     "the completed one, which the next write rolls back before it starts",
                     [*TAGS, "conflict:common-file-group"], config(tt, v),
                     [FIRST,
                      Concurrent((_upsert(1, 2, v="first"), _upsert(2, 2, v="second")), (1, 0),
                                 ("write_conflict", "ok")),
                      _upsert(2, 3, v="after")])


def disjoint_groups(tt: str, v: int) -> Case:
    """Two upserts to file groups of their own (two partitions): both commit."""
    return make_case("concurrent-disjoint", tt, v, "two upserts to different file groups at once: both commit, "
                     "whichever commits first", [*TAGS, "conflict:disjoint-file-groups"], config(tt, v),
                     [FIRST,
                      Concurrent((_upsert(1, 2, v="a-side"), _upsert(3, 2, "b", v="b-side")), (1, 0), ("ok", "ok"))])


def clean_beside_upsert(tt: str, v: int) -> Case:
    """The cleaner runs while an upsert is pending: both complete (a clean resolves no conflict)."""
    return make_case("concurrent-clean", tt, v, "a clean runs while an upsert is pending, then the upsert commits: "
                     "both complete", [*TAGS, "clean", "service:beside-writer"], clean_config(tt, v),
                     [FIRST, _upsert(1, 2), _upsert(1, 3),
                      Concurrent((_upsert(2, 4, v="beside"), Clean()), (1, 0), ("ok", "ok"))])


def compaction_beside_upsert(tt: str, v: int) -> Case:
    """A compaction of the file group an upsert is appending to, scheduled and completed while the upsert is
    pending: before version 8 the completed compaction is a candidate and the upsert aborts; from version 8 on
    it is not (log files are sliced by completion time) and both commit."""
    outcome = "write_conflict" if v < 8 else "ok"
    return make_case("concurrent-compaction", tt, v, "a compaction of the file group an upsert appends to, run "
                     f"while the upsert is pending: version {v}: the upsert ends {outcome}",
                     [*TAGS, "compact", "service:beside-writer", "conflict:compaction"],
                     config(tt, v, small_file_limit=0),
                     [FIRST, _upsert(1, 2),
                      Concurrent((_upsert(2, 3, v="beside"), Compact()), (1, 0), (outcome, "ok"))])


def planned_compaction_beside_upsert(tt: str, v: int) -> Case:
    """A compaction scheduled before an upsert starts and run while it is pending: a compaction requested before
    the writer's instant is no conflict — the upsert's log files follow it — and both commit."""
    return make_case("concurrent-planned-compaction", tt, v, "a compaction planned before an upsert to its file "
                     "group starts, run while the upsert is pending: both commit",
                     [*TAGS, "compact", "service:beside-writer", "conflict:compaction"],
                     config(tt, v, small_file_limit=0),
                     [FIRST, _upsert(1, 2), Compact("schedule"),
                      Concurrent((_upsert(2, 3, v="beside"), Compact("run")), (1, 0), ("ok", "ok"))])


BUCKETS: Final = (("hoodie.bucket.index.num.buckets", "4"),)
"""Four buckets: keys 1 and 5 share bucket 0, 2 is bucket 1, 3 and 7 bucket 2, 4 bucket 3
(``spec.index.bucket_identifier``)."""


def same_new_bucket(tt: str, v: int) -> Case:
    """A bucket-indexed table: two upserts, each of a new key of the same bucket, which has no file group yet.
    Each makes a group of its own (file ids differ after the bucket number), so by file group they would both
    commit and leave the bucket two groups; Hudi's bucket index resolves conflicts by bucket
    (``BucketIndexConcurrentFileWritesConflictResolutionStrategy``): the later to commit aborts."""
    return make_case("concurrent-same-new-bucket", tt, v, "a bucket index (4 buckets): two upserts at once, each "
                     "of a new key of the same bucket, which has no file group yet: the later to commit aborts with "
                     "write_conflict (conflicts are by bucket), so the bucket keeps one group",
                     [*TAGS, "index:BUCKET", "conflict:common-bucket"],
                     config(tt, v, index_type="BUCKET", options=BUCKETS),
                     [w("insert", rec(1, 1), rec(2, 1)),
                      Concurrent((_upsert(3, 2, v="first"), _upsert(7, 2, v="second")), (0, 1),
                                 ("ok", "write_conflict")),
                      _upsert(7, 3, v="after")])


def different_new_buckets(tt: str, v: int) -> Case:
    """A bucket-indexed table: two upserts at once of new keys of two buckets without groups: both commit."""
    return make_case("concurrent-different-new-buckets", tt, v, "a bucket index (4 buckets): two upserts at once, "
                     "each of a new key of a bucket of its own, neither with a file group yet: both commit",
                     [*TAGS, "index:BUCKET", "conflict:disjoint-buckets"],
                     config(tt, v, index_type="BUCKET", options=BUCKETS),
                     [w("insert", rec(1, 1), rec(2, 1)),
                      Concurrent((_upsert(3, 2, v="c-side"), _upsert(4, 2, v="d-side")), (1, 0), ("ok", "ok"))])


CASES: Final[tuple[tuple[Builder, str, int], ...]] = (
    (same_group, COW, 6), (same_group, MOR, 8), (same_group, COW, 9),
    (same_group_reversed, MOR, 9), (same_group_reversed, COW, 8),
    (disjoint_groups, COW, 8), (disjoint_groups, MOR, 6),
    (clean_beside_upsert, COW, 8),
    (compaction_beside_upsert, MOR, 6), (compaction_beside_upsert, MOR, 8),
    (planned_compaction_beside_upsert, MOR, 6),
    (same_new_bucket, COW, 8), (same_new_bucket, MOR, 9), (same_new_bucket, MOR, 6),
    (different_new_buckets, COW, 9),
)
"""The suite: (builder, table type, table version) — each rule where it differs by version, once elsewhere."""


def concurrency_cases() -> list[Case]:
    """The ``concurrency`` suite's cases."""
    return [builder(tt, v) for builder, tt, v in CASES]

"""The corpus's cases of the bucket index (``hoodie.index.type=BUCKET``, SIMPLE engine;
``spec.index.bucket_index``): records go to the file group of their key's bucket, a new bucket's first write
makes its group, an insert of a key into a bucket that has a group goes to that group (copy-on-write: the
concat handle keeps both rows of a key inserted twice), a delete of a key the table never held still reaches
its bucket's group, merge-on-read updates and new keys of a bucket append log files, and a compaction folds
them. ``conformance.generate.corpus`` places them in the writes suite."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from conformance.case_kit import COW, MOR, rec, w
from conformance.case_kit import config as _config
from conformance.case_kit import make_case as _case
from conformance.interface.ops import Case
from spec.model.operations import Compact, Stream, StreamRecord, Write

BUCKETS = (("hoodie.bucket.index.num.buckets", "4"),)


def bucket_index(tt: str, v: int) -> Case:
    ops: list[Write | Compact] = [
        w("insert", rec(1, 1), rec(2, 1, "b"), rec(3, 1), rec(4, 1, "b")),
        w("upsert", rec(1, 2, v="u1"), rec(9, 2), rec(10, 2, "b"), rec(11, 2)),
        w("delete", rec(2, 3, "b"), rec(99, 3)),
        w("insert", rec(12, 4), rec(3, 4, v="again")),
    ]
    if tt == MOR:
        ops.append(Compact())
    return _case("bucket-index", tt, v, "a bucket index of 4 buckets a partition: new buckets make their groups "
                 "(file ids starting with the bucket number), updates and new keys of a bucket go to its group "
                 "(merge-on-read: log files), a delete of a key never written reaches its bucket's group, an "
                 "insert of a stored key goes to its group (copy-on-write keeps both rows)",
                 ["index:BUCKET", "write:insert", "write:upsert", "write:delete"],
                 _config(tt, v, index_type="BUCKET", options=BUCKETS), ops)


def bucket_index_hash_field(tt: str, v: int) -> Case:
    return _case("bucket-index-hash-field", tt, v, "a bucket index on a complex key hashing one of its fields "
                 "(hoodie.bucket.index.hash.field=name, 3 buckets): the keys of one name share a group",
                 ["index:BUCKET", "keygen:COMPLEX", "write:upsert"],
                 _config(tt, v, index_type="BUCKET", record_key_fields=("id", "name"), options=(
                     ("hoodie.bucket.index.num.buckets", "3"), ("hoodie.bucket.index.hash.field", "name"))),
                 [w("insert", *(rec(i, 1, name=f"n{i % 3}") for i in range(1, 7))),
                  w("upsert", rec(1, 2, v="u1", name="n1"), rec(7, 2, name="n1"), rec(8, 2, name="n9"))])


def bucket_index_stream(tt: str, v: int) -> Case:
    return _case("bucket-index-stream", tt, v, "a streaming writer on a bucket-indexed table "
                 "(spec.write.stream_buckets.BucketStreamAssigner): a record goes to its key's bucket's group, a new "
                 "bucket's group is an insert bucket for the rest of its checkpoint, a delete reaches its bucket's "
                 "group, held or not, and one whose bucket has no group is dropped",
                 ["index:BUCKET", "stream"], _config(tt, v, index_type="BUCKET", options=BUCKETS),
                 [w("insert", rec(1, 1), rec(2, 1)),
                  Stream(((StreamRecord("upsert", rec(1, 2)), StreamRecord("upsert", rec(5, 2)),
                           StreamRecord("upsert", rec(3, 2)), StreamRecord("upsert", rec(3, 3))),
                          (StreamRecord("delete", rec(9, 4)), StreamRecord("delete", rec(2, 4)),
                           StreamRecord("delete", rec(7, 4)), StreamRecord("delete", rec(4, 4)),
                           StreamRecord("upsert", rec(5, 4)))))])


def deletes_new_key(index: str | None) -> Callable[[str, int], Case]:
    """An upsert whose ``_hoodie_is_deleted`` records name keys the table never held: routed as inserts, written
    nowhere and counted as deletes; a new group that takes only such a record is an empty base file (Apache Hudi
    1.2.0, measured), with the writer's default index and with a bucket index."""
    name = "upsert-deletes-new-key" if index is None else "bucket-index-deletes-new-key"

    def build(tt: str, v: int) -> Case:
        def r(i: int, p: str, deleted: bool) -> dict[str, object]:
            return {**rec(i, 1, p), "_hoodie_is_deleted": deleted}
        return _case(name, tt, v, "an upsert of _hoodie_is_deleted records of keys never written (one in a new "
                     "partition): nothing of them is written, each is counted as a delete where it was routed",
                     ["write:upsert", "bug:deleted-new-key-written"] + ([f"index:{index}"] if index else []),
                     _config(tt, v, index_type=index, options=BUCKETS if index else ()),
                     [w("insert", r(1, "a", False)), w("upsert", r(2, "a", True), r(3, "a", False), r(4, "b", True))])
    return build


def bucket_cases() -> Iterator[Case]:
    """COW and MOR on versions 6, 8 and 9; the hash field on COW v8 and MOR v9."""
    for tt in (COW, MOR):
        for v in (6, 8, 9):
            yield bucket_index(tt, v)
    yield bucket_index_hash_field(COW, 8)
    yield bucket_index_hash_field(MOR, 9)
    for index in (None, "BUCKET"):
        yield deletes_new_key(index)(COW, 8)
        yield deletes_new_key(index)(MOR, 9)


def bucket_stream_cases() -> Iterator[Case]:
    """The streaming writer's bucket index: COW v8, MOR v9."""
    yield bucket_index_stream(COW, 8)
    yield bucket_index_stream(MOR, 9)

"""A batch's versions of one key, combined before a write (``HoodieWriteHelper.deduplicateRecords``): one
version per (partition, key), the batch's records in order combined as log versions are
(``spec.read.merge.combine_logs``), with what a record flagged ``_hoodie_is_deleted`` is on the write path.
Whether an operation combines at all is ``spec.model.writes.combines``.

Source (Apache Hudi 1.2.0, measured on versions 6 and 8: ``tests/test_flagged_deletes.py``; 0.15.x, 1.0.x and
1.1.x not measured here, 0.15.x for the version 6 rule of a log's delete): ``HoodieWriteHelper.deduplicateRecords``
with the table's ``HoodieRecordMerger`` (1.x) or payload's ``preCombine`` (``OverwriteWithLatestAvroPayload``,
``DefaultHoodieRecordPayload``), and ``DeleteRecord`` for what a natural-order delete is.
"""

from __future__ import annotations

from collections.abc import Sequence

from spec.model.files import Incoming
from spec.model.queries import merge_rule, ordering_type
from spec.model.state import TableState
from spec.read.merge import Version, as_version, combine_logs, delete_version, ordering_type_of


def _version(r: Incoming, state: TableState) -> Version:
    """A record of the batch as the writer's deduplication sees it.

    A record flagged ``_hoodie_is_deleted`` carries its ordering value. On table version 8 and later that value
    is compared as any record's, a numeric 0 included: the write path merges whole records
    (``HoodieWriteHelper.deduplicateRecords`` with the table's ``HoodieRecordMerger``) and reads the flag from the
    winner, so the natural-order default of a log's delete record (``DeleteRecord``, ``spec.read.merge``) does
    not apply; its type is the declared one, or (a batch that creates the table) the value's, as a row's is.
    Measured on Apache Hudi 1.2.0: an upsert of ``[ts 1, ts 0 flagged]`` keeps the row on versions 6 and 8
    (``tests/test_flagged_deletes.py``). On version 6 the flagged record is a delete whose ordering value is
    natural as a log's is (``Integer`` 0 alone)."""
    rule = merge_rule(state.config)
    if r.data is None:
        if r.ordering is None:
            return Version(None, None, None, natural=True)
        if state.table_version >= 8:
            return Version(None, r.ordering, ordering_type_of(r.ordering, ordering_type(state)), natural=False)
        return delete_version(r.ordering, ordering_type(state), rule)
    return as_version(r.data, rule, ordering_type(state))


def dedupe(state: TableState, recs: Sequence[Incoming], by_key: bool = False) -> list[Incoming]:
    """One version per (partition, key) — per key alone under a global index (``by_key``: Hudi's
    ``HoodieWriteHelper.deduplicateRecords`` keys by the record key when ``HoodieIndex.isGlobal``, so the winner's
    partition is the one written) —: versions in batch order combined as log versions are."""
    rule = merge_rule(state.config)
    best: dict[tuple[str, str], tuple[Incoming, Version]] = {}
    for r in recs:
        v = _version(r, state)
        k = ("" if by_key else r.partition, r.key)
        if k in best:
            won = combine_logs(best[k][1], v, rule)
            best[k] = (r, v) if won is v else best[k]
        else:
            best[k] = (r, v)
    return [r for r, _ in best.values()]

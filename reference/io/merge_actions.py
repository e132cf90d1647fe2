"""The action a ``MERGE INTO`` gives each of its records (``reference.commands._merge``), and how a write handle
(``reference.io.handles``) takes it."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

MERGE_ACTION = "__hudi_spec_merge_action"
"""The internal column of a ``MERGE INTO``'s records (``reference.commands._merge``): what the statement's clauses
made of each source record — ``MERGE_WRITE``, ``MERGE_DELETE``, or ``MERGE_SKIP`` (no clause took it). Absent from
every other write."""
MERGE_WRITE, MERGE_DELETE, MERGE_SKIP = 0, 1, 2


def merge_actions(incoming: pa.Table, delete_flag: str) -> pa.Table:
    """A ``MERGE INTO``'s records as the handle takes them, as Hudi's ``ExpressionPayload`` decides each in the
    handle of its file group: a record no clause took is dropped here — the file group it was routed to is still
    written (a merge handle copies its stored row unchanged, uncounted; an append handle left with no record writes
    no log file), as Apache Hudi 1.2.0 does (measured) —, and a ``DELETE`` clause's record is a delete that removes
    the stored row whatever its ordering value (the delete operation's: the handle's ``delete_flag`` column)."""
    if MERGE_ACTION not in incoming.column_names:
        return incoming
    action = incoming.column(MERGE_ACTION)
    incoming = incoming.filter(pc.not_equal(action, MERGE_SKIP)).drop_columns([MERGE_ACTION])
    action = action.filter(pc.not_equal(action, MERGE_SKIP))
    if not pc.any(pc.equal(action, MERGE_DELETE)).as_py():
        return incoming
    deleted = pc.equal(action, MERGE_DELETE)
    if delete_flag in incoming.column_names:
        deleted = pc.or_(deleted, incoming.column(delete_flag))
        incoming = incoming.drop_columns([delete_flag])
    return incoming.append_column(delete_flag, deleted)

"""How records of one key combine: the ordering field, commit order, and deletes.

A file slice holds a base file and log files. Reading it combines, per record key, the
base row with the log records, oldest log block first. Three comparisons decide:

- **log vs log** (``preCombine``): the later record replaces the earlier one unless the earlier
  one's ordering value is greater (event-time ordering); under commit-time ordering the later
  record always wins;
- **log vs base** (``combineAndGetUpdateValue``): table version 6 with
  ``OverwriteWithLatestAvroPayload`` lets the log record always win; ``DefaultHoodieRecordPayload``
  and v8 event-time ordering keep the base row when its ordering value is greater;
- **deletes**: a delete record removes the key unless it carries a real ordering value (not the
  *natural order* default) of the same type as the record's and smaller than it.

What counts as the natural-order default differs, side by side below: Hudi 0.x (v6) treats only
``Integer 0`` (and null) as natural, so the ``Long 0`` that Spark SQL's DELETE writes for a long
ordering field is compared as a value and loses to an earlier log record with a greater
ordering value; Hudi 1.x (v8) treats a numeric 0 of any type as natural (observed on real
tables: the delete wins).

A data record whose ``_hoodie_is_deleted`` field is true is a delete in both versions.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9):
``OverwriteWithLatestAvroPayload`` and ``DefaultHoodieRecordPayload`` (``preCombine``,
``combineAndGetUpdateValue``), ``DeleteRecord``, and 1.x's ``RecordMergeMode`` with the merging of
``HoodieFileGroupReader``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from spec.config.table_config import (
    COMMIT_TIME_ORDERING,
    COMMIT_TIME_STRATEGY_ID,
    CUSTOM_MERGE,
    DEFAULT_PAYLOAD,
    EVENT_TIME_ORDERING,
    OVERWRITE_WITH_LATEST_PAYLOAD,
    TableConfig,
)

IS_DELETED_FIELD = "_hoodie_is_deleted"
EVENT_TIME_PAYLOADS = frozenset({DEFAULT_PAYLOAD, "org.apache.hudi.common.model.EventTimeAvroPayload"})
"""v6 payloads that keep the stored row when its ordering value is greater (event-time ordering)."""


class MergeMode(StrEnum):
    """How the versions of a key are ordered: by the ordering field (event time), by commit time, or by a custom merger
    this specification cannot run."""

    EVENT_TIME_ORDERING = EVENT_TIME_ORDERING
    COMMIT_TIME_ORDERING = COMMIT_TIME_ORDERING
    CUSTOM = CUSTOM_MERGE


# --8<-- [start:rule]
@dataclass(frozen=True)
class MergeRule:
    """The merge behaviour of a table, derived from its config.

    - ``mode``: event-time or commit-time ordering. v8 states it (merge mode, else the strategy
      id); v6 infers it from the payload class: OverwriteWithLatestAvroPayload and the event-time
      payloads (DefaultHoodieRecordPayload, EventTimeAvroPayload) all combine log records by
      ordering value, any other payload is CUSTOM (its Java code decides; not specified here);
    - ``log_wins_over_base``: v6 with OverwriteWithLatestAvroPayload (or without an ordering
      field) — the merged log record replaces the base row whatever their ordering values;
    - ``table_version``: decides what a natural-order delete is.
    """

    mode: MergeMode
    ordering_field: str | None
    log_wins_over_base: bool
    table_version: int
    payload_class: str | None = None

    @staticmethod
    def from_config(cfg: TableConfig) -> MergeRule:
        """The table's merge rule. v8, v9: the merge mode, else the strategy id, else event-time ordering; an unknown
        mode, or a v9 partial update mode other than NONE, is custom. v6: from the payload class; without an
        ordering field, commit-time ordering."""
        version = cfg.table_version
        ordering = cfg.ordering_field
        payload = cfg.payload_class
        if version >= 8:
            by_strategy = COMMIT_TIME_ORDERING if cfg.merge_strategy_id == COMMIT_TIME_STRATEGY_ID else None
            mode_name = cfg.merge_mode or by_strategy or EVENT_TIME_ORDERING
            mode = MergeMode(mode_name) if mode_name in MergeMode._value2member_map_ else MergeMode.CUSTOM
            if cfg.partial_update_mode != "NONE":  # v9: partial updates blend columns, which is not specified here
                mode = MergeMode.CUSTOM
            return MergeRule(mode, ordering, mode == MergeMode.COMMIT_TIME_ORDERING, version, payload)
        if payload != OVERWRITE_WITH_LATEST_PAYLOAD and payload not in EVENT_TIME_PAYLOADS:
            return MergeRule(MergeMode.CUSTOM, ordering, False, version, payload)
        mode = MergeMode.EVENT_TIME_ORDERING if ordering else MergeMode.COMMIT_TIME_ORDERING
        log_wins = payload == OVERWRITE_WITH_LATEST_PAYLOAD or not ordering
        return MergeRule(mode, ordering, log_wins, version, payload)
# --8<-- [end:rule]


@dataclass(frozen=True)
class Version:
    """One version of a key: a row (or a delete), its ordering value and where it came from.

    ``ordering_type`` names the Java type of the ordering value (``int``, ``long``, ``double``,
    ``string``...), as the delete rule compares types; ``natural`` marks a delete without a real
    ordering value; ``partial``: a record of a partial-update block (``IS_PARTIAL``), whose row holds
    only the columns its update set (``merge_partial``).
    """

    row: Mapping[str, Any] | None
    ordering: Any = None
    ordering_type: str | None = None
    natural: bool = False
    partial: bool = False

    @property
    def is_delete(self) -> bool:
        """Whether this version deletes the key (it has no row)."""
        return self.row is None


# --8<-- [start:natural]
def is_natural_order(ordering: Any, ordering_type: str | None, table_version: int) -> bool:
    """Whether a delete's ordering value is the natural-order default (the delete always wins).

    v6 (Hudi 0.x): null, or ``Integer 0``. v8 (Hudi 1.x): null, or numeric 0 of any type.
    """
    if ordering is None:
        return True
    if isinstance(ordering, bool) or not isinstance(ordering, int | float | Decimal) or ordering != 0:
        return False
    return table_version >= 8 or ordering_type == "int"
# --8<-- [end:natural]


def ordering_type_of(value: Any, declared: str | None = None) -> str | None:
    """The Java type of an ordering value: the declared Avro/Arrow type if known, else from the value."""
    if value is None:
        return None
    if declared:
        return declared
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long" if not -(2**31) <= value < 2**31 else "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


# --8<-- [start:compare]
def java_compare(a: Any, b: Any) -> int | None:
    """Compare two ordering values as Java's ``compareTo`` does: -1, 0 or 1, or None when Java could
    not compare them (different types, or a null).

    Strings compare by UTF-16 code units (not code points: a character above U+FFFF sorts below
    U+E000..U+FFFF); doubles as ``Double.compare`` (-0.0 < 0.0, NaN above everything, NaN = NaN);
    bytes as ``ByteBuffer.compareTo`` (signed bytes, then length); numbers, booleans (false < true)
    and timestamps by value.
    """
    if a is None or b is None:
        return None
    if isinstance(a, str) and isinstance(b, str):
        ua, ub = a.encode("utf-16-be"), b.encode("utf-16-be")
        return (ua > ub) - (ua < ub)
    if isinstance(a, bytes) and isinstance(b, bytes):
        sa, sb = [x - 256 if x > 127 else x for x in a], [x - 256 if x > 127 else x for x in b]
        return (sa > sb) - (sa < sb)
    if isinstance(a, float) and isinstance(b, float):
        ka, kb = _double_key(a), _double_key(b)
        return (ka > kb) - (ka < kb)
    if isinstance(a, bool) != isinstance(b, bool) or isinstance(a, str | bytes) or isinstance(b, str | bytes):
        return None  # Java: ClassCastException; the values do not order
    try:
        return int(a > b) - int(a < b)
    except TypeError:
        return None


def _double_key(x: float) -> tuple[int, float, int]:
    """A sort key ordering doubles as ``Double.compare``."""
    if math.isnan(x):
        return (1, 0.0, 0)
    return (0, x, 0 if x == 0.0 and math.copysign(1.0, x) < 0 else 1)


# --8<-- [end:compare]


def _greater(a: Any, b: Any) -> bool:
    return java_compare(a, b) == 1


def _is_deleted_flag(row: Mapping[str, Any] | None) -> bool:
    return row is not None and row.get(IS_DELETED_FIELD) is True


def as_version(row: Mapping[str, Any], rule: MergeRule, ordering_type: str | None = None,
               partial: bool = False) -> Version:
    """A data record as a Version (a delete when ``_hoodie_is_deleted`` is true); ``partial``: a record of a
    partial-update block, holding the columns its update set alone."""
    ordering = row.get(rule.ordering_field) if rule.ordering_field else None
    otype = ordering_type_of(ordering, ordering_type)
    if _is_deleted_flag(row):
        return Version(None, ordering, otype, natural=False)
    return Version(row, ordering, otype, partial=partial)


# --8<-- [start:partial]
def merge_partial(high: Version, low: Version) -> Version:
    """The version that wins a merge (``high``: the later record, or the one of greater ordering value), filled
    with the columns it lacks from the one it beat (``low``), when it is a partial record.

    A partial record (a data block flagged ``IS_PARTIAL``: Apache Hudi 1.2.0's ``MERGE INTO … UPDATE SET`` of some
    columns on merge-on-read) holds the five meta columns and the assigned columns alone. Merged with another record
    of its key it keeps its own values (its meta columns, hence its commit time and sequence number, its ordering
    value) and takes every other column from the record it beat; the result holds the columns of both, and is
    partial while the other was. A winner that is a whole record, or either side a delete, is the winner as it is
    (a partial record that beats a delete stays partial). Measured on Apache Hudi 1.2.0: base ``(ts 5, v, w)``,
    partial ``(ts 7, v y)`` then partial ``(ts 9, w ww)`` reads ``(ts 9, v y, w ww)`` with the commit time of the
    last; a partial record of smaller ordering value than the stored row leaves the row as it is.

    Source: ``PartialUpdateHandler`` (``KEEP_VALUES``), ``PartialMergerWithKeepValues.mergePartialRecords`` and
    ``BufferedRecordMergerFactory`` (partial merging, which a file group record buffer enables on reading a block
    whose header has ``IS_PARTIAL``), hudi-common/…/hudi/common/table/read/.
    """
    if not high.partial or high.row is None or low.row is None:
        return high
    row = dict(low.row)
    row.update(high.row)
    return Version(row, high.ordering, high.ordering_type, high.natural, partial=low.partial)
# --8<-- [end:partial]


# --8<-- [start:combine]
def combine_logs(older: Version, newer: Version, rule: MergeRule) -> Version:
    """Two log versions of one key, ``newer`` read after ``older``: the one that survives (a partial record that
    wins is filled from the other: ``merge_partial``)."""
    winner = _combine_logs(older, newer, rule)
    return merge_partial(winner, older if winner is newer else newer)


def _combine_logs(older: Version, newer: Version, rule: MergeRule) -> Version:
    if rule.mode == MergeMode.COMMIT_TIME_ORDERING:
        return newer
    if newer.is_delete and older.row is not None:
        return newer if delete_wins(newer, older, rule) else older
    if older.is_delete and not newer.is_delete:
        # a record after a delete: it replaces the delete unless the delete has a greater real ordering
        if older.natural or not _greater(older.ordering, newer.ordering):
            return newer
        return older
    return older if _greater(older.ordering, newer.ordering) else newer


def delete_wins(delete: Version, record: Version, rule: MergeRule) -> bool:
    """A delete removes ``record`` unless it has a smaller real ordering value of the record's type."""
    if delete.natural or record.row is None or rule.mode == MergeMode.COMMIT_TIME_ORDERING:
        return True
    if delete.ordering_type != record.ordering_type:
        return True
    return not _greater(record.ordering, delete.ordering)


def merge_with_base(base: Version, log: Version, rule: MergeRule) -> Version:
    """The base row of a key against the merged log version: the row that is read (or a delete); a partial log
    record that wins takes the columns it lacks from the base row (``merge_partial``)."""
    return merge_partial(_merge_with_base(base, log, rule), base)


def _merge_with_base(base: Version, log: Version, rule: MergeRule) -> Version:
    if log.is_delete:
        if rule.table_version < 8:
            return log  # 0.x: a merged delete removes the base row
        return log if delete_wins(log, base, rule) else base
    if rule.log_wins_over_base or rule.mode == MergeMode.COMMIT_TIME_ORDERING:
        return log
    return base if _greater(base.ordering, log.ordering) else log
# --8<-- [end:combine]


# --8<-- [start:merge_handle]
def merge_handle_keeps_stored(stored: Mapping[str, Any], incoming: Version, rule: MergeRule) -> bool:
    """A merge handle's rule on the write path (the payload's or record merger's ``combineAndGetUpdateValue``,
    ``HoodieMergeHandle``): whether the stored row of a key stays against the batch's record of that key.

    A delete of the delete operation (no ordering value) removes the row. Under event-time ordering where the
    incoming record does not simply win (not version 6's ``OverwriteWithLatestAvroPayload``, not commit-time
    ordering) a stored row with a greater ordering value stays — against a row, and against a record flagged
    ``_hoodie_is_deleted`` with a smaller ordering value, 0 included (on the write path the flagged record is a
    whole record; the natural-order default of a log's delete does not apply). Otherwise the incoming record wins.
    Measured on Apache Hudi 1.2.0, versions 6 and 8, copy-on-write: a stored row of ordering value 1 stays after
    an upsert of its key flagged deleted with 0, and goes with 1 or 2. (On merge-on-read the flagged record goes
    to a log, and the reader's merge decides: ``merge_with_base``.)"""
    if incoming.is_delete and incoming.ordering is None:
        return False
    field = rule.ordering_field
    return field is not None and not rule.log_wins_over_base and _greater(stored.get(field), incoming.ordering)
# --8<-- [end:merge_handle]


def delete_version(ordering: Any, ordering_branch_type: str | None, rule: MergeRule) -> Version:
    """A delete record from a delete block, with its ordering value and union branch type."""
    natural = is_natural_order(ordering, ordering_branch_type, rule.table_version)
    return Version(None, ordering, ordering_branch_type, natural)

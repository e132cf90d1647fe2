"""Auto-generated record keys: a table created with no record key field (a *keyless* table).

A write to a table with no ``hoodie.datasource.write.recordkey.field`` and no ``hoodie.table.recordkey.fields``
gets its keys generated (``AutoRecordKeyGenerationUtils.shouldAutoGenerateRecordKeys``); the table's
``hoodie.properties`` then has no ``hoodie.table.recordkey.fields`` at all (Apache Hudi 1.2.0 measured, which also
writes ``hoodie.record.merge.mode=COMMIT_TIME_ORDERING`` and the key generator its partition fields infer).

The key of the ``row_id``-th record of input partition ``partition_id`` written by instant ``instant`` is
``<instant>_<partition_id>_<row_id>`` (``HoodieRecord.generateSequenceId``, called by
``AutoRecordGenWrapperKeyGenerator`` with Spark's partition id and the row's index in that partition, from 0).
Keys are unique across the table: an instant is written once, and (partition id, row id) is unique within the
batch. The partition path is the table's key generator's, as for any table.

What a write may do (Apache Hudi 1.2.0's Spark datasource measured, ``AutoRecordKeyGenerationUtils.
mayBeValidateParamsForAutoGenerationOfRecordKeys`` and ``HoodieSparkSqlWriter``):

- ``insert``, ``bulk_insert``, ``insert_overwrite``, ``insert_overwrite_table``, ``delete_partition``: allowed;
  every record is new;
- ``upsert`` of records without ``_hoodie_record_key``: allowed, every record new (a generated key matches
  nothing in the table);
- ``upsert`` or ``delete`` of records that carry ``_hoodie_record_key`` and ``_hoodie_partition_path`` (rows read
  from the table): the *prepped* path (``HoodieSparkSqlWriter.canDoPreppedWrites``): the records' keys are those
  columns, so the rows read are updated or deleted — what Spark SQL's ``UPDATE`` and ``DELETE`` do;
- ``delete`` of records without ``_hoodie_record_key``: refused (Hudi's task fails with ``Property
  _hoodie.record.key.gen.partition.id not found``: a generated key can name no existing record);
- ``hoodie.combine.before.insert=true``: refused, with Hudi's ``HoodieKeyGeneratorException`` message
  ``Enabling hoodie.combine.before.insert is not supported with auto generation of record keys``
  (``hoodie.datasource.write.insert.drop.duplicates`` and ``hoodie.populate.meta.fields=false``, refused by Hudi
  too, are refused for every table: ``spec.config.refused_options``);
- a record key field given to a keyless table: ``ConfigConflict`` (``HoodieWriterUtils.validateTableConfig``:
  ``RecordKey: id null``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9, the same rule since 0.14.0; measured
on 1.2.0): ``AutoRecordKeyGenerationUtils``, ``AutoRecordGenWrapperKeyGenerator``,
``HoodieRecord.generateSequenceId``, ``HoodieSparkSqlWriter.canDoPreppedWrites``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spec.errors import InvalidOperation, UnsupportedOption

RECORD_KEY_OPTION = "hoodie.datasource.write.recordkey.field"
TABLE_RECORD_KEY = "hoodie.table.recordkey.fields"
COMBINE_BEFORE_INSERT = "hoodie.combine.before.insert"
PREPPED_COLUMNS = ("_hoodie_record_key", "_hoodie_partition_path")
"""The meta columns a record read from the table carries, which make its write a prepped one."""
KEYLESS_OPERATIONS = ("insert", "bulk_insert", "upsert", "insert_overwrite", "insert_overwrite_table",
                      "delete_partition")
"""Operations a keyless table takes from records without ``_hoodie_record_key``."""
PREPPED_OPERATIONS = ("upsert", "delete")
"""Operations a keyless table takes from records read from it (with their ``PREPPED_COLUMNS``)."""


# --8<-- [start:rule]
def auto_record_key_prefix(instant: str, partition_id: int) -> str:
    """What every generated key of one input partition starts with: ``<instant>_<partition>_``."""
    if partition_id < 0:
        raise ValueError(f"partition id {partition_id} must not be negative")
    return f"{instant}_{partition_id}_"


def auto_record_key(instant: str, partition_id: int, row_id: int) -> str:
    """The generated key of a record (``HoodieRecord.generateSequenceId``): ``<instant>_<partition>_<row>``."""
    if row_id < 0:
        raise ValueError(f"row id {row_id} must not be negative")
    return f"{auto_record_key_prefix(instant, partition_id)}{row_id}"
# --8<-- [end:rule]


def auto_generates_record_keys(options: Mapping[str, Any], table_record_key_fields: tuple[str, ...] = ()) -> bool:
    """Whether a write generates its keys: neither its options nor the table name a record key field
    (``AutoRecordKeyGenerationUtils.shouldAutoGenerateRecordKeys``: both empty)."""
    given = str(options.get(RECORD_KEY_OPTION) or options.get(TABLE_RECORD_KEY) or "").strip()
    return not given and not table_record_key_fields


def check_keyless_write(operation: str, options: Mapping[str, Any], prepped: bool) -> None:
    """A write to a keyless table is one Apache Hudi does (module docstring); anything else is refused before
    anything is written. ``prepped``: the records carry ``PREPPED_COLUMNS``."""
    combine = str(options.get(COMBINE_BEFORE_INSERT, "false")).strip().lower() == "true"
    if combine:
        raise UnsupportedOption(
            f"Enabling {COMBINE_BEFORE_INSERT} is not supported with auto generation of record keys",
            hint="the table has no record key field, so records cannot be combined by key: leave "
                 f"{COMBINE_BEFORE_INSERT} unset (AutoRecordKeyGenerationUtils)")
    if prepped and operation in PREPPED_OPERATIONS:
        return
    if operation not in KEYLESS_OPERATIONS:
        what = "records read from the table (with _hoodie_record_key and _hoodie_partition_path)" \
            if operation in PREPPED_OPERATIONS else "no records"
        raise InvalidOperation(
            f"a {operation} on a table with auto-generated record keys needs {what}: a generated key "
            "names no record of the table",
            hint="delete or update rows by a condition (HudiTable.delete(where=...), `hudi-spec delete TABLE "
                 "--where ...`), which reads the rows' keys from the table; or write with insert/bulk_insert")


__all__ = ["KEYLESS_OPERATIONS", "PREPPED_COLUMNS", "PREPPED_OPERATIONS", "auto_generates_record_keys",
           "auto_record_key", "auto_record_key_prefix", "check_keyless_write"]

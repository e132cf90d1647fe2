"""The write operations: what ``hoodie.datasource.write.operation`` names and the ``operationType`` commit metadata
records, one enum for both.

Source (Apache Hudi 0.15.x, 1.0.x and 1.1.x): ``WriteOperationType`` (``org.apache.hudi.common.model``),
``CommitUtils.getCommitActionType``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


# --8<-- [start:operation_type]
class WriteOperationType(StrEnum):
    """The write operations, by the names commit metadata records in ``operationType``; ``option`` is how
    ``hoodie.datasource.write.operation`` spells one."""

    INSERT = "INSERT"
    INSERT_PREPPED = "INSERT_PREPPED"
    UPSERT = "UPSERT"
    UPSERT_PREPPED = "UPSERT_PREPPED"
    BULK_INSERT = "BULK_INSERT"
    BULK_INSERT_PREPPED = "BULK_INSERT_PREPPED"
    DELETE = "DELETE"
    DELETE_PREPPED = "DELETE_PREPPED"
    BOOTSTRAP = "BOOTSTRAP"
    INSERT_OVERWRITE = "INSERT_OVERWRITE"
    CLUSTER = "CLUSTER"
    DELETE_PARTITION = "DELETE_PARTITION"
    INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
    COMPACT = "COMPACT"
    INDEX = "INDEX"
    ALTER_SCHEMA = "ALTER_SCHEMA"
    LOG_COMPACT = "LOG_COMPACT"
    UNKNOWN = "UNKNOWN"
    BUCKET_RESCALE = "BUCKET_RESCALE"  # newest Hudi only

    @property
    def option(self) -> str:
        """The operation as ``hoodie.datasource.write.operation`` names it (Hudi's ``WriteOperationType.value``)."""
        return "logcompact" if self is WriteOperationType.LOG_COMPACT else self.name.lower()

    @classmethod
    def of_option(cls, option: str) -> WriteOperationType:
        """The operation ``hoodie.datasource.write.operation`` names (``WriteOperationType.fromValue``)."""
        for op in cls:
            if op.option == option.lower():
                return op
        raise ValueError(f"no write operation is named {option!r}")


WRITER_OPERATIONS: Final = tuple(op.option for op in (
    WriteOperationType.UPSERT, WriteOperationType.INSERT, WriteOperationType.BULK_INSERT, WriteOperationType.DELETE,
    WriteOperationType.INSERT_OVERWRITE, WriteOperationType.INSERT_OVERWRITE_TABLE,
    WriteOperationType.DELETE_PARTITION))
"""The ``hoodie.datasource.write.operation`` values the writer runs."""
REPLACE_OPERATIONS: Final = frozenset(op.option for op in (
    WriteOperationType.INSERT_OVERWRITE, WriteOperationType.INSERT_OVERWRITE_TABLE,
    WriteOperationType.DELETE_PARTITION))
"""The operations whose commit is a replacecommit, which replaces file groups (``CommitUtils.getCommitActionType``)."""
# --8<-- [end:operation_type]


# --8<-- [start:write_action]
def write_action(operation: str, merge_on_read: bool, creates_table: bool = False) -> str:
    """The action a write of ``operation`` (as ``hoodie.datasource.write.operation`` names it) completes as:
    ``replacecommit`` for the operations that replace file groups, ``commit`` on copy-on-write, and on
    merge-on-read ``deltacommit`` (``CommitUtils.getCommitActionType``) except for a ``bulk_insert`` that
    creates the table, which completes as a ``commit``: Spark's bulk insert goes through the row writer, which
    takes its action from its write config's table type (``DatasetBulkInsertCommitActionExecutor.
    getCommitActionType``), COPY_ON_WRITE's while the table has no config to give it, the table's own on an
    existing table. Measured with Apache Hudi 1.2.0 on merge-on-read tables of versions 6, 8 and 9: a first
    write's bulk insert is a ``commit`` (``bulk-insert-none-mor-v8`` and the other bulk-insert merge-on-read
    cases), a later one a ``deltacommit`` (``duplicates-bulk-insert-mor-v8``). Hudi counts that ``commit`` as a
    merge-on-read table's commits always are, the last compaction included."""
    if operation in REPLACE_OPERATIONS:
        return "replacecommit"
    if merge_on_read and not (creates_table and operation == WriteOperationType.BULK_INSERT.option):
        return "deltacommit"
    return "commit"
# --8<-- [end:write_action]


__all__ = ["REPLACE_OPERATIONS", "WRITER_OPERATIONS", "WriteOperationType", "write_action"]

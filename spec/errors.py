"""The typed errors every package of hudi-spec raises.

Rule: bad input never surfaces as a bare ``ValueError``, ``KeyError`` or ``IndexError``.
It surfaces as one of the classes below, whose message says what was wrong and what to
do about it, and an operation that raises one leaves the table exactly as it was.

The hierarchy is closed: conformance cases name these classes (``expect_error``), so a
new kind of failure gets a new class here rather than a new message on an old one.

Source: no Hudi class — the error types are this project's; Hudi raises ``HoodieException``
subclasses (``HoodieKeyException``, ``SchemaCompatibilityException``,
``HoodieWriteConflictException``, ``HoodieIOException``) for the same failures.
"""

from __future__ import annotations


# --8<-- [start:base]
class HudiSpecError(Exception):
    """Base of every error hudi-spec raises on purpose.

    ``hint`` says what the user can do about it; it is appended to the message.
    """

    kind: str = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(f"{message} ({hint})" if hint else message)
# --8<-- [end:base]


# --- names and values on disk -------------------------------------------------------------


# --8<-- [start:hierarchy]
class InvalidName(HudiSpecError):
    """A file or instant name does not follow the format's naming rule."""

    kind = "invalid_name"


class InvalidInstantTime(InvalidName):
    """An instant time is not 14 or 17 digits (``yyyyMMddHHmmss[SSS]``)."""

    kind = "invalid_instant_time"


class IllegalStateTransition(HudiSpecError):
    """An instant was asked to move between states the timeline's state machine forbids."""

    kind = "illegal_state_transition"


# --- tables --------------------------------------------------------------------------------


class InvalidTable(HudiSpecError):
    """A directory is not a readable Hudi table (missing or inconsistent table files)."""

    kind = "invalid_table"


class UnsupportedTable(InvalidTable):
    """A valid Hudi table this specification does not cover: its version or its base file format."""

    kind = "unsupported_table"


class UnsupportedTableVersion(UnsupportedTable):
    """The table version is not one this specification covers (6, 8 and 9)."""

    kind = "unsupported_table_version"


class UnsupportedBaseFileFormat(UnsupportedTable):
    """The table's base files are not parquet (``hoodie.table.base.file.format`` is ORC, HFILE, LANCE...)."""

    kind = "unsupported_base_file_format"


class ChecksumMismatch(InvalidTable):
    """``hoodie.table.checksum`` does not match CRC32 of ``<database>.<table name>``."""

    kind = "checksum_mismatch"


class InvalidConfig(HudiSpecError):
    """A configuration key or value is missing, unknown where it must be known, or malformed."""

    kind = "invalid_config"


class ConfigConflict(InvalidConfig):
    """A write's option differs from the existing table's (Hudi: ``Config conflict``), or names
    another table version."""

    kind = "config_conflict"


class LockProviderMismatch(ConfigConflict):
    """Another writer of the table holds the lock of another ``hoodie.write.lock.provider`` than this
    writer's: the two would not exclude each other (``spec.storage.lock_provider.other_provider_lock``)."""

    kind = "lock_provider_mismatch"


class UnsupportedOption(InvalidConfig):
    """A Hudi option the writer does not implement and may not ignore: it changes locking, concurrency,
    consistency, durability or what is written (``spec.config.refused_options``)."""

    kind = "unsupported_option"


class UnsupportedLayout(UnsupportedOption):
    """A clustering layout other than linear (``hoodie.layout.optimize.strategy``: z-order, Hilbert curve): its
    space-filling-curve sort is not implemented, and a linear sort would write another layout than asked."""

    kind = "unsupported_layout"


class InstantNotFound(HudiSpecError):
    """A named instant is not on the timeline (or not in the state the operation needs)."""

    kind = "instant_not_found"


# --- log files -----------------------------------------------------------------------------


class LogFormatError(HudiSpecError):
    """A log file's bytes do not follow the log format."""

    kind = "log_format"


class CorruptBlock(LogFormatError):
    """A log block's framing is broken: bad magic, impossible or inconsistent lengths, truncation."""

    kind = "corrupt_block"


class UnsupportedBlockContent(LogFormatError):
    """A block is well framed but its content type is not decoded here (HFILE, CDC)."""

    kind = "unsupported_block_content"


class HFileFormatError(HudiSpecError):
    """An HFile's bytes (a metadata table base file, or an HFILE log block's content) do not follow HFile v3."""

    kind = "hfile_format"


class MetadataFormatError(HudiSpecError):
    """A timeline metadata file (JSON or Avro) cannot be decoded."""

    kind = "metadata_format"


# --- records and writes --------------------------------------------------------------------


class InvalidRecord(HudiSpecError):
    """A record cannot be written: null or empty key, bad partition value, missing ordering value."""

    kind = "invalid_record"


class SchemaMismatch(HudiSpecError):
    """Incoming data's schema is incompatible with the table's schema."""

    kind = "schema_mismatch"


class WriteConflict(HudiSpecError):
    """Another writer holds the table, or a concurrent commit touched the same file groups."""

    kind = "write_conflict"


class InvalidOperation(HudiSpecError):
    """An operation is not allowed in the table's current state or with these arguments."""

    kind = "invalid_operation"


class TimeTravelRefused(InvalidOperation):
    """A time-travel query names an instant the table cannot answer whole (``spec.read.time_travel``)."""

    kind = "time_travel_refused"


class IncrementalRefused(InvalidOperation):
    """An incremental query's window needs a file a clean deleted, on a table Apache Hudi reads such a window of
    without falling back to a full table scan (``spec.read.query_plan``: timeline layout 1)."""

    kind = "incremental_refused"
# --8<-- [end:hierarchy]


# --8<-- [start:kinds]
ERROR_KINDS: dict[str, type[HudiSpecError]] = {
    cls.kind: cls
    for cls in (
        HudiSpecError,
        InvalidName,
        InvalidInstantTime,
        IllegalStateTransition,
        InvalidTable,
        UnsupportedTable,
        UnsupportedTableVersion,
        UnsupportedBaseFileFormat,
        ChecksumMismatch,
        InvalidConfig,
        ConfigConflict,
        UnsupportedOption,
        UnsupportedLayout,
        InstantNotFound,
        LogFormatError,
        CorruptBlock,
        UnsupportedBlockContent,
        HFileFormatError,
        MetadataFormatError,
        InvalidRecord,
        SchemaMismatch,
        WriteConflict,
        InvalidOperation,
        TimeTravelRefused,
        IncrementalRefused,
    )
}
"""Error kinds by name, as conformance cases spell them in ``expect_error``."""
# --8<-- [end:kinds]

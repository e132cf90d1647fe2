"""The Avro schema of the metadata table's records (``HoodieMetadataRecord``), per table version.

Every record of the metadata table — a ``files`` partition's file list, a bloom filter, a column's statistics,
a record key's location, a secondary index entry — is one ``HoodieMetadataRecord``; exactly one of its payload
fields is set, named by ``type``. Hudi embeds the record's schema, as ``Schema.toString()`` prints it, in every
metadata HFile (file info ``schema``) and every log block (header SCHEMA), so a writer must produce that text
exactly; ``metadata_record_schema_json`` gives it.

What the embedded schema holds beyond Hudi's schema file:

- the five meta fields in front (``HoodieAvroUtils.addMetadataFields``): ``_hoodie_commit_time``,
  ``_hoodie_commit_seqno``, ``_hoodie_record_key``, ``_hoodie_partition_path``, ``_hoodie_file_name``, each
  ``["null", "string"]`` (plain string, no Java string property) with an empty doc and default null;
- ``"avro.java.string":"String"`` on every string and map of the schema file (Hudi's generated classes use
  ``String``);
- the namespace only on the top record: the value wrappers declare the same namespace as their enclosing
  record, which ``Schema.toString()`` leaves out.

The dicts are laid out in the key order Java prints (the builders of ``spec.timeline.avro_schemas``). Between Hudi 1.0
(table version 8) and 1.1 (table version 9) only the column statistics changed: 1.1 adds the wrapper
``ArrayWrapper`` (a list of the other wrappers) to ``minValue`` / ``maxValue``, and the field ``valueType``
(``HoodieValueTypeInfo``: the value type's ordinal and optional extra information) at the end.

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; the schema of 0.15.x, table version 6, is not stated
here: no version 6 metadata table is written): ``hudi-common/src/main/avro/HoodieMetadata.avsc``,
``HoodieAvroUtils.addMetadataFields`` and ``HoodieRecord.HOODIE_META_COLUMNS``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from spec.timeline.avro_schemas import JSTRING, NAMESPACE, Schema, array, field, jmap, optional, record, schema_json

RECORD_NAME = "HoodieMetadataRecord"
"""The metadata table's record (namespace ``org.apache.hudi.avro.model``)."""


# --8<-- [start:meta_fields]
META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name")
"""The meta fields ``HoodieAvroUtils.addMetadataFields`` puts in front of the schema file's fields."""


def _meta_field(name: str) -> Schema:
    return field(name, ["null", "string"], None, "")
# --8<-- [end:meta_fields]


# --8<-- [start:files_bloom]
def _file_info() -> Schema:
    """HoodieMetadataFileInfo: one file of a ``files`` partition record."""
    return record("HoodieMetadataFileInfo", [
        field("size", "long", doc="Size of the file"),
        field("isDeleted", "boolean", doc="True if this file has been deleted"),
    ])


def _bloom_filter() -> Schema:
    """HoodieMetadataBloomFilter: one data file's bloom filter (``bloom_filters`` partition)."""
    return record("HoodieMetadataBloomFilter", [
        field("type", JSTRING, doc="Bloom filter type code"),
        field("timestamp", JSTRING, doc="Instant timestamp when this metadata was created/updated"),
        field("bloomFilter", "bytes", doc="Bloom filter binary byte array"),
        field("isDeleted", "boolean", doc="Bloom filter entry valid/deleted flag"),
    ], doc="Data file bloom filter details")
# --8<-- [end:files_bloom]


# --8<-- [start:column_stats]
_WRAPPED_TYPES: tuple[tuple[str, str, Any], ...] = (
    ("BooleanWrapper", "boolean", "boolean"),
    ("IntWrapper", "int", "int"),
    ("LongWrapper", "long", "long"),
    ("FloatWrapper", "float", "float"),
    ("DoubleWrapper", "double", "double"),
    ("BytesWrapper", "bytes", "bytes"),
    ("StringWrapper", "string", JSTRING),
    ("DateWrapper", "Date logical", "int"),
    ("DecimalWrapper", "Decimal logical", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", "Time-micros logical", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "Timestamp-micros logical", "long"),
    ("LocalDateWrapper", "Local Date", "int"),
)
"""The value wrappers of a column's min / max: (record name, the word their doc names, the wrapped type). Dates
and timestamps are wrapped as plain ``int`` / ``long`` (Hudi encodes them itself), decimals as decimal(30, 15)."""


def _wrapper(name: str, what: str, type_: Any) -> Schema:
    return record(name, [field("value", type_)],
                  doc=f"A record wrapping {what} type to be able to be used it w/in Avro's Union")


def _array_wrapper() -> Schema:
    """ArrayWrapper (Hudi 1.1): a list whose items are any of the other wrappers, by name."""
    items = ["null", *(name for name, _, _ in _WRAPPED_TYPES)]
    return record("ArrayWrapper", [
        optional("wrappedValues", array(items),
                 "An array where each element is one of the supported wrapper types."),
    ], doc="A record containing a list of wrapped values.")


def _value_type_info() -> Schema:
    """HoodieValueTypeInfo (Hudi 1.1): the statistics' value type."""
    return record("HoodieValueTypeInfo", [
        field("typeOrdinal", "int", doc="Enum type ordinal representing the value type"),
        optional("additionalInfo", JSTRING, "Optional additional information about the value type"),
    ])


def _column_stats(table_version: int) -> Schema:
    """HoodieMetadataColumnStats: one column's range in one file (``column_stats``, ``partition_stats``).
    ``minValue`` declares the wrappers; ``maxValue`` names them."""
    wrappers = [_wrapper(*w) for w in _WRAPPED_TYPES]
    if table_version >= 9:
        wrappers.append(_array_wrapper())
    names = [w["name"] for w in wrappers]
    stats = [
        optional("fileName", JSTRING, "File name for which this column statistics applies"),
        optional("columnName", JSTRING, "Column name for which this column statistics applies"),
        field("minValue", ["null", *wrappers], None,
              "Minimum value in the range. Based on user data table schema, we can convert this to appropriate type"),
        field("maxValue", ["null", *names], None,
              "Maximum value in the range. Based on user data table schema, we can convert it to appropriate type"),
        optional("valueCount", "long", "Total count of values"),
        optional("nullCount", "long", "Total count of null values"),
        optional("totalSize", "long", "Total storage size on disk"),
        optional("totalUncompressedSize", "long", "Total uncompressed storage size on disk"),
        field("isDeleted", "boolean", doc="Column range entry valid/deleted flag"),
        field("isTightBound", "boolean", False, "Whether the min/max range of a column is tight bound or not"),
    ]
    if table_version >= 9:
        stats.append(optional("valueType", _value_type_info(),
                              "Value type information containing enum ordinal and optional additional information"))
    return record("HoodieMetadataColumnStats", stats, doc="Data file column statistics")
# --8<-- [end:column_stats]


# --8<-- [start:record_index]
_UUID_PIECES = ("A UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). "
                "\nFileID format is {UUID}-{fileIndex}.")


def _record_index_info() -> Schema:
    """HoodieRecordIndexInfo: where one record key lives (``record_index``)."""
    return record("HoodieRecordIndexInfo", [
        optional("partitionName", JSTRING, "Refers to the partition name the record belongs to"),
        optional("fileIdHighBits", "long",
                 f"Refers to high 64 bits if the fileId is based on UUID format. \n{_UUID_PIECES}"),
        optional("fileIdLowBits", "long",
                 f"Refers to low 64 bits if the fileId is based on UUID format. \n{_UUID_PIECES}"),
        optional("fileIndex", "int",
                 "Index representing file index which is used to re-construct UUID based fileID. Applicable when "
                 f"the fileId is based on UUID format. \n{_UUID_PIECES}"),
        optional("fileId", JSTRING,
                 "Represents fileId of the location where record belongs to. When the encoding is 1, fileID is "
                 "stored in raw string format."),
        optional("instantTime", "long",
                 "Epoch time in millisecond representing the commit time at which record was added"),
        field("fileIdEncoding", "int", 0,
              "Represents fileId encoding. Possible values are 0 and 1. O represents UUID based fileID, and 1 "
              "represents raw string format of the fileId. \nWhen the encoding is 0, reader can deduce fileID from "
              "fileIdLowBits, fileIdHighBits and fileIndex."),
        optional("position", "long",
                 "Represents position of record within a file group for easier access. It will be used for index "
                 "lookup."),
    ])


def _secondary_index_info() -> Schema:
    """HoodieSecondaryIndexInfo: a secondary index entry's tombstone flag (``secondary_index_<name>``)."""
    return record("HoodieSecondaryIndexInfo", [
        field("isDeleted", "boolean", doc="True if this entry has been deleted"),
    ])
# --8<-- [end:record_index]


# --8<-- [start:metadata_record]
def metadata_record_schema_dict(table_version: int) -> Schema:
    """``HoodieMetadataRecord`` as Hudi embeds it: Hudi 1.0's for table version 8, 1.1's for 9 (and later)."""
    return record(RECORD_NAME, [
        *(_meta_field(name) for name in META_FIELDS),
        field("key", JSTRING),
        field("type", "int", doc="Type of the metadata record"),
        field("filesystemMetadata", ["null", jmap(_file_info())],
              doc="Contains information about partitions and files within the dataset"),
        optional("BloomFilterMetadata", _bloom_filter(),
                 "Metadata Index of bloom filters for all data files in the user table"),
        optional("ColumnStatsMetadata", _column_stats(table_version),
                 "Metadata Index of column statistics for all data files in the user table"),
        optional("recordIndexMetadata", _record_index_info(),
                 "Metadata Index that contains information about record keys and their location in the dataset"),
        optional("SecondaryIndexMetadata", _secondary_index_info(),
                 "Metadata Index that contains information about secondary keys and the corresponding record keys "
                 "in the dataset"),
    ], NAMESPACE, "A record saved within the Metadata Table")


@lru_cache(maxsize=4)
def metadata_record_schema_json(table_version: int) -> str:
    """The schema text of every metadata HFile (file info ``schema``) and log block (SCHEMA header)."""
    return schema_json(metadata_record_schema_dict(table_version))


@lru_cache(maxsize=4)
def metadata_commit_schema_json(table_version: int) -> str:
    """The schema a metadata table's commit records (``extraMetadata["schema"]`` of every deltacommit and
    compaction ``commit``): ``HoodieMetadataRecord`` without the meta fields, as Hudi writes it (measured: equal to
    the text in Apache Hudi 1.1's and 1.2.0's metadata tables). Hudi's Spark datasource resolves the metadata table's
    schema from it: without it, Apache Hudi 1.2.0's read of the metadata table fails where it merges a base HFile
    record with a log record (``ArrayIndexOutOfBoundsException`` in ``HoodieMetadataPayload.getInsertValue``,
    measured)."""
    whole = metadata_record_schema_dict(table_version)
    return schema_json({**whole, "fields": [f for f in whole["fields"] if f["name"] not in META_FIELDS]})
# --8<-- [end:metadata_record]

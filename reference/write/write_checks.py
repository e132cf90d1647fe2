"""What a write checks before it starts, on either engine: its options against the table's
(``spec.write.writer_utils``), its batch's column types against the table's schema
(``spec.schema.evolution``), null ordering values where it combines (``spec.model.writes.combines``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from reference.config.options import WriteConfig
from spec.config.parsers import parse_bool
from spec.config.registry import canonical_key
from spec.config.table_config import TableConfig
from spec.errors import InvalidConfig, InvalidOperation, InvalidRecord, UnsupportedOption
from spec.keygen.key_generators import KEYGEN_TYPES_BY_CLASS
from spec.schema.evolution import evolve_schema
from spec.schema.table_schema import (
    META_FIELDS,
    arrow_schema_from_avro,
    hudi_logical_types,
)
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import read_instant_content
from spec.write import writer_utils as wu

if TYPE_CHECKING:
    from reference.engines.engine import Engine


def table_identity(table: TableConfig) -> dict[str, str]:
    """The table's identity properties by write-option key (``spec.write.writer_utils.IDENTITY``)."""
    out = {wu.TABLE_NAME: table.name, wu.TABLE_TYPE: table.table_type,
           wu.RECORD_KEY: ",".join(table.record_key_fields), wu.PARTITION_PATH: ",".join(table.partition_fields),
           wu.HIVE_STYLE: str(table.hive_style_partitioning).lower(),
           wu.URL_ENCODE: str(table.url_encode_partitions).lower(), wu.WRITE_TABLE_VERSION: str(table.table_version)}
    if table.ordering_field:
        out[wu.ORDERING] = table.ordering_field
    if table.merge_mode:
        out[wu.MERGE_MODE_PROPERTY] = table.merge_mode
    out[wu.CDC_ENABLED] = "true" if table.cdc_mode else "false"
    if table.cdc_mode:
        out[wu.CDC_MODE] = table.cdc_mode
    keygen = table.keygen_type or KEYGEN_TYPES_BY_CLASS.get(table.keygen_class or "")
    if keygen:
        out[wu.KEY_GENERATOR] = keygen.removesuffix("_AVRO")
    return out


def given_identity(options: Mapping[str, Any]) -> dict[str, str]:
    """The identity options a write gives, by their canonical key (aliases resolved)."""
    out: dict[str, str] = {}
    for key, value in options.items():
        canonical = canonical_key(key)
        if canonical == "hoodie.datasource.write.keygenerator.class" and str(value) in KEYGEN_TYPES_BY_CLASS:
            canonical, value = wu.KEY_GENERATOR, KEYGEN_TYPES_BY_CLASS[str(value)].removesuffix("_AVRO")
        if canonical in (*wu.IDENTITY, wu.WRITE_TABLE_VERSION, wu.MERGE_MODE) and value is not None:
            out[canonical] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def combines(cfg: WriteConfig, op: str) -> bool:
    """Whether a write dedupes its batch by key (``spec.model.writes.COMBINE_OPTIONS``: Hudi's
    ``hoodie.combine.before.upsert`` / ``.delete`` / ``.insert``, defaults true / true / false)."""
    if op == "upsert":
        return cfg.combine_before_upsert
    if op == "delete":
        return cfg.combine_before_delete
    return cfg.combine_before_insert


def check_against_table(table: TableConfig, options: Mapping[str, Any]) -> None:
    """A write's options name the table's identity (``spec.write.writer_utils.validate_table_config``), and the
    table has no metadata table this writer would leave stale: one of table version 6 is only written with
    ``hoodie.metadata.enable=false`` (which deletes it); versions 8 and 9 keep theirs
    (``reference.metadata.writer``)."""
    """A write's options name the table's identity (``spec.write.writer_utils.validate_table_config``), the table
    asks for nothing this writer does not do (``check_table_features``), and the table has no metadata table this
    writer would leave stale: one of table version 6 is only written with ``hoodie.metadata.enable=false`` (which
    deletes it); versions 8 and 9 keep theirs
    (``reference.metadata.writer``)."""
    wu.validate_table_config(table_identity(table), given_identity(options))
    wu.check_table_features(table.props, hudi_logical_types(table.create_schema) if table.create_schema else ())
    enable = next((parse_bool(str(v)) for k, v in options.items() if canonical_key(k) == "hoodie.metadata.enable"),
                  None)
    if table.metadata_partitions and table.table_version < 8 and enable is not False:
        raise InvalidOperation(
            f"the table has a version {table.table_version} metadata table ({', '.join(table.metadata_partitions)}) "
            "that this writer does not maintain; writing would leave it stale for Java readers",
            hint="write with hoodie.metadata.enable=false, which deletes the metadata table as Apache Hudi does")
    if enable and table.table_version < 8:
        raise InvalidOperation(
            f"this writer keeps metadata tables of table versions 8 and 9, not {table.table_version}",
            hint="leave hoodie.metadata.enable unset or false")


def check_cdc_write(table: TableConfig, cfg: WriteConfig, op: str, new: bool = False) -> None:
    """On a table with change data capture, an ``insert`` that may go to small files (any but the write that creates
    the table) is refused while ``hoodie.merge.allow.duplicate.on.inserts`` is on: Apache Hudi 1.2.0 writes it with
    its concat handle, which logs no change (``HoodieMergeHandleFactory`` picks the concat handle first), and its CDC
    query then fails on the write ("There should be a cdc log file"). With the option off the insert is merged and
    logged."""
    if (table.cdc_mode and not new and op == "insert" and cfg.allow_duplicate_on_inserts
            and (cfg.small_file_limit > 0 or cfg.index_type == "BUCKET")):
        raise UnsupportedOption(
            "an insert into a table with change data capture, with hoodie.merge.allow.duplicate.on.inserts on, "
            "appends to small files without logging the changes, which leaves the CDC query unable to read the "
            "write; nothing was written",
            hint="set hoodie.merge.allow.duplicate.on.inserts=false (the insert is merged and logged), "
                 "hoodie.parquet.small.file.limit=0, or upsert")


def check_record_index_write(storage: Storage, table: TableConfig, cfg: WriteConfig) -> None:
    """A write that keeps a record index (``hoodie.metadata.record.index.enable`` or, partitioned,
    ``hoodie.metadata.record.level.index.enable``) is refused before anything is written where the index is not
    kept through it (``reference.metadata.record_index.check_record_index_write``); ``hoodie.index.type=
    RECORD_INDEX`` needs the global one kept, ``RECORD_LEVEL_INDEX`` the partitioned one."""
    from reference.metadata.record_index import check_record_index_write as check

    keep = cfg.keeps_record_index
    if cfg.record_index_enable and cfg.record_level_index_enable:
        raise InvalidConfig("hoodie.metadata.record.index.enable and hoodie.metadata.record.level.index.enable ask "
                            "for both forms of the one record index",
                            hint="turn one of them on: the global index (keys unique across the table) or the "
                                 "partitioned one (keys unique within a partition)")
    if cfg.index_type == "RECORD_INDEX" and not cfg.record_index_enable:
        raise InvalidConfig("hoodie.index.type=RECORD_INDEX tags records with the metadata table's record index, "
                            "which this write does not keep",
                            hint="set hoodie.metadata.record.index.enable=true")
    if cfg.index_type == "RECORD_LEVEL_INDEX" and not cfg.record_level_index_enable:
        raise InvalidConfig("hoodie.index.type=RECORD_LEVEL_INDEX tags records with the metadata table's partitioned "
                            "record index, which this write does not keep",
                            hint="set hoodie.metadata.record.level.index.enable=true")
    if keep and cfg.metadata_enable is False:
        raise InvalidConfig("the record index lives in the metadata table, which hoodie.metadata.enable=false deletes",
                            hint="leave hoodie.metadata.enable unset, or turn the record index off")
    check(storage, table, keep, cfg.record_level_index_enable)


def check_one_partition_per_key(keys: list[str]) -> None:
    """``hoodie.index.type=RECORD_LEVEL_INDEX`` with the batch combined (an upsert, a delete): a batch naming one
    record key in two partitions is refused before anything is written. The key is two records there (unique
    within its partition), but Apache Hudi 1.2.0 combines the batch by the record key alone and writes one of
    them, with the other's values, in one partition (measured: ``tests/test_partitioned_record_index_hudi.py``)."""
    if keys:
        raise UnsupportedOption(
            f"the batch names record key {keys[0]!r}{f' (and {len(keys) - 1} more)' if len(keys) > 1 else ''} in two "
            "partitions; with the partitioned record index Apache Hudi 1.2.0 combines such records into one, in one "
            "partition, so this writer does not write the batch; nothing was written",
            hint="write each partition's records of the key in separate writes")


def check_schema(storage: Storage, engine: Engine, frame: Any, table: TableConfig, timeline: Timeline,
                 op: str) -> Any:
    """The batch checked against the table's latest schema before anything is written
    (``spec.schema.evolution``): at every depth (columns, struct fields, list elements, map values) no field
    of the table dropped, no new non-null field, no changed kind, each primitive type the table's, a
    promotion of it (the batch's values are cast to the table's type) or a type it promotes to (the field
    evolves); anything else ``SchemaMismatch``. Then the key, partition and ordering fields must be present
    (``InvalidRecord``). The schema comes first, as in Hudi's Spark writer (``HoodieSchemaUtils.
    deduceWriterSchema`` before the key generator): a batch without its record-key column is a dropped column
    of a table that has a schema (``spec.model.table_model.write``; case ``expect-errors-cow-v6``)."""
    casts = None if op == "delete" else _schema_casts(storage, engine, frame, timeline)
    names = engine.columns(frame)
    columns = set(names)
    needed = set(table.record_key_fields) | set(table.partition_fields)
    if op not in ("delete",) and table.ordering_field:
        needed.add(table.ordering_field)
    missing = sorted(needed - columns)
    if missing:
        raise InvalidRecord(f"the input lacks field(s) {', '.join(missing)}",
                            hint="record key, partition and ordering fields must be present")
    return engine.cast(frame, casts) if casts else frame


def _schema_casts(storage: Storage, engine: Engine, frame: Any, timeline: Timeline) -> Any:
    """The casts that bring the batch to the table's latest schema (None: none, or no schema yet), or
    ``SchemaMismatch``."""
    latest = timeline.commits_timeline().latest_completed()
    if latest is None:
        return None
    md = parse_commit_metadata(read_instant_content(storage, latest, timeline.layout))
    if not md.schema:
        return None
    table_schema = arrow_schema_from_avro(md.schema)
    table_schema = pa.schema([f for f in table_schema if f.name not in META_FIELDS])
    casts = evolve_schema(table_schema, engine.user_schema(frame))
    wu.check_table_features({}, hudi_logical_types(md.schema))
    return casts

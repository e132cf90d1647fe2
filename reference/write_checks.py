"""What a write checks before it starts, on either engine: its options against the table's
(``spec.writer_utils``), its batch's column types against the table's schema
(``spec.schema_evolution``), null ordering values where it combines (``spec.model.writes.combines``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from reference.options import WriteConfig
from spec import writer_utils as wu
from spec.config_registry import canonical_key
from spec.keys import KEYGEN_TYPES_BY_CLASS
from spec.schema_evolution import PROMOTIONS
from spec.table_config import TableConfig

if TYPE_CHECKING:
    from reference.local_engine import LocalEngine
    from reference.spark_engine import SparkEngine


def table_identity(table: TableConfig) -> dict[str, str]:
    """The table's identity properties by write-option key (``spec.writer_utils.IDENTITY``)."""
    out = {wu.TABLE_NAME: table.name, wu.TABLE_TYPE: table.table_type,
           wu.RECORD_KEY: ",".join(table.record_key_fields), wu.PARTITION_PATH: ",".join(table.partition_fields),
           wu.HIVE_STYLE: str(table.hive_style_partitioning).lower(),
           wu.URL_ENCODE: str(table.url_encode_partitions).lower(), wu.WRITE_TABLE_VERSION: str(table.table_version)}
    if table.ordering_field:
        out[wu.ORDERING] = table.ordering_field
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
        if canonical in (*wu.IDENTITY, wu.WRITE_TABLE_VERSION) and value is not None:
            out[canonical] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def primitive(avro_type: Any) -> str | None:
    """The Avro primitive type of a field (a nullable union's non-null branch; ``date`` for the
    date logical type), or None for any other type."""
    if isinstance(avro_type, list):
        branches = [t for t in avro_type if t != "null"]
        return primitive(branches[0]) if len(branches) == 1 else None
    if isinstance(avro_type, dict):
        return "date" if avro_type.get("logicalType") == "date" else (
            None if "logicalType" in avro_type else primitive(avro_type.get("type")))
    return avro_type if avro_type in PROMOTIONS else None


_ARROW_TYPES = {"int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
                "string": pa.string()}
_SPARK_TYPES = {"int": "int", "long": "bigint", "float": "float", "double": "double", "string": "string"}


def cast_columns(engine: SparkEngine | LocalEngine, frame: Any, casts: Mapping[str, str]) -> Any:
    """The batch with columns cast to the table's (Avro primitive) types."""
    if engine.name == "local":
        for name, avro_type in casts.items():
            i = frame.schema.get_field_index(name)
            frame = frame.set_column(i, name, frame.column(name).cast(_ARROW_TYPES[avro_type]))
        return frame
    from pyspark.sql import functions as F

    for name, avro_type in casts.items():
        frame = frame.withColumn(name, F.col(name).cast(_SPARK_TYPES[avro_type]))
    return frame


def has_null(engine: SparkEngine | LocalEngine, frame: Any, column: str) -> bool:
    """Whether a column of the batch holds a null (``spec.model.writes.prepare``'s ordering rule)."""
    if engine.name == "local":
        return bool(frame.column(column).null_count)
    from pyspark.sql import functions as F

    return bool(frame.filter(F.col(column).isNull()).limit(1).count())


def combines(cfg: WriteConfig, op: str) -> bool:
    """Whether a write dedupes its batch by key (``spec.model.writes.COMBINE_OPTIONS``: Hudi's
    ``hoodie.combine.before.upsert`` / ``.delete`` / ``.insert``, defaults true / true / false)."""
    if op == "upsert":
        return cfg.combine_before_upsert
    if op == "delete":
        return cfg.combine_before_delete
    return cfg.combine_before_insert

"""hoodie.properties: the table's configuration, its keys and their defaults per table version.

``.hoodie/hoodie.properties`` is Java ``Properties`` text (``spec.config.properties_file``). Every key
has a default, may be required, and exists since some table version; a writer drops keys newer
than the table's version. ``hoodie.table.checksum`` is
CRC32 of ``<database>.<table name>``; when present it must be right, or Hudi rejects the file.

Version 9 (Hudi 1.1) reads like 8 (timeline layout 2, the same commit metadata); its upgrade from 8
renames the ordering key (``hoodie.table.precombine.field`` → ``hoodie.table.ordering.fields``), drops
the merge strategy id of event- and commit-time tables, moves a deprecated payload class to
``hoodie.table.legacy.payload.class`` and adds ``hoodie.table.partial.update.mode`` (default NONE).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieTableConfig``
(``create``, ``validate``, ``generateChecksum``, the ``ConfigProperty`` keys)
and ``EightToNineUpgradeHandler``.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from spec.config.properties_file import format_properties, parse_properties
from spec.errors import (
    ChecksumMismatch,
    InvalidConfig,
    InvalidTable,
    UnsupportedBaseFileFormat,
    UnsupportedTableVersion,
)

if TYPE_CHECKING:
    from spec.storage.hoodie_storage import Storage

PROPERTIES_FILE = ".hoodie/hoodie.properties"
PROPERTIES_BACKUP_FILE = ".hoodie/hoodie.properties.backup"
SUPPORTED_TABLE_VERSIONS = (6, 8, 9)
WRITABLE_TABLE_VERSIONS = (6, 8, 9)
"""Versions this specification reads (``SUPPORTED_TABLE_VERSIONS``) and writes (v9 without a metadata table)."""
READABLE_BASE_FILE_FORMATS = ("PARQUET",)

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"

# --8<-- [start:layout_versions]
LAYOUT_V1 = 1
"""Timeline layout 1 (table version 6): instant files in ``.hoodie/``, ``T.action`` when completed."""
LAYOUT_V2 = 2
"""Timeline layout 2 (table versions 8 and 9): instant files in ``.hoodie/timeline/``, ``T_C.action``."""


def layout_for_table_version(table_version: int) -> int:
    """Timeline layout 1 for table versions below 8, layout 2 from 8 on
    (``HoodieTableVersion.getTimelineLayoutVersion``)."""
    return LAYOUT_V2 if table_version >= 8 else LAYOUT_V1
# --8<-- [end:layout_versions]


# payload classes and merge strategy ids (HoodieTableConfig, HoodieRecordMerger)
OVERWRITE_WITH_LATEST_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM_MERGE = "CUSTOM"
EVENT_TIME_STRATEGY_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
CUSTOM_STRATEGY_ID = "1897ef5f-18bc-4557-939c-9d6a8afd1519"
PAYLOAD_BASED_STRATEGY_ID = "00000000-0000-0000-0000-000000000000"
METADATA_PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"


# --8<-- [start:registry]
@dataclass(frozen=True)
class ConfigKey:
    """One table config key: default (None = no default), required, the version it exists since."""

    key: str
    default: str | None = None
    required: bool = False
    since_version: int = 0
    alternatives: tuple[str, ...] = ()
    doc: str = ""


TABLE_CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("hoodie.table.name", required=True, doc="table name; input of the checksum"),
    ConfigKey("hoodie.table.type", "COPY_ON_WRITE", required=True, doc="COPY_ON_WRITE or MERGE_ON_READ"),
    ConfigKey("hoodie.table.version", required=True, doc="6 (Hudi 0.14/0.15), 8 (Hudi 1.0) or 9 (Hudi 1.1)"),
    ConfigKey("hoodie.table.initial.version", since_version=8, doc="version the table was created with"),
    ConfigKey("hoodie.timeline.layout.version", required=True, doc="1 for v6, 2 for v8 and v9"),
    ConfigKey("hoodie.database.name", doc="database; input of the checksum"),
    ConfigKey("hoodie.table.checksum", doc="CRC32 of '<database>.<name>' as unsigned decimal"),
    ConfigKey("hoodie.archivelog.folder", "archived", doc="archived timeline folder under .hoodie (v6)"),
    ConfigKey("hoodie.timeline.path", "timeline", since_version=8, doc="active timeline folder under .hoodie"),
    ConfigKey("hoodie.timeline.history.path", "history", since_version=8, doc="LSM history under the timeline"),
    ConfigKey("hoodie.table.recordkey.fields", doc="comma-separated record key fields"),
    ConfigKey("hoodie.table.precombine.field", alternatives=("hoodie.table.ordering.fields",),
              doc="ordering (precombine) field (v6, v8)"),
    ConfigKey("hoodie.table.ordering.fields", since_version=9, alternatives=("hoodie.table.precombine.field",),
              doc="ordering fields, comma-separated (v9 name of the precombine field)"),
    ConfigKey("hoodie.table.partition.fields", doc="comma-separated partition fields; absent when non-partitioned"),
    ConfigKey("hoodie.table.keygenerator.class", doc="key generator class (v6 style)"),
    ConfigKey("hoodie.table.keygenerator.type", since_version=8, doc="key generator type (v8 style)"),
    ConfigKey("hoodie.table.base.file.format", "PARQUET", doc="base file format"),
    ConfigKey("hoodie.table.create.schema", doc="Avro schema at creation (fallback table schema)"),
    ConfigKey("hoodie.populate.meta.fields", "true", doc="whether the five meta columns are filled"),
    ConfigKey("hoodie.datasource.write.hive_style_partitioning", "false", doc="partition folders as field=value"),
    ConfigKey("hoodie.datasource.write.partitionpath.urlencode", "false", doc="URL-encode partition values"),
    ConfigKey("hoodie.datasource.write.drop.partition.columns", "false", doc="hudi-rs refuses true"),
    ConfigKey("hoodie.compaction.payload.class", OVERWRITE_WITH_LATEST_PAYLOAD, doc="record payload class"),
    ConfigKey("hoodie.compaction.record.merger.strategy", alternatives=("hoodie.record.merge.strategy.id",),
              doc="merge strategy id (v6 spelling)"),
    ConfigKey("hoodie.record.merge.strategy.id", since_version=8, doc="merge strategy id (v8)"),
    ConfigKey("hoodie.record.merge.mode", since_version=8, doc="EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING, CUSTOM"),
    ConfigKey("hoodie.table.partial.update.mode", "NONE", since_version=9,
              doc="NONE, IGNORE_DEFAULTS, FILL_UNAVAILABLE (partial-update merging, v9)"),
    ConfigKey("hoodie.table.legacy.payload.class", since_version=9, doc="payload class the 8→9 upgrade retired"),
    ConfigKey("hoodie.table.format", "native", since_version=9, doc="table format name (native Hudi)"),
    ConfigKey("hoodie.table.timeline.timezone", "LOCAL", doc="time zone of instant times (write UTC)"),
    ConfigKey("hoodie.table.metadata.partitions", doc="metadata table partitions; 'files' makes readers use it"),
    ConfigKey("hoodie.table.metadata.partitions.inflight", doc="metadata partitions being built"),
    ConfigKey("hoodie.table.index.defs.path", since_version=8, doc="index definitions file"),
    ConfigKey("hoodie.table.cdc.enabled", "false", doc="change data capture logging (spec.write.cdc_logger)"),
    ConfigKey("hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER", doc="what a CDC log holds"),
    ConfigKey("hoodie.table.log.file.format", "HOODIE_LOG", doc="log file format: Hudi's log format"),
    ConfigKey("hoodie.table.multiple.base.file.formats.enable", "false", doc="base files of several formats (refused)"),
    ConfigKey("hoodie.datasource.write.slash.separated.date.partitioning", "false", since_version=9,
              doc="Hudi 1.2: a date partition as yyyy/MM/dd (writes refused when true)"),
    ConfigKey("hoodie.keygen.timebased.timestamp.type", doc="TimestampBasedKeyGenerator input type"),
    ConfigKey("hoodie.keygen.timebased.output.dateformat", doc="TimestampBasedKeyGenerator output format"),
    ConfigKey("hoodie.keygen.timebased.input.dateformat", doc="TimestampBasedKeyGenerator input format"),
    ConfigKey("hoodie.keygen.timebased.timezone", doc="TimestampBasedKeyGenerator time zone"),
)
"""Every table config key this specification knows, with its default and since-version."""

KEYS_BY_NAME: Mapping[str, ConfigKey] = {k.key: k for k in TABLE_CONFIG_KEYS}
# --8<-- [end:registry]




# --8<-- [start:checksum]
def table_checksum(database: str | None, table_name: str) -> int:
    """``hoodie.table.checksum``: CRC32 of UTF-8 ``"<database or empty>.<table name>"``, unsigned."""
    return zlib.crc32(f"{database or ''}.{table_name}".encode()) & 0xFFFFFFFF
# --8<-- [end:checksum]


def _bool(value: str | None, default: bool) -> bool:
    return default if value is None else value.strip().lower() == "true"


def _fields(value: str | None) -> tuple[str, ...]:
    return tuple(f.strip() for f in value.split(",") if f.strip()) if value else ()


@dataclass(frozen=True)
class TableConfig:
    """A table's hoodie.properties with typed accessors (defaults from the registry)."""

    props: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        """The value of ``key``: as stored, else under an alternative name of the key, else the registry's default
        (None for an unknown key)."""
        if key in self.props:
            return self.props[key]
        spec = KEYS_BY_NAME.get(key)
        if spec:
            for alt in spec.alternatives:
                if alt in self.props:
                    return self.props[alt]
            return spec.default
        return None

    @property
    def name(self) -> str:
        """``hoodie.table.name`` (empty when missing)."""
        return self.props.get("hoodie.table.name", "")

    @property
    def database(self) -> str | None:
        """``hoodie.database.name``, or None."""
        return self.props.get("hoodie.database.name")

    @property
    def table_type(self) -> str:
        """``hoodie.table.type``, upper case: COPY_ON_WRITE (the default) or MERGE_ON_READ."""
        return (self.get("hoodie.table.type") or COPY_ON_WRITE).upper()

    @property
    def is_mor(self) -> bool:
        """Whether the table is merge-on-read."""
        return self.table_type == MERGE_ON_READ

    @property
    def table_version(self) -> int:
        """``hoodie.table.version``; InvalidTable when missing or not a number."""
        try:
            return int(self.props["hoodie.table.version"])
        except (KeyError, ValueError) as err:
            raise InvalidTable("hoodie.table.version is missing or not a number",
                               hint="every Hudi table states its version in hoodie.properties") from err

    @property
    def timeline_layout(self) -> int:
        """``hoodie.timeline.layout.version``, else the layout of the table version (1 for v6, 2 for v8)."""
        value = self.props.get("hoodie.timeline.layout.version")
        return int(value) if value else layout_for_table_version(self.table_version)

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        """The record key fields (``hoodie.table.recordkey.fields``, comma-separated)."""
        return _fields(self.get("hoodie.table.recordkey.fields"))

    @property
    def ordering_field(self) -> str | None:
        """The ordering (precombine) field: the first of ``hoodie.table.precombine.field``, or None."""
        value = self.get("hoodie.table.precombine.field")
        return value.split(",")[0].strip() if value and value.strip() else None

    @property
    def partition_fields(self) -> tuple[str, ...]:
        """The partition fields, without the ``:type`` suffix a timestamp-based key generator adds."""
        return tuple(f.split(":")[0] for f in _fields(self.get("hoodie.table.partition.fields")))

    @property
    def keygen_class(self) -> str | None:
        """``hoodie.table.keygenerator.class``, or None."""
        return self.props.get("hoodie.table.keygenerator.class")

    @property
    def keygen_type(self) -> str | None:
        """``hoodie.table.keygenerator.type``, or None."""
        return self.props.get("hoodie.table.keygenerator.type")

    @property
    def hive_style_partitioning(self) -> bool:
        """Whether partition folders are named ``field=value`` (default false)."""
        return _bool(self.props.get("hoodie.datasource.write.hive_style_partitioning"), False)

    @property
    def url_encode_partitions(self) -> bool:
        """Whether partition values are URL-encoded in paths (default false)."""
        return _bool(self.props.get("hoodie.datasource.write.partitionpath.urlencode"), False)

    @property
    def populate_meta_fields(self) -> bool:
        """Whether rows carry the five meta columns (``hoodie.populate.meta.fields``, default true)."""
        return _bool(self.props.get("hoodie.populate.meta.fields"), True)

    @property
    def drop_partition_columns(self) -> bool:
        """Whether partition columns are left out of the data files (default false)."""
        return _bool(self.props.get("hoodie.datasource.write.drop.partition.columns"), False)

    @property
    def payload_class(self) -> str:
        """The payload class: as stored, else the default of the table version (v8: DefaultHoodieRecordPayload, v6:
        OverwriteWithLatestAvroPayload)."""
        value = self.props.get("hoodie.compaction.payload.class")
        if value:
            return value
        return DEFAULT_PAYLOAD if self.table_version >= 8 else OVERWRITE_WITH_LATEST_PAYLOAD

    @property
    def merge_mode(self) -> str | None:
        """``hoodie.record.merge.mode`` (v8), or None."""
        return self.props.get("hoodie.record.merge.mode")

    @property
    def merge_strategy_id(self) -> str | None:
        """The record merge strategy id (v8 name, else the 0.x name), or None."""
        return self.props.get("hoodie.record.merge.strategy.id") or self.props.get(
            "hoodie.compaction.record.merger.strategy")

    @property
    def is_metadata_table(self) -> bool:
        """Whether this is a metadata table's config (``.hoodie/metadata``): its payload is
        HoodieMetadataPayload."""
        return self.props.get("hoodie.compaction.payload.class") == METADATA_PAYLOAD

    @property
    def partial_update_mode(self) -> str:
        """``hoodie.table.partial.update.mode`` (v9), upper case; NONE when absent."""
        return (self.get("hoodie.table.partial.update.mode") or "NONE").upper()

    @property
    def base_file_format(self) -> str:
        """The base file format, upper case (PARQUET by default)."""
        return (self.get("hoodie.table.base.file.format") or "PARQUET").upper()

    @property
    def timezone(self) -> str:
        """The time zone instant times are written in: UTC or LOCAL (the default)."""
        return self.get("hoodie.table.timeline.timezone") or "LOCAL"

    @property
    def create_schema(self) -> str | None:
        """The Avro schema the table was created with (JSON), or None."""
        return self.props.get("hoodie.table.create.schema")

    @property
    def cdc_mode(self) -> str | None:
        """The supplemental logging mode of a table with change data capture (``hoodie.table.cdc.enabled``;
        ``hoodie.table.cdc.supplemental.logging.mode``, ``DATA_BEFORE_AFTER`` by default), None without it."""
        if not _bool(self.props.get("hoodie.table.cdc.enabled"), False):
            return None
        return (self.props.get("hoodie.table.cdc.supplemental.logging.mode") or "DATA_BEFORE_AFTER").upper()

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        """The metadata-table partitions the table maintains (none when it has no metadata table)."""
        return _fields(self.props.get("hoodie.table.metadata.partitions"))

    @property
    def metadata_partitions_inflight(self) -> tuple[str, ...]:
        """The metadata-table partitions being built (``hoodie.table.metadata.partitions.inflight``): readers do
        not use them yet."""
        return _fields(self.props.get("hoodie.table.metadata.partitions.inflight"))

    # --8<-- [start:validate]
    def validate(self) -> TableConfig:
        """Raise a typed error unless this is a table config the specification can read: a covered version,
        its timeline layout, a known table type, the right checksum, parquet base files (HFiles for a
        metadata table)."""
        for key in TABLE_CONFIG_KEYS:
            if key.required and key.key not in self.props:
                raise InvalidTable(f"hoodie.properties lacks required key {key.key}",
                                   hint="the table was not fully created; recreate it or restore the backup")
        if self.table_version not in SUPPORTED_TABLE_VERSIONS:
            raise UnsupportedTableVersion(
                f"table version {self.table_version} is not covered by this specification",
                hint=f"supported versions: {', '.join(map(str, SUPPORTED_TABLE_VERSIONS))}")
        expected = layout_for_table_version(self.table_version)
        if self.timeline_layout != expected:
            raise InvalidTable(
                f"timeline layout {self.timeline_layout} does not go with table version {self.table_version}",
                hint=f"table version {self.table_version} uses timeline layout {expected}")
        if self.table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise InvalidTable(f"unknown table type {self.table_type!r}", hint="COPY_ON_WRITE or MERGE_ON_READ")
        formats = ("HFILE",) if self.is_metadata_table else READABLE_BASE_FILE_FORMATS
        if _bool(self.props.get("hoodie.table.multiple.base.file.formats.enable"), False):
            raise UnsupportedBaseFileFormat("the table mixes base file formats (hoodie.table.multiple.base.file."
                                            "formats.enable)", hint=f"readable base file formats: {formats[0]} alone")
        if self.base_file_format not in formats:
            raise UnsupportedBaseFileFormat(
                f"base file format {self.base_file_format} (hoodie.table.base.file.format) is not covered by this "
                "specification", hint=f"readable base file formats: {', '.join(formats)}")
        stored = self.props.get("hoodie.table.checksum")
        if stored is not None:
            want = table_checksum(self.database, self.name)
            if stored.strip() != str(want):
                raise ChecksumMismatch(
                    f"hoodie.table.checksum is {stored} but CRC32('{self.database or ''}.{self.name}') is {want}",
                    hint="the file was edited or damaged; restore hoodie.properties.backup or fix the checksum")
        return self
    # --8<-- [end:validate]

    @staticmethod
    def from_bytes(data: bytes) -> TableConfig:
        """Parse the bytes of a hoodie.properties file (without validating them)."""
        return TableConfig(parse_properties(data))

    @staticmethod
    def load(storage: Storage | str, validate: bool = True) -> TableConfig:
        """Read ``.hoodie/hoodie.properties`` (falling back to the backup, as Hudi does)."""
        from spec.storage.hoodie_storage import Storage as _Storage

        st = storage if isinstance(storage, _Storage) else _Storage(storage)
        if not st.exists(PROPERTIES_FILE):
            if st.exists(PROPERTIES_BACKUP_FILE):
                cfg = TableConfig.from_bytes(st.read(PROPERTIES_BACKUP_FILE))
                return cfg.validate() if validate else cfg
            raise InvalidTable(f"{st.uri} is not a Hudi table: no {PROPERTIES_FILE}",
                               hint="point at the table's base path (the folder holding .hoodie)")
        cfg = TableConfig.from_bytes(st.read(PROPERTIES_FILE))
        if validate:
            try:
                cfg.validate()
            except ChecksumMismatch:
                if st.exists(PROPERTIES_BACKUP_FILE):
                    return TableConfig.from_bytes(st.read(PROPERTIES_BACKUP_FILE)).validate()
                raise
        return cfg

    def to_bytes(self, saved_at: datetime | None = None) -> bytes:
        """The hoodie.properties bytes as Hudi writes them: two comment lines, then the properties sorted by key."""
        return format_properties(self.props, saved_at)

    def with_props(self, **updates: str) -> TableConfig:
        """A copy with ``updates`` applied to its properties."""
        return TableConfig({**self.props, **updates})

    # --8<-- [start:create]
    @staticmethod
    def create(
        name: str,
        table_type: str = COPY_ON_WRITE,
        table_version: int = 6,
        record_key_fields: tuple[str, ...] = (),
        ordering_field: str | None = None,
        partition_fields: tuple[str, ...] = (),
        keygen_type: str = "SIMPLE",
        hive_style_partitioning: bool = False,
        url_encode_partitions: bool = False,
        database: str = "default",
        merge_mode: str = EVENT_TIME_ORDERING,
        create_schema: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> TableConfig:
        """The minimal valid hoodie.properties of a new table (``HoodieTableConfig.create``).

        v6 names the key generator by class and the payload class explicitly; v8 adds the
        merge mode, strategy id and payload class consistently, the timeline paths and the
        initial version; v9 (as Hudi 1.1 writes a new table) names the ordering field
        ``hoodie.table.ordering.fields``, states the merge mode without strategy id or payload class
        (their v9 meaning is the mode's) and the table format. Keys newer than the table version are
        dropped; the checksum is set.
        """
        if table_version not in WRITABLE_TABLE_VERSIONS:
            raise UnsupportedTableVersion(f"cannot create a table of version {table_version}",
                                          hint="use 6 (default), 8 or 9")
        if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise InvalidConfig(f"unknown table type {table_type!r}", hint="COPY_ON_WRITE or MERGE_ON_READ")
        if merge_mode not in (EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING):
            raise InvalidConfig(f"merge mode {merge_mode!r} cannot be written here",
                                hint="EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING")
        payload = DEFAULT_PAYLOAD if merge_mode == EVENT_TIME_ORDERING else OVERWRITE_WITH_LATEST_PAYLOAD
        strategy = EVENT_TIME_STRATEGY_ID if merge_mode == EVENT_TIME_ORDERING else COMMIT_TIME_STRATEGY_ID
        props: dict[str, str] = {
            "hoodie.table.name": name,
            "hoodie.table.type": table_type,
            "hoodie.table.version": str(table_version),
            "hoodie.timeline.layout.version": str(LAYOUT_V2 if table_version >= 8 else LAYOUT_V1),
            "hoodie.database.name": database,
            "hoodie.archivelog.folder": "archived",
            "hoodie.datasource.write.hive_style_partitioning": str(hive_style_partitioning).lower(),
            "hoodie.datasource.write.partitionpath.urlencode": str(url_encode_partitions).lower(),
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.compaction.payload.class": payload,
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.populate.meta.fields": "true",
        }
        if record_key_fields:  # none: auto-generated keys, and no such key (spec.keygen.auto_record_key)
            props["hoodie.table.recordkey.fields"] = ",".join(record_key_fields)
        if ordering_field:
            props["hoodie.table.ordering.fields" if table_version >= 9 else "hoodie.table.precombine.field"] = (
                ordering_field)
        if partition_fields:
            props["hoodie.table.partition.fields"] = ",".join(partition_fields)
        if create_schema:
            props["hoodie.table.create.schema"] = create_schema
        if table_version >= 8:
            props.update({
                "hoodie.table.initial.version": str(table_version),
                "hoodie.timeline.path": "timeline",
                "hoodie.timeline.history.path": "history",
                "hoodie.table.keygenerator.type": keygen_type,
                "hoodie.record.merge.mode": merge_mode,
                "hoodie.record.merge.strategy.id": strategy,
            })
        if table_version >= 9:  # EightToNineUpgradeHandler: the merge mode alone says how records merge
            del props["hoodie.record.merge.strategy.id"], props["hoodie.compaction.payload.class"]
            props["hoodie.table.format"] = "native"
        else:
            props["hoodie.table.keygenerator.class"] = KEYGEN_CLASSES.get(keygen_type, keygen_type)
            if table_type == MERGE_ON_READ:
                props["hoodie.compaction.record.merger.strategy"] = EVENT_TIME_STRATEGY_ID
        props.update(extra or {})
        props = {k: v for k, v in props.items()
                 if k not in KEYS_BY_NAME or KEYS_BY_NAME[k].since_version <= table_version}
        props["hoodie.table.checksum"] = str(table_checksum(database, name))
        return TableConfig(props).validate()
    # --8<-- [end:create]


KEYGEN_CLASSES: Mapping[str, str] = {
    "SIMPLE": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "COMPLEX": "org.apache.hudi.keygen.ComplexKeyGenerator",
    "NON_PARTITION": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
    "TIMESTAMP": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
    "CUSTOM": "org.apache.hudi.keygen.CustomKeyGenerator",
}
"""Key generator type (v8 key) → class name (v6 key)."""



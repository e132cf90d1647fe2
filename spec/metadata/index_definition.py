"""Index definitions: the one JSON file that says what each index of a table is built from.

The file is at ``hoodie.table.index.defs.path`` (relative to the base path; Hudi writes
``.hoodie/.index_defs/index.json``), one object ``{"indexDefinitions": {<partition>: <definition>}}`` keyed by the
metadata partition the index lives in, printed by Jackson's default pretty printer, with no newline at the end. A
definition has, in this order:

- ``indexName`` — the metadata partition (``secondary_index_merchant_idx``), the key it is filed under;
- ``indexType`` — ``record_index``, ``column_stats``, ``secondary_index``, ``expr_index`` (Hudi's type names:
  ``bloom_filters``, ``partition_stats`` and ``files`` are registered by the metadata writer without a definition on
  the real tables);
- ``indexFunction`` — the transform of an expression index; for the others whatever the registering code path put:
  ``""`` for the record index, ``column_stats`` for column statistics, ``identity`` for a secondary index created by
  SQL (identify an index by ``indexType``, never by this field);
- ``sourceFields`` — the data columns the index is built from (meta columns allowed); a secondary index has
  exactly one;
- ``indexOptions`` — type-specific options as strings (``isPartitioned`` for the record index);
- ``version`` — the index version (``V1``, ``V2``: ``spec.metadata.partition_type``), written from table version 9
  on; a version 8 definition has none, which reads as ``V1``.

A definition is valid for its table version as ``HoodieIndexVersion.isValidIndexDefinition`` says: on table version
8 a secondary index is ``V1`` (or has no version); on table version 9 a secondary index has a version, ``V2`` or
later.

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; 0.15.x, table version 6, has no index definitions):
``HoodieIndexDefinition``, ``HoodieIndexMetadata`` (``toJson``, ``fromJson``), ``HoodieTableConfig``
(``RELATIVE_INDEX_DEFINITION_PATH``), ``HoodieTableMetaClient`` (``getIndexDefinitionPath``) and
``HoodieIndexVersion`` (``isValidIndexDefinition``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spec.errors import MetadataFormatError
from spec.metadata.partition_type import INDEX_VERSIONS, SECONDARY_INDEX, V1, V2, partition_type
from spec.timeline.commit_metadata import jackson_pretty

# --8<-- [start:definition]
INDEX_DEFS_PATH_KEY = "hoodie.table.index.defs.path"
DEFAULT_INDEX_DEFS_PATH = ".hoodie/.index_defs/index.json"
INDEX_TYPES = ("files", "column_stats", "partition_stats", "bloom_filters", "record_index", "secondary_index",
               "expr_index")
"""The index types a definition may name (``MetadataPartitionType``'s, as definitions spell them)."""


@dataclass(frozen=True)
class IndexDefinition:
    """One ``HoodieIndexDefinition``: the index's partition, type, function, source columns, options, version."""

    index_name: str
    index_type: str
    index_function: str = ""
    source_fields: tuple[str, ...] = ()
    index_options: Mapping[str, str] = field(default_factory=dict)
    version: str | None = None

    @property
    def index_version(self) -> str:
        """The version its partition is laid out in: the one it carries, else ``V1`` (a version 8 definition)."""
        return self.version or V1

    def to_json(self) -> dict[str, Any]:
        """The JSON object, in Hudi's field order; ``version`` only when the definition has one."""
        out: dict[str, Any] = {"indexName": self.index_name, "indexType": self.index_type,
                               "indexFunction": self.index_function, "sourceFields": list(self.source_fields),
                               "indexOptions": dict(self.index_options)}
        if self.version is not None:
            out["version"] = self.version
        return out

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> IndexDefinition:
        """A definition from its JSON object; a missing name or type, an unknown type or version raises
        ``MetadataFormatError``."""
        try:
            name, index_type = str(obj["indexName"]), str(obj["indexType"])
        except (KeyError, TypeError) as err:
            raise MetadataFormatError(f"an index definition lacks {err}",
                                      hint="each has indexName and indexType") from err
        if index_type not in INDEX_TYPES:
            raise MetadataFormatError(f"index {name!r} has unknown type {index_type!r}",
                                      hint="types: " + ", ".join(INDEX_TYPES))
        version = obj.get("version")
        if version is not None and version not in INDEX_VERSIONS:
            raise MetadataFormatError(f"index {name!r} has unknown version {version!r}",
                                      hint="versions: " + ", ".join(INDEX_VERSIONS))
        return IndexDefinition(name, index_type, str(obj.get("indexFunction") or ""),
                               tuple(obj.get("sourceFields") or ()),
                               {str(k): str(v) for k, v in (obj.get("indexOptions") or {}).items()}, version)
# --8<-- [end:definition]


# --8<-- [start:file]
def parse_index_definitions(text: str) -> dict[str, IndexDefinition]:
    """The definitions of an index definitions file by partition name, in file order."""
    try:
        doc = json.loads(text)
        defs = doc["indexDefinitions"]
    except (ValueError, KeyError, TypeError) as err:
        raise MetadataFormatError(f"the index definitions file does not parse: {err}",
                                  hint='it is {"indexDefinitions": {<partition>: <definition>}}') from err
    out = {}
    for key, obj in (defs or {}).items():
        definition = IndexDefinition.from_json(obj)
        if definition.index_name != key:
            raise MetadataFormatError(f"index definition filed under {key!r} is named {definition.index_name!r}",
                                      hint="each definition is filed under its own indexName")
        out[key] = definition
    return out


def format_index_definitions(definitions: Mapping[str, IndexDefinition]) -> str:
    """The file's text as Hudi writes it (Jackson's pretty printer, no trailing newline)."""
    return jackson_pretty({"indexDefinitions": {k: d.to_json() for k, d in definitions.items()}})


def index_definitions_path(props: Mapping[str, str]) -> str | None:
    """Where a table's index definitions are, relative to its base path (``hoodie.table.index.defs.path``), or None
    when the table has none."""
    return props.get(INDEX_DEFS_PATH_KEY) or None
# --8<-- [end:file]


# --8<-- [start:valid]
def is_valid_for(table_version: int, definition: IndexDefinition) -> bool:
    """``isValidIndexDefinition``: on table version 8 any definition without a version, and a secondary index only
    at ``V1``; on table version 9 a secondary index only with a version, ``V2`` or later."""
    is_secondary = definition.index_type == "secondary_index" or (
        partition_type(definition.index_name) is SECONDARY_INDEX)
    if table_version == 8:
        return definition.version is None or not is_secondary or definition.version == V1
    if table_version >= 9 and is_secondary:
        return definition.version is not None and INDEX_VERSIONS.index(definition.version) >= INDEX_VERSIONS.index(V2)
    return True
# --8<-- [end:valid]

"""The Avro schemas of timeline metadata.

Every Avro timeline file (plans, clean / rollback / savepoint / restore / indexing metadata,
and in table version 8 the commit metadata too) is an Avro *object container file* holding
exactly one record (``spec.timeline.avro_container``). Java readers resolve that record against
Hudi's compiled schema by record full name and field name, so a writer must use the full names below
(``org.apache.hudi.avro.model.*``); extra fields are skipped and missing ones take defaults.

The schemas here are written from Hudi's Avro schema files (``hudi-common/src/main/avro``): field
order, types, defaults and the ``"avro.java.string":"String"`` property Hudi's generated
classes carry. Each dict is laid out in the key order Java's ``Schema.toString()`` prints
(``type, name, namespace, doc, fields`` for records; ``name, type, doc, default`` for fields),
so ``schema_json`` gives the exact header string Hudi embeds. Where Hudi's schema for the same
record changed between releases, the table version selects it (``schema_for``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): Hudi's Avro schema files
(``hudi-common/src/main/avro/*.avsc``: ``HoodieCommitMetadata``, ``HoodieCompactionPlan``,
``HoodieCleanerPlan``, ``HoodieCleanMetadata``, ``HoodieRollbackPlan``, ``HoodieRollbackMetadata``,
``HoodieSavepointMetadata``, ``HoodieRestorePlan``, ``HoodieRestoreMetadata``, ``HoodieIndexPlan``,
``HoodieIndexCommitMetadata``), ``TimelineMetadataUtils`` (``serializeAvroMetadata``) and
``HoodieAvroUtils.sanitizeName``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from spec.errors import MetadataFormatError

NAMESPACE = "org.apache.hudi.avro.model"

Schema = dict[str, Any]
_NO_DEFAULT = object()

# --8<-- [start:builders]
JSTRING: Schema = {"type": "string", "avro.java.string": "String"}
"""A string as Hudi's generated classes declare it (Java ``String``, not ``Utf8``)."""


# --8<-- [start:sanitize]
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")
_INVALID_FIRST_CHAR = re.compile(r"[^A-Za-z_]")


def sanitize_avro_name(name: str, mask: str = "__") -> str:
    """``name`` made a valid Avro name (``HoodieAvroUtils.sanitizeName``, Hudi 0.15 and 1.x): a first
    character other than a letter or ``_`` is replaced by ``mask``, then every character other than
    a letter, digit or ``_`` is. Hudi names a table's record ``<sanitized table>_record`` in the
    namespace ``hoodie.<sanitized table>`` (``AvroSchemaUtils.getAvroRecordQualifiedName``), so a
    table named ``my-table`` writes ``my__table_record``."""
    if name and _INVALID_FIRST_CHAR.fullmatch(name[0]):
        name = mask + name[1:]
    return _INVALID_NAME_CHARS.sub(mask, name)
# --8<-- [end:sanitize]


def field(name: str, type_: Any, default: Any = _NO_DEFAULT, doc: str | None = None) -> Schema:
    """A record field: ``name, type, doc, default`` (Java's print order); no default when omitted."""
    out: Schema = {"name": name, "type": type_}
    if doc is not None:
        out["doc"] = doc
    if default is not _NO_DEFAULT:
        out["default"] = default
    return out


def optional(name: str, type_: Any, doc: str | None = None) -> Schema:
    """A nullable field: union ``["null", T]`` with default null."""
    return field(name, ["null", type_], None, doc)


def version_field(default: int = 1, doc: str | None = None) -> Schema:
    """The ``version`` field of Hudi's metadata records: ``["int", "null"]`` with an int default."""
    return field("version", ["int", "null"], default, doc)


def jmap(values: Any, **props: Any) -> Schema:
    """A map (keys are strings; Hudi's schemas tag the map ``avro.java.string`` too)."""
    return {"type": "map", "values": values, "avro.java.string": "String", **props}


def array(items: Any, **props: Any) -> Schema:
    """An array schema of ``items`` (extra properties kept in the order given)."""
    return {"type": "array", "items": items, **props}


def record(name: str, fields: list[Schema], namespace: str | None = None, doc: str | None = None) -> Schema:
    """A record schema: ``type, name, namespace, doc, fields`` in Java's print order; namespace and doc only when
    given."""
    out: Schema = {"type": "record", "name": name}
    if namespace is not None:
        out["namespace"] = namespace
    if doc is not None:
        out["doc"] = doc
    out["fields"] = fields
    return out
# --8<-- [end:builders]


# --- commit metadata (table version 8) ---------------------------------------------------------

# --8<-- [start:write_stat]
def _write_stat() -> Schema:
    s, lng = JSTRING, "long"
    runtime = record("HoodieRuntimeStats", [
        optional("totalScanTime", lng), optional("totalCreateTime", lng), optional("totalUpsertTime", lng)])
    return record("HoodieWriteStat", [
        optional("fileId", s), optional("path", s), optional("prevCommit", s), optional("numWrites", lng),
        optional("numDeletes", lng), optional("numUpdateWrites", lng), optional("totalWriteBytes", lng),
        optional("totalWriteErrors", lng), optional("partitionPath", s), optional("totalLogRecords", lng),
        optional("totalLogFiles", lng), optional("totalUpdatedRecordsCompacted", lng),
        optional("numInserts", lng), optional("totalLogBlocks", lng), optional("totalCorruptLogBlock", lng),
        optional("totalRollbackBlocks", lng), optional("fileSizeInBytes", lng), optional("logVersion", "int"),
        optional("logOffset", lng), optional("baseFile", s), optional("logFiles", array(s, default=None)),
        optional("cdcStats", jmap(lng, default=None)), optional("prevBaseFile", s),
        optional("minEventTime", lng), optional("maxEventTime", lng), optional("runtimeStats", runtime),
        optional("totalLogFilesCompacted", lng), optional("totalLogReadTimeMs", lng),
        optional("totalLogSizeCompacted", lng), optional("tempPath", s), optional("numUpdates", lng),
    ])
# --8<-- [end:write_stat]


# --8<-- [start:commit_metadata]
def commit_metadata_schema() -> Schema:
    """HoodieCommitMetadata (completed and inflight commit / deltacommit / compaction, v8)."""
    return record("HoodieCommitMetadata", [
        optional("partitionToWriteStats", jmap(array(_write_stat()))),
        optional("compacted", "boolean"),
        optional("extraMetadata", jmap(JSTRING, default=None)),
        version_field(),
        optional("operationType", JSTRING),
    ], NAMESPACE)


def replace_commit_metadata_schema() -> Schema:
    """HoodieReplaceCommitMetadata: commit metadata + the file groups a replacecommit replaced."""
    return record("HoodieReplaceCommitMetadata", [
        optional("partitionToWriteStats", jmap(array(_write_stat()))),
        optional("compacted", "boolean"),
        optional("extraMetadata", jmap(JSTRING)),
        version_field(),
        optional("operationType", JSTRING),
        optional("partitionToReplaceFileIds", jmap(array(JSTRING))),
    ], NAMESPACE)
# --8<-- [end:commit_metadata]


# --- plans and service metadata ----------------------------------------------------------------

# --8<-- [start:compaction_plan]
_COMPACTOR_DOC = ("The class name that is provided here should extend CompactionExecutionStrategy "
                  "abstract class, idea is that the plan generator will also provide the execution "
                  "strategy to use.")
_STRATEGY_PARAMS_DOC = ("These parameters play a key role in determining which action type it is i.e. "
                        "compaction or logcompaction and it will also include configs that determine how "
                        "compaction needs to be executed.")


def compaction_plan_schema() -> Schema:
    """HoodieCompactionPlan (``T.compaction.requested`` / ``T.logcompaction.requested``)."""
    s = JSTRING
    operation = record("HoodieCompactionOperation", [
        field("baseInstantTime", ["null", s]),
        optional("deltaFilePaths", array(s)),
        optional("dataFilePath", s),
        field("fileId", ["null", s]),
        optional("partitionPath", s),
        optional("metrics", jmap("double")),
        optional("bootstrapFilePath", s),
    ])
    strategy = record("HoodieCompactionStrategy", [
        optional("compactorClassName", s, _COMPACTOR_DOC),
        optional("strategyParams", jmap(s), _STRATEGY_PARAMS_DOC),
        version_field(),
    ])
    return record("HoodieCompactionPlan", [
        optional("operations", array(operation)),
        optional("extraMetadata", jmap(s)),
        version_field(),
        optional("strategy", strategy),
        field("preserveHoodieMetadata", ["boolean", "null"], False),
        optional("missingSchedulePartitions", array(s)),
    ], NAMESPACE)
# --8<-- [end:compaction_plan]


# --8<-- [start:requested_replace]
def requested_replace_metadata_schema(table_version: int) -> Schema:
    """HoodieRequestedReplaceMetadata (``T.replacecommit.requested``, v8 ``T.clustering.requested``).

    Hudi 1.x adds ``missingSchedulePartitions`` to the clustering plan; 0.14/0.15 (v6) do not have it.
    """
    s = JSTRING
    slice_info = record("HoodieSliceInfo", [
        optional("dataFilePath", s), optional("deltaFilePaths", array(s)), field("fileId", ["null", s]),
        optional("partitionPath", s), optional("bootstrapFilePath", s), version_field()])
    group = record("HoodieClusteringGroup", [
        optional("slices", array(slice_info)), optional("metrics", jmap("double")),
        field("numOutputFileGroups", ["int", "null"], 1), optional("extraMetadata", jmap(s)),
        version_field()])
    strategy = record("HoodieClusteringStrategy", [
        optional("strategyClassName", s), optional("strategyParams", jmap(s)), version_field()])
    plan_fields = [optional("inputGroups", array(group)), optional("strategy", strategy),
                   optional("extraMetadata", jmap(s)), version_field(),
                   optional("preserveHoodieMetadata", "boolean")]
    if table_version >= 8:
        plan_fields.append(optional("missingSchedulePartitions", array(s)))
    return record("HoodieRequestedReplaceMetadata", [
        optional("operationType", s),
        optional("clusteringPlan", record("HoodieClusteringPlan", plan_fields)),
        optional("extraMetadata", jmap(s)),
        version_field(),
    ], NAMESPACE)
# --8<-- [end:requested_replace]


# --8<-- [start:clean]
def cleaner_plan_schema() -> Schema:
    """HoodieCleanerPlan (``T.clean.requested``, ``T.clean.inflight``), Apache Hudi 1.2.0's (docs/spec/plans.md)."""
    s = JSTRING
    action_instant = record("HoodieActionInstant", [field("timestamp", s), field("action", s), field("state", s)])
    file_info = record("HoodieCleanFileInfo", [optional("filePath", s), optional("isBootstrapBaseFile", "boolean")])
    return record("HoodieCleanerPlan", [
        optional("earliestInstantToRetain", action_instant),
        field("lastCompletedCommitTimestamp", s, ""),
        field("policy", s),
        optional("filesToBeDeletedPerPartition", jmap(array(s))),
        version_field(),
        optional("filePathsToBeDeletedPerPartition", jmap(array(file_info)),
                 "This field replaces the field filesToBeDeletedPerPartition"),
        optional("partitionsToBeDeleted", array(s), "partitions to be deleted"),
        optional("extraMetadata", jmap(s, default=None)),
    ], NAMESPACE)


def clean_metadata_schema() -> Schema:
    """HoodieCleanMetadata (completed ``T.clean``), Apache Hudi 1.2.0's: no top-level ``policy``."""
    s = JSTRING
    partition = record("HoodieCleanPartitionMetadata", [
        field("partitionPath", s), field("policy", s), field("deletePathPatterns", array(s)),
        field("successDeleteFiles", array(s)), field("failedDeleteFiles", array(s)),
        optional("isPartitionDeleted", "boolean")])
    return record("HoodieCleanMetadata", [
        field("startCleanTime", s),
        field("timeTakenInMillis", "long"),
        field("totalFilesDeleted", "int"),
        field("earliestCommitToRetain", s),
        field("lastCompletedCommitTimestamp", s, ""),
        field("partitionMetadata", jmap(partition)),
        version_field(),
        optional("bootstrapPartitionMetadata", jmap("HoodieCleanPartitionMetadata", default=None)),
        optional("extraMetadata", jmap(s, default=None)),
    ], NAMESPACE)
# --8<-- [end:clean]


# --8<-- [start:rollback]
def _instant_info() -> Schema:
    return record("HoodieInstantInfo", [field("commitTime", JSTRING), field("action", JSTRING)])


def rollback_plan_schema() -> Schema:
    """HoodieRollbackPlan (``T.rollback.requested``)."""
    s = JSTRING
    request = record("HoodieRollbackRequest", [
        field("partitionPath", s), optional("fileId", s), optional("latestBaseInstant", s),
        field("filesToBeDeleted", array(s, default=[]), []), optional("logBlocksToBeDeleted", jmap("long"))])
    return record("HoodieRollbackPlan", [
        optional("instantToRollback", _instant_info(), "Hoodie instant that needs to be rolled back"),
        optional("RollbackRequests", array(request)),
        version_field(),
    ], NAMESPACE)


def _rollback_metadata(namespace: str | None) -> Schema:
    s = JSTRING
    partition = record("HoodieRollbackPartitionMetadata", [
        field("partitionPath", s), field("successDeleteFiles", array(s)),
        field("failedDeleteFiles", array(s)),
        optional("rollbackLogFiles", jmap("long")), optional("logFilesFromFailedCommit", jmap("long"))])
    return record("HoodieRollbackMetadata", [
        field("startRollbackTime", s),
        field("timeTakenInMillis", "long"),
        field("totalFilesDeleted", "int"),
        field("commitsRollback", array(s)),
        field("partitionMetadata", jmap(partition)),
        version_field(),
        field("instantsRollback", array(_instant_info(), default=[]), []),
    ], namespace)


def rollback_metadata_schema() -> Schema:
    """HoodieRollbackMetadata (completed ``T.rollback``)."""
    return _rollback_metadata(NAMESPACE)
# --8<-- [end:rollback]


# --8<-- [start:savepoint_restore]
def savepoint_metadata_schema() -> Schema:
    """HoodieSavepointMetadata (completed ``T.savepoint``)."""
    s = JSTRING
    partition = record("HoodieSavepointPartitionMetadata", [
        field("partitionPath", s), field("savepointDataFile", array(s))])
    return record("HoodieSavepointMetadata", [
        field("savepointedBy", s), field("savepointedAt", "long"), field("comments", s),
        field("partitionMetadata", jmap(partition)),
    ], NAMESPACE)


def restore_plan_schema() -> Schema:
    """HoodieRestorePlan (``T.restore.requested``)."""
    return record("HoodieRestorePlan", [
        field("instantsToRollback", array(_instant_info(), default=None), []),
        version_field(2),
        field("savepointToRestoreTimestamp", [JSTRING, "null"], None),
    ], NAMESPACE)


def restore_metadata_schema() -> Schema:
    """HoodieRestoreMetadata (completed ``T.restore``): the rollback metadata of every instant undone."""
    s = JSTRING
    return record("HoodieRestoreMetadata", [
        field("startRestoreTime", s),
        field("timeTakenInMillis", "long"),
        field("instantsToRollback", array(s)),
        field("hoodieRestoreMetadata", jmap(array(["null", _rollback_metadata(None)], default=None))),
        version_field(),
        field("restoreInstantInfo", array("HoodieInstantInfo", default=None), []),
        optional("extraMetadata", jmap(s)),
    ], NAMESPACE)
# --8<-- [end:savepoint_restore]


# --8<-- [start:indexing]
_INDEX_DOC = "This field replaces the field filesToBeDeletedPerPartition"


def _index_partition_info() -> Schema:
    s = JSTRING
    return record("HoodieIndexPartitionInfo", [
        version_field(), optional("metadataPartitionPath", s), optional("indexUptoInstant", s),
        optional("extraMetadata", jmap(s))])


def index_plan_schema() -> Schema:
    """HoodieIndexPlan (``T.indexing.requested``)."""
    return record("HoodieIndexPlan", [
        version_field(), optional("indexPartitionInfos", array(_index_partition_info()))], NAMESPACE)


def index_commit_metadata_schema() -> Schema:
    """HoodieIndexCommitMetadata (completed ``T.indexing``); the docs are Hudi's, copy-paste slip included."""
    return record("HoodieIndexCommitMetadata", [
        version_field(doc=_INDEX_DOC),
        optional("operationType", JSTRING, _INDEX_DOC),
        optional("indexPartitionInfos", array(_index_partition_info()),
                 "This field contains the info for each partition that got indexed"),
    ], NAMESPACE)
# --8<-- [end:indexing]


# --- lookup ---------------------------------------------------------------------------------

# --8<-- [start:lookup]
RECORD_NAMES = (
    "HoodieCommitMetadata", "HoodieReplaceCommitMetadata", "HoodieCompactionPlan",
    "HoodieRequestedReplaceMetadata", "HoodieCleanerPlan", "HoodieCleanMetadata", "HoodieRollbackPlan",
    "HoodieRollbackMetadata", "HoodieSavepointMetadata", "HoodieRestorePlan", "HoodieRestoreMetadata",
    "HoodieIndexPlan", "HoodieIndexCommitMetadata",
)
"""The top-level records of timeline files (namespace ``org.apache.hudi.avro.model``)."""


def schema_for(record_name: str, table_version: int) -> Schema:
    """The writer schema Hudi embeds for ``record_name`` in a table of ``table_version``."""
    builders: dict[str, Any] = {
        "HoodieCommitMetadata": commit_metadata_schema,
        "HoodieReplaceCommitMetadata": replace_commit_metadata_schema,
        "HoodieCompactionPlan": compaction_plan_schema,
        "HoodieRequestedReplaceMetadata": lambda: requested_replace_metadata_schema(table_version),
        "HoodieCleanerPlan": cleaner_plan_schema,
        "HoodieCleanMetadata": clean_metadata_schema,
        "HoodieRollbackPlan": rollback_plan_schema,
        "HoodieRollbackMetadata": rollback_metadata_schema,
        "HoodieSavepointMetadata": savepoint_metadata_schema,
        "HoodieRestorePlan": restore_plan_schema,
        "HoodieRestoreMetadata": restore_metadata_schema,
        "HoodieIndexPlan": index_plan_schema,
        "HoodieIndexCommitMetadata": index_commit_metadata_schema,
    }
    name = record_name.removeprefix(NAMESPACE + ".")
    if name not in builders:
        raise MetadataFormatError(f"no timeline metadata record is named {record_name!r}",
                                  hint=f"known records: {', '.join(RECORD_NAMES)}")
    schema: Schema = builders[name]()
    return schema


def schema_json(schema: Mapping[str, Any]) -> str:
    """The schema as Java's ``Schema.toString()`` prints it: compact JSON in the dict's key order."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=True)
# --8<-- [end:lookup]


# --- the object container ------------------------------------------------------------------------

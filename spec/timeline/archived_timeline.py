"""The archived timeline: the instants archival moved off the active timeline, and the records they became.

Table version 6 keeps them in archived log files (``spec.file_group.log_file.archived_log``): every
timeline file of an archived instant — requested, inflight, completed — becomes one
``HoodieArchivedMetaEntry`` record: ``commitTime``, ``actionType``, ``actionState``, ``version`` 1,
``stateTransitionTime`` (the file's modification time, as an instant time) and the file's content
in the one field its action and state call for (``entry_field``): commit metadata as the Avro
``HoodieCommitMetadata`` (an inflight replacecommit's in ``HoodieInflightReplaceMetadata``), plans
and service metadata as their own records, a compaction's plan — which lives in its requested
file — in ``hoodieCompactionPlan`` for every state. ``format_archived_entry`` builds the record,
``parse_archived_entry`` reads it back: the instant and the content, parsed as the active
timeline's file would be.

Table versions 8 and 9 keep one ``HoodieLSMTimelineInstant`` row per archived instant in the LSM
timeline (``spec.timeline.lsm_timeline``). Both read back as ``ArchivedInstant``: per archived
instant its action and the highest state archived (``archived_instants_of_entries``,
``ArchivedInstant.of_lsm``), with its completion time from version 8 on.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieArchivedMetaEntry.avsc``,
``MetadataConversionUtils.createMetaWrapper`` (0.15.x: which field a file's content goes to),
``HoodieArchivedTimeline`` (0.15.x) and ``ArchivedTimelineV1`` (1.x, reading version-6 archives),
``ArchivedTimelineV2`` (1.x, the LSM timeline), ``MetadataConversionUtils.createLSMTimelineInstant``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spec.config.table_config import LAYOUT_V1
from spec.errors import HudiSpecError, MetadataFormatError
from spec.timeline.active_timeline import Timeline
from spec.timeline.avro_container import read_container
from spec.timeline.avro_model import PLAN_TYPES, parse_timeline_content
from spec.timeline.avro_model_codec import from_avro, to_avro
from spec.timeline.avro_schemas import JSTRING, NAMESPACE, schema_for
from spec.timeline.commit_metadata import CommitMetadata, commit_metadata_from_mapping, format_commit_metadata
from spec.timeline.instant import Action, Instant, State
from spec.timeline.layout import format_instant_file_name
from spec.timeline.lsm_timeline import LsmInstant

Schema = dict[str, Any]


# --8<-- [start:entry_schema]
def _compaction_metadata_schema() -> Schema:
    """HoodieCompactionMetadata (deprecated, never filled, still part of the entry's schema)."""
    def opt(name: str, t: Any) -> Schema:
        return {"name": name, "type": ["null", t]}

    stat = {"name": "HoodieCompactionWriteStat", "type": "record", "fields": [
        opt("partitionPath", "string"), opt("totalLogRecords", "long"), opt("totalLogFiles", "long"),
        opt("totalUpdatedRecordsCompacted", "long"), opt("hoodieWriteStat", "HoodieWriteStat")]}
    return {"namespace": NAMESPACE, "type": "record", "name": "HoodieCompactionMetadata", "fields": [
        {"name": "partitionToCompactionWriteStats",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": stat}}]}]}


ENTRY_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("hoodieCommitMetadata", "HoodieCommitMetadata"),
    ("hoodieCleanMetadata", "HoodieCleanMetadata"),
    ("hoodieCompactionMetadata", "HoodieCompactionMetadata"),
    ("hoodieRollbackMetadata", "HoodieRollbackMetadata"),
    ("hoodieSavePointMetadata", "HoodieSavepointMetadata"),
    ("commitTime", None),
    ("actionType", None),
    ("version", None),
    ("hoodieCompactionPlan", "HoodieCompactionPlan"),
    ("hoodieCleanerPlan", "HoodieCleanerPlan"),
    ("actionState", None),
    ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
    ("hoodieRequestedReplaceMetadata", "HoodieRequestedReplaceMetadata"),
    ("HoodieInflightReplaceMetadata", "HoodieCommitMetadata"),
    ("hoodieIndexCommitMetadata", "HoodieIndexCommitMetadata"),
    ("stateTransitionTime", None),
)
"""HoodieArchivedMetaEntry's fields in order (Hudi 0.14/0.15), with the record each optional
metadata field holds (an inflight replacecommit's commit metadata goes to HoodieInflightReplaceMetadata)."""

COMMIT_FIELDS = frozenset({"hoodieCommitMetadata", "hoodieReplaceCommitMetadata", "HoodieInflightReplaceMetadata"})
"""The entry fields that hold commit metadata (as the Avro record of a version 8 commit file)."""


def archived_entry_schema(table_version: int) -> Schema:
    """The HoodieArchivedMetaEntry schema: every field a union with null (default null) except
    ``version`` (``["int","null"]``, default 1); each named type is defined once, at first use. The string
    fields carry ``"avro.java.string":"String"`` as the schema of Hudi's generated class does (the one its
    archiver writes into the block header): Apache Hudi 1.2.0's ``ArchivedTimelineLoaderV1`` casts
    ``commitTime`` to ``String`` and fails with a ``ClassCastException`` (``Utf8``) on a header without it
    (``show_archived_commits`` on the archived timeline of ``archive-cow-v6``)."""
    fields: list[Schema] = []
    for name, record in ENTRY_FIELDS:
        if record is None:
            t: Any = ["int", "null"] if name == "version" else ["null", JSTRING]
            fields.append({"name": name, "type": t, "default": 1 if name == "version" else None})
            continue
        body = _compaction_metadata_schema() if record == "HoodieCompactionMetadata" else \
            schema_for(record, table_version)
        fields.append({"name": name, "type": ["null", body], "default": None})
    schema: Schema = {"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": NAMESPACE, "fields": fields}
    defined: Schema = _define_once(schema, NAMESPACE, set())
    return defined
# --8<-- [end:entry_schema]


def _define_once(node: Any, namespace: str, seen: set[str]) -> Any:
    """The schema with every repeated definition of a named type replaced by its full name."""
    if isinstance(node, list):
        return [_define_once(x, namespace, seen) for x in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("record", "enum", "fixed") and "name" in node:
        ns = node.get("namespace", namespace)
        full = node["name"] if "." in node["name"] else f"{ns}.{node['name']}"
        if full in seen:
            return full
        seen.add(full)
        out = dict(node)
        if kind == "record":
            out["fields"] = [{**f, "type": _define_once(f["type"], ns, seen)} for f in node["fields"]]
        return out
    return {k: (_define_once(v, namespace, seen) if k in ("type", "items", "values") else v)
            for k, v in node.items()}


# --8<-- [start:entry]
def entry_field(inst: Instant) -> str | None:
    """The entry field holding the content of ``inst``'s timeline file (None: the entry carries none)."""
    a, s = inst.action, inst.state
    if a in (Action.COMMIT, Action.DELTA_COMMIT):
        return "hoodieCommitMetadata"
    if a == Action.REPLACE_COMMIT:
        return {State.REQUESTED: "hoodieRequestedReplaceMetadata", State.INFLIGHT: "HoodieInflightReplaceMetadata",
                State.COMPLETED: "hoodieReplaceCommitMetadata"}[s]
    if a == Action.CLEAN:
        return "hoodieCleanMetadata" if s == State.COMPLETED else "hoodieCleanerPlan"
    if a == Action.ROLLBACK and s == State.COMPLETED:
        return "hoodieRollbackMetadata"
    if a == Action.SAVEPOINT and s == State.COMPLETED:
        return "hoodieSavePointMetadata"
    if a == Action.COMPACTION:
        return "hoodieCompactionPlan"
    if a == Action.INDEXING and s == State.COMPLETED:
        return "hoodieIndexCommitMetadata"
    return None


def format_archived_entry(inst: Instant, content: bytes, state_transition_time: str | None = None) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry record of one timeline file of ``inst`` (in its state) holding ``content``
    (for a compaction, the plan its requested file holds); an empty file leaves its field null."""
    entry: dict[str, Any] = {f: None for f, _ in ENTRY_FIELDS}
    entry.update(commitTime=inst.requested, actionType=inst.action, actionState=inst.state.value, version=1,
                 stateTransitionTime=state_transition_time)
    fld = entry_field(inst)
    if fld is not None and content.strip():
        parsed = parse_timeline_content(inst, content)
        if isinstance(parsed, CommitMetadata):
            entry[fld] = read_container(format_commit_metadata(
                parsed, 8, replace=fld == "hoodieReplaceCommitMetadata")).record
        elif parsed is not None:
            entry[fld] = to_avro(parsed)
    return entry


@dataclass(frozen=True)
class ArchivedEntry:
    """A HoodieArchivedMetaEntry read back: the instant (in the state archived), the parsed content of its
    timeline file (None when it had none) and when it reached that state."""

    instant: Instant
    content: Any
    state_transition_time: str | None


def parse_archived_entry(entry: Mapping[str, Any]) -> ArchivedEntry:
    """The instant and content an entry holds (the inverse of ``format_archived_entry``, content parsed as
    ``spec.timeline.avro_model.parse_timeline_content`` parses the file); MetadataFormatError when the entry
    names no instant."""
    try:
        inst = Instant(str(entry["commitTime"]), str(entry["actionType"]), State(entry.get("actionState")
                                                                                  or "COMPLETED"))
    except (KeyError, ValueError, HudiSpecError) as err:
        raise MetadataFormatError(f"an archived entry names no instant: {err}",
                                  hint="the archived log is damaged") from err
    fld = entry_field(inst)
    value = entry.get(fld) if fld is not None else None
    content: Any = None
    if value is not None:
        if fld in COMMIT_FIELDS:
            content = commit_metadata_from_mapping(value)
        else:
            record = next(r for f, r in ENTRY_FIELDS if f == fld)
            content = from_avro(PLAN_TYPES[record or ""], value)
    return ArchivedEntry(inst, content, entry.get("stateTransitionTime"))
# --8<-- [end:entry]


# --8<-- [start:archived_instant]
@dataclass(frozen=True)
class ArchivedInstant:
    """One archived instant at its highest archived state (``completed``: its completion time, from
    table version 8 on)."""

    requested: str
    action: str
    state: str
    completed: str | None = None

    @staticmethod
    def of_lsm(row: LsmInstant) -> ArchivedInstant:
        """An LSM timeline row: a completed instant."""
        return ArchivedInstant(row.instant_time, row.action, State.COMPLETED.value, row.completion_time)


def archived_instants_of_entries(entries: Iterable[Mapping[str, Any]]) -> list[ArchivedInstant]:
    """The archived timeline of version-6 entries: per instant its action and highest state, oldest first
    (collapsed as the active timeline collapses its files); entries naming no instant are skipped."""
    names = []
    for e in entries:
        try:
            inst = parse_archived_entry(e).instant
            names.append(format_instant_file_name(inst, LAYOUT_V1))
        except HudiSpecError:
            continue
    return [ArchivedInstant(i.requested, i.action, i.state.value)
            for i in Timeline.from_file_names(names, LAYOUT_V1).instants]
# --8<-- [end:archived_instant]


__all__ = [
    "COMMIT_FIELDS", "ENTRY_FIELDS", "ArchivedEntry", "ArchivedInstant", "archived_entry_schema",
    "archived_instants_of_entries", "entry_field", "format_archived_entry", "parse_archived_entry",
]

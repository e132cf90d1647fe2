"""The case language: a table configuration, the operations on it, and their JSON codec.

A conformance case is a table configuration (``CreateTable``) plus a list of operations, the
frozen dataclasses of ``spec.model.operations`` (the vocabulary the model and every adapter execute
through ``spec.model.operations.dispatch``). An operation's JSON form is an object whose ``"op"`` member
names it (``"write"``, ``"compact"``, ...) and whose other members are its fields. The vocabulary
is closed, like WebAssembly's script commands: an unknown ``"op"``, an unknown member or a value of
the wrong type is rejected with ``InvalidOperation``, never ignored.

Record values are JSON scalars only (int, float, str, bool, null); floats must be finite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, TypeAlias

from spec.config.registry import BY_NAME, CLEAN_POLICIES, KEEP_LATEST_COMMITS, default, inferred_key_generator
from spec.config.table_config import (
    EVENT_TIME_ORDERING,
    MERGE_ON_READ,
    WRITABLE_TABLE_VERSIONS,
)
from spec.model.operations import (
    Archive,
    Clean,
    Cluster,
    Compact,
    Concurrent,
    Crash,
    DeletePartition,
    ExpectError,
    Operation,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    StreamRecord,
    Write,
    check_choice,
    check_positive,
    invalid,
)

TABLE_TYPES: Final = BY_NAME["table_type"].choices
KEY_GENERATORS: Final = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM")
MERGE_MODES: Final = BY_NAME["merge_mode"].choices
INDEX_TYPES: Final = tuple(i for i in BY_NAME["index_type"].choices
                           if i not in ("GLOBAL_RECORD_LEVEL_INDEX", "RECORD_LEVEL_INDEX"))
"""The writer's index types but two: GLOBAL_RECORD_LEVEL_INDEX is RECORD_INDEX by another name, and the
partitioned record index (RECORD_LEVEL_INDEX) is not in the case language yet (its tests are
``tests/test_partitioned_record_index.py`` and ``tests/test_partitioned_record_index_hudi.py``)."""


# --8<-- [start:create_table]
@dataclass(frozen=True)
class CreateTable:
    """The table a case runs on. Each setting is the registry's (``spec.config.registry``: the key it
    stands for and Hudi's default) except where noted.

    The case's own defaults: a table named ``t`` keyed by ``id`` and ordered by ``ts``;
    ``auto_clean`` and ``auto_archive`` default to False (Hudi: true) so a case says when
    table services run.
    """

    table_name: str = "t"
    table_type: str = default("table_type")
    table_version: int = default("table_version")
    record_key_fields: tuple[str, ...] = ("id",)
    partition_fields: tuple[str, ...] = default("partition_fields")
    ordering_field: str | None = "ts"
    key_generator: str | None = None  # None: SIMPLE / COMPLEX / NON_PARTITION from the fields
    hive_style: bool = default("hive_style")
    merge_mode: str = default("merge_mode")
    options: tuple[tuple[str, str], ...] = ()  # further hoodie.* settings, e.g. hoodie.keygen.timebased.*
    # the index (hoodie.index.type; None: the writer's default); a BUCKET index's settings are options:
    # hoodie.bucket.index.num.buckets, hoodie.bucket.index.hash.field
    index_type: str | None = None
    # sizing
    small_file_limit: int = default("small_file_limit")
    max_file_size: int = default("max_file_size")
    insert_split_size: int = default("insert_split_size")
    record_size_estimate: int = default("record_size_estimate")
    log_block_size: int = default("log_block_size")
    log_file_size: int = default("log_file_size")
    # compaction
    inline_compact: bool = default("inline_compact")
    compact_max_delta_commits: int = default("compact_max_delta_commits")
    # clean
    auto_clean: bool = False
    clean_policy: str = default("clean_policy")
    clean_commits_retained: int = default("clean_commits_retained")
    clean_file_versions_retained: int = default("clean_file_versions_retained")
    clean_hours_retained: int = default("clean_hours_retained")
    # archival
    auto_archive: bool = False
    keep_min_commits: int = default("keep_min_commits")
    keep_max_commits: int = default("keep_max_commits")
# --8<-- [end:create_table]

    def __post_init__(self) -> None:
        check_choice(self.table_type, TABLE_TYPES, "create_table.table_type")
        check_choice(self.table_version, WRITABLE_TABLE_VERSIONS, "create_table.table_version")
        if not self.record_key_fields or not all(isinstance(f, str) and f for f in self.record_key_fields):
            raise invalid("create_table.record_key_fields must name at least one field")
        if not all(isinstance(f, str) and f for f in self.partition_fields):
            raise invalid("create_table.partition_fields must be non-empty names")
        if self.key_generator is not None:
            check_choice(self.key_generator, KEY_GENERATORS, "create_table.key_generator")
        check_choice(self.merge_mode, MERGE_MODES, "create_table.merge_mode")
        if self.index_type is not None:
            check_choice(self.index_type, INDEX_TYPES, "create_table.index_type")
        check_choice(self.clean_policy, CLEAN_POLICIES, "create_table.clean_policy")
        for name in ("small_file_limit", "max_file_size", "insert_split_size", "record_size_estimate",
                     "log_block_size", "log_file_size", "compact_max_delta_commits", "clean_commits_retained",
                     "clean_file_versions_retained", "keep_min_commits", "keep_max_commits"):
            check_positive(getattr(self, name), f"create_table.{name}", minimum=0 if name == "small_file_limit"
                            else 1)
        check_positive(self.clean_hours_retained, "create_table.clean_hours_retained", minimum=0)
        if self.keep_max_commits <= self.keep_min_commits:
            raise invalid("create_table: keep_max_commits must be greater than keep_min_commits",
                       "Hudi requires hoodie.keep.max.commits > hoodie.keep.min.commits")
        if self.keep_min_commits <= self.clean_commits_retained and self.clean_policy == KEEP_LATEST_COMMITS:
            raise invalid("create_table: keep_min_commits must be greater than clean_commits_retained",
                       "Hudi requires hoodie.keep.min.commits > hoodie.cleaner.commits.retained")
        if self.ordering_field is None and self.merge_mode == EVENT_TIME_ORDERING:
            raise invalid("create_table: EVENT_TIME_ORDERING needs an ordering_field",
                       "set ordering_field or use COMMIT_TIME_ORDERING")
        object.__setattr__(self, "options", tuple(sorted((str(k), str(v)) for k, v in self.options)))

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def resolved_key_generator(self) -> str:
        """The key generator: as given, else NON_PARTITION without partition fields, SIMPLE for one key
        field and at most one partition field, COMPLEX otherwise (what Spark SQL infers)."""
        if self.key_generator is not None:
            return self.key_generator
        return inferred_key_generator(self.record_key_fields, self.partition_fields)

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)


# --8<-- [start:ops]
Op: TypeAlias = CreateTable | Operation
"""A case-language object: the table configuration or an operation on the table."""

OP_NAMES: Final[Mapping[str, type[Any]]] = {
    "create_table": CreateTable,
    "write": Write,
    "delete_partition": DeletePartition,
    "compact": Compact,
    "cluster": Cluster,
    "clean": Clean,
    "rollback": Rollback,
    "savepoint": Savepoint,
    "restore": Restore,
    "archive": Archive,
    "stream": Stream,
    "concurrent": Concurrent,
    "crash": Crash,
    "expect_error": ExpectError,
}
"""The whole vocabulary: JSON ``"op"`` name → dataclass. Nothing else is an operation."""
# --8<-- [end:ops]

_NAME_OF: Final = {cls: name for name, cls in OP_NAMES.items()}


# --- JSON codec ------------------------------------------------------------------------------

def _encode_value(name: str, value: Any) -> Any:
    if name == "checkpoints":
        return [[{"kind": r.kind, "record": dict(r.record)} for r in cp] for cp in value]
    if name == "records":
        return [dict(r) for r in value]
    if name == "options":
        return dict(value)
    if name == "members":
        return [to_json(m) for m in value]
    if isinstance(value, tuple):
        return list(value)
    return value


def to_json(op: Op) -> dict[str, Any]:
    """The JSON object of an operation: ``{"op": name, field: value, ...}``."""
    name = _NAME_OF.get(type(op))
    if name is None:
        raise invalid(f"{type(op).__name__} is not an operation of the case language")
    obj: dict[str, Any] = {"op": name}
    for f in fields(op):
        if isinstance(op, Write) and f.name == "options" and not op.options:
            continue  # a write without options of its own reads as before options existed
        if isinstance(op, CreateTable) and f.name == "index_type" and op.index_type is None:
            continue  # a table without an index of its own reads as before the index type existed
        obj[f.name] = _encode_value(f.name, getattr(op, f.name))
    return obj


def _as_str_tuple(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(f"{where} must be a list of strings")
    return tuple(value)


def _decode_checkpoints(value: Any, where: str) -> tuple[tuple[StreamRecord, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(cp, list) for cp in value):
        raise invalid(f"{where} must be a list of checkpoints, each a list of record operations")
    out = []
    for cp in value:
        recs = []
        for r in cp:
            if not isinstance(r, dict) or set(r) != {"kind", "record"}:
                raise invalid(f"{where}: a record operation is "
                              f"{{\"kind\": \"upsert\"|\"delete\", \"record\": {{...}}}}")
            recs.append(StreamRecord(r["kind"], r["record"]))
        out.append(tuple(recs))
    return tuple(out)


def _decode_members(value: Any, where: str) -> tuple[Any, ...]:
    """A ``concurrent``'s members: each a write, compact or clean operation object."""
    if not isinstance(value, list):
        raise invalid(f"{where} must be a list of operations")
    members = tuple(from_json(m) for m in value)
    for i, m in enumerate(members):
        if not isinstance(m, Write | Compact | Clean):
            raise invalid(f"{where}[{i}] is {to_json(m)['op']}: a concurrent member is a write, compact or clean")
    return members


def _as_int_tuple(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise invalid(f"{where} must be a list of integers")
    return tuple(value)


_DECODERS: Final[Mapping[str, Callable[[Any, str], Any]]] = {
    "members": _decode_members,
    "commit_order": _as_int_tuple,
    "outcomes": _as_str_tuple,
    "records": lambda v, w: tuple(v) if isinstance(v, list) else _raise(f"{w} must be a list of records"),
    "record_key_fields": _as_str_tuple,
    "partition_fields": _as_str_tuple,
    "partitions": _as_str_tuple,
    "options": lambda v, w: (tuple((str(k), str(x)) for k, x in v.items()) if isinstance(v, dict)
                             and all(isinstance(x, str) for x in v.values())
                             else _raise(f"{w} must be an object of string → string")),
    "checkpoints": _decode_checkpoints,
}


def _raise(message: str) -> Any:
    raise invalid(message)


def _check_json_type(value: Any, annotation: str, where: str) -> None:
    """Scalar members must have their declared JSON type (bools are not ints here)."""
    wants = {"int": (int,), "bool": (bool,), "str": (str,)}
    base = annotation.replace(" | None", "")
    if value is None:
        if "None" not in annotation:
            raise invalid(f"{where} may not be null")
        return
    if base in wants:
        ok = isinstance(value, wants[base]) and (base == "bool" or not isinstance(value, bool))
        if not ok:
            raise invalid(f"{where} must be {'an' if base == 'int' else 'a'} {base}, got {value!r}")


def from_json(obj: Any) -> Op:
    """The operation a JSON object stands for; InvalidOperation for anything outside the vocabulary."""
    if not isinstance(obj, dict):
        raise invalid(f"an operation is a JSON object, got {type(obj).__name__}")
    name = obj.get("op")
    cls = OP_NAMES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise invalid(f"unknown operation {name!r}", f"the operations are: {', '.join(OP_NAMES)}")
    known = {f.name: f for f in fields(cls)}
    extra = set(obj) - set(known) - {"op"}
    if extra:
        raise invalid(f"{name}: unknown member(s) {', '.join(sorted(extra))}",
                   f"{name} takes: {', '.join(known) or 'nothing'}")
    kwargs: dict[str, Any] = {}
    for key, f in known.items():
        if key not in obj:
            continue
        where = f"{name}.{key}"
        value = obj[key]
        if key in _DECODERS:
            kwargs[key] = _DECODERS[key](value, where)
        else:
            _check_json_type(value, str(f.type), where)
            kwargs[key] = value
    try:
        op: Op = cls(**kwargs)
    except TypeError as err:  # a required member is missing
        raise invalid(f"{name}: {err}", f"{name} takes: {', '.join(known)}") from err
    return op


# --8<-- [start:case]
@dataclass(frozen=True)
class Case:
    """A conformance case: identity, provenance (``handwritten``, ``hypothesis`` or a bug reference),
    the table configuration and the operations, in order."""

    id: str
    description: str = ""
    tags: tuple[str, ...] = ()
    provenance: str = "handwritten"
    config: CreateTable = field(default_factory=CreateTable)
    ops: tuple[Op, ...] = ()
# --8<-- [end:case]

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise invalid("case.id must be a non-empty string")
        if any(isinstance(op, CreateTable) for op in self.ops):
            raise invalid(f"case {self.id}: create_table belongs in config, not in ops")


_CASE_MEMBERS: Final = ("id", "description", "tags", "provenance", "config", "ops")


def case_to_json(case: Case) -> dict[str, Any]:
    """A case as JSON (``case.json``): config without its ``op`` member, ops as operations."""
    config = to_json(case.config)
    del config["op"]
    return {"id": case.id, "description": case.description, "tags": list(case.tags),
            "provenance": case.provenance, "config": config, "ops": [to_json(op) for op in case.ops]}


def case_from_json(obj: Any) -> Case:
    """Inverse of ``case_to_json``; InvalidOperation on anything malformed."""
    if not isinstance(obj, dict):
        raise invalid("a case is a JSON object")
    extra = set(obj) - set(_CASE_MEMBERS)
    if extra:
        raise invalid(f"case: unknown member(s) {', '.join(sorted(extra))}", f"a case has: {', '.join(_CASE_MEMBERS)}")
    config = obj.get("config", {})
    if not isinstance(config, dict) or "op" in config:
        raise invalid("case.config is a create_table object without an 'op' member")
    ops = obj.get("ops", [])
    if not isinstance(ops, list):
        raise invalid("case.ops must be a list of operations")
    for key in ("id", "description", "provenance"):
        if key in obj and not isinstance(obj[key], str):
            raise invalid(f"case.{key} must be a string")
    created = from_json({"op": "create_table", **config})
    assert isinstance(created, CreateTable)
    return Case(
        id=obj.get("id", ""),
        description=obj.get("description", ""),
        tags=_as_str_tuple(obj.get("tags", []), "case.tags"),
        provenance=obj.get("provenance", "handwritten"),
        config=created,
        ops=tuple(from_json(op) for op in ops),
    )

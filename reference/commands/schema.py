"""``hudi-spec schema TABLE``: the table's schema and its history.

The schema is the one a query reads with (``spec.schema.query_schema``): the writer schema the latest
completed commit records (Hudi's ``TableSchemaResolver.getTableAvroSchema``), or as of ``--as-of``; a table
whose commits record none has its ``hoodie.table.create.schema``. One row per column: ``position``,
``column``, ``type`` (Avro's, a logical type by its name) and ``nullable``; the five ``_hoodie_*`` meta
columns every file holds are named in the title. The history lists each completed commit that changed the
schema, oldest first: the columns it added and removed and the types it changed (the first: the columns
the table was created with). JSON: ``{"schema": the Avro schema, "columns": [...], "history": [...]}``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from reference.commands import _output

COLUMNS = ["position", "column", "type", "nullable"]
HISTORY_COLUMNS = ["instant_time", "action", "columns", "added", "removed", "changed"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _output.table_command(sub, "schema", run, help="the table's schema and how its commits changed it")
    p.add_argument("--as-of", help="the schema as of this time (any form --as-of of read takes)")
    p.add_argument("--no-history", dest="history", action="store_false", help="only the schema")


def avro_type(t: Any) -> tuple[str, bool]:
    """An Avro field type in words, and whether it is nullable: a union with null is its other branch,
    nullable; a logical type by its name; a record, array or map by its kind."""
    if isinstance(t, list):
        branches = [b for b in t if b != "null"]
        inner, _ = avro_type(branches[0]) if len(branches) == 1 else (" | ".join(avro_type(b)[0] for b in branches),
                                                                      False)
        return inner, "null" in t
    if isinstance(t, dict):
        if "logicalType" in t:
            extra = f"({t['precision']},{t.get('scale', 0)})" if t["logicalType"] == "decimal" else ""
            return f"{t['logicalType']}{extra}", False
        kind = t.get("type")
        if kind == "array":
            return f"array<{avro_type(t['items'])[0]}>", False
        if kind == "map":
            return f"map<{avro_type(t['values'])[0]}>", False
        if kind == "record":
            return f"record {t.get('name', '')}".strip(), False
        if kind in ("enum", "fixed"):
            return f"{kind} {t.get('name', '')}".strip(), False
        return avro_type(kind)
    return str(t), False


def columns_of(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema's columns (its top-level fields), each with its type in words and nullability."""
    out = []
    for n, f in enumerate(schema.get("fields", []), 1):
        typ, nullable = avro_type(f["type"])
        out.append({"position": n, "column": f["name"], "type": typ, "nullable": nullable})
    return out


def history(writes: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The commits that changed the schema: ``writes`` are (instant, action, schema) of every completed
    commit that records one, oldest first."""
    out: list[dict[str, Any]] = []
    before: dict[str, str] | None = None
    for instant, action, schema in writes:
        now = {c["column"]: c["type"] + ("" if c["nullable"] else " not null") for c in columns_of(schema)}
        if now == before:
            continue
        prior = before or {}
        out.append({"instant_time": instant, "action": action, "columns": len(now),
                    "added": [c for c in now if c not in prior],
                    "removed": [c for c in prior if c not in now],
                    "changed": [{"column": c, "from": prior[c], "to": now[c]} for c in now
                                if c in prior and prior[c] != now[c]]})
        before = now
    return out


def run(args: argparse.Namespace) -> int:
    from reference.commands._table import commit_metadata, open_table
    from spec.errors import InvalidTable
    from spec.schema.table_schema import META_FIELDS, without_meta_fields
    from spec.timeline.instant import format_query_instant

    as_of = format_query_instant(args.as_of) if args.as_of else None
    storage, cfg, timeline = open_table(args.table)
    writes: list[tuple[str, str, dict[str, Any]]] = []
    for inst in timeline.commits_timeline().completed().instants:
        try:
            md = commit_metadata(storage, timeline, inst)
        except (ValueError, KeyError):
            continue
        if md.schema:
            point = inst.completed or inst.requested
            if as_of is None or point <= as_of:
                writes.append((inst.requested, timeline.origin_action(inst.requested) or inst.action,
                               without_meta_fields(json.loads(md.schema))))
    if writes:
        schema, source = writes[-1][2], f"written by {writes[-1][1]} {writes[-1][0]}"
    elif cfg.props.get("hoodie.table.create.schema"):
        schema, source = without_meta_fields(json.loads(cfg.props["hoodie.table.create.schema"])), \
            "hoodie.table.create.schema (no commit records one)"
    else:
        raise InvalidTable(f"{args.table} records no schema yet" + (f" as of {as_of}" if as_of else ""),
                           hint="a table's schema is recorded by its first commit")
    columns = columns_of(schema)
    changes = history(writes) if args.history else []
    if args.output == "json":
        _output.emit_json({"schema": schema, "source": source, "meta_columns": list(META_FIELDS),
                           "columns": columns, "history": changes})
        return 0
    _output.emit(args.output, None, COLUMNS, [[c[k] for k in COLUMNS] for c in columns],
                 title=f"Schema of {cfg.name}, {len(columns)} columns ({source}; every file also holds the "
                       f"meta columns {', '.join(META_FIELDS)})")
    if changes and args.output != "csv":
        print()
        rows = [[h["instant_time"], h["action"], h["columns"], ", ".join(h["added"]), ", ".join(h["removed"]),
                 ", ".join(f"{c['column']}: {c['from']} -> {c['to']}" for c in h["changed"])] for h in changes]
        _output.emit_table("Schema history: the commits that changed it, oldest first", HISTORY_COLUMNS, rows)
    return 0

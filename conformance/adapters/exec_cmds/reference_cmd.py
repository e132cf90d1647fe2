"""The reference implementation as a program speaking the process protocol (a writer).

Written against docs/conformance-protocol.md alone: it reads requests from stdin, answers on stdout,
and applies each operation with the reference's conformance entry points
(``ReferenceLocalAdapter`` / ``ReferenceSparkAdapter``, which call ``reference.client`` and the
reference's services). It answers ``reads: directory``: the suite reads the table it writes.

    python -m conformance.adapters.exec_cmds.reference_cmd [--engine local|spark]

Anything the reference or Spark prints goes to stderr: stdout is the protocol's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from spec.errors import HudiSpecError


def serve(requests: Iterator[str], out: IO[str], handle: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Answer each request line with one response line; a refusal is ``ok: false`` with its kind."""
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = {"ok": True, **handle(request)}
        except HudiSpecError as err:
            answer = {"ok": False, "error": {"kind": err.kind, "message": str(err)}}
        out.write(json.dumps({"id": request["id"], **answer}) + "\n")
        out.flush()


def read_records(described: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of a records file: JSON Lines, or Parquet (nulls of absent fields dropped)."""
    if described["format"] == "parquet":
        import pyarrow.parquet as pq

        return [{k: v for k, v in r.items() if v is not None} for r in pq.read_table(described["path"]).to_pylist()]
    return [json.loads(ln) for ln in Path(described["path"]).read_text().splitlines() if ln.strip()]


def decode_op(obj: dict[str, Any]) -> Any:
    """The case language's operation for an ``apply`` request's op (records read back from files)."""
    from conformance.ops import from_json

    obj = dict(obj)
    if "records_file" in obj:
        obj["records"] = read_records(obj.pop("records_file"))
    if "checkpoint_files" in obj:
        obj["checkpoints"] = [[{"kind": r.pop("_conformance_kind"), "record": r} for r in read_records(f)]
                              for f in obj.pop("checkpoint_files")]
    return from_json(obj)


class ReferenceProgram:
    """The program's state: the reference adapter of the current table."""

    def __init__(self, engine: str) -> None:
        from conformance.adapters.reference_spark import ReferenceLocalAdapter, ReferenceSparkAdapter

        self.cls = ReferenceLocalAdapter if engine == "local" else ReferenceSparkAdapter
        self.table: Any = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        kind = request["type"]
        if kind == "hello":
            return self.hello(request)
        if kind == "create":
            return self.create(request)
        if kind == "apply":
            self.table.apply(decode_op(request["op"]))
            return {}
        from spec.errors import InvalidOperation

        raise InvalidOperation(f"unknown request {kind!r}", hint="this program answers hello, create and apply")

    def hello(self, request: dict[str, Any]) -> dict[str, Any]:
        if 1 not in request.get("protocol_versions", []):
            from spec.errors import InvalidOperation

            raise InvalidOperation("this program speaks protocol 1 only")
        return {"protocol": 1, "name": f"{self.cls.name}_exec", "role": "writer", "reads": "directory",
                "capabilities": sorted(self.cls.capabilities), "record_formats": ["json", "parquet"],
                "known_failures": dict(self.cls.known_failures)}

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        from conformance.ops import CreateTable, from_json

        if self.table is not None:
            self.table.close()
        config = from_json({"op": "create_table", **request["config"]})
        assert isinstance(config, CreateTable)
        path = Path(request["table_path"])
        if path.name != config.table_name:
            from spec.errors import InvalidOperation

            raise InvalidOperation("this program writes the table at <folder>/<table_name>")
        self.table = self.cls(spark=getattr(self.table, "spark", None))
        self.table.create(config, path.parent)
        return {}


def protocol_stdout() -> IO[str]:
    """The real stdout for the protocol; file descriptor 1 then points at stderr, so nothing else
    (a JVM, a library's print) can write on the protocol's stream."""
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=("local", "spark"), default="spark")
    args = parser.parse_args(argv)
    out = protocol_stdout()
    program = ReferenceProgram(args.engine)
    serve(iter(sys.stdin.readline, ""), out, program.handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

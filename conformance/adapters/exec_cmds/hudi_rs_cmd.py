"""hudi-rs (the ``hudi`` Python package) as a program speaking the process protocol (a reader).

Written against docs/conformance-protocol.md alone: it answers ``hello`` as a reader and each
``read`` request with the Parquet file of the record batches hudi-rs returns for the query; the
suite has another implementation write the tables. A query hudi-rs fails is refused as
``invalid_table`` with hudi-rs's message.

    python -m conformance.adapters.exec_cmds.hudi_rs_cmd
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from conformance.adapters.exec_cmds.reference_cmd import protocol_stdout, serve
from spec.errors import InvalidOperation, InvalidTable

QUERIES = ("snapshot", "read_optimized", "time_travel", "incremental")


def read_query(table_path: str, query: dict[str, Any]) -> Any:
    """hudi-rs's answer to one query, as a pyarrow table (None when it returns no batches)."""
    import hudi
    import pyarrow as pa
    from hudi import HudiQueryType, HudiReadOptions

    table = hudi.HudiTableBuilder.from_base_uri(table_path).build()
    opts = HudiReadOptions()
    if query["kind"] == "read_optimized":
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    elif query["kind"] == "time_travel" and query.get("as_of"):
        opts = opts.with_as_of_timestamp(query["as_of"])
    elif query["kind"] == "incremental":
        opts = opts.with_query_type(HudiQueryType.Incremental)
        if query.get("begin"):
            opts = opts.with_start_timestamp(query["begin"])
        if query.get("end"):
            opts = opts.with_end_timestamp(query["end"])
    batches = table.read(opts)
    return pa.Table.from_batches(batches) if batches else None


def handle(request: dict[str, Any]) -> dict[str, Any]:
    kind = request["type"]
    if kind == "hello":
        from conformance.adapters.hudi_rs import KNOWN_FAILURES

        return {"protocol": 1, "name": "hudi_rs_exec", "role": "reader", "queries": list(QUERIES),
                "known_failures": KNOWN_FAILURES}
    if kind != "read":
        raise InvalidOperation(f"{kind!r}: hudi-rs reads tables, it does not write them")
    if not Path(request["table_path"], ".hoodie", "hoodie.properties").is_file():
        return {"rows_file": None}  # nothing written yet: no table, no rows
    try:
        table = read_query(request["table_path"], request["query"])
    except Exception as err:  # hudi-rs raises its own exception types
        raise InvalidTable(f"hudi-rs failed the {request['query']['kind']} query: {err}") from err
    if table is None:
        return {"rows_file": None}
    import pyarrow.parquet as pq

    pq.write_table(table, request["rows_path"])
    return {"rows_file": request["rows_path"]}


def main() -> int:
    out = protocol_stdout()
    serve(iter(sys.stdin.readline, ""), out, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

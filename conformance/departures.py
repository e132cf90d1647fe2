"""A reader's departures as a developer of that reader reproduces them: checked against an export
(``conformance.export``) with nothing but the export's own files, per exported table the queries the
reader answers with other rows than the expected ones. ``hudi-conformance report --departures`` puts
hudi-rs's on the matrix page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _multiset(rows: Any) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def reader_departures(folder: str | Path, read: Callable[[str, dict[str, Any]], Any]) -> list[dict[str, Any]]:
    """Check a reader against an export (``conformance.export``) with nothing but its files: per
    exported table the queries whose rows differ from the expected Parquet (as multisets). ``read``
    answers one query of an index on a table directory (a pyarrow table, or None for no rows)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    out = []
    for entry in json.loads((folder / "index.json").read_text())["tables"]:
        index_path = folder / entry["index"]
        index = json.loads(index_path.read_text())
        wrong = []
        for q in index["queries"]:
            if "expected" not in q:
                continue
            got = read(str(index_path.parent / index["table"]), q)
            rows = got.to_pylist() if got is not None and got.num_rows else []
            if _multiset(rows) != _multiset(pq.read_table(index_path.parent / q["expected"]).to_pylist()):
                wrong.append(q["name"])
        if wrong:
            out.append({"table": str(index_path.parent.relative_to(folder)), "queries": wrong,
                        "reason": (index.get("departure") or {}).get("reason", "")})
    return out


def hudi_rs_departures(fixtures: str | Path) -> dict[str, Any]:
    """hudi-rs's departures as a hudi-rs developer reproduces them from the export alone (``hudi-conformance
    export OUT --departures``): the exported tables and the queries hudi-rs reads differently."""
    import tempfile

    from conformance.adapters.exec_cmds.hudi_rs_cmd import read_query
    from conformance.adapters.hudi_rs import KNOWN_FAILURES
    from conformance.export import export

    with tempfile.TemporaryDirectory() as tmp:
        top = export(Path(tmp) / "export", fixtures, departures=True)
        found = reader_departures(Path(tmp) / "export", read_query)
    for t in found:  # a golden table is its case's: the case's known failure is the reason
        t["reason"] = t["reason"] or KNOWN_FAILURES.get(t["table"].rpartition("/")[2], "")
    return {"reader": "hudi_rs", "export": "hudi-conformance export OUT --departures",
            "corpus_version": top["corpus_version"], "tables": found}

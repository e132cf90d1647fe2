"""``MERGE INTO`` (``reference.commands._merge``) without Spark: the clause language, what is refused, and what the
local engine writes — the same rows and file groups as Apache Hudi 1.2.0's statement
(``tests/test_update_delete_hudi.py`` compares them with Hudi's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from reference.api import HudiTable
from reference.cli import main as hudi_spec
from reference.commands._merge_clauses import (
    Column,
    Delete,
    Insert,
    Literal,
    Update,
    parse_assignments,
    parse_clause,
    parse_on,
)
from spec.errors import InvalidOperation, UnsupportedOption
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import read_instant_content

ROWS = [(1, "a", 1, "one"), (2, "a", 1, "two"), (3, "b", 1, "three"), (4, "b", 1, "four"), (5, "c", 1, "five")]
SOURCE = [(1, "a", 2, "ONE"), (3, "b", 2, "x"), (6, "c", 2, "six"), (7, "a", 2, "x")]


def _arrow(rows: list[tuple[int, str, int, str]]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int32()), "p": [r[1] for r in rows],
                     "ts": pa.array([r[2] for r in rows], pa.int64()), "v": [r[3] for r in rows]})


def _table(tmp_path: Path, table_type: str = "COPY_ON_WRITE") -> HudiTable:
    t = HudiTable(str(tmp_path / "t"), engine="local")
    t.write(_arrow(ROWS), "insert", {
        "hoodie.table.name": "mg", "hoodie.datasource.write.table.type": table_type, "hoodie.metadata.enable": "false",
        "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts"})
    return t


def _rows(t: HudiTable) -> dict[int, tuple[str, int, str | None]]:
    return {r["id"]: (r["p"], r["ts"], r["v"]) for r in t.read().to_pylist()}


def _stats(t: HudiTable) -> dict[str, tuple[int, int, int, int]]:
    """Per partition (one file group each): writes, updates, deletes, inserts of the latest commit."""
    storage = Storage(t.path)
    timeline = Timeline.load(storage)
    latest = timeline.commits_timeline().latest_completed()
    assert latest is not None
    md = parse_commit_metadata(read_instant_content(storage, latest, timeline.layout))
    return {s.partition_path: (s.num_writes, s.num_updates, s.num_deletes, s.num_inserts) for s in md.all_write_stats()}


def test_clauses_read_as_sql_after_when_matched_and_when_not_matched() -> None:
    assert parse_clause("UPDATE SET *", True) == Update("*")
    assert parse_clause("and s.v = 'x' then delete", True) == Delete("s.v = 'x'")
    assert parse_clause("AND s.v = 'a then b' THEN UPDATE SET v = s.v", True) == Update("v = s.v", "s.v = 'a then b'")
    assert parse_clause("INSERT *", False) == Insert("*")
    assert parse_clause("AND s.ts > 0 THEN INSERT (id, v) VALUES (s.id, 'a, b')", False) == \
        Insert("id = s.id, v = 'a, b'", "s.ts > 0")
    for text, matched in [("INSERT *", True), ("DELETE", False), ("UPDATE *", True), ("AND s.v = 1 DELETE", True),
                          ("INSERT (id, v) VALUES (s.id)", False), ("DELETE now", True)]:
        with pytest.raises(InvalidOperation):
            parse_clause(text, matched)
    assert parse_assignments("*", "x") is None
    assert parse_assignments("v = s.v, ts = 3, n = null, w = t.w", "x") == (
        ("v", Column("s", "v")), ("ts", Literal(3)), ("n", Literal(None)), ("w", Column("t", "w")))
    for bad in ["v = v", "v = x.v", "v = s.v, v = 1", "s.v = 1", "v ="]:
        with pytest.raises(InvalidOperation):
            parse_assignments(bad, "x")
    assert parse_on("t.id = s.id AND s.p = t.p") == (("id", "id"), ("p", "p"))
    for bad in ["t.id = s.id + 1", "t.id = t.id", "id = s.id", "t.id > s.id"]:
        with pytest.raises(InvalidOperation):
            parse_on(bad)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_what_hudi_refuses_or_runs_otherwise_is_refused_and_the_table_untouched(tmp_path: Path,
                                                                                 table_type: str) -> None:
    t = _table(tmp_path, table_type)
    before, instants = _rows(t), len(t.timeline.instants)
    refused: list[tuple[str | None, list[Any], list[Any], str]] = [
        ("t.v = s.v", ["UPDATE SET *"], [], "matches records by their key"),
        ("t.id = s.id AND t.ts = s.ts", ["UPDATE SET *"], [], "no record key or partition field"),
        (None, ["AND s.v = 'x' THEN DELETE", Delete()], [], "Only one deleting action"),
        (None, ["UPDATE SET id = s.id, p = s.p, v = s.v"], [], "ordering field `ts`"),
        (None, [], ["INSERT (p, ts, v) VALUES (s.p, s.ts, s.v)"], "record key field `id`"),
        (None, ["UPDATE SET id = s.id, p = 'c', ts = s.ts, v = s.v"], [], "partition field 'p'"),
        (None, ["UPDATE SET id = 11, p = s.p, ts = s.ts, v = s.v"], [], "record key field 'id'"),
        (None, [], ["INSERT (id, p, ts, v) VALUES (s.id, s.p, s.ts, t.v)"], "only reference source"),
        (None, [], ["AND t.v = 'x' THEN INSERT *"], "a record no row matched has none"),
        (None, ["UPDATE SET id = s.id, p = s.p, ts = s.ts, nope = 1"], [], "no column of the table"),
        (None, [], [], "needs a WHEN MATCHED or WHEN NOT MATCHED clause"),
    ]
    if table_type == "MERGE_ON_READ":
        refused += [(None, ["UPDATE SET ts = s.ts, v = s.v"], [], "partial-update log block"),
                    (None, ["UPDATE SET id = s.id, p = s.p, ts = s.ts, v = t.v"], [], "cannot be the right-value"),
                    (None, ["AND t.v = 'one' THEN UPDATE SET *"], [], "routed to a log file")]
    for on, matched, not_matched, text in refused:
        with pytest.raises(InvalidOperation, match=text):
            t.merge(_arrow(SOURCE), on=on, when_matched=matched, when_not_matched=not_matched)
    with pytest.raises(UnsupportedOption, match="global index GLOBAL_SIMPLE"):
        t.merge(_arrow(SOURCE), {"hoodie.index.type": "GLOBAL_SIMPLE"}, when_matched=["UPDATE SET *"])
    assert _rows(t) == before and len(t.timeline.instants) == instants


def test_a_record_no_clause_takes_still_writes_the_file_group_it_is_routed_to(tmp_path: Path) -> None:
    """Apache Hudi 1.2.0 (measured): ``WHEN NOT MATCHED THEN INSERT *`` alone rewrites, on copy-on-write, the file
    group of each matched record with its stored row as it was (no update counted, its commit time kept); on
    merge-on-read that group's append handle writes nothing."""
    cow = _table(tmp_path / "cow")
    first = {r["id"]: r["_hoodie_commit_time"] for r in cow.read().to_pylist()}
    cow.merge(_arrow(SOURCE), when_not_matched=["INSERT *"])
    assert _stats(cow) == {"a": (3, 0, 0, 1), "b": (2, 0, 0, 0), "c": (2, 0, 0, 1)}
    after = {r["id"]: r["_hoodie_commit_time"] for r in cow.read().to_pylist()}
    assert after[3] == first[3] and after[1] == first[1] and after[6] != first[1]
    assert _rows(cow)[3] == ("b", 1, "three") and _rows(cow)[6] == ("c", 2, "six")
    mor = _table(tmp_path / "mor", "MERGE_ON_READ")
    mor.merge(_arrow(SOURCE), when_not_matched=["INSERT *"])
    assert _stats(mor) == {"a": (3, 0, 0, 1), "c": (2, 0, 0, 1)}
    mor.merge(_arrow(SOURCE), when_matched=["DELETE"])  # every source key is the table's now: delete blocks alone
    assert _stats(mor) == {"a": (0, 0, 2, 0), "b": (0, 0, 1, 0), "c": (0, 0, 1, 0)}
    assert sorted(_rows(mor)) == [2, 4, 5]


def test_updates_come_before_the_delete_and_duplicates_go_by_ordering_value(tmp_path: Path) -> None:
    """Hudi's ``ExpressionPayload`` tries every UPDATE clause before the DELETE, wherever it stands; a key the
    source holds twice is the one of the greater ordering value (the upsert's deduplication)."""
    t = _table(tmp_path)
    t.merge(_arrow([*SOURCE, (1, "a", 3, "dup")]),
            when_matched=["AND s.v = 'x' THEN DELETE", "AND s.v != 'dup' THEN UPDATE SET *"],
            when_not_matched=[Insert("id = s.id, p = s.p, ts = s.ts, v = 'new'", condition="s.v = 'six'")])
    rows = _rows(t)
    assert rows[3] == ("b", 2, "x")  # the update took it before the delete could
    assert rows[1] == ("a", 1, "one")  # (1, dup) won the deduplication, and no clause takes it: ONE is not written
    assert rows[6] == ("c", 2, "new") and 7 not in rows
    assert _stats(t) == {"a": (2, 0, 0, 0), "b": (2, 1, 0, 0), "c": (2, 0, 0, 1)}


def test_update_set_keeps_the_other_columns_and_on_aliases_the_source_key(tmp_path: Path) -> None:
    t = _table(tmp_path)
    source = _arrow(SOURCE).rename_columns(["key", "p", "ts", "v"])
    t.merge(source, on="t.id = s.key AND t.p = s.p",
            when_matched=["AND t.v = 'one' THEN UPDATE SET ts = s.ts, v = t.p"], when_not_matched=[])
    assert _rows(t)[1] == ("a", 2, "a") and _rows(t)[3] == ("b", 1, "three") and len(_rows(t)) == 5
    assert t.merge(source.slice(0, 0), on="t.id = s.key", when_matched=["UPDATE SET *"]) is None


def test_the_merge_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = _table(tmp_path)
    import pyarrow.parquet as pq

    pq.write_table(_arrow(SOURCE), tmp_path / "src.parquet")
    assert hudi_spec(["merge", t.path, "--source", str(tmp_path / "src.parquet"), "--when-matched",
                      "AND s.v = 'x' THEN DELETE", "--when-not-matched", "AND s.v != 'x' THEN INSERT *",
                      "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["operation"] == "upsert" and out["deletes"] == 1 and out["files"] == 3 and out["inserts"] == 1
    assert sorted(_rows(t)) == [1, 2, 4, 5, 6]
    assert hudi_spec(["merge", t.path, "--source", str(tmp_path / "src.parquet"), "--when-matched",
                      "DELETE", "--when-matched", "DELETE"]) != 0
    assert "Only one deleting action" in capsys.readouterr().err
    assert hudi_spec(["merge", t.path, "--source", str(tmp_path / "src.parquet")]) == 0  # UPDATE SET *, INSERT *
    assert _rows(t)[3] == ("b", 2, "x") and _rows(t)[7] == ("a", 2, "x")


def test_a_table_without_ordering_field(tmp_path: Path) -> None:
    """No ordering field to assign: ``UPDATE SET v = s.v`` keeps the other columns and the source wins (commit-time
    ordering); only ``WHEN NOT MATCHED`` clauses are refused — Apache Hudi 1.2.0 runs them as an ``insert`` and writes a
    second row of every key the source shares with the table (measured)."""
    t = HudiTable(str(tmp_path / "t"), engine="local")
    t.write(_arrow(ROWS), "insert", {"hoodie.table.name": "mg", "hoodie.datasource.write.partitionpath.field": "p",
                                     "hoodie.datasource.write.recordkey.field": "id",
                                     "hoodie.metadata.enable": "false"})
    assert t.config.ordering_field is None
    with pytest.raises(InvalidOperation, match="a second time"):
        t.merge(_arrow(SOURCE), when_not_matched=["INSERT *"])
    t.merge(_arrow([(1, "a", 0, "ONE"), (3, "b", 0, "x")]), when_matched=["UPDATE SET v = s.v"],
            when_not_matched=["INSERT *"])
    assert _rows(t)[1] == ("a", 1, "ONE") and _rows(t)[3] == ("b", 1, "x")
    assert _stats(t) == {"a": (2, 1, 0, 0), "b": (2, 1, 0, 0)}


def test_a_partial_update_block_of_every_column_reads_as_its_rows(tmp_path: Path) -> None:
    """Apache Hudi 1.2.0's ``MERGE INTO`` on merge-on-read writes an ``UPDATE SET`` of some columns as a data block
    flagged ``IS_PARTIAL`` whose records hold those columns alone (measured; ``tests/test_partial_update_blocks.py``):
    a record that holds every column takes none from the stored row, and reads as it is."""
    from dataclasses import replace

    from spec.file_group.log_file.log_format import HeaderKey, encode_blocks, read_blocks

    t = _table(tmp_path, "MERGE_ON_READ")
    t.merge(_arrow([(3, "b", 2, "x")]), when_matched=["UPDATE SET *"])
    before = _rows(t)
    (log,) = [p for p in (tmp_path / "t" / "b").iterdir() if ".log." in p.name and not p.name.endswith(".crc")]
    blocks = [r.block for r in read_blocks(log.read_bytes())]
    log.write_bytes(encode_blocks([replace(b, header=(*b.header, (int(HeaderKey.IS_PARTIAL), "true")))
                                   for b in blocks]))
    assert _rows(t) == before and before[3] == ("b", 2, "x")

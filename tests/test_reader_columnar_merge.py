"""The reader's column-wise merge of a file slice (``SliceMerge._merge_columnar``) reads the same rows,
in the same order and of the same types, as the rule applied record by record (``_merge_by_rule``).

Generated slices: a base file or none (a log-only file group), one to three log files holding Avro,
parquet and delete blocks, keys logged in several blocks, updates that lose on their ordering value,
deletes by delete block and by ``_hoodie_is_deleted``, a column that the log blocks add to the base
file's, and ordering fields of several types; under each merge rule. The fixture tables give the
table each slice is read in; the real tables and fixture tables are read whole both ways too.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec.config.table_config import DEFAULT_PAYLOAD, OVERWRITE_WITH_LATEST_PAYLOAD
from spec.errors import TimeTravelRefused
from spec.file_group.file_system_view import DataFile, FileSlice
from spec.file_group.log_file.delete_block import delete_block, delete_record
from spec.file_group.log_file.log_blocks import avro_data_block, parquet_data_block
from spec.file_group.log_file.log_format import LogBlock, encode_block
from spec.read.merge import MergeMode, MergeRule
from spec.read.reader import TableReader
from spec.read.slice_merge import SliceMerge
from tests.conftest import RealTable

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tables"
TABLES = {6: "insert-upsert-delete-logs-mor-v6", 8: "compaction-logs-mor-v8"}
INSTANTS = {6: ["20240101000000000", "20240101000001000", "20240101000002000", "20240101000003000"],
            8: ["20240101000000000", "20240101000002000", "20240101000004000", "20240101000008000"]}
BASE_INSTANT = "20240101000000000"
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
KEYS = [f"k{i}" for i in range(12)]

# ordering field type: (Arrow type, Avro type, values: ties, nulls, and for strings and doubles the values
# Java orders otherwise than Arrow: characters above U+FFFF against U+E000..U+FFFF, NaN, -0.0)
ORDERINGS: dict[str, tuple[pa.DataType, str, st.SearchStrategy[Any]]] = {
    "long": (pa.int64(), "long", st.one_of(st.none(), st.integers(-3, 3))),
    "int": (pa.int32(), "int", st.one_of(st.none(), st.integers(-2, 2))),
    "string": (pa.string(), "string", st.one_of(st.none(), st.sampled_from(["", "a", "b", "B"]))),
    "string_wide": (pa.string(), "string", st.one_of(st.none(), st.sampled_from(["a", "\ue000", "\U0001f600"]))),
    "double": (pa.float64(), "double", st.one_of(st.none(), st.sampled_from([-1.0, -0.0, 0.0, 2.5, float("nan")]))),
}
RULES = [
    MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", False, 6, DEFAULT_PAYLOAD),
    MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", True, 6, OVERWRITE_WITH_LATEST_PAYLOAD),
    MergeRule(MergeMode.COMMIT_TIME_ORDERING, None, True, 6, OVERWRITE_WITH_LATEST_PAYLOAD),
    MergeRule(MergeMode.EVENT_TIME_ORDERING, "ts", False, 8),
    MergeRule(MergeMode.COMMIT_TIME_ORDERING, "ts", True, 8),
]
DELETE_BRANCHES = {"long": 3, "int": 2, "string": 7, "string_wide": 7, "double": 5}  # the wrappers' branches
_names = itertools.count()


def _arrow_schema(ordering: str, extra: bool) -> pa.Schema:
    fields = [pa.field(n, pa.string()) for n in META]
    fields += [pa.field("id", pa.string()), pa.field("ts", ORDERINGS[ordering][0]), pa.field("v", pa.string()),
               pa.field("_hoodie_is_deleted", pa.bool_())]
    return pa.schema(fields + ([pa.field("extra", pa.int64())] if extra else []))


def _avro_schema(ordering: str, extra: bool) -> str:
    def nullable(name: str, t: str) -> dict[str, Any]:
        return {"name": name, "type": ["null", t], "default": None}

    fields = [nullable(n, "string") for n in META]
    fields += [nullable("id", "string"), nullable("ts", ORDERINGS[ordering][1]), nullable("v", "string"),
               nullable("_hoodie_is_deleted", "boolean")]
    if extra:
        fields.append(nullable("extra", "long"))
    return json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": fields})


@st.composite
def _record(draw: st.DrawFn, ordering: str, instant: str, seq: int, extra: bool, key: str | None) -> dict[str, Any]:
    key = key or draw(st.sampled_from(KEYS))
    row = {"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_{seq}",
           # now and then no key meta value: the key is rebuilt from the key field
           "_hoodie_record_key": draw(st.sampled_from([key, key, key, None])), "_hoodie_partition_path": "p",
           "_hoodie_file_name": "f1-0", "id": key, "ts": draw(ORDERINGS[ordering][2]),
           "v": draw(st.text(max_size=3)),
           "_hoodie_is_deleted": draw(st.sampled_from([None, False, False, False, True]))}
    if extra:
        row["extra"] = draw(st.one_of(st.none(), st.integers(-5, 5)))
    return row


@st.composite
def slices(draw: st.DrawFn) -> dict[str, Any]:
    """A generated file slice: base rows (or None), log blocks grouped into log files, and the table's rule."""
    version = draw(st.sampled_from([6, 8]))
    # mostly event-time ordering where the base row can win: the rule whose comparisons matter most
    rule = draw(st.sampled_from([r for r in RULES if r.table_version == version and not r.log_wins_over_base] * 2
                                + [r for r in RULES if r.table_version == version]))
    ordering = draw(st.sampled_from(sorted(ORDERINGS)))
    extra = draw(st.booleans())  # the log blocks carry a column the base file does not
    base = None
    if draw(st.integers(0, 4)):  # mostly a base file; else a log-only file group
        keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=len(KEYS)))
        base = [{"_hoodie_commit_time": BASE_INSTANT, "_hoodie_commit_seqno": f"{BASE_INSTANT}_0_{i}",
                 "_hoodie_record_key": k, "_hoodie_partition_path": "p", "_hoodie_file_name": "f1-0.parquet",
                 "id": k, "ts": draw(ORDERINGS[ordering][2]), "v": f"base-{k}",
                 "_hoodie_is_deleted": draw(st.sampled_from([None, False, False, True]))}
                for i, k in enumerate(keys)]
    schema_json = _avro_schema(ordering, extra)
    blocks: list[LogBlock] = []
    # half of the slices log each key once, in data blocks only; the others log keys in several blocks
    # and have delete blocks
    once = iter(draw(st.permutations(KEYS))) if draw(st.booleans()) else None
    for instant in INSTANTS[version][: draw(st.integers(1, 4))]:
        kind = draw(st.sampled_from(["avro", "avro", "parquet"] + ([] if once else ["delete"])))
        if kind == "delete":
            deletes = []
            for _ in range(draw(st.integers(1, 3))):
                key = draw(st.sampled_from(KEYS))
                value = draw(ORDERINGS[ordering][2])
                # Spark SQL's DELETE writes IntWrapper(0), Hudi 0.x's natural order; LongWrapper(0) is a value
                value, branch = draw(st.sampled_from([(value, DELETE_BRANCHES[ordering]), (None, 0), (0, 2), (0, 3)]))
                deletes.append(delete_record(key, "p", value, branch if value is not None else 0))
            blocks.append(delete_block(instant, schema_json, deletes))
            continue
        records = [draw(_record(ordering, instant, i, extra, next(once, None) if once else None))
                   for i in range(draw(st.integers(0, 3 if once else 6)))]
        if kind == "avro":
            blocks.append(avro_data_block(instant, schema_json, records))
        else:
            table = pa.Table.from_pylist(records, schema=_arrow_schema(ordering, extra))
            blocks.append(parquet_data_block(instant, schema_json, table))
    files = draw(st.integers(1, 3))
    return {"version": version, "rule": rule, "ordering": ordering, "base": base, "blocks": blocks,
            "files": files, "table_columns": draw(st.sampled_from(["none", "with extra", "without extra"]))}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Copies of a v6 and a v8 fixture table, into which the generated slices' files are written."""
    root = tmp_path_factory.mktemp("columnar")
    out = {}
    for version, name in TABLES.items():
        out[version] = root / name
        shutil.copytree(FIXTURES / name / "table", out[version])
    return out


def _write_slice(root: Path, case: dict[str, Any]) -> FileSlice:
    fid = f"g{next(_names)}"
    folder = root / "generated"
    folder.mkdir(exist_ok=True)
    base_file = None
    if case["base"] is not None:
        name = f"{fid}-0_0-1-1_{BASE_INSTANT}.parquet"
        pq.write_table(pa.Table.from_pylist(case["base"], schema=_arrow_schema(case["ordering"], False)),
                       folder / name)
        base_file = DataFile("generated", name)
    logs = []
    blocks: list[LogBlock] = case["blocks"]
    per_file = -(-len(blocks) // case["files"])  # several log files, each with one or more blocks
    for n in range(case["files"]):
        name = f".{fid}-0_{BASE_INSTANT}.log.{n + 1}_0-1-1"
        (folder / name).write_bytes(b"".join(encode_block(b) for b in blocks[n * per_file:(n + 1) * per_file]))
        logs.append(DataFile("generated", name))
    return FileSlice("generated", f"{fid}-0", BASE_INSTANT, base_file, tuple(logs))


def _same(a: pa.Table | None, b: pa.Table | None) -> None:
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert a.schema == b.schema
        assert repr(a.to_pylist()) == repr(b.to_pylist())  # repr: NaN equals NaN, -0.0 differs from 0.0


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=slices())
def test_columnar_merge_reads_the_rules_rows(tables: dict[int, Path], case: dict[str, Any],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    reader = TableReader(str(tables[case["version"]]))
    reader.rule = case["rule"]
    if case["table_columns"] != "none":  # the table's schema, as its latest commit states it
        columns = {*META, "id", "ts", "v", "_hoodie_is_deleted"} | ({"extra"} if case["table_columns"] == "with extra"
                                                                    else set())
        reader._table_columns, reader._table_columns_known = frozenset(columns), True
    sl = _write_slice(tables[case["version"]], case)
    with monkeypatch.context() as m:  # the generated slices never need the record-by-record path
        m.setattr(SliceMerge, "_merge_by_rule", _not_called)
        columnar = reader.read_slice(sl)
    reader.columnar_merge = False
    _same(columnar, reader.read_slice(sl))


def _not_called(*args: Any) -> None:
    raise AssertionError("the columnar merge fell back to the record-by-record path")


def test_a_column_the_base_file_cannot_give_back_takes_the_rules_path(tables: dict[int, Path],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A base column of nanosecond timestamps (``to_pylist`` would not give its values back exactly) is
    merged record by record."""
    root = tables[6]
    reader = TableReader(str(root))
    folder = root / "generated"
    folder.mkdir(exist_ok=True)
    base = pa.table({"_hoodie_record_key": ["a", "b"], "ts": pa.array([1, 2], pa.int64()),
                     "at": pa.array([1, 2], pa.timestamp("ns"))})
    pq.write_table(base, folder / "ns-0_0-1-1_20240101000000000.parquet")
    schema = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "_hoodie_record_key", "type": ["null", "string"]}, {"name": "ts", "type": ["null", "long"]}]})
    block = avro_data_block(INSTANTS[6][1], schema, [{"_hoodie_record_key": "b", "ts": 5}])
    (folder / ".ns-0_20240101000000000.log.1_0-1-1").write_bytes(encode_block(block))
    sl = FileSlice("generated", "ns-0", BASE_INSTANT, DataFile("generated", "ns-0_0-1-1_20240101000000000.parquet"),
                   (DataFile("generated", ".ns-0_20240101000000000.log.1_0-1-1"),))
    calls = []
    original = SliceMerge._merge_by_rule

    def spy(self: SliceMerge, *args: Any) -> Any:
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(SliceMerge, "_merge_by_rule", spy)
    out = reader.read_slice(sl)
    assert calls and out is not None
    assert out.to_pylist() == [{"_hoodie_record_key": "a", "ts": 1, "at": base.column("at")[0].as_py()},
                               {"_hoodie_record_key": "b", "ts": 5, "at": None}]


def _read_both_ways(path: str) -> None:
    columnar, by_rule = TableReader(path), TableReader(path)
    by_rule.columnar_merge = False
    as_of = [None] + [i.requested for i in columnar.timeline.commits_timeline().completed().instants]
    for t in as_of:
        try:
            a = [p.table for p in columnar.iter_snapshot(t)]
        except TimeTravelRefused:  # before a clean's earliest retained commit (spec.read.time_travel): both refuse
            with pytest.raises(TimeTravelRefused):
                list(by_rule.iter_snapshot(t))
            continue
        b = [p.table for p in by_rule.iter_snapshot(t)]
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if (p / "table" / ".hoodie").is_dir()))
def test_fixture_tables_read_the_same_both_ways(name: str) -> None:
    _read_both_ways(str(FIXTURES / name / "table"))


def test_real_tables_read_the_same_both_ways(real_table: RealTable) -> None:
    _read_both_ways(str(real_table.path))

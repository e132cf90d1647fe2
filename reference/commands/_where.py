"""``hudi-spec read --where``: a row filter in SQL's words, pushed down to partitions and files where it can.

The filter is a small part of SQL's ``WHERE``: comparisons of a column with a literal (``=``, ``!=``,
``<>``, ``<``, ``<=``, ``>``, ``>=``), ``IN (…)``, ``IS [NOT] NULL``, joined by ``AND``, ``OR``,
``NOT`` and parentheses; literals are ``'quoted strings'``, numbers, ``true``, ``false``. Every row read
is filtered by it (after the merge of base and log files, so a row is kept or dropped by its latest
version). Before that it prunes, never changing a row that is kept:

- partitions (Hudi's ``SparkHoodieTableFileIndex`` partition pruning): a partition whose values make the
  filter false is not read. A partition path's values are its columns' only for key generators that write
  the column's value into the path (``SIMPLE``, ``COMPLEX``); for others nothing is pruned;
- files (Hudi's data skipping, ``HoodieFileIndex`` with column statistics): a file slice that is its base
  file alone (copy-on-write, or a read-optimized query) is not read when the base file's parquet column
  statistics (min, max, null count) show no row can match.

Each test is three-valued: True, False, or None (unknown). Only a filter that is False prunes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spec.errors import InvalidOperation

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc

    from spec.config.table_config import TableConfig
    from spec.file_group.file_system_view import FileSlice
    from spec.storage.hoodie_storage import Storage

OPERATORS = ("=", "==", "!=", "<>", "<", "<=", ">", ">=")
PRUNING_KEY_GENERATORS = ("SIMPLE", "COMPLEX", "SIMPLE_AVRO", "COMPLEX_AVRO")
"""Key generators whose partition path segments are the partition columns' values as written."""


@dataclass(frozen=True)
class Compare:
    column: str
    op: str
    value: Any


@dataclass(frozen=True)
class In:
    column: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool


@dataclass(frozen=True)
class Not:
    operand: Node


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    operands: tuple[Node, ...]


Node = Compare | In | IsNull | Not | BoolOp

_TOKEN = re.compile(r"""\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
                    |(?P<op><=|>=|<>|!=|==|=|<|>)|(?P<punct>[(),])|(?P<name>[A-Za-z_][A-Za-z0-9_.]*|`[^`]+`))""",
                    re.X)
KEYWORDS = {"and", "or", "not", "in", "is", "null", "true", "false"}


def _bad(text: str, why: str) -> InvalidOperation:
    return InvalidOperation(f"--where {text!r}: {why}",
                            hint="write e.g. --where \"city = 'sf' AND fare > 10\" (comparisons, IN (...), IS NULL, "
                                 "AND, OR, NOT, parentheses; strings in single quotes)")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _bad(text, f"cannot read {text[pos:].strip()[:20]!r}")
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "name" and value.lower() in KEYWORDS:
            kind, value = "keyword", value.lower()
        out.append((kind, value))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, kind: str, value: str | None = None) -> str:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            found = "the end" if token is None else repr(token[1])
            raise _bad(self.text, f"expected {value or kind}, found {found}")
        self.pos += 1
        return token[1]

    def accept(self, kind: str, value: str) -> bool:
        if self.peek() == (kind, value):
            self.pos += 1
            return True
        return False

    def parse(self) -> Node:
        node = self.disjunction()
        if self.peek() is not None:
            raise _bad(self.text, f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return node

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.accept("keyword", "or"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else BoolOp("or", tuple(parts))

    def conjunction(self) -> Node:
        parts = [self.negation()]
        while self.accept("keyword", "and"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else BoolOp("and", tuple(parts))

    def negation(self) -> Node:
        if self.accept("keyword", "not"):
            return Not(self.negation())
        if self.accept("punct", "("):
            node = self.disjunction()
            self.take("punct", ")")
            return node
        return self.predicate()

    def literal(self) -> Any:
        token = self.peek()
        if token is None:
            raise _bad(self.text, "expected a value, found the end")
        kind, value = token
        self.pos += 1
        if kind == "string":
            return value[1:-1].replace("''", "'")
        if kind == "number":
            return float(value) if any(c in value for c in ".eE") else int(value)
        if kind == "keyword" and value in ("true", "false"):
            return value == "true"
        raise _bad(self.text, f"expected a value, found {value!r}")

    def predicate(self) -> Node:
        column = self.take("name").strip("`")
        if self.accept("keyword", "is"):
            negated = self.accept("keyword", "not")
            self.take("keyword", "null")
            return IsNull(column, negated)
        negated = self.accept("keyword", "not")
        if self.accept("keyword", "in"):
            self.take("punct", "(")
            values = [self.literal()]
            while self.accept("punct", ","):
                values.append(self.literal())
            self.take("punct", ")")
            node: Node = In(column, tuple(values))
            return Not(node) if negated else node
        if negated:
            raise _bad(self.text, "NOT goes before a condition, or in NOT IN")
        op = self.take("op")
        return Compare(column, "=" if op == "==" else "!=" if op == "<>" else op, self.literal())


def parse_where(text: str) -> Node:
    """The filter's tree; a filter that is not in the grammar above is an InvalidOperation naming where."""
    if not text.strip():
        raise _bad(text, "the filter is empty")
    return _Parser(text).parse()


def columns_of(node: Node) -> set[str]:
    """Every column the filter names."""
    if isinstance(node, Not):
        return columns_of(node.operand)
    if isinstance(node, BoolOp):
        return set().union(*(columns_of(n) for n in node.operands))
    return {node.column}


# --- the row filter ---------------------------------------------------------------------------------


def expression(node: Node, schema: pa.Schema) -> pc.Expression:
    """The filter as a pyarrow expression over rows of ``schema`` (SQL's comparisons: a null never matches)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(node, Not):
        return ~expression(node.operand, schema)
    if isinstance(node, BoolOp):
        parts = [expression(n, schema) for n in node.operands]
        out = parts[0]
        for part in parts[1:]:
            out = (out & part) if node.op == "and" else (out | part)
        return out
    if node.column not in schema.names:
        raise InvalidOperation(f"--where names no column of the table: {node.column!r}",
                               hint=f"columns are: {', '.join(schema.names)}")
    field = pc.field(node.column)
    if isinstance(node, IsNull):
        return ~field.is_null() if node.negated else field.is_null()
    typ = schema.field(node.column).type
    if isinstance(node, In):
        return field.isin(pa.array([_typed(node.column, typ, v) for v in node.values], type=typ))
    value = pa.scalar(_typed(node.column, typ, node.value), type=typ)
    ops: dict[str, Callable[[Any, Any], Any]] = {
        "=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
    return ops[node.op](field, value)


def _typed(column: str, typ: pa.DataType, value: Any) -> Any:
    """A literal as a value of the column's type; a literal of another kind is an InvalidOperation."""
    import pyarrow as pa

    numeric = pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ)
    if isinstance(value, bool) != pa.types.is_boolean(typ) or (
            isinstance(value, str) != (pa.types.is_string(typ) or pa.types.is_large_string(typ)
                                       or pa.types.is_temporal(typ))) or (
            isinstance(value, int | float) and not isinstance(value, bool) and not numeric):
        raise InvalidOperation(f"--where compares {column!r}, of type {typ}, with {value!r}",
                               hint="compare a string column with a 'quoted' value, a number column with a number")
    if pa.types.is_temporal(typ) and isinstance(value, str):
        try:
            return pa.scalar(value).cast(typ).as_py()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
            raise InvalidOperation(f"--where: {value!r} is not a {typ} for {column!r}",
                                   hint="write dates as 'yyyy-MM-dd', times as 'yyyy-MM-dd HH:mm:ss'") from err
    if pa.types.is_integer(typ) and isinstance(value, float):
        return value  # compared as a number: pyarrow casts the column
    return value


def filter_rows(table: pa.Table, node: Node) -> pa.Table:
    """The rows that match."""
    return table.filter(expression(node, table.schema))


# --- pruning: three-valued tests on what is known without reading rows ------------------------------------


def _compare(op: str, left: Any, right: Any) -> bool:
    results = {"=": left == right, "!=": left != right, "<": left < right, "<=": left <= right, ">": left > right,
               ">=": left >= right}
    return bool(results[op])


def evaluate(node: Node, test: Callable[[Compare | In | IsNull], bool | None]) -> bool | None:
    """The filter's value given a test of each predicate (None: unknown), by SQL's three-valued logic."""
    if isinstance(node, Not):
        inner = evaluate(node.operand, test)
        return None if inner is None else not inner
    if isinstance(node, BoolOp):
        values = [evaluate(n, test) for n in node.operands]
        if node.op == "and":
            return False if False in values else (None if None in values else True)
        return True if True in values else (None if None in values else False)
    return test(node)


def partition_values(config: TableConfig, partition: str) -> dict[str, str | None] | None:
    """The partition columns' values a partition path holds, as strings (``spec.keygen.partition_path.
    parse_partition_path``), or None when its segments are not the columns' values (a key generator that
    transforms them). The default partition, where Hudi puts a null value, and a segment ``default`` (the
    default partition before Hudi 0.12, which a value can also be) are values nothing is known of: None."""
    from spec.errors import HudiSpecError
    from spec.keygen.partition_path import parse_partition_path

    keygen = (config.keygen_type or "").upper()
    class_name = (config.keygen_class or "").rsplit(".", 1)[-1]
    simple = keygen in PRUNING_KEY_GENERATORS or class_name in ("SimpleKeyGenerator", "ComplexKeyGenerator",
                                                                  "SimpleAvroKeyGenerator", "ComplexAvroKeyGenerator")
    if not config.partition_fields or not simple:
        return None
    try:
        values = parse_partition_path(partition, tuple(config.partition_fields), config.hive_style_partitioning,
                                      url_encoded=config.url_encode_partitions)
    except HudiSpecError:
        return None
    return {k: None if v == "default" else v for k, v in values.items()}


def _prunable(typ: pa.DataType) -> bool:
    """Column types whose partition path segment is the value as a literal compares with it: strings and
    numbers (a timestamp's or a decimal's segment is formatted by the key generator)."""
    import pyarrow as pa

    return bool(pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ)
                or pa.types.is_floating(typ))


def _segment_matches(node: Compare | In | IsNull, value: str | None) -> bool | None:
    """A predicate on a partition column, given the partition's value as written in its path."""
    if value is None:  # the default partition: unknown
        return None
    if isinstance(node, IsNull):
        return node.negated
    wanted = [node.value] if isinstance(node, Compare) else list(node.values)
    typed: list[Any] = []
    for w in wanted:
        if isinstance(w, bool) or not isinstance(w, str | int | float):
            return None
        if isinstance(w, str):
            typed.append((value, w))
            continue
        try:
            typed.append((float(value), float(w)))
        except ValueError:
            return None
    if isinstance(node, In):
        return any(a == b for a, b in typed)
    a, b = typed[0]
    return _compare(node.op, a, b)


def partition_predicate(node: Node, config: TableConfig, schema: pa.Schema) -> Callable[[str], bool]:
    """The partitions to read: those for which the filter is not False given their values (only the
    partition columns of ``_prunable`` types are known)."""
    known = {c for c in config.partition_fields if c in schema.names and _prunable(schema.field(c).type)}

    def keep(partition: str) -> bool:
        values = partition_values(config, partition)
        if values is None:
            return True

        def test(pred: Compare | In | IsNull) -> bool | None:
            return _segment_matches(pred, values[pred.column]) if pred.column in known else None

        return evaluate(node, test) is not False
    return keep


@dataclass(frozen=True)
class ColumnStats:
    minimum: Any
    maximum: Any
    null_count: int | None
    num_values: int


def base_file_stats(storage: Storage, sl: FileSlice, columns: set[str]) -> dict[str, ColumnStats] | None:
    """The parquet statistics of the slice's base file for ``columns`` (every row group merged), or None
    when the footer has none for one of them."""
    import pyarrow.parquet as pq

    assert sl.base_file is not None
    with storage.fs.open_input_file(storage.full(sl.base_file.path)) as f:
        meta = pq.ParquetFile(f).metadata
    names = [meta.schema.column(i).path for i in range(meta.num_columns)]
    out: dict[str, ColumnStats] = {}
    for column in columns:
        if column not in names:
            return None
        index = names.index(column)
        lo = hi = None
        nulls: int | None = 0
        rows = 0
        for g in range(meta.num_row_groups):
            st = meta.row_group(g).column(index).statistics
            rows += meta.row_group(g).num_rows
            if st is None or not st.has_null_count:
                return None
            if not st.has_min_max and st.null_count != meta.row_group(g).num_rows:
                return None
            nulls = None if nulls is None else nulls + st.null_count
            if st.has_min_max:
                lo = st.min if lo is None or st.min < lo else lo
                hi = st.max if hi is None or st.max > hi else hi
        out[column] = ColumnStats(lo, hi, nulls, rows)
    return out


def _stats_match(node: Compare | In | IsNull, st: ColumnStats) -> bool | None:
    """A predicate on a column given a file's statistics: False when no row can match."""
    if isinstance(node, IsNull):
        if node.negated:
            return False if st.null_count == st.num_values else None
        return False if st.null_count == 0 else None
    if st.minimum is None:  # every value null: no comparison matches
        return False
    values = [node.value] if isinstance(node, Compare) else list(node.values)
    try:
        if isinstance(node, In):
            return None if any(st.minimum <= v <= st.maximum for v in values) else False
        v = values[0]
        impossible = {"=": v < st.minimum or v > st.maximum, "!=": st.minimum == st.maximum == v,
                      "<": st.minimum >= v, "<=": st.minimum > v, ">": st.maximum <= v, ">=": st.maximum < v}
        return False if impossible[node.op] else None
    except TypeError:  # a literal of another type than the statistics': nothing is known
        return None


def slice_may_match(node: Node, storage: Storage, sl: FileSlice, with_logs: bool) -> bool:
    """Whether a file slice must be read: always when log files are merged into it (their records are not
    in the base file's statistics), else unless its base file's statistics make the filter False."""
    if sl.base_file is None or (with_logs and sl.log_files):
        return True
    stats = base_file_stats(storage, sl, columns_of(node))
    if stats is None:
        return True

    def test(pred: Compare | In | IsNull) -> bool | None:
        return _stats_match(pred, stats[pred.column])

    return evaluate(node, test) is not False


def describe(partitions: tuple[int, int] | None, slices: tuple[int, int] | None) -> str:
    """What pruning left: ``2 of 5 partitions, 3 of 9 file slices``."""
    parts = []
    if partitions is not None:
        parts.append(f"{partitions[0]} of {partitions[1]} partitions")
    if slices is not None:
        parts.append(f"{slices[0]} of {slices[1]} file slices")
    return ", ".join(parts)


__all__ = ["Node", "columns_of", "describe", "evaluate", "filter_rows",
           "parse_where", "partition_predicate", "partition_values", "slice_may_match"]

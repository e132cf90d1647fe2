"""The clause language of ``MERGE INTO`` (``reference.commands._merge``): the SQL after ``WHEN MATCHED`` and ``WHEN NOT
MATCHED`` — ``[AND condition THEN] UPDATE SET * | UPDATE SET col = expr, … | DELETE`` and ``[AND condition THEN]
INSERT * | INSERT (cols) VALUES (exprs)`` —, as the frozen ``Update``, ``Delete`` and ``Insert`` the Python API
takes too; expressions (a literal, ``null``, ``s.col``, ``t.col``) and ``ON`` (``t.col = s.col`` by ``AND``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from spec.errors import InvalidOperation

SOURCE, TARGET = "s", "t"
"""The names a merge's expressions give the source and the target table: ``s.col``, ``t.col``."""


@dataclass(frozen=True)
class Column:
    """``s.col`` or ``t.col``."""

    side: str
    name: str


@dataclass(frozen=True)
class Literal:
    value: Any


Expression = Column | Literal


@dataclass(frozen=True)
class Update:
    """``WHEN MATCHED [AND condition] THEN UPDATE SET …``: ``set`` is ``"*"`` or ``"col = expr, …"``."""

    set: str = "*"
    condition: str | None = None


@dataclass(frozen=True)
class Delete:
    """``WHEN MATCHED [AND condition] THEN DELETE``."""

    condition: str | None = None


@dataclass(frozen=True)
class Insert:
    """``WHEN NOT MATCHED [AND condition] THEN INSERT …``: ``values`` is ``"*"`` or ``"col = expr, …"`` (the
    columns of ``INSERT (cols) VALUES (exprs)``, each with its value)."""

    values: str = "*"
    condition: str | None = None


MatchedClause = Update | Delete


def _bad(what: str, text: str, why: str, hint: str) -> InvalidOperation:
    return InvalidOperation(f"{what} {text!r}: {why}", hint=hint)


CLAUSE_HINT = ("write e.g. \"UPDATE SET *\", \"AND s.v = 'x' THEN DELETE\", \"UPDATE SET v = s.v, ts = s.ts\", "
                "\"INSERT *\" or \"AND s.ts > 0 THEN INSERT (id, ts, v) VALUES (s.id, s.ts, 'new')\"")
_CLAUSE = re.compile(r"^\s*(?:AND\s+(?P<cond>.+?)\s+THEN\s+)?(?P<action>(?:UPDATE|DELETE|INSERT)\b.*?)\s*$",
                     re.I | re.S)


def parse_clause(text: str, matched: bool) -> MatchedClause | Insert:
    """A clause as SQL text after ``WHEN [NOT] MATCHED``: ``[AND condition THEN] action``, e.g.
    ``"AND s.v = 'x' THEN DELETE"``, ``"UPDATE SET *"``, ``"INSERT (id, v) VALUES (s.id, 'new')"``."""
    what = "--when-matched" if matched else "--when-not-matched"
    m = _CLAUSE.match(text)
    if m is None:
        raise _bad(what, text, "expected [AND condition THEN] UPDATE SET …, DELETE or INSERT …", CLAUSE_HINT)
    condition, action = m.group("cond"), m.group("action")
    verb = action.split(None, 1)[0].upper()
    rest = action[len(verb):].strip()
    if matched and verb == "DELETE" and not rest:
        return Delete(condition)
    if matched and verb == "UPDATE":
        set_match = re.match(r"SET\s+(?P<set>.+)$", rest, re.I | re.S)
        if set_match is not None:
            return Update(set_match.group("set").strip(), condition)
    if not matched and verb == "INSERT":
        if rest == "*":
            return Insert("*", condition)
        cols = re.match(r"^\((?P<cols>[^)]*)\)\s*VALUES\s*\((?P<values>.*)\)$", rest, re.I | re.S)
        if cols is not None:
            names = [c.strip().strip("`") for c in cols.group("cols").split(",")]
            values = _split_top(cols.group("values"))
            if len(names) != len(values) or not all(names):
                raise _bad(what, text, f"{len(names)} columns and {len(values)} values", CLAUSE_HINT)
            return Insert(", ".join(f"{n} = {v}" for n, v in zip(names, values, strict=True)), condition)
    allowed = "UPDATE SET … or DELETE" if matched else "INSERT * or INSERT (cols) VALUES (values)"
    raise _bad(what, text, f"expected {allowed}", CLAUSE_HINT)


def _split_top(text: str) -> list[str]:
    """``text`` split at its commas outside quotes."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in text:
        if ch == "'":
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    parts.append("".join(current).strip())
    return parts


ASSIGNMENTS_HINT = "write e.g. \"v = s.v, ts = s.ts, note = null\" (a literal, null, s.col or t.col a column), or *"


def parse_assignments(text: str, what: str, hint: str = ASSIGNMENTS_HINT,
                      columns: bool = True) -> tuple[tuple[str, Expression], ...] | None:
    """``col = expr, …`` (None for ``*``); an expression is a literal, ``null``, or — where ``columns`` — ``s.col``
    or ``t.col``. ``what`` and ``hint`` name the argument in an error (an ``UPDATE``'s ``--set`` takes literals
    alone: ``reference.commands._update_delete.parse_set``)."""
    from reference.commands._where import _Parser

    if text.strip() == "*" and columns:
        return None
    if not text.strip():
        raise _bad(what, text, "nothing is assigned", hint)
    try:
        parser = _Parser(text)
    except InvalidOperation as err:
        raise _bad(what, text, str(err).split(": ", 1)[-1], hint) from err
    out: list[tuple[str, Expression]] = []
    while True:
        token = parser.peek()
        if token is None or token[0] != "name" or "." in token[1].strip("`"):
            raise _bad(what, text, f"expected a column, found {'the end' if token is None else repr(token[1])}", hint)
        parser.pos += 1
        column = token[1].strip("`")
        if parser.peek() != ("op", "="):
            raise _bad(what, text, f"expected = after {column!r}", hint)
        parser.pos += 1
        token = parser.peek()
        value: Expression
        if token == ("keyword", "null"):
            parser.pos += 1
            value = Literal(None)
        elif columns and token is not None and token[0] == "name":
            parser.pos += 1
            value = column_ref(token[1], what, text, hint)
        else:
            try:
                value = Literal(parser.literal())
            except InvalidOperation as err:
                raise _bad(what, text, f"{column!r} is given no value", hint) from err
        if any(c == column for c, _ in out):
            raise _bad(what, text, f"{column!r} is assigned twice", hint)
        out.append((column, value))
        if parser.peek() is None:
            return tuple(out)
        if not parser.accept("punct", ","):
            raise _bad(what, text, f"unexpected {parser.peek()[1]!r}", hint)  # type: ignore[index]


def column_ref(name: str, what: str, text: str, hint: str) -> Column:
    side, dot, column = name.strip("`").partition(".")
    if not dot or side.lower() not in (SOURCE, TARGET) or not column:
        raise _bad(what, text, f"{name!r} is not s.column (the source's) nor t.column (the target's)", hint)
    return Column(side.lower(), column.strip("`"))


def parse_on(text: str) -> tuple[tuple[str, str], ...]:
    """``ON``: ``t.col = s.col`` joined by AND, as (target column, source column) pairs."""
    hint = "write e.g. --on \"t.id = s.id\" (the target's record key fields, each equal to a source column)"
    pairs = []
    for part in re.split(r"\s+AND\s+", text.strip(), flags=re.I):
        m = re.match(r"^`?(\w+)`?\.`?(\w+)`?\s*=\s*`?(\w+)`?\.`?(\w+)`?$", part.strip())
        if m is None:
            raise _bad("--on", text, f"{part.strip()!r} is not t.column = s.column", hint)
        sides = {m.group(1).lower(): m.group(2), m.group(3).lower(): m.group(4)}
        if set(sides) != {SOURCE, TARGET}:
            raise _bad("--on", text, f"{part.strip()!r} does not equate a target and a source column", hint)
        pairs.append((sides[TARGET], sides[SOURCE]))
    return tuple(pairs)


__all__ = [
    "ASSIGNMENTS_HINT",
    "SOURCE",
    "TARGET",
    "Column",
    "Delete",
    "Expression",
    "Insert",
    "Literal",
    "MatchedClause",
    "Update",
    "parse_assignments",
    "parse_clause",
    "parse_on",
]

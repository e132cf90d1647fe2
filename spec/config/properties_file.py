"""Properties files: the Java ``Properties`` text of ``hoodie.properties`` and ``.hoodie_partition_metadata``.

Comment lines (``#`` or ``!``), then ``key=value`` (or ``key:value``, ``key value``) lines in any
order, with Java's escapes and line continuations when read. Hudi writes values unescaped
(hudi-rs splits at the first ``=`` and does not unescape), except ``:`` in
``hoodie.table.create.schema``, which both readers accept as ``\\:``.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieTableConfig``
(``storeProperties``, ``fetchConfigs``), ``HoodiePartitionMetadata`` (``readFromFS``) and Java's
``java.util.Properties`` (``load``, ``store``) that both use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime

from spec.errors import InvalidConfig

# --8<-- [start:properties]
_WS = " \t\f"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    """Java's ``loadConvert``: ``\\uXXXX``, ``\\t \\n \\r \\f``, and ``\\x`` → ``x`` for any other x."""
    if "\\" not in text:  # nothing escaped: most values, a table's schema among them
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        n = text[i + 1]
        if n == "u":
            digits = text[i + 2:i + 6]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise InvalidConfig(f"malformed \\u escape {text[i:i + 6]!r} in properties",
                                    hint="a \\u escape needs four hex digits")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(n, n))
        i += 2
    return "".join(out)


def _logical_lines(text: str) -> list[str]:
    """Natural lines joined where one ends in an odd number of backslashes; comments and blanks dropped."""
    logical: list[str] = []
    buf: str | None = None
    for raw in _LINE_BREAK.split(text):
        line = raw.lstrip(_WS)
        if buf is None and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        joined = (buf or "") + (line[:-1] if trailing % 2 else line)
        if trailing % 2:
            buf = joined
            continue
        logical.append(joined)
        buf = None
    if buf is not None:
        logical.append(buf)
    return logical


def parse_properties(data: bytes) -> dict[str, str]:
    """Java ``Properties.load`` (ISO-8859-1 text): ``#``/``!`` comment lines, ``key=value``,
    ``key:value`` or ``key value``, backslash escapes, lines continued by a trailing backslash.
    A key given twice keeps its last value."""
    props: dict[str, str] = {}
    for line in _logical_lines(data.decode("latin-1")):
        i = 0
        while i < len(line) and line[i] not in "=:" + _WS:
            i += 2 if line[i] == "\\" else 1
        key = line[:i]
        rest = line[i:].lstrip(_WS)
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(_WS)
        props[_unescape(key)] = _unescape(rest)
    return props


def _writable(key: str, value: str) -> bool:
    """Whether Java and hudi-rs (split at the first ``=``, trim, no unescaping) read ``key=value`` alike."""
    return (key.isascii() and value.isascii() and key.isprintable() and value.isprintable() and bool(key)
            and not any(c in key for c in "=: \t\f#!\\") and "\\" not in value and value == value.strip())


def format_properties(props: Mapping[str, str], saved_at: datetime | None = None) -> bytes:
    """Properties text as Hudi writes it (two comment lines, then sorted ``key=value`` lines).

    Values are written as they are, because hudi-rs does not unescape; only ``:`` in
    ``hoodie.table.create.schema`` is escaped as ``\\:``, which every reader accepts. A key or
    value that cannot be written so that both read it back (non-ASCII, control characters,
    backslashes, surrounding blanks) raises InvalidConfig.
    """
    when = (saved_at or datetime.now(UTC)).astimezone(UTC)
    lines = [
        f"#Properties saved on {when.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z",
        f"#{when.strftime('%a %b %d %H:%M:%S')} UTC {when.year}",
    ]
    for key in sorted(props):
        value = props[key]
        if not _writable(key, value):
            raise InvalidConfig(f"table config {key!r}={value!r} cannot be written unescaped",
                                hint="keys and values must be printable ASCII without backslashes or "
                                     "surrounding blanks (hudi-rs reads them verbatim)")
        if key == "hoodie.table.create.schema":
            value = value.replace(":", "\\:")
        lines.append(f"{key}={value}")
    return ("\n".join(lines) + "\n").encode("ascii")
# --8<-- [end:properties]

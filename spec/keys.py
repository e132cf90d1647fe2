"""Key generators: a record's key and partition path, from its fields.

| key generator | record key | partition path |
|---|---|---|
| SIMPLE | the field's value as a string | the value; ``field=value`` when hive-style |
| COMPLEX | ``f1:v1,f2:v2`` for every key field (null ``__null__``, empty ``__empty__``) | values joined by ``/`` |
| NON_PARTITION | as SIMPLE (or COMPLEX for several fields) | ``""`` |
| TIMESTAMP | as SIMPLE | the field's time formatted with the output date format |
| CUSTOM | as COMPLEX | per field ``name:SIMPLE`` or ``name:TIMESTAMP`` |

A null or empty partition value becomes ``__HIVE_DEFAULT_PARTITION__``. A null or empty record
key is an error. Values are stringified as Java's ``String.valueOf`` does. A partition value
that would leave the table's folder (``..``, ``/`` when not URL-encoded, NUL) is an error.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from spec.errors import InvalidConfig, InvalidRecord

NULL_KEY = "__null__"
EMPTY_KEY = "__empty__"
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

KEYGEN_TYPES_BY_CLASS = {
    "org.apache.hudi.keygen.SimpleKeyGenerator": "SIMPLE",
    "org.apache.hudi.keygen.ComplexKeyGenerator": "COMPLEX",
    "org.apache.hudi.keygen.NonpartitionedKeyGenerator": "NON_PARTITION",
    "org.apache.hudi.keygen.TimestampBasedKeyGenerator": "TIMESTAMP",
    "org.apache.hudi.keygen.CustomKeyGenerator": "CUSTOM",
    "org.apache.hudi.keygen.GlobalDeleteKeyGenerator": "GLOBAL_DELETE",
}


# --8<-- [start:java_string]
def java_string(value: Any) -> str:
    """``String.valueOf`` of a field value: booleans ``true``/``false``; doubles in Java's notation
    (``1.0``, ``1.0E10`` from 10^7 up, ``1.0E-4`` below 10^-3); dates ISO; others ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {True: "NaN"}.get(value != value, "Infinity" if value > 0 else "-Infinity")
        if value == int(value) and abs(value) < 1e7:
            return f"{int(value)}.0" if value or str(value)[0] != "-" else "-0.0"
        if 1e-3 <= abs(value) < 1e7:
            return repr(value)
        mantissa, exp = f"{value:.16e}".split("e")
        digits = repr(float(mantissa)).rstrip("0")
        digits = digits + "0" if digits.endswith(".") else digits
        return f"{digits}E{int(exp)}"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
# --8<-- [end:java_string]


# --8<-- [start:date_format]
_JAVA_TOKENS = [("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"),
                ("SSS", "\x00MS\x00"), ("Z", "%z"), ("X", "%z"), ("yy", "%y")]


def java_date_format(pattern: str) -> str:
    """A Java date pattern as a strftime/strptime format (the subset key generators use:
    yyyy yy MM dd HH mm ss SSS Z X and quoted literals)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "'":
            j = pattern.index("'", i + 1)
            out.append(pattern[i + 1:j].replace("%", "%%") or "'")
            i = j + 1
            continue
        for token, fmt in _JAVA_TOKENS:
            if pattern.startswith(token, i):
                out.append(fmt)
                i += len(token)
                break
        else:
            if pattern[i].isalpha():
                raise InvalidConfig(f"date pattern letter {pattern[i]!r} in {pattern!r} is not supported",
                                    hint="use yyyy, MM, dd, HH, mm, ss, SSS, Z and quoted literals")
            out.append(pattern[i].replace("%", "%%"))
            i += 1
    return "".join(out)


def format_java_date(dt: datetime, pattern: str) -> str:
    fmt = java_date_format(pattern)
    return dt.strftime(fmt.replace("\x00MS\x00", f"{dt.microsecond // 1000:03d}"))


def parse_java_date(text: str, pattern: str, tz: Any = UTC) -> datetime:
    fmt = java_date_format(pattern).replace("\x00MS\x00", "%f")
    try:
        dt = datetime.strptime(text, fmt)
    except ValueError as err:
        raise InvalidRecord(f"{text!r} does not match the date format {pattern!r}",
                            hint="check hoodie.keygen.timebased.input.dateformat") from err
    return dt if dt.tzinfo else dt.replace(tzinfo=tz)
# --8<-- [end:date_format]


@dataclass(frozen=True)
class TimestampConfig:
    """``hoodie.keygen.timebased.*``: input type, formats, time zone, scalar unit."""

    timestamp_type: str = "DATE_STRING"
    input_format: str = "yyyy-MM-dd HH:mm:ss"
    output_format: str = "yyyy/MM/dd"
    timezone: str = "UTC"
    scalar_unit: str = "SECONDS"

    def to_datetime(self, value: Any) -> datetime:
        units = {"UNIX_TIMESTAMP": 1.0, "EPOCHMILLISECONDS": 1e-3, "EPOCHMICROSECONDS": 1e-6}
        if self.timestamp_type in units:
            return datetime.fromtimestamp(float(value) * units[self.timestamp_type], UTC)
        if self.timestamp_type == "SCALAR":
            per = {"DAYS": 86400.0, "HOURS": 3600.0, "MINUTES": 60.0, "SECONDS": 1.0, "MILLISECONDS": 1e-3,
                   "MICROSECONDS": 1e-6}[self.scalar_unit.upper()]
            return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=float(value) * per)
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
        return parse_java_date(str(value), self.input_format)

    def format(self, value: Any) -> str:
        from zoneinfo import ZoneInfo

        dt = self.to_datetime(value)
        tz = UTC if self.timezone.upper() in ("UTC", "GMT") else ZoneInfo(self.timezone)
        return format_java_date(dt.astimezone(tz), self.output_format)


@dataclass(frozen=True)
class KeyGenerator:
    """A key generator: the rules that turn a record's fields into its key and partition path."""

    kind: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style: bool = False
    url_encode: bool = False
    timestamp: TimestampConfig | None = None
    partition_kinds: tuple[str, ...] = field(default=())  # CUSTOM: per partition field

    # --8<-- [start:record_key]
    def record_key(self, record: Mapping[str, Any]) -> str:
        """The record key; a null or empty key is an InvalidRecord."""
        fields = self.record_key_fields
        if not fields:
            raise InvalidRecord("no record key field is configured", hint="set the record key field(s)")
        complex_key = self.kind in ("COMPLEX", "CUSTOM") or len(fields) > 1
        if not complex_key:
            value = record.get(fields[0])
            text = None if value is None else java_string(value)
            if not text:
                raise InvalidRecord(f"record key field {fields[0]!r} is {'null' if value is None else 'empty'}",
                                    hint="every record needs a key")
            return text
        parts = []
        all_missing = True
        for f in fields:
            value = record.get(f)
            text = NULL_KEY if value is None else (java_string(value) or EMPTY_KEY)
            all_missing &= text in (NULL_KEY, EMPTY_KEY)
            parts.append(f"{f}:{text}")
        if all_missing:
            raise InvalidRecord(f"every record key field ({', '.join(fields)}) is null or empty",
                                hint="every record needs a key")
        return ",".join(parts)
    # --8<-- [end:record_key]

    # --8<-- [start:partition_path]
    def partition_path(self, record: Mapping[str, Any]) -> str:
        """The partition path, checked not to leave the table folder."""
        if self.kind == "NON_PARTITION" or not self.partition_fields:
            return ""
        segments = []
        for i, f in enumerate(self.partition_fields):
            value = record.get(f)
            kind = self.partition_kinds[i] if self.partition_kinds else self.kind
            if value is None or value == "":
                text = DEFAULT_PARTITION
            elif kind == "TIMESTAMP":
                text = (self.timestamp or TimestampConfig()).format(value)
            else:
                text = java_string(value)
            if self.url_encode:
                text = urllib.parse.quote(text, safe="")
            segments.append(f"{f}={text}" if self.hive_style else text)
        path = "/".join(segments)
        check_partition_path(path, len(segments) if self.kind != "TIMESTAMP" else None)
        return path
    # --8<-- [end:partition_path]


# --8<-- [start:check]
def check_partition_path(path: str, expected_segments: int | None = None) -> str:
    """Raise InvalidRecord if ``path`` would escape the table folder or split unexpectedly."""
    parts = path.split("/")
    if "\x00" in path or path.startswith("/") or any(p in ("..", ".") for p in parts) or ".." in path:
        raise InvalidRecord(f"partition path {path!r} would leave the table's folder",
                            hint="partition values may not contain '..', a leading '/' or NUL")
    if expected_segments is not None and len(parts) != expected_segments:
        raise InvalidRecord(f"partition path {path!r} has {len(parts)} segments, not {expected_segments}",
                            hint="a partition value contains '/': URL-encode partition paths or clean the value")
    return path
# --8<-- [end:check]


def key_generator_from_config(props: Mapping[str, str]) -> KeyGenerator:
    """The key generator a table's config (or write options) names: v6 class or v8 type."""
    klass = props.get("hoodie.table.keygenerator.class") or props.get("hoodie.datasource.write.keygenerator.class")
    kind = props.get("hoodie.table.keygenerator.type") or props.get("hoodie.datasource.write.keygenerator.type")
    if klass:
        if klass not in KEYGEN_TYPES_BY_CLASS:
            raise InvalidConfig(f"key generator {klass} is not specified here",
                                hint=f"use one of {', '.join(sorted(KEYGEN_TYPES_BY_CLASS))}")
        kind = KEYGEN_TYPES_BY_CLASS[klass]
    keys = tuple(f.strip() for f in (props.get("hoodie.table.recordkey.fields")
                                     or props.get("hoodie.datasource.write.recordkey.field") or "").split(",")
                 if f.strip())
    raw_parts = [f.strip() for f in (props.get("hoodie.table.partition.fields")
                                     or props.get("hoodie.datasource.write.partitionpath.field") or "").split(",")
                 if f.strip()]
    parts = tuple(p.split(":")[0] for p in raw_parts)
    kinds = tuple(p.split(":")[1].upper() if ":" in p else "SIMPLE" for p in raw_parts)
    kind = (kind or ("NON_PARTITION" if not parts else "COMPLEX" if len(keys) > 1 or len(parts) > 1
                     else "SIMPLE")).upper()
    ts = TimestampConfig(
        timestamp_type=props.get("hoodie.keygen.timebased.timestamp.type", "DATE_STRING"),
        input_format=props.get("hoodie.keygen.timebased.input.dateformat", "yyyy-MM-dd HH:mm:ss"),
        output_format=props.get("hoodie.keygen.timebased.output.dateformat", "yyyy/MM/dd"),
        timezone=props.get("hoodie.keygen.timebased.timezone", "UTC"),
        scalar_unit=props.get("hoodie.keygen.timebased.timestamp.scalar.time.unit", "SECONDS"),
    ) if kind in ("TIMESTAMP", "CUSTOM") else None
    hive = props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"
    url = props.get("hoodie.datasource.write.partitionpath.urlencode", "false").lower() == "true"
    return KeyGenerator(kind, keys, parts, hive, url, ts, kinds if kind == "CUSTOM" else ())


def parse_partition_path(path: str, fields: tuple[str, ...], hive_style: bool) -> dict[str, str | None]:
    """The partition values a path encodes (the inverse of ``partition_path`` for SIMPLE/COMPLEX)."""
    if not fields:
        return {}
    segments = path.split("/")
    if len(segments) != len(fields):
        raise InvalidRecord(f"partition path {path!r} does not have {len(fields)} segments")
    out: dict[str, str | None] = {}
    for f, seg in zip(fields, segments, strict=True):
        if hive_style:
            name, sep, value = seg.partition("=")
            if not sep or name != f:
                raise InvalidRecord(f"partition segment {seg!r} is not {f}=<value>")
            seg = value
        out[f] = None if seg == DEFAULT_PARTITION else seg
    return out


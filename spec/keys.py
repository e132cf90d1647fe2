"""Key generators: a record's key and partition path, from its fields.

| key generator | record key | partition path |
|---|---|---|
| SIMPLE | the one key field's value | the one partition field's value; ``field=value`` when hive-style |
| COMPLEX | ``f1:v1,f2:v2``, every key field (``__null__``, ``__empty__``) | the values joined by ``/`` |
| NON_PARTITION | as SIMPLE for one key field, else as COMPLEX | ``""`` |
| TIMESTAMP | as SIMPLE | the one partition field read as a time, printed with the output date format |
| CUSTOM | as SIMPLE for one key field, else as COMPLEX | per ``f:SIMPLE`` / ``f:TIMESTAMP``, by ``/`` |
| GLOBAL_DELETE | as COMPLEX | ``""`` |

A null or empty partition value becomes ``__HIVE_DEFAULT_PARTITION__`` (TIMESTAMP: a null value
is read as the time ``1``). A null or empty record key is an error. Values become strings as
Java's ``String.valueOf`` of the Avro value does (``java_string``). With
``hoodie.datasource.write.partitionpath.urlencode=true`` each value is escaped by
``PartitionPathEncodeUtils.escapePathName``. A partition value that would leave the table's
folder (``.``, ``..``, a ``/`` that is not URL-encoded, NUL), holds another control character
(unless URL-encoded) or makes a folder name over 255 bytes is an error.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``KeyGenUtils``
(``getRecordKey``, ``getRecordPartitionPath``, ``inferKeyGeneratorType``),
``SimpleAvroKeyGenerator``, ``ComplexAvroKeyGenerator``, ``NonpartitionedAvroKeyGenerator``,
``TimestampBasedAvroKeyGenerator``, ``CustomAvroKeyGenerator``, ``GlobalAvroDeleteKeyGenerator``,
``TimestampKeyGeneratorConfig`` and ``PartitionPathEncodeUtils.escapePathName``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any

from spec.errors import InvalidConfig, InvalidName, InvalidRecord

NULL_KEY = "__null__"
EMPTY_KEY = "__empty__"
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

_KEYGEN_CLASS_NAMES = {"Simple": "SIMPLE", "Complex": "COMPLEX", "Nonpartitioned": "NON_PARTITION",
                       "TimestampBased": "TIMESTAMP", "Custom": "CUSTOM", "GlobalDelete": "GLOBAL_DELETE"}
KEYGEN_TYPES_BY_CLASS = {f"org.apache.hudi.keygen.{name}{suffix}": kind
                         for name, kind in _KEYGEN_CLASS_NAMES.items()
                         for suffix in ("KeyGenerator", "AvroKeyGenerator")}
"""The v6 ``hoodie.table.keygenerator.class`` names (the Spark classes and their Avro twins)."""
KEYGEN_TYPES = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")
"""The v8 ``hoodie.table.keygenerator.type`` values (a ``_AVRO`` suffix names the same rules)."""


# =================================================================================================
# values as strings
# =================================================================================================

class Float32(float):
    """A value of a 32-bit ``float`` column: Java prints it with ``Float.toString``, not ``Double``'s."""


def _shortest_digits(value: float, single: bool) -> tuple[str, int]:
    """The fewest significant digits that read back as ``value`` (as a float32 when ``single``),
    and the decimal exponent of the first digit."""
    if not single:
        _, digits, exp = Decimal(repr(value)).as_tuple()
        text = "".join(map(str, digits)).rstrip("0") or "0"
        return text, len(digits) + int(exp) - 1
    target = struct.unpack("f", struct.pack("f", value))[0]
    for precision in range(1, 10):
        candidate = f"{abs(value):.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(candidate)))[0] == abs(target):
            mantissa, exp_text = candidate.split("e")
            return mantissa.replace(".", "").rstrip("0") or "0", int(exp_text)
    raise AssertionError("9 significant digits always identify a float32")  # pragma: no cover


# --8<-- [start:java_string]
def java_double_string(value: float, single: bool = False) -> str:
    """``Double.toString`` (``Float.toString`` when ``single``): the shortest digits that read
    back as the value; plain from 10^-3 up to 10^7 (``1.0``, ``0.001``, ``1234567.0``), else
    ``d.dddE±n`` (``1.0E7``, ``1.0E-4``); ``NaN``, ``Infinity``, ``-0.0``."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if value < 0 or (value == 0 and str(value).startswith("-")) else ""
    if value == 0:
        return f"{sign}0.0"
    digits, exp = _shortest_digits(value, single)
    if 1e-3 <= abs(value) < 1e7:
        if exp >= 0:
            whole, frac = digits[:exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
        else:
            whole, frac = "0", "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{frac or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def java_string(value: Any, consistent_logical_timestamp: bool = False) -> str:
    """The string Hudi makes of an Avro field value (``HoodieAvroUtils.getNestedFieldValAsString``):

    - strings as they are; ints and longs in decimal; booleans ``true``/``false``;
    - doubles by ``Double.toString``, ``Float32`` values by ``Float.toString``;
    - decimals by ``BigDecimal.toString`` (plain unless the exponent is below -6: ``1E-7``);
    - dates (``date`` logical type) as ``yyyy-MM-dd``;
    - timestamps (``timestamp-micros``, what Spark writes) as the epoch-microsecond number, since
      ``hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled`` is false by
      default; when it is true, as ``java.sql.Timestamp.toString`` of the millisecond
      (``2023-04-02 18:02:00.0``, UTC here; Java uses the JVM's time zone);
    - bytes, records, lists and maps are refused: Java would print an object description.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_string(value, single=isinstance(value, Float32))
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        micros = (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
        if not consistent_logical_timestamp:
            return str(micros)
        millis = aware.astimezone(UTC).replace(tzinfo=None, microsecond=(aware.microsecond // 1000) * 1000)
        frac = f"{millis.microsecond * 1000:09d}".rstrip("0") or "0"
        return f"{millis:%Y-%m-%d %H:%M:%S}.{frac}"
    if isinstance(value, date):
        return value.isoformat()
    raise InvalidRecord(f"a {type(value).__name__} value cannot be part of a record key or partition path",
                        hint="use a string, number, boolean, decimal, date or timestamp field")
# --8<-- [end:java_string]


# =================================================================================================
# URL encoding (PartitionPathEncodeUtils) and partition path safety
# =================================================================================================

# --8<-- [start:escape]
_ESCAPED = frozenset([*map(chr, range(0x01, 0x20)), '"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f",
                      "{", "[", "]", "^"])
ESCAPE_ORDER = ("%", *sorted(_ESCAPED - {"%"}))
"""The escaped characters in an order that escapes each character once when replaced one after the
other over a whole column (``%`` first: later escapes add ``%`` that must stay as it is)."""


def escape_path_name(text: str) -> str:
    """``PartitionPathEncodeUtils.escapePathName``: each of the characters U+0001–U+001F, U+007F
    and ``"#%'*/:=?\\{[]^`` becomes ``%`` and its two-digit upper-case hex code; all others
    (spaces and non-ASCII letters too) stay as they are."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def unescape_path_name(text: str) -> str:
    """``unescapePathName``: every ``%XX`` (two hex digits) back to its character."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)
# --8<-- [end:escape]


# --8<-- [start:check]
MAX_FOLDER_BYTES = 255
"""The longest file or folder name (UTF-8 bytes) local file systems take (ext4, XFS, APFS, NTFS: 255);
a longer partition folder fails with ``ENAMETOOLONG`` half way through a write."""
_CONTROL = re.compile(r"[\x01-\x1f\x7f]")


def check_partition_value(text: str, field_name: str, may_contain_slash: bool) -> str:
    """Raise InvalidRecord if a partition path part would name a folder outside its partition or
    one file systems and readers cannot take: NUL or another control character (U+0001–U+001F,
    U+007F: ``hoodie.datasource.write.partitionpath.urlencode=true`` escapes them, as
    ``PartitionPathEncodeUtils.escapePathName`` does), a ``/`` in a value that is one folder (not
    URL-encoded), a folder named ``.``, ``..`` or nothing, or one longer than 255 bytes.
    ``may_contain_slash``: a timestamp output format such as ``yyyy/MM/dd``."""
    if "\x00" in text:
        raise InvalidRecord(f"the partition value {text!r} of {field_name!r} contains NUL",
                            hint="remove NUL from partition values (URL encoding does not escape it)")
    control = _CONTROL.search(text)
    if control:
        raise InvalidRecord(f"the partition value {text!r} of {field_name!r} contains the control character "
                            f"U+{ord(control.group()):04X}, which readers of folder names do not take",
                            hint="set hoodie.datasource.write.partitionpath.urlencode=true or clean the value")
    if "/" in text and not may_contain_slash:
        raise InvalidRecord(f"the partition value {text!r} of {field_name!r} contains '/' and would "
                            "become several folders",
                            hint="set hoodie.datasource.write.partitionpath.urlencode=true or clean "
                                 "the value")
    for folder in text.split("/"):
        if folder in ("", ".", ".."):
            problem = "would leave the table's folder" if folder else "makes an empty folder name"
            raise InvalidRecord(f"the partition value {text!r} of {field_name!r} {problem}",
                                hint="a partition value may not be '.' or '..', start or end with '/' "
                                     "or hold '//'")
        size = len(folder.encode("utf-8"))
        if size > MAX_FOLDER_BYTES:
            raise InvalidRecord(f"the partition value {folder[:40]!r}... of {field_name!r} makes a folder name "
                                f"of {size} bytes; file systems take at most {MAX_FOLDER_BYTES}",
                                hint="partition by a shorter value (a prefix, a hash or a bucket of it)")
    return text


def check_partition_path(path: str, fields: tuple[str, ...]) -> str:
    """Raise InvalidRecord unless ``path`` (a whole partition path as a writer made it, values
    joined by ``/``) is one folder per partition field, each passing ``check_partition_value``
    (hive-style: the folder ``field=value``, so a value ``.`` is a folder ``field=.``), and its
    first folder is not ``.hoodie`` (the table's metadata folder). Both write engines apply it to
    every distinct partition path of a batch before anything is written."""
    if not fields:
        if path:
            raise InvalidRecord(f"partition path {path!r} in a non-partitioned table",
                                hint="a table without partition fields writes every record to its root")
        return path
    folders = path.split("/")
    if len(folders) != len(fields):
        raise InvalidRecord(f"the partition path {path!r} has {len(folders)} folders for {len(fields)} "
                            f"partition field(s) ({', '.join(fields)}): a value contains '/'",
                            hint="set hoodie.datasource.write.partitionpath.urlencode=true or clean the value")
    for f, folder in zip(fields, folders, strict=True):
        check_partition_value(folder, f, may_contain_slash=False)
    if folders[0] == ".hoodie":
        raise InvalidRecord(f"the partition value '.hoodie' of {fields[0]!r} names the table's metadata folder",
                            hint="rename the value, or use hive-style partitioning")
    return path
# --8<-- [end:check]


def check_record_keys(keys: Iterable[str | None], key_fields: tuple[str, ...]) -> None:
    """Raise InvalidRecord when a record key is null or empty (``KeyGenUtils.getRecordKey``: every
    record needs a key). Both write engines apply it to every key of a batch before anything is written."""
    if any(k is None or k == "" for k in keys):
        raise InvalidRecord(f"a record has a null or empty record key ({', '.join(key_fields)})",
                            hint="every record needs a key; filter or fill those records first")


def check_partition_paths(paths: Iterable[str | None], fields: tuple[str, ...]) -> None:
    """``check_partition_path`` on each distinct path of a batch (a null path is the empty one)."""
    for path in dict.fromkeys(paths):
        check_partition_path(path or "", fields)


def writes_complex_keys(key_fields: tuple[str, ...], keygen_type: str | None, keygen_class: str | None) -> bool:
    """Whether the write engines build ``f1:v1,f2:v2`` record keys (nulls ``__null__``, empties
    ``__empty__``) rather than a field's bare value: several key fields, or a complex key generator
    named by type or class."""
    return len(key_fields) > 1 or (keygen_type or "").upper() == "COMPLEX" or "Complex" in (keygen_class or "")


# =================================================================================================
# timestamp-based partition values (TimestampBasedAvroKeyGenerator, Joda date patterns)
# =================================================================================================

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)
_SUPPORTED = set("yMdHhmsSaZ")
_TO_MILLIS = {"NANOSECONDS": -1_000_000, "MICROSECONDS": -1000, "MILLISECONDS": 1, "SECONDS": 1000,
              "MINUTES": 60_000, "HOURS": 3_600_000, "DAYS": 86_400_000}
"""``TimeUnit.MILLISECONDS.convert``: multiply (saturating at the long range), or, negative, divide
truncating toward zero."""
_LONG_MAX = 2**63 - 1


def _tokens(pattern: str) -> list[tuple[str, str]]:
    """A Joda pattern as (letter or "" for a literal, text) tokens; unsupported letters are an error."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(pattern):
        tok = m.group(0)
        if tok.startswith("'"):
            out.append(("", tok[1:-1].replace("''", "'") if len(tok) > 2 else "'"))
        elif tok[0].isalpha():
            if tok[0] not in _SUPPORTED:
                raise InvalidConfig(f"date pattern letter {tok[0]!r} in {pattern!r} is not specified here",
                                    hint="use y M d H h m s S a Z and quoted literals")
            out.append((tok[0], tok))
        else:
            out.append(("", tok))
    return out


# --8<-- [start:date_format]
def format_joda(moment: datetime, pattern: str) -> str:
    """Print an aware time with a Joda pattern (the subset key generators use): ``yyyy`` (``yy``:
    two digits), ``MM``/``M`` (``MMM``: ``Apr``, ``MMMM``: ``April``), ``dd``, ``HH``, ``hh``, ``a``,
    ``mm``, ``ss``, ``S…`` (leading fraction digits), ``Z`` (``+0000``; ``ZZ``: ``+00:00``), quoted
    literals."""
    out = []
    for letter, tok in _tokens(pattern):
        n = len(tok)
        if letter == "y":
            out.append(f"{moment.year % 100:02d}" if n == 2 else f"{moment.year:0{n}d}")
        elif letter == "M":
            out.append(_MONTHS[moment.month - 1][:3] if n == 3 else _MONTHS[moment.month - 1] if n > 3
                       else f"{moment.month:0{n}d}")
        elif letter in ("d", "H", "h", "m", "s"):
            value = {"d": moment.day, "H": moment.hour, "h": (moment.hour % 12) or 12, "m": moment.minute,
                     "s": moment.second}[letter]
            out.append(f"{value:0{n}d}")
        elif letter == "S":
            out.append(f"{moment.microsecond // 1000:03d}".ljust(n, "0")[:n])
        elif letter == "a":
            out.append("AM" if moment.hour < 12 else "PM")
        elif letter == "Z":
            offset = int((moment.utcoffset() or timedelta()).total_seconds()) // 60
            sign, hours, minutes = "-" if offset < 0 else "+", abs(offset) // 60, abs(offset) % 60
            out.append(f"{sign}{hours:02d}{':' if n == 2 else ''}{minutes:02d}")
        else:
            out.append(tok)
    return "".join(out)


def parse_joda(text: str, patterns: list[str], zone: tzinfo | None) -> datetime:
    """Parse with the first of ``patterns`` that matches the whole text. An offset in the text
    (``Z`` pattern: ``+0100``, ``+01:00`` or ``Z``) sets the time's zone, else ``zone`` (UTC when None)."""
    for pattern in patterns:
        tokens = _tokens(pattern)
        regex = []
        for i, (letter, tok) in enumerate(tokens):
            nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
            width = len(tok) if nxt and nxt != "a" and nxt != "Z" else None  # adjacent numbers: fixed width
            if letter in "yMdHhmsS" and letter and not (letter == "M" and len(tok) >= 3):
                most = {"y": 9, "S": 9}.get(letter, 2)
                regex.append(f"(?P<{letter}>\\d{{{width}}})" if width else f"(?P<{letter}>\\d{{1,{most}}})")
            elif letter == "M":
                regex.append("(?P<Mtext>" + "|".join(m if len(tok) > 3 else m[:3] for m in _MONTHS) + ")")
            elif letter == "a":
                regex.append("(?P<a>AM|PM)")
            elif letter == "Z":
                regex.append(r"(?P<Z>Z|[+-]\d{2}:?\d{2})")
            else:
                regex.append(re.escape(tok))
        try:
            m = re.fullmatch("".join(regex), text)
        except re.error as err:
            raise InvalidConfig(f"date pattern {pattern!r} repeats a field",
                                hint="name each field once") from err
        if m is None:
            continue
        g = m.groupdict()
        month = int(g["M"]) if g.get("M") else (
            [x[:3] for x in _MONTHS].index(g["Mtext"][:3]) + 1 if g.get("Mtext") else 1)
        hour = int(g.get("H") or g.get("h") or 0)
        if g.get("a"):
            hour = hour % 12 + (12 if g["a"] == "PM" else 0)
        frac = g.get("S") or "0"
        tz: tzinfo = zone or UTC
        if g.get("Z"):
            z = g["Z"].replace(":", "")
            tz = UTC if z == "Z" else timezone((-1 if z[0] == "-" else 1) * timedelta(hours=int(z[1:3]),
                                                                                    minutes=int(z[3:5])))
        try:
            return datetime(int(g.get("y") or 1970), month, int(g.get("d") or 1), hour, int(g.get("m") or 0),
                            int(g.get("s") or 0), int(frac.ljust(3, "0")[:3]) * 1000, tzinfo=tz)
        except ValueError as err:
            raise InvalidRecord(f"{text!r} is not a valid date for {pattern!r}: {err}") from err
    raise InvalidRecord(f"{text!r} does not match the input date format(s) {patterns}",
                        hint="check hoodie.keygen.timebased.input.dateformat")
# --8<-- [end:date_format]


_JODA_LEGACY_ZONES = {
    "MET": "CET", "ECT": "CET", "MIT": "Pacific/Apia", "HST": "Pacific/Honolulu", "AST": "America/Anchorage",
    "PST": "America/Los_Angeles", "MST": "America/Denver", "PNT": "America/Phoenix", "CST": "America/Chicago",
    "EST": "America/New_York", "IET": "America/Indiana/Indianapolis", "PRT": "America/Puerto_Rico",
    "CNT": "America/St_Johns", "AGT": "America/Argentina/Buenos_Aires", "BET": "America/Sao_Paulo",
    "ART": "Africa/Cairo", "CAT": "Africa/Harare", "EAT": "Africa/Addis_Ababa", "NET": "Asia/Yerevan",
    "PLT": "Asia/Karachi", "IST": "Asia/Kolkata", "BST": "Asia/Dhaka", "VST": "Asia/Ho_Chi_Minh",
    "CTT": "Asia/Shanghai", "JST": "Asia/Tokyo", "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
    "SST": "Pacific/Guadalcanal", "NST": "Pacific/Auckland",
}
"""Joda-Time's ``DateTimeZone.forTimeZone`` turns Java's legacy three-letter ids into regions (so
``EST`` keeps daylight saving time, unlike ``java.time``'s fixed ``-05:00``); Hudi's timestamp
key generator builds its zones with it (``TimestampBasedAvroKeyGenerator``)."""


def java_time_zone(zone_id: str) -> tzinfo:
    """A ``TimeZone.getTimeZone`` id as Joda's ``DateTimeZone.forTimeZone`` reads it: ``UTC``/``GMT``/
    ``Z``, ``GMT±H[H][:MM]``, a legacy three-letter id (``EST`` is ``America/New_York``), or a
    region such as ``Asia/Shanghai``. Java silently falls back to GMT on an unknown id; here it is
    an error."""
    from zoneinfo import ZoneInfo

    if zone_id.upper() in ("UTC", "GMT", "Z", "UCT"):
        return UTC
    zone_id = _JODA_LEGACY_ZONES.get(zone_id, zone_id)
    m = re.fullmatch(r"(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?", zone_id)
    if m:
        delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return timezone(-delta if m.group(1) == "-" else delta)
    try:
        return ZoneInfo(zone_id)
    except (ValueError, KeyError, OSError) as err:
        raise InvalidConfig(f"time zone {zone_id!r} is unknown", hint="use a region id like Asia/Shanghai, "
                            "UTC or GMT+08:00") from err


# --8<-- [start:timestamp]
@dataclass(frozen=True)
class TimestampConfig:
    """``hoodie.keygen.timebased.*``. ``timestamp_type``: UNIX_TIMESTAMP (seconds),
    EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR (a number in ``scalar_unit``), DATE_STRING or
    MIXED (text read with ``input_format``, a ``input_delimiter``-separated list of Joda patterns).
    Zones: ``timezone`` sets both; else ``input_timezone`` / ``output_timezone`` ("" = unset)."""

    timestamp_type: str = "DATE_STRING"
    input_format: str = "yyyy-MM-dd HH:mm:ss"
    output_format: str = "yyyy/MM/dd"
    timezone: str = ""
    scalar_unit: str = "SECONDS"
    input_timezone: str = ""
    output_timezone: str = ""
    input_delimiter: str = ","

    def __post_init__(self) -> None:
        if self.timestamp_type not in ("UNIX_TIMESTAMP", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR",
                                       "DATE_STRING", "MIXED"):
            raise InvalidConfig(f"hoodie.keygen.timebased.timestamp.type {self.timestamp_type!r} is unknown",
                                hint="use UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR, "
                                     "DATE_STRING or MIXED")
        if self.scalar_unit.upper() not in _TO_MILLIS:
            raise InvalidConfig(f"scalar time unit {self.scalar_unit!r} is unknown",
                                hint=f"use one of {', '.join(_TO_MILLIS)}")
        _tokens(self.output_format)

    def _zone(self, which: str) -> tzinfo | None:
        zone_id = self.timezone if self.timezone.strip() else getattr(self, f"{which}_timezone")
        return java_time_zone(zone_id.strip()) if zone_id.strip() else None

    def _millis(self, number: int) -> int:
        """The number (in the type's unit) as epoch milliseconds, as ``TimeUnit.convert`` does."""
        units = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
                 "EPOCHMICROSECONDS": "MICROSECONDS", "SCALAR": self.scalar_unit.upper()}
        unit = units.get(self.timestamp_type)
        if unit is None:
            raise InvalidRecord(f"a number ({number}) cannot be read as a {self.timestamp_type} time",
                                hint="give the time as text, or use a numeric "
                                     "hoodie.keygen.timebased.timestamp.type")
        factor = _TO_MILLIS[unit]
        if factor > 0:
            return max(-_LONG_MAX - 1, min(_LONG_MAX, number * factor))
        return abs(number) // -factor * (1 if number >= 0 else -1)

    def format(self, value: Any, consistent_logical_timestamp: bool = False) -> str:
        """The partition text of one value. Numbers (doubles and decimals truncated to a long, dates
        as their epoch day, timestamps as epoch microseconds) are in the type's unit; text is
        parsed. Null is the time ``1`` (DATE_STRING: 1 ms printed with the first input format)."""
        in_zone, out_zone = self._zone("input"), self._zone("output")
        if value is None:
            if self.timestamp_type not in ("DATE_STRING", "MIXED"):
                value = 1
            else:
                first = self.input_format.split(self.input_delimiter)[0].strip()
                value = format_joda(datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC).astimezone(
                    in_zone or out_zone or UTC), first)
        if isinstance(value, datetime) and consistent_logical_timestamp:
            moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        elif isinstance(value, str):
            patterns = [p.strip() for p in re.split(self.input_delimiter, self.input_format) if p.strip()]
            if self.timestamp_type not in ("DATE_STRING", "MIXED") or not patterns:
                raise InvalidRecord(f"text {value!r} cannot be read as a {self.timestamp_type} time",
                                    hint="set hoodie.keygen.timebased.timestamp.type=DATE_STRING and "
                                         "an input format")
            moment = parse_joda(value, patterns, in_zone)
            moment = moment.astimezone(in_zone) if in_zone else moment  # Joda withZone: the input zone wins
            out_zone = out_zone or moment.tzinfo
        else:
            if isinstance(value, bool) or not isinstance(value, int | float | Decimal | date):
                raise InvalidRecord(f"a {type(value).__name__} value cannot be read as a time")
            if isinstance(value, datetime):
                number = int(java_string(value))
            elif isinstance(value, date):
                number = value.toordinal() - date(1970, 1, 1).toordinal()
            elif isinstance(value, float) and (value != value or abs(value) == float("inf")):
                raise InvalidRecord(f"{value} cannot be read as a time")
            else:
                number = int(value)  # Java longValue(): truncation toward zero
            millis = self._millis(number)
            try:
                moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)
            except OverflowError as err:
                raise InvalidRecord(f"time {value!r} is outside years 1-9999") from err
        return format_joda(moment.astimezone(out_zone or UTC), self.output_format)
# --8<-- [end:timestamp]


_TIMEBASED_PREFIXES = ("hoodie.keygen.timebased.", "hoodie.deltastreamer.keygen.timebased.")


def _timebased(props: Mapping[str, str], key: str) -> str | None:
    """A ``hoodie.keygen.timebased.*`` setting, else its older ``hoodie.deltastreamer.keygen.timebased.*``
    name, which Hudi still accepts (``TimestampKeyGeneratorConfig``: ``withAlternatives``)."""
    for prefix in _TIMEBASED_PREFIXES:
        if prefix + key in props:
            return props[prefix + key]
    return None


def _timestamp_config(props: Mapping[str, str]) -> TimestampConfig:
    """The ``hoodie.keygen.timebased.*`` settings (or their older ``hoodie.deltastreamer.*`` names).
    Hudi requires the type and the output format; a table whose hoodie.properties kept only the
    formats (as Hudi persists them) is DATE_STRING. A blank input-format delimiter is ``,``
    (``DateTimeParser.getConfigInputDateFormatDelimiter``)."""
    kind = _timebased(props, "timestamp.type") or ("DATE_STRING" if _timebased(props, "input.dateformat") else None)
    output = _timebased(props, "output.dateformat")
    if not kind or not output:
        raise InvalidConfig("a TIMESTAMP key generator needs hoodie.keygen.timebased.timestamp.type and "
                            "hoodie.keygen.timebased.output.dateformat",
                            hint="set both (and input.dateformat for DATE_STRING)")
    return TimestampConfig(
        timestamp_type=kind.upper(), input_format=_timebased(props, "input.dateformat") or "",
        output_format=output, timezone=_timebased(props, "timezone") or "",
        scalar_unit=_timebased(props, "timestamp.scalar.time.unit") or "SECONDS",
        input_timezone=_timebased(props, "input.timezone") or "",
        output_timezone=_timebased(props, "output.timezone") or "",
        input_delimiter=(_timebased(props, "input.dateformat.list.delimiter.regex") or "").strip() or ",")


# =================================================================================================
# key generators
# =================================================================================================

def _field_value(record: Mapping[str, Any], path: str) -> tuple[bool, Any]:
    """(found, value) of a possibly nested field ``a.b.c``; a null parent yields (True, None)."""
    node: Any = record
    for part in path.split("."):
        if node is None:
            return True, None
        if not isinstance(node, Mapping):
            raise InvalidRecord(f"field {path!r}: {part!r} is not inside a record")
        if part not in node:
            return False, None
        node = node[part]
    return True, node


@dataclass(frozen=True)
class KeyGenerator:
    """A key generator: the rules that turn a record's fields into its key and partition path.

    ``partition_kinds`` (CUSTOM only): SIMPLE or TIMESTAMP per partition field.
    ``encode_single_key_field_name``: COMPLEX with one key field writes ``id:1`` (Hudi up to
    0.14.0, and 1.1 by default); Hudi 0.14.1–1.0.2 wrote plain ``1`` (HUDI-7001;
    ``hoodie.write.complex.keygen.new.encoding=true``).
    """

    kind: str
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...] = ()
    hive_style: bool = False
    url_encode: bool = False
    timestamp: TimestampConfig | None = None
    partition_kinds: tuple[str, ...] = ()
    consistent_logical_timestamp: bool = False
    encode_single_key_field_name: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KEYGEN_TYPES:
            raise InvalidConfig(f"key generator {self.kind!r} is unknown",
                                hint=f"use one of {', '.join(KEYGEN_TYPES)}")
        if self.kind in ("SIMPLE", "TIMESTAMP") and (len(self.record_key_fields) > 1
                                                    or len(self.partition_fields) > 1):
            raise InvalidConfig(f"a {self.kind} key generator takes one record key field and one "
                                "partition field",
                                hint="use COMPLEX (or CUSTOM) for several fields")
        if self.kind == "CUSTOM" and len(self.partition_kinds) != len(self.partition_fields):
            raise InvalidConfig("a CUSTOM key generator needs a type for every partition field",
                                hint="write the partition fields as field:SIMPLE or field:TIMESTAMP")
        if any(k not in ("SIMPLE", "TIMESTAMP") for k in self.partition_kinds):
            raise InvalidConfig(f"partition field types {self.partition_kinds} must be SIMPLE or TIMESTAMP")
        if self.timestamp is None and (self.kind == "TIMESTAMP" or "TIMESTAMP" in self.partition_kinds):
            raise InvalidConfig("a timestamp partition field needs its hoodie.keygen.timebased.* settings")

    def _text(self, value: Any) -> str | None:
        return None if value is None else java_string(value, self.consistent_logical_timestamp)

    # --8<-- [start:record_key]
    def record_key(self, record: Mapping[str, Any]) -> str:
        """The record key. One field (SIMPLE, TIMESTAMP; NON_PARTITION and CUSTOM with one field):
        its value, which may not be null or empty. Several fields (or COMPLEX, GLOBAL_DELETE):
        ``f:v`` joined by ``,`` with ``__null__``/``__empty__``, not all of them null or empty."""
        fields = self.record_key_fields
        if not fields:
            raise InvalidConfig("no record key field is configured",
                                hint="set hoodie.datasource.write.recordkey.field")
        single = len(fields) == 1 and (self.kind not in ("COMPLEX", "GLOBAL_DELETE")
                                       or (self.kind == "COMPLEX" and not self.encode_single_key_field_name))
        if single:
            found, value = _field_value(record, fields[0])
            text = self._text(value)
            if not text:
                raise InvalidRecord(f"record key field {fields[0]!r} is "
                                    f"{'missing' if not found else 'null' if value is None else 'empty'}",
                                    hint="every record needs a key")
            return text
        parts = []
        for f in fields:
            found, value = _field_value(record, f)
            if not found:
                raise InvalidRecord(f"record key field {f!r} does not exist in the record")
            text = self._text(value)
            parts.append(f"{f}:{NULL_KEY if text is None else text or EMPTY_KEY}")
        if all(p.endswith((":" + NULL_KEY, ":" + EMPTY_KEY)) for p in parts):
            raise InvalidRecord(f"every record key field ({', '.join(fields)}) is null or empty",
                                hint="every record needs a key")
        return ",".join(parts)
    # --8<-- [end:record_key]

    # --8<-- [start:partition_path]
    def partition_path(self, record: Mapping[str, Any]) -> str:
        """The partition path: per partition field its text (``__HIVE_DEFAULT_PARTITION__`` when
        null or empty), URL-escaped when configured, ``field=`` before it when hive-style, each
        folder checked by ``check_partition_value`` (and the first not ``.hoodie``); joined by ``/``."""
        if self.kind in ("NON_PARTITION", "GLOBAL_DELETE") or not self.partition_fields:
            return ""
        segments = []
        for i, f in enumerate(self.partition_fields):
            kind = self.partition_kinds[i] if self.kind == "CUSTOM" else self.kind
            _, value = _field_value(record, f)
            if kind == "TIMESTAMP":
                assert self.timestamp is not None
                text = self.timestamp.format(value, self.consistent_logical_timestamp)
            else:
                text = self._text(value) or DEFAULT_PARTITION
            if self.url_encode:
                text = escape_path_name(text)
            folder = f"{f}={text}" if self.hive_style else text
            check_partition_value(folder, f, may_contain_slash=kind == "TIMESTAMP")
            segments.append(folder)
        if segments[0] == ".hoodie":
            check_partition_path(segments[0], (self.partition_fields[0],))
        return "/".join(segments)
    # --8<-- [end:partition_path]


def _bool(props: Mapping[str, str], key: str) -> bool:
    return props.get(key, "false").strip().lower() == "true"


# --8<-- [start:from_config]
def key_generator_from_config(props: Mapping[str, str]) -> KeyGenerator:
    """The key generator a table's config (``hoodie.table.*``) or write options
    (``hoodie.datasource.write.*``) name: a v6 class, else a v8 type, else inferred as Hudi
    does (no partition field: NON_PARTITION; ``field:type``: CUSTOM; one partition field and one
    key field: SIMPLE; otherwise COMPLEX)."""
    klass = (props.get("hoodie.table.keygenerator.class")
             or props.get("hoodie.datasource.write.keygenerator.class"))
    kind = (props.get("hoodie.table.keygenerator.type")
            or props.get("hoodie.datasource.write.keygenerator.type"))
    if klass:
        if klass not in KEYGEN_TYPES_BY_CLASS:
            raise InvalidConfig(f"key generator class {klass} is not specified here",
                                hint="use one of Simple, Complex, Nonpartitioned, TimestampBased, Custom or "
                                     "GlobalDelete KeyGenerator (org.apache.hudi.keygen)")
        kind = KEYGEN_TYPES_BY_CLASS[klass]
    keys = tuple(f.strip() for f in (props.get("hoodie.table.recordkey.fields")
                                     or props.get("hoodie.datasource.write.recordkey.field") or "").split(",")
                 if f.strip())
    raw_parts = [f.strip() for f in (props.get("hoodie.table.partition.fields")
                                     or props.get("hoodie.datasource.write.partitionpath.field")
                                     or "").split(",") if f.strip()]
    if not kind:
        kind = ("NON_PARTITION" if not raw_parts else "CUSTOM" if ":" in raw_parts[0]
                else "SIMPLE" if len(raw_parts) == 1 and len(keys) <= 1 else "COMPLEX")
    kind = kind.upper().removesuffix("_AVRO")
    parts = tuple(p.split(":")[0] for p in raw_parts)
    kinds = tuple(p.split(":")[1].upper() for p in raw_parts if ":" in p)
    needs_time = kind == "TIMESTAMP" or (kind == "CUSTOM" and "TIMESTAMP" in kinds)
    return KeyGenerator(
        kind, keys, parts,
        hive_style=_bool(props, "hoodie.datasource.write.hive_style_partitioning"),
        url_encode=_bool(props, "hoodie.datasource.write.partitionpath.urlencode"),
        timestamp=_timestamp_config(props) if needs_time else None,
        partition_kinds=kinds if kind == "CUSTOM" else (),
        consistent_logical_timestamp=_bool(
            props, "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"),
        encode_single_key_field_name=not _bool(props, "hoodie.write.complex.keygen.new.encoding"))
# --8<-- [end:from_config]


# --8<-- [start:parse]
def parse_partition_path(path: str, fields: tuple[str, ...], hive_style: bool, *,
                         url_encoded: bool = False) -> dict[str, str | None]:
    """The partition values a path encodes, one folder per field (the inverse of
    ``partition_path`` for SIMPLE, COMPLEX and CUSTOM-SIMPLE fields): ``field=`` stripped when
    hive-style, ``%XX`` unescaped when URL-encoded, ``__HIVE_DEFAULT_PARTITION__`` read as null."""
    if not fields:
        if path:
            raise InvalidName(f"partition path {path!r} in a non-partitioned table", hint="expected ''")
        return {}
    segments = path.split("/")
    if len(segments) != len(fields):
        raise InvalidName(f"partition path {path!r} has {len(segments)} folders, not one per partition field "
                          f"({', '.join(fields)})", hint="a timestamp partition path is not a field value")
    out: dict[str, str | None] = {}
    for f, seg in zip(fields, segments, strict=True):
        if hive_style:
            name, sep, seg = seg.partition("=")
            if not sep or name != f:
                raise InvalidName(f"partition folder {name + sep + seg!r} is not {f}=<value>",
                                  hint="check hoodie.datasource.write.hive_style_partitioning")
        value = unescape_path_name(seg) if url_encoded else seg
        out[f] = None if value == DEFAULT_PARTITION else value
    return out
# --8<-- [end:parse]

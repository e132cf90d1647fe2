"""Timestamp partition values: a field read as a time and printed with a Joda date pattern.

The TIMESTAMP key generator (and CUSTOM's ``field:TIMESTAMP``) reads the partition field as a
time — a number in the unit of ``hoodie.keygen.timebased.timestamp.type`` (UNIX_TIMESTAMP,
EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR) or text parsed with the input Joda patterns
(DATE_STRING, MIXED) — and prints it in the output zone with the output Joda pattern. A null value
is the time ``1``.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``TimestampBasedAvroKeyGenerator``,
``TimestampKeyGeneratorConfig``, ``DateTimeParser`` and Joda-Time's ``DateTimeFormat`` and
``DateTimeZone.forTimeZone``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any

from spec.errors import InvalidConfig, InvalidRecord
from spec.keygen.key_values import java_string

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


def timestamp_config_from_props(props: Mapping[str, str]) -> TimestampConfig:
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

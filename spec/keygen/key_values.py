"""Key values: a field's value as the text a key generator writes, as Java prints it.

A record key or partition value is ``String.valueOf`` of the Avro value: integers in decimal,
doubles by Java's shortest round-trip digits (``1.0E10``, not ``10000000000.0``), floats by
``Float.toString``'s, booleans ``true``/``false``, dates as their epoch day and timestamps as epoch
microseconds unless consistent logical timestamps are on, decimals in plain notation.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieAvroUtils``
(``getNestedFieldValAsString``, ``convertValueForSpecificDataTypes``), ``KeyGenUtils`` and Java's
``String.valueOf`` / ``Double.toString`` / ``Float.toString``.
"""

from __future__ import annotations

import struct
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from spec.errors import InvalidRecord


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



"""The parsers of option values the registry (``spec.config.registry``) uses: each takes Hudi's string form and
returns the typed value, or raises ``ValueError`` saying what it expected (the registry turns it into an
``InvalidConfig`` naming the key).

Source: no Hudi class of its own; each parser reads a value as the getters of Hudi's ``HoodieConfig`` read the
``ConfigProperty`` it belongs to (``Boolean.parseBoolean``, ``Integer.parseInt``, ``Float.parseFloat``, an enum's
``valueOf``), the same in 0.15.x, 1.0.x and 1.1.x."""

from __future__ import annotations

import math
import struct


def parse_bool(v: str) -> bool:
    """``true`` or ``false``, any case (Hudi's ``Boolean.parseBoolean`` of a validated value)."""
    if v.lower() not in ("true", "false"):
        raise ValueError("expected true or false")
    return v.lower() == "true"


def parse_positive_int(v: str) -> int:
    """An integer above zero."""
    n = int(v)
    if n <= 0:
        raise ValueError("expected a positive integer")
    return n


def parse_non_negative_int(v: str) -> int:
    """An integer of zero or more."""
    n = int(v)
    if n < 0:
        raise ValueError("expected a non-negative integer")
    return n


def parse_java_float(v: str) -> float:
    """A finite number above zero, rounded to a 32-bit float as Java's ``Float.parseFloat`` reads it."""
    x = struct.unpack("<f", struct.pack("<f", float(v)))[0]
    if not math.isfinite(x) or x <= 0:
        raise ValueError("expected a number above zero")
    return float(x)


def parse_record_index_size(v: str) -> int:
    """A record index file group's size: 48 bytes (one entry) or more; below, Apache Hudi divides by zero."""
    n = int(v)
    if n < 48:
        raise ValueError("expected 48 or more (the bytes of one record index entry)")
    return n


def parse_index_type(v: str) -> str:
    """An index type (one of the setting's choices, upper case): ``GLOBAL_RECORD_LEVEL_INDEX``, Apache Hudi 1.2's
    name of the global record index (``HoodieIndex.IndexType``, where ``RECORD_INDEX`` is its deprecated name), is
    ``RECORD_INDEX``."""
    return "RECORD_INDEX" if v == "GLOBAL_RECORD_LEVEL_INDEX" else v


def parse_fields(v: str) -> tuple[str, ...]:
    """A comma-separated list of field names, blanks dropped."""
    return tuple(f.strip() for f in v.split(",") if f.strip())

"""How a record dataclass of ``spec.timeline.avro_model`` maps to its Avro record, field by field.

A field declared with ``avro(...)`` carries its Avro name (default: the camelCase of its own name)
and a codec saying how its value nests (a plain value, a list of strings, a map, a nested record, a
list or map of records). ``to_avro`` turns a record dataclass into the dict fastavro writes;
``from_avro`` reads one back, fields the writer's schema lacked keeping the dataclass's defaults
(the Avro schema's defaults), as Java's schema resolution gives them.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): the Avro records of
``org.apache.hudi.avro.model`` generated from ``hudi-common/src/main/avro/*.avsc`` (field names and
defaults), read and written by ``TimelineMetadataUtils``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from spec.errors import MetadataFormatError


@dataclass(frozen=True)
class _Codec:
    decode: Callable[[Any], Any]
    encode: Callable[[Any], Any]


def _keep(v: Any) -> Any:
    return v


def _opt(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else f(v)


PLAIN = _Codec(_keep, _keep)
STRINGS = _Codec(_opt(lambda v: tuple(v)), _opt(list))
MAP = _Codec(_opt(dict), _opt(dict))
MAP_OF_STRINGS = _Codec(_opt(lambda v: {k: tuple(x) for k, x in v.items()}),
                        _opt(lambda v: {k: list(x) for k, x in v.items()}))


def _record(cls: type[Any]) -> _Codec:
    return _Codec(_opt(lambda v: from_avro(cls, v)), _opt(to_avro))


def _records(cls: type[Any]) -> _Codec:
    return _Codec(_opt(lambda v: tuple(from_avro(cls, x) for x in v)),
                  _opt(lambda v: [to_avro(x) for x in v]))


def _map_of_records(cls: type[Any]) -> _Codec:
    return _Codec(_opt(lambda v: {k: from_avro(cls, x) for k, x in v.items()}),
                  _opt(lambda v: {k: to_avro(x) for k, x in v.items()}))


def _map_of_optional_records(cls: type[Any]) -> _Codec:
    return _Codec(_opt(lambda v: {k: tuple(None if x is None else from_avro(cls, x) for x in xs)
                                  for k, xs in v.items()}),
                  _opt(lambda v: {k: [None if x is None else to_avro(x) for x in xs] for k, xs in v.items()}))


def _map_of_record_lists(cls: type[Any]) -> _Codec:
    return _Codec(_opt(lambda v: {k: tuple(from_avro(cls, x) for x in xs) for k, xs in v.items()}),
                  _opt(lambda v: {k: [to_avro(x) for x in xs] for k, xs in v.items()}))


_SHAPES: dict[str, Callable[[type[Any]], _Codec]] = {
    "record": _record, "records": _records, "map": _map_of_records, "map_of_lists": _map_of_record_lists,
    "map_of_optional_lists": _map_of_optional_records,
}


# --8<-- [start:fields]
def avro(name: str | None = None, codec: _Codec = PLAIN, *, of: type[Any] | None = None,
         shape: str = "record", **kw: Any) -> Any:
    """A dataclass field stored under Avro field ``name`` (default: the camelCase of its own name).

    ``of`` names the nested record class; ``shape`` says how it nests: one ``record``, a list of
    ``records``, a ``map`` of records, a map of record lists, a map of lists of optional records.
    """
    return field(metadata=avro_meta(name, codec, of=of, shape=shape), **kw)


def avro_meta(name: str | None = None, codec: _Codec = PLAIN, *, of: type[Any] | None = None,
              shape: str = "record") -> dict[str, Any]:
    """The field metadata ``avro`` attaches (for fields declared with ``dataclasses.field``)."""
    return {"avro_name": name, "codec": _SHAPES[shape](of) if of is not None else codec}


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def avro_name(f: Any) -> str:
    """A dataclass field's Avro field name: the ``avro_name`` given in its metadata, else its name in camelCase."""
    return str(f.metadata.get("avro_name") or _camel(f.name))


def to_avro(obj: Any) -> dict[str, Any]:
    """The Avro record (fastavro-ready dict) of a plan dataclass."""
    return {avro_name(f): f.metadata.get("codec", PLAIN).encode(getattr(obj, f.name)) for f in fields(obj)}


T = TypeVar("T")


def from_avro(cls: type[T], rec: Mapping[str, Any]) -> T:
    """A plan dataclass from its decoded Avro record; fields the writer's schema lacked keep their
    defaults."""
    if not isinstance(rec, Mapping):
        raise MetadataFormatError(f"{cls.__name__} must be a record, got {type(rec).__name__}")
    kwargs = {f.name: f.metadata.get("codec", PLAIN).decode(rec[avro_name(f)])
              for f in fields(cls) if avro_name(f) in rec}  # type: ignore[arg-type]
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise MetadataFormatError(f"{cls.__name__} lacks a required field: {err}") from err
# --8<-- [end:fields]

"""The Avro object container a timeline file is written in, holding exactly one record.

Container layout (as Java's ``DataFileWriter`` writes it with the null codec): the magic
``Obj\\x01``; a metadata map with the single key ``avro.schema`` (Java omits ``avro.codec``
when the codec is null); a 16-byte sync marker; one block = record count 1, byte size, the
record, the sync marker again. A reader takes any number of blocks, each ended by the sync marker.

A small container whose record holds no logical type is read by ``spec.timeline.avro_binary``, any
other by fastavro (whose import costs a short command more than the decoding): the same values.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``TimelineMetadataUtils``
(``serializeAvroMetadata``, ``deserializeAvroMetadata``); the Apache Avro specification, "Object Container Files".
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import Mapping
from typing import Any

from spec.errors import MetadataFormatError
from spec.timeline.avro_binary import SMALL_DATUM_BYTES, AvroUnsupported, plain_reader, read_long
from spec.timeline.avro_binary import reader as avro_reader
from spec.timeline.avro_schemas import Schema, schema_json

AVRO_MAGIC = b"Obj\x01"


# --8<-- [start:container]
def _zigzag_long(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z & ~0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _avro_bytes(b: bytes) -> bytes:
    return _zigzag_long(len(b)) + b


def default_sync_marker(payload: bytes) -> bytes:
    """A sync marker derived from the content (Java draws a random one; any 16 bytes are valid)."""
    return hashlib.md5(payload).digest()


def write_container(schema: Mapping[str, Any] | str, record_value: Mapping[str, Any],
                    sync_marker: bytes | None = None) -> bytes:
    """One record in an Avro object container: null codec, header ``{avro.schema}`` only."""
    import fastavro

    text = schema if isinstance(schema, str) else schema_json(schema)
    parsed = fastavro.parse_schema(json.loads(text))
    body = io.BytesIO()
    try:
        fastavro.schemaless_writer(body, parsed, dict(record_value))
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise MetadataFormatError(f"the record does not fit schema {json.loads(text).get('name')}: {err}",
                                  hint="check required fields and value types") from err
    data = body.getvalue()
    sync = sync_marker if sync_marker is not None else default_sync_marker(text.encode() + data)
    if len(sync) != 16:
        raise MetadataFormatError(f"an Avro sync marker is 16 bytes, not {len(sync)}")
    header = (AVRO_MAGIC + _zigzag_long(1) + _avro_bytes(b"avro.schema") + _avro_bytes(text.encode("utf-8"))
              + _zigzag_long(0) + sync)
    return header + _zigzag_long(1) + _zigzag_long(len(data)) + data + sync


class Container:
    """A decoded timeline container: its writer schema text, sync marker and the one record."""

    def __init__(self, schema_text: str, sync_marker: bytes, record_value: dict[str, Any]) -> None:
        self.schema_text = schema_text
        self.sync_marker = sync_marker
        self.record = record_value

    @property
    def record_name(self) -> str:
        """The record's short name (``HoodieCommitMetadata`` ...)."""
        name = json.loads(self.schema_text).get("name", "")
        return str(name).rsplit(".", 1)[-1]


_HEADER_META: Schema = {"type": "map", "values": "bytes"}
_HEADER_META_READ = avro_reader(_HEADER_META)


def read_container(data: bytes) -> Container:
    """The single record of an Avro timeline file, with its writer schema and sync marker: decoded by
    ``spec.timeline.avro_binary`` when it is small (``SMALL_DATUM_BYTES``) and its values plain, else (a
    large or damaged file, or a logical type) by fastavro, which gives the same values."""
    if not data.startswith(AVRO_MAGIC):
        raise MetadataFormatError("not an Avro object container (no Obj\\x01 magic)",
                                  hint="v6 commit metadata is JSON; every other timeline file is Avro")
    if len(data) <= SMALL_DATUM_BYTES:
        with contextlib.suppress(AvroUnsupported, EOFError, ValueError, IndexError, KeyError, TypeError):
            return _read_small_container(data)
    return _read_container_fastavro(data)


def _read_small_container(data: bytes) -> Container:
    """``read_container`` without fastavro: the header, then the blocks (null codec), each ended by the
    sync marker; exactly one record. Any failure leaves the file to fastavro, which says what is wrong."""
    meta, pos = _HEADER_META_READ(data, len(AVRO_MAGIC))
    sync = data[pos:pos + 16]
    pos += 16
    if meta.get("avro.codec", b"null") != b"null" or "avro.schema" not in meta or len(sync) != 16:
        raise AvroUnsupported("not a plain container")
    text = meta["avro.schema"].decode("utf-8")
    read = plain_reader(text)
    if read is None:
        raise AvroUnsupported("a schema left to fastavro")
    records: list[Any] = []
    while pos < len(data):
        count, pos = read_long(data, pos)
        size, pos = read_long(data, pos)
        end = pos + size
        for _ in range(count):
            value, pos = read(data, pos)
            records.append(value)
        if size < 0 or pos != end or data[end:end + 16] != sync:
            raise ValueError("an Avro block does not end at its size and sync marker")
        pos = end + 16
    if len(records) != 1 or not isinstance(records[0], dict):
        raise ValueError("not one record")
    return Container(text, sync, records[0])


def _read_container_fastavro(data: bytes) -> Container:
    import fastavro

    try:
        head = io.BytesIO(data)
        head.seek(len(AVRO_MAGIC))
        meta = fastavro.schemaless_reader(head, _HEADER_META)
        sync = head.read(16)
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as err:  # fastavro raises many kinds on damaged input
        raise MetadataFormatError(f"the Avro container is damaged: {type(err).__name__}: {err}",
                                  hint="the timeline file is truncated or corrupt") from err
    if len(records) != 1 or not isinstance(records[0], dict):
        raise MetadataFormatError(f"a timeline container holds exactly one record, this one {len(records)}")
    if not isinstance(meta, dict) or "avro.schema" not in meta or len(sync) != 16:
        raise MetadataFormatError("the Avro container header has no writer schema")
    return Container(meta["avro.schema"].decode("utf-8"), sync, records[0])
# --8<-- [end:container]

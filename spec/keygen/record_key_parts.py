"""A record key read back into its fields' values: the reverse of the key generators' ``f1:v1,f2:v2``.

``record_key_values(key, fields)`` is Hudi's ``KeyGenUtils.extractRecordKeysByFields`` (1.x), by which the
bucket index hashes a record (``spec.index.bucket_identifier``):

- a key without a ``,`` or without a ``:`` is one value, the key itself (a SIMPLE key, and a COMPLEX key of one
  field, ``id:1``, whole);
- else the key is read as ``field:value`` pairs, left to right, keeping the values of ``fields`` (every pair's
  when ``fields`` is empty or holds only ``""``), in the key's order. A value may hold ``:`` and ``,``: a pair
  ends at the last ``,`` before the next ``:`` that has a ``,`` after the current pair's ``:`` ahead of it
  (``col2:2014-10-22 13:50:42,col3:x`` reads ``2014-10-22 13:50:42``); the last pair takes the rest;
- ``__null__`` reads as null, ``__empty__`` as ``""``;
- no value kept: the key itself, as one value.

One departure, where Hudi never answers (``hudi_never_answers``): a pair left out whose value holds ``:`` and
runs to the key's end (``a:1,b:x:y`` read for ``a``) ends the reading here, where Hudi's search for the pair's
end loops forever.

Source (Apache Hudi 1.2.0, measured; 0.15.x, 1.0.x and 1.1.x, table versions 6, 8 and 9, not measured
here): ``org.apache.hudi.keygen.KeyGenUtils.extractRecordKeysByFields``.
"""

from __future__ import annotations

from collections.abc import Sequence

from spec.keygen.key_generators import EMPTY_KEY, NULL_KEY

PARTS_SEPARATOR = ","
"""Between a complex key's pairs (``KeyGenUtils.DEFAULT_RECORD_KEY_PARTS_SEPARATOR``)."""
VALUE_SEPARATOR = ":"
"""Between a pair's field and value (``KeyGenUtils.DEFAULT_COLUMN_VALUE_SEPARATOR``)."""


# --8<-- [start:values]
def _pair_end(key: str, colon: int) -> tuple[int, int]:
    """The ``,`` ending the pair whose ``:`` is at ``colon`` (-1: none, it runs to the end) and the next ``:``
    looked at (-1: none). A ``:`` with no ``,`` between it and ``colon`` is inside the value."""
    following = key.find(VALUE_SEPARATOR, colon + 1)
    comma = key.rfind(PARTS_SEPARATOR, 0, following + 1) if following >= 0 else -1
    while comma < colon and following >= 0:
        following = key.find(VALUE_SEPARATOR, following + 1)
        comma = key.rfind(PARTS_SEPARATOR, 0, following + 1) if following >= 0 else -1
    return comma, following


def record_key_values(key: str, fields: Sequence[str] = ()) -> tuple[str | None, ...]:
    """The values of ``fields`` in the record key ``key`` (every field's when none are named), as the module
    docstring says."""
    if PARTS_SEPARATOR not in key or VALUE_SEPARATOR not in key:
        return (key,)
    every = not fields or tuple(fields) == ("",)
    values: list[str | None] = []
    at = 0
    while at < len(key):
        colon = key.find(VALUE_SEPARATOR, at)
        assert colon >= 0, key  # a pair ends at a ',' before a ':'
        field = key[at:colon]
        comma, following = _pair_end(key, colon)
        end = comma if comma > 0 and following >= 0 else len(key)
        if every or field in fields:
            value = key[colon + 1:end]
            values.append(None if value == NULL_KEY else "" if value == EMPTY_KEY else value)
        at = end + 1 if end < len(key) else len(key)
    return tuple(values) if values else (key,)
# --8<-- [end:values]


def hudi_never_answers(key: str, fields: Sequence[str] = ()) -> bool:
    """Whether Hudi's reading of ``key`` never ends: a pair left out has a ``:`` after its own but no ``,`` before
    any later one (its value holds ``:`` and runs to the end), where Hudi's search for the pair's end goes round
    the key forever (``KeyGenUtils.extractRecordKeysByFields``, the branch of a field not asked for)."""
    if PARTS_SEPARATOR not in key or VALUE_SEPARATOR not in key or not fields or tuple(fields) == ("",):
        return False
    at = 0
    while at < len(key):
        colon = key.find(VALUE_SEPARATOR, at)
        comma, following = _pair_end(key, colon)
        if key[at:colon] not in fields and following < 0 and key.find(VALUE_SEPARATOR, colon + 1) >= 0:
            return True
        end = comma if comma > 0 and following >= 0 else len(key)
        at = end + 1 if end < len(key) else len(key)
    return False

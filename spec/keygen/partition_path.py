"""Partition paths: the folder a partition value makes, URL-escaped when asked, and which paths are safe.

A null or empty partition value is ``__HIVE_DEFAULT_PARTITION__``. With
``hoodie.datasource.write.partitionpath.urlencode=true`` each value is escaped by
``PartitionPathEncodeUtils.escapePathName``. A partition value that would leave the table's folder
(``.``, ``..``, a ``/`` that is not URL-encoded), holds NUL or another control character (unless
URL-encoded) or makes a folder name over 255 bytes is an error. ``parse_partition_path`` reads
the values back out of a path.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``PartitionPathEncodeUtils``
(``escapePathName``, ``unescapePathName``, ``DEFAULT_PARTITION_PATH``), ``KeyGenUtils``
(``getPartitionPath``) and, for reading the values back, ``SparkHoodieTableFileIndex``
(``parsePartitionColumnValues``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from spec.errors import InvalidName, InvalidRecord

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The folder of a null or empty partition value."""

# --8<-- [start:escape]
_ESCAPED = frozenset([*map(chr, range(0x00, 0x20)), '"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f",
                      "{", "[", "]", "^"])
ESCAPE_ORDER = ("%", *sorted(_ESCAPED - {"%"}))
"""The escaped characters in an order that escapes each character once when replaced one after the
other over a whole column (``%`` first: later escapes add ``%`` that must stay as it is)."""


def escape_path_name(text: str) -> str:
    """``PartitionPathEncodeUtils.escapePathName``: each of the characters U+0000–U+001F, U+007F
    and ``"#%'*/:=?\\{[]^`` becomes ``%`` and its two-digit upper-case hex code; all others
    (spaces and non-ASCII letters too) stay as they are."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def unescape_path_name(text: str) -> str:
    """``unescapePathName``: every ``%XX`` (two hex digits) back to its character."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


_ESCAPED_IN_FILE_NAMES = _ESCAPED | {"-", "_"}


def escape_file_name(text: str) -> str:
    """``PartitionPathEncodeUtils.escapeFileName``: ``escape_path_name`` that also escapes ``-`` and ``_`` (the
    separators of the file names it goes into), as ``%2D`` and ``%5F``; ``unescape_path_name`` undoes it.
    Apache Hudi 1.2.0 escapes exactly these characters (``tests/test_hudi_tech_spec_measured.py`` asks it)."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED_IN_FILE_NAMES else c for c in text)
# --8<-- [end:escape]


# --8<-- [start:check]
MAX_FOLDER_BYTES = 255
"""The longest file or folder name (UTF-8 bytes) local file systems take (ext4, XFS, APFS, NTFS: 255);
a longer partition folder fails with ``ENAMETOOLONG`` half way through a write."""
_CONTROL = re.compile(r"[\x01-\x1f\x7f]")


def check_partition_value(text: str, field_name: str, may_contain_slash: bool) -> str:
    """Raise InvalidRecord if a partition path part would name a folder outside its partition or
    one file systems and readers cannot take: NUL or another control character (U+0000–U+001F,
    U+007F: ``hoodie.datasource.write.partitionpath.urlencode=true`` escapes them, as
    ``PartitionPathEncodeUtils.escapePathName`` does), a ``/`` in a value that is one folder (not
    URL-encoded), a folder named ``.``, ``..`` or nothing, or one longer than 255 bytes.
    ``may_contain_slash``: a timestamp output format such as ``yyyy/MM/dd``."""
    if "\x00" in text:
        raise InvalidRecord(f"the partition value {text!r} of {field_name!r} contains NUL",
                            hint="remove NUL from partition values")
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


# --8<-- [start:default_columns]
def default_partition_columns(path: str, fields: tuple[str, ...], hive_style: bool) -> tuple[str, ...]:
    """The partition columns a record of the partition ``path`` reads as null: those whose folder is
    ``__HIVE_DEFAULT_PARTITION__`` (one folder per field; a path of another shape names none).

    Apache Hudi's Spark datasource reads a partition column from the partition path, not from the data file
    (``SparkHoodieTableFileIndex`` → ``HoodieSparkUtils.doParsePartitionColumnValues``, then Spark's
    ``PartitioningUtils``, which reads the default partition name as null). So a record written with an empty
    partition value, whose file holds ``""`` (Hudi's writer stores the value as given), reads as null, as
    one written with a null value does (case ``null-ordering-partition-*``: Apache Hudi 1.2.0 writes ``""`` in
    the base file and reads null back). Every other value of the partition fields this specification writes
    reads back as stored. Not so for timestamp-based partition fields, whose folder is a formatted time:
    callers leave those out."""
    try:
        values = parse_partition_path(path, fields, hive_style)
    except InvalidName:
        return ()
    return tuple(f for f, v in values.items() if v is None)
# --8<-- [end:default_columns]


def check_partition_paths(paths: Iterable[str | None], fields: tuple[str, ...]) -> None:
    """``check_partition_path`` on each distinct path of a batch (a null path is the empty one)."""
    for path in dict.fromkeys(paths):
        check_partition_path(path or "", fields)

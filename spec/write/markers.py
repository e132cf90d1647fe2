"""Write markers: the files a write names before it writes each data file, so a failed write can be undone.

A write at instant ``T`` first creates the folder ``.hoodie/.temp/T``; before it creates, merges into or appends to
a data file it creates the empty marker ``.hoodie/.temp/T/<partition>/<data file name>.marker.<IO type>`` (a direct
marker), the IO type ``CREATE`` (a new base file), ``MERGE`` (a base file rewriting an older one) or ``APPEND`` (a
log file). The folder is deleted just before the instant completes, so markers exist only for a write in flight:
rolling back a failed write deletes the data files its markers name, even those no commit metadata lists (a
half-written file of a killed task), then the folder. Readers never look at markers.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``WriteMarkers``,
``DirectWriteMarkers`` (``getMarkerPath``, ``create``), ``HoodieTableMetaClient.TEMPFOLDER_NAME``, ``IOType`` and
``MarkerBasedRollbackStrategy``.
"""

from __future__ import annotations

from enum import StrEnum

from spec.errors import InvalidName

# --8<-- [start:markers]
MARKER_FOLDER = ".hoodie/.temp"
MARKER_EXTENSION = ".marker."


class IOType(StrEnum):
    """``IOType``: what the write does to the data file a marker names."""

    CREATE = "CREATE"
    MERGE = "MERGE"
    APPEND = "APPEND"


def marker_dir(instant: str) -> str:
    """The folder of the markers of the write at ``instant``."""
    return f"{MARKER_FOLDER}/{instant}"


def marker_path(instant: str, data_file: str, io_type: str) -> str:
    """The marker of ``data_file`` (its path relative to the base path) for the write at ``instant``."""
    return f"{marker_dir(instant)}/{data_file}{MARKER_EXTENSION}{IOType(io_type).value}"


def is_marker_name(name: str) -> bool:
    """Whether a file name in a marker folder is a marker: ``<data file>.marker.<IO type>``. A writer killed while it
    created a marker can leave the marker's temporary sibling (``.<marker>.<hex>.tmp``, the local atomic create of
    ``spec.storage.hoodie_storage``): no marker (its data file was not begun, a marker comes first), deleted with the
    folder when the write is rolled back."""
    _, sep, io_type = name.rpartition(MARKER_EXTENSION)
    return bool(sep) and io_type in IOType.__members__


def marked_file(instant: str, marker: str) -> tuple[str, IOType]:
    """The data file (relative to the base path) and IO type a marker of the write at ``instant`` names; a path that
    is not such a marker raises ``InvalidName``."""
    prefix = marker_dir(instant) + "/"
    data_file, sep, io_type = marker.removeprefix(prefix).rpartition(MARKER_EXTENSION)
    if not marker.startswith(prefix) or not sep or not data_file or io_type not in IOType.__members__:
        raise InvalidName(f"{marker!r} is not a marker of the write at {instant}",
                          hint=f"{prefix}<partition>/<data file>.marker.<CREATE|MERGE|APPEND>")
    return data_file, IOType(io_type)
# --8<-- [end:markers]

"""The LSM timeline: where archival puts the completed instants of table versions 8 and 9.

The history folder (``.hoodie/timeline/history``: ``hoodie.timeline.history.path``, ``history``, under the timeline
folder) holds three kinds of files:

- **history files** ``<min>_<max>_<level>.parquet``: rows of ``HoodieLSMTimelineInstant``, one per archived
  instant. ``<min>`` and ``<max>`` are the *requested* (begin) times of the first and last instant of the file —
  Hudi's specification page says ``<max>`` is the greatest completion time, but ``LSMTimelineWriter`` names the
  file after the first and last instant's begin time, and readers match ``<level>`` as a single digit;
- **manifests** ``manifest_<N>``: the files of snapshot ``N``, as Jackson prints ``{"files": [{"fileName": ...,
  "fileLen": ...}]}``; each archival (and each compaction of the history) writes the next one: the previous
  manifest's files, minus those compacted away, plus the new file;
- **the version file** ``_version_``: the number of the current snapshot, as UTF-8 text, rewritten after its
  manifest. A reader takes that number, or — when the file is missing or not a number — the highest
  ``manifest_<N>``; with neither, the history is empty (version -1). Versions start at 1.

Each row holds ``instantTime`` and ``completionTime``, the ``action`` as completed, ``metadata`` (the bytes of the
completed instant file as they were on the active timeline: Avro for a commit of table version 8 or 9, not the JSON
Hudi's page says), ``plan`` (the requested plan of a clean, compaction or log compaction; of a replacecommit or
clustering the inflight file's bytes when not empty, else the requested file's) and ``version`` 1. When ten files
accumulate in a level (``hoodie.timeline.compaction.batch.size``), Hudi merges them into one file of the next
level; a reader reads the files of every level the manifest lists.

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; 0.15.x, table version 6, archives to ``.hoodie/archived``,
not stated here): ``LSMTimeline`` (``VERSION_FILE_NAME``, ``MANIFEST_FILE_PREFIX``, ``ARCHIVE_FILE_PATTERN``,
``latestSnapshotVersion``), ``LSMTimelineWriter`` (``write``, ``updateManifest``, ``newFileName``,
``compactAndClean``), ``HoodieLSMTimelineManifest``, ``MetadataConversionUtils.createLSMTimelineInstant`` and the
Avro record ``HoodieLSMTimelineInstant``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from spec.errors import InvalidName, MetadataFormatError
from spec.timeline.avro_schemas import NAMESPACE, Schema
from spec.timeline.commit_metadata import jackson_pretty
from spec.timeline.instant import Action

# --8<-- [start:files]
VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
INSTANT_VERSION = 1
"""``LSM_TIMELINE_INSTANT_VERSION_1``: the ``version`` of every row."""
COMPACTION_BATCH_SIZE = 10
"""``hoodie.timeline.compaction.batch.size``: how many files of one level Hudi merges into the next."""

_FILE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$", re.ASCII)
_MANIFEST = re.compile(r"^manifest_(\d+)$", re.ASCII)


@dataclass(frozen=True)
class LSMFile:
    """A history file's name: the first and last instant's requested times, and its level."""

    min_instant: str
    max_instant: str
    level: int = 0

    @property
    def name(self) -> str:
        """``<min>_<max>_<level>.parquet``."""
        return f"{self.min_instant}_{self.max_instant}_{self.level}.parquet"


def parse_lsm_file_name(name: str) -> LSMFile:
    """The parts of a history file name (``LSMTimeline``'s pattern, level one digit); another name raises
    ``InvalidName``."""
    m = _FILE.match(name)
    if m is None:
        raise InvalidName(f"{name!r} is not an LSM history file name",
                          hint="<min instant>_<max instant>_<level>.parquet")
    return LSMFile(m.group(1), m.group(2), int(m.group(3)))


def new_file(requested_times: Sequence[str]) -> LSMFile:
    """The level-0 file of one archival: named after the first and last instant (by requested time)."""
    if not requested_times:
        raise MetadataFormatError("an archival writes at least one instant", hint="archive a non-empty batch")
    ordered = sorted(requested_times)
    return LSMFile(ordered[0], ordered[-1], 0)
# --8<-- [end:files]


# --8<-- [start:snapshots]
@dataclass(frozen=True)
class ManifestEntry:
    """One file of a snapshot: its name and length in bytes."""

    file_name: str
    file_len: int


def format_manifest(entries: Iterable[ManifestEntry]) -> bytes:
    """``HoodieLSMTimelineManifest.toJsonString``: Jackson's pretty print of ``{"files": [...]}``."""
    return jackson_pretty({"files": [{"fileName": e.file_name, "fileLen": e.file_len} for e in entries]}).encode()


def parse_manifest(data: bytes) -> list[ManifestEntry]:
    """The entries of a manifest; anything but ``{"files": [{"fileName", "fileLen"}, ...]}`` raises
    ``MetadataFormatError``."""
    try:
        files = json.loads(data or b"{}").get("files", [])
        return [ManifestEntry(str(f["fileName"]), int(f["fileLen"])) for f in files]
    except (ValueError, AttributeError, KeyError, TypeError) as err:
        raise MetadataFormatError(f"an LSM manifest does not parse: {err}",
                                  hint='a manifest is {"files": [{"fileName": ..., "fileLen": ...}]}') from err


def manifest_name(version: int) -> str:
    """``manifest_<version>``."""
    return f"{MANIFEST_PREFIX}{version}"


def manifest_version(name: str) -> int | None:
    """The version of a manifest file name, or None for any other name."""
    m = _MANIFEST.match(name)
    return int(m.group(1)) if m else None


def format_version_file(version: int) -> bytes:
    """The version file's content: the number as UTF-8 text."""
    return str(version).encode("utf-8")


def latest_version(version_file: bytes | None, names: Iterable[str]) -> int:
    """``LSMTimeline.latestSnapshotVersion``: the version file's number, else the highest manifest among ``names``
    (the history folder's file names), else -1 (an empty history)."""
    if version_file is not None:
        try:
            return int(version_file.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            pass
    return max((v for v in map(manifest_version, names) if v is not None), default=-1)


def next_version(version: int) -> int:
    """The version the next manifest gets: 1 for an empty history, else one more."""
    return 1 if version < 0 else version + 1
# --8<-- [end:snapshots]


# --8<-- [start:rows]
LSM_INSTANT_SCHEMA: Schema = {
    "type": "record", "name": "HoodieLSMTimelineInstant", "namespace": NAMESPACE, "fields": [
        {"name": "instantTime", "type": ["null", "string"], "default": None},
        {"name": "completionTime", "type": ["null", "string"], "default": None},
        {"name": "action", "type": ["null", "string"], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1}]}
"""One row of a history file (``HoodieLSMTimelineInstant.avsc``)."""

PLAN_FROM_REQUESTED = frozenset({Action.CLEAN, Action.COMPACTION, Action.LOG_COMPACTION})
PLAN_FROM_INFLIGHT_ELSE_REQUESTED = frozenset({Action.REPLACE_COMMIT, Action.CLUSTERING})


def plan_bytes(pending_action: str | None, requested: bytes | None, inflight: bytes | None) -> bytes | None:
    """The row's ``plan``, from the pending files of an instant whose pending action is ``pending_action``."""
    if pending_action in PLAN_FROM_REQUESTED:
        return requested or None
    if pending_action in PLAN_FROM_INFLIGHT_ELSE_REQUESTED:
        return inflight or requested or None
    return None
# --8<-- [end:rows]

"""Names of data files: base files and log files, each a parse/format pair.

- base file: ``<fileId>_<writeToken>_<instantTime>.<ext>`` (e.g. ``…-0_0-986-2792_20251220210108078.parquet``);
- log file: ``.<fileId>_<instant>.log.<version>_<writeToken>[<suffix>]``.

The file id is ``<uuid v4>-<n>`` and may not contain ``_`` (readers split names at it).
The write token is ``<task partition id>-<stage id>-<task attempt id>``; only its
uniqueness matters. What ``<instant>`` in a log name means differs by table version
(v6: the base instant of the slice; v8: the deltacommit that wrote it) — that rule lives in
``spec.write.append_handle``; the name's syntax is the same.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``FSUtils``
(``makeBaseFileName``, ``makeLogFileName``, ``makeWriteToken``, ``getFileId``, ``getCommitTime``,
``LOG_FILE_PATTERN``, ``BASE_FILE_PATTERN``) and ``HoodieLogFile`` (``LogFileComparator``).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from spec.errors import InvalidName
from spec.timeline.instant import validate_instant_time

# --8<-- [start:write_token]
ROLLBACK_WRITE_TOKEN = "1-0-1"
"""Write token of files written outside a task (rollback command-block log files)."""

_TOKEN_RE = re.compile(r"(\d+)-(\d+)-(\d+)", re.ASCII)


@dataclass(frozen=True)
class WriteToken:
    """``<task partition id>-<stage id>-<task attempt id>`` of the task that wrote a file."""

    partition_id: int
    stage_id: int
    attempt_id: int

    def format(self) -> str:
        """``<partition id>-<stage id>-<attempt id>``."""
        return f"{self.partition_id}-{self.stage_id}-{self.attempt_id}"


def parse_write_token(token: str) -> WriteToken:
    """Parse ``<int>-<int>-<int>``; raises InvalidName otherwise."""
    m = _TOKEN_RE.fullmatch(token)
    if not m:
        raise InvalidName(f"{token!r} is not a write token", hint="write tokens are <int>-<int>-<int>")
    return WriteToken(int(m.group(1)), int(m.group(2)), int(m.group(3)))
# --8<-- [end:write_token]


# --8<-- [start:file_id]
_FILE_ID_RE = re.compile(r"[A-Za-z0-9-]+")


def validate_file_id(file_id: str) -> str:
    """A file id is letters, digits and ``-`` only (no ``_``: readers split names at the first ``_``)."""
    if not _FILE_ID_RE.fullmatch(file_id):
        raise InvalidName(f"{file_id!r} is not a file id", hint="file ids match [A-Za-z0-9-]+, e.g. <uuid>-0")
    return file_id


def new_file_id_prefix(value: uuid.UUID | None = None) -> str:
    """A new file id prefix: a random UUID v4, lower case (injectable for replay)."""
    return str(value or uuid.uuid4())


def make_file_id(prefix: str, n: int) -> str:
    """The n-th file id of a task: ``<prefix>-<n>`` (Hudi's ``createNewFileId``)."""
    return validate_file_id(f"{validate_file_id(prefix)}-{n}")
# --8<-- [end:file_id]


# --8<-- [start:base_file]
BASE_FILE_EXTENSIONS = (".parquet", ".orc", ".hfile")
_BASE_RE = re.compile(r"([A-Za-z0-9-]+)_([A-Za-z0-9-]+)_(\d+)(\.[A-Za-z0-9]+)", re.ASCII)


@dataclass(frozen=True)
class BaseFileName:
    """``<fileId>_<writeToken>_<instantTime><ext>``; the instant is the writing action's requested time."""

    file_id: str
    write_token: str
    instant: str
    extension: str = ".parquet"

    def format(self) -> str:
        """``<file id>_<write token>_<instant><extension>``."""
        return f"{self.file_id}_{self.write_token}_{self.instant}{self.extension}"

    @property
    def name(self) -> str:
        """The file name (the same as ``format()``)."""
        return self.format()


def parse_base_file_name(name: str) -> BaseFileName:
    """The parts of a base file name; the instant must be a timeline time (14, 17 or, in the
    metadata table, 20 digits). Any extension parses, and the write token is any run of letters,
    digits and ``-`` (writers write ``<int>-<int>-<int>``), as in Hudi's ``FSUtils.BASE_FILE_PATTERN``
    (``[a-zA-Z0-9-]+_[a-zA-Z0-9-]+_[0-9]+\\.[a-zA-Z0-9]+``)."""
    m = _BASE_RE.fullmatch(name)
    if not m:
        raise InvalidName(
            f"{name!r} is not a base file name",
            hint="base files are <fileId>_<p-s-a write token>_<instant>.<ext>",
        )
    validate_instant_time(m.group(3), metadata_suffix=True)
    return BaseFileName(m.group(1), m.group(2), m.group(3), m.group(4))


def is_base_file_name(name: str) -> bool:
    """True for a base file name with a known base format extension (.parquet, .orc, .hfile)."""
    try:
        return parse_base_file_name(name).extension in BASE_FILE_EXTENSIONS
    except InvalidName:
        return False
# --8<-- [end:base_file]


# --8<-- [start:log_file]
LOG_FILE_PATTERN = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(.cdc)?)?", re.ASCII)
"""Hudi's ``LOG_FILE_PATTERN`` (0.14 to 1.x); groups: 1 file id, 2 instant, 3 extension,
4 version, 6 write token, 10 suffix (``.cdc``/``-cdc``). Matched against the whole name."""


@dataclass(frozen=True)
class LogFileName:
    """``.<fileId>_<instant>.<ext>.<version>[_<writeToken>[<suffix>]]``."""

    file_id: str
    instant: str
    version: int
    write_token: str | None
    extension: str = "log"
    suffix: str = ""

    def format(self) -> str:
        """``.<file id>_<instant>.<extension>.<version>[_<write token>[<suffix>]]``."""
        tail = f"_{self.write_token}{self.suffix}" if self.write_token is not None else ""
        return f".{self.file_id}_{self.instant}.{self.extension}.{self.version}{tail}"

    @property
    def name(self) -> str:
        """The file name (the same as ``format()``)."""
        return self.format()

    @property
    def is_cdc(self) -> bool:
        """Whether this is a change-data-capture log (a ``.cdc`` or ``-cdc`` suffix), not a data log."""
        return bool(self.suffix)


def parse_log_file_name(name: str) -> LogFileName:
    """Parse a log file name; raises InvalidName when it does not follow the pattern."""
    m = LOG_FILE_PATTERN.fullmatch(name)
    if not m:
        raise InvalidName(
            f"{name!r} is not a log file name",
            hint="log files are .<fileId>_<instant>.log.<version>_<write token>",
        )
    return LogFileName(
        file_id=m.group(1),
        instant=m.group(2),
        version=int(m.group(4)),
        write_token=m.group(6),
        extension=m.group(3),
        suffix=m.group(10) or "",
    )


def is_log_file_name(name: str) -> bool:
    """Whether ``name`` follows the log file naming rule."""
    return LOG_FILE_PATTERN.fullmatch(name) is not None


def log_file_sort_key(log: LogFileName) -> tuple[str, int, tuple[int, str], str]:
    """Hudi's ``LogFileComparator``: by instant, then version, then write token (absent first), then suffix."""
    token = (0, "") if log.write_token is None else (1, log.write_token)
    return (log.instant, log.version, token, log.suffix)
# --8<-- [end:log_file]

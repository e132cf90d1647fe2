"""File slices and file groups as the action planners see them: names only, keyed by instants.

``SliceRef.of`` builds a slice from any file-system view's slice (the spec's, the model's); a
``GroupRef`` holds a group's slices and, when a replacecommit replaced the group, that instant.
The planners of ``spec.actions`` look at nothing else of the files.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``FileSlice``,
``HoodieFileGroup`` and ``HoodieFileGroupId`` (``hudi-common/…/hudi/common/model/``), as the
``CleanPlanner``, the compaction plan generators and the rollback strategies read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spec.errors import InvalidOperation

GroupId = tuple[str, str]
"""A file group's identity: (partition path, file id)."""


def _file_name(x: Any) -> str:
    """A file name from a name string or a parsed name object (``.format()``) or a path."""
    if isinstance(x, str):
        return x.rsplit("/", 1)[-1]
    fmt = getattr(x, "format", None)
    if callable(fmt):
        return str(fmt())
    name = getattr(x, "name", None)
    if isinstance(name, str):
        return name.rsplit("/", 1)[-1]
    raise InvalidOperation(f"{x!r} is not a file name", hint="pass names or BaseFileName/LogFileName objects")


# --8<-- [start:refs]
@dataclass(frozen=True)
class SliceRef:
    """A file slice: the base file (None in a log-only slice) and its log files, keyed by base instant."""

    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None = None
    log_files: tuple[str, ...] = ()

    @staticmethod
    def of(s: Any) -> SliceRef:
        """The slice of any object with ``partition_path, file_id, base_instant, base_file, log_files``."""
        base = getattr(s, "base_file", None)
        return SliceRef(str(s.partition_path), str(s.file_id), str(s.base_instant),
                        None if base is None else _file_name(base),
                        tuple(_file_name(lf) for lf in getattr(s, "log_files", ())))

    @property
    def files(self) -> tuple[str, ...]:
        """The slice's file names: its base file first (if any), then its log files."""
        return ((self.base_file,) if self.base_file else ()) + self.log_files


@dataclass(frozen=True)
class GroupRef:
    """A file group: its slices (any order), and the replacecommit that replaced it, if any."""

    partition_path: str
    file_id: str
    slices: tuple[SliceRef, ...]
    replaced_by: str | None = None

    @property
    def id(self) -> GroupId:
        """The group's identity: (partition path, file id)."""
        return (self.partition_path, self.file_id)

    def newest_first(self) -> tuple[SliceRef, ...]:
        """The group's slices, newest base instant first."""
        return tuple(sorted(self.slices, key=lambda s: s.base_instant, reverse=True))
# --8<-- [end:refs]


__all__ = ["GroupId", "GroupRef", "SliceRef"]

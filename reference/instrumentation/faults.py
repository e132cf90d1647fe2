"""Fault injection: kill the writer at a named point of a write or table service (for crash-safety tests).

Set ``HUDI_SPEC_FAULT`` to a point name, optionally ``name@bucket`` to pick one bucket's handle,
and ``HUDI_SPEC_FAULT_PGID`` to the writer's process group: reaching that point then kills the
whole writer — driver, Spark JVM and Python workers — with SIGKILL, as a crash or ``kill -9``
would. Unset, every point is a no-op. The points, in the order a write passes them:

- ``after_start``: the instant is requested and inflight; no marker, no data file yet;
- ``mid_base_file``: half of a base file's rows are written (a ``.inprogress`` file);
- ``mid_log_block``: half of a log append's bytes are written (a truncated block);
- ``before_commit``: every data file is written; the completed instant is not;
- ``mid_commit``: the completed instant file is half written (a temporary file beside it).

and in the table services:

- ``mid_compaction``: one new base file of a compaction is written, the compaction is inflight;
- ``mid_clean``: a clean is inflight and has deleted its first file;
- ``mid_rollback``: a rollback is inflight, its target un-published, its first file deleted (MOR v6:
  its first ROLLBACK command block appended);
- ``restore_unpublished``: a restore is inflight, every instant it undoes un-published, no file deleted;
- ``mid_restore``: a restore has undone its first instant;
- ``mid_metadata_init``: the metadata table is being listed anew (after a restore, or when it is
  created): its properties and timeline written, its files not yet;
- ``mid_archive``: archival has written its history (v6: the archived log; v8, v9: the LSM file, manifest
  and version file) and deleted no instant from the active timeline yet;
- ``mid_archive_version``: (v8, v9) archival has written the LSM file and the new manifest, not the
  version file that makes them visible.
"""

from __future__ import annotations

import contextlib
import os
import signal

FAULT_ENV = "HUDI_SPEC_FAULT"
PGID_ENV = "HUDI_SPEC_FAULT_PGID"
POINTS = ("after_start", "mid_base_file", "mid_log_block", "before_commit", "mid_commit")
SERVICE_POINTS = ("mid_compaction", "mid_clean", "mid_rollback", "restore_unpublished", "mid_restore",
                  "mid_metadata_init", "mid_archive", "mid_archive_version")


def armed(point: str, bucket: int | None = None) -> bool:
    """Whether the writer dies at ``point`` (for ``bucket``, when the fault names one)."""
    fault = os.environ.get(FAULT_ENV)
    if not fault:
        return False
    name, _, which = fault.partition("@")
    return name == point and (not which or bucket is None or int(which) == bucket)


def die() -> None:
    """SIGKILL the writer's process group (and this process's own, a Spark worker's)."""
    pgid = os.environ.get(PGID_ENV)
    if pgid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(int(pgid), signal.SIGKILL)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def fault_point(point: str, bucket: int | None = None) -> None:
    """Die here when the fault names this point."""
    if armed(point, bucket):
        die()


__all__ = ["FAULT_ENV", "PGID_ENV", "POINTS", "SERVICE_POINTS", "armed", "die", "fault_point"]

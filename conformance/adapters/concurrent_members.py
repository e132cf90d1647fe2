"""What the reference's adapters share to run a ``concurrent`` step (``spec.model.operations.Concurrent``): the
write options of optimistic concurrency control, and a member write held in a thread of its own between its
data files and its commit (``reference.instrumentation.pauses``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Final

from spec.errors import InvalidOperation, WriteConflict

OCC_OPTIONS: Final = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                      "hoodie.cleaner.policy.failed.writes": "LAZY",
                      "hoodie.write.lock.wait_time_ms_between_retry": "50"}
"""Hudi's options for writers at once: optimistic concurrency control, failed writes rolled back lazily (a pending
instant of a live writer is never another's to roll back)."""

HOLD_SECONDS: Final = 600.0
"""How long a held write may wait for its turn, and the adapter for a write to reach its hold."""


def occ_options(options: Mapping[str, str]) -> dict[str, str]:
    """The table's write options under optimistic concurrency control."""
    return {**options, **OCC_OPTIONS}


class HeldWrite:
    """A write run in a thread of its own that stops at its ``before_commit`` pause point until ``commit``."""

    def __init__(self, call: Callable[[], object]) -> None:
        self.call = call
        self.reached = threading.Event()
        self.go = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _hold(self, point: str) -> None:
        if point == "before_commit":
            self.reached.set()
            self.go.wait(HOLD_SECONDS)

    def _run(self) -> None:
        from reference.instrumentation.pauses import pausing

        try:
            with pausing(self._hold):
                self.call()
        except BaseException as err:  # the write's outcome, reported by commit()
            self.error = err
        finally:
            self.reached.set()

    def start(self) -> HeldWrite:
        """Start the write and wait until its data files are written (or it ended before)."""
        self.thread.start()
        if not self.reached.wait(HOLD_SECONDS):
            raise InvalidOperation("a concurrent member write did not reach its commit", hint="see the writer")
        return self

    def commit(self) -> str:
        """Let the write commit: ``ok``, or ``write_conflict`` when it lost conflict resolution (any other
        error is raised)."""
        self.release()
        if isinstance(self.error, WriteConflict):
            return "write_conflict"
        if self.error is not None:
            raise self.error
        return "ok"

    def release(self) -> None:
        """Let the write go on and wait for it to end."""
        self.go.set()
        self.thread.join(HOLD_SECONDS)


__all__ = ["HOLD_SECONDS", "OCC_OPTIONS", "HeldWrite", "occ_options"]

"""Pause points: where a write can be held, in this thread, between writing its data files and committing
(for concurrency cases and tests that interleave writers in one process).

``pausing(hook)`` installs ``hook`` for the calling thread; ``pause_point(name)`` calls it there (a no-op in
a thread without one). The writer passes ``before_commit`` under optimistic concurrency control once every data
file is written and the lock to commit is not yet taken — where Apache Hudi's writer runs its pre-commit
validators (``hoodie.precommit.validators``), outside its transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_local = threading.local()


def pause_point(point: str) -> None:
    """Hand ``point`` to this thread's hook, if it has one (it may block: the write waits)."""
    hook: Callable[[str], None] | None = getattr(_local, "hook", None)
    if hook is not None:
        hook(point)


@contextmanager
def pausing(hook: Callable[[str], None]) -> Iterator[None]:
    """``hook`` is called at every pause point this thread passes inside the block."""
    previous = getattr(_local, "hook", None)
    _local.hook = hook
    try:
        yield
    finally:
        _local.hook = previous


__all__ = ["pause_point", "pausing"]

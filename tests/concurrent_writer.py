"""A writer process for the concurrent-writer trials (``test_concurrent_writers``).

It waits at a barrier with the other writer and the test, upserts its batch under optimistic
concurrency control, reports ``("ok", instant)`` or ``("conflict", message)`` and waits again while
the test checks the table; once per trial.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from spec.errors import WriteConflict


def run(path: str, options: dict[str, str], batches: list[list[dict[str, Any]]], barrier: Any, results: Any,
        name: str) -> None:
    from reference.write.client import WriteClient

    for batch in batches:
        barrier.wait()
        try:
            result = WriteClient(path, engine="local").write(pa.Table.from_pylist(batch), "upsert", options)
            results.put((name, "ok", result.instant))
        except WriteConflict as err:
            results.put((name, "conflict", str(err)))
        except BaseException as err:
            results.put((name, "error", repr(err)))
        barrier.wait()

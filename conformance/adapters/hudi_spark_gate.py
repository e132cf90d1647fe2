"""A member of a ``concurrent`` step on Apache Hudi: a datasource write in a thread of its own, held between its
data files and its commit by a gate in a pre-commit validator's query, until its turn of the commit order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from spec.errors import InvalidOperation, WriteConflict

GATE_VALIDATOR: Final = "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator"
HOLD_SECONDS: Final = 600.0


class HeldHudiWrite:
    """A datasource write in a thread of its own, held by a gate: its pre-commit validator's query calls a Python
    UDF that marks the gate reached and waits for the gate's file (Hudi runs the validators after the write's data
    files, before it takes the lock to commit)."""

    def __init__(self, spark: Any, write: Callable[[Any], None], action: Any, gate: Path, member: int) -> None:
        """``action``: the member's ``hudi_spark.SparkAction``, which ``write`` runs."""
        from pyspark.sql import types as T

        self.gate, self.reached = gate, gate.with_suffix(".reached")
        udf = f"conformance_gate_{member}"
        spark.udf.register(udf, _gate(str(gate), str(self.reached)), T.LongType())
        self.action = replace(action, options={**action.options, "hoodie.precommit.validators": GATE_VALIDATOR,
                                               "hoodie.precommit.validators.single.value.sql.queries":
                                               f"select {udf}(1 + 0 * count(*)) from <TABLE_NAME>#1"})
        self.write = write
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.write(self.action)
        except BaseException as err:  # the write's outcome, reported by commit()
            self.error = err
        finally:
            self.done.set()

    def start(self) -> HeldHudiWrite:
        """Start the write and wait until it reaches its gate (or ends before)."""
        self.thread.start()
        deadline = time.monotonic() + HOLD_SECONDS
        while not self.reached.exists() and not self.done.is_set():
            if time.monotonic() > deadline:
                raise InvalidOperation("a concurrent member write did not reach its gate", hint="see Hudi's log")
            time.sleep(0.05)
        return self

    def commit(self) -> str:
        """Open the gate: ``ok``, or ``write_conflict`` for Hudi's ``HoodieWriteConflictException`` (any other
        error is raised, as Hudi's refusal when it is one)."""
        from conformance.adapters.hudi_spark_refusals import refused

        self.release()
        if self.error is None:
            return "ok"
        refusal = refused(self.error)
        if isinstance(refusal, WriteConflict):
            return "write_conflict"
        raise refusal or self.error

    def release(self) -> None:
        """Open the gate and wait for the write to end."""
        self.gate.touch()
        self.thread.join(HOLD_SECONDS)


def _gate(path: str, reached: str) -> Callable[[Any], Any]:
    """The UDF of a gate: it marks the gate reached, then waits until the gate's file exists."""
    def gate(value: Any) -> Any:
        import os as os_
        import time as time_

        open(reached, "a").close()
        while not os_.path.exists(path):
            time_.sleep(0.05)
        return value

    return gate

"""The engines a write runs its data steps on (Hudi's ``HoodieEngineContext``s), by name: ``spark`` (Spark jobs;
``spark.py``, with the session it runs in and the Spark reader) or ``local`` (pyarrow in this process;
``local.py``), both behind the protocol of ``engine.py``, so that the write client never names one."""

from __future__ import annotations

from typing import Any

from reference.engines.engine import EngineContext
from reference.engines.local import LocalEngineContext
from reference.engines.spark import SparkEngineContext
from spec.errors import InvalidConfig

ENGINES = ("spark", "local")
"""The engines by name: Spark jobs, or pyarrow in this process."""


def engine_context(name: str, spark: Any = None) -> EngineContext:
    """The engine context named ``name``; ``spark``: the Spark engine's session (None: the process's, started
    at the first write that needs it)."""
    if name == "local":
        return LocalEngineContext()
    if name == "spark":
        return SparkEngineContext(spark)
    raise InvalidConfig(f"engine {name!r} is unknown", hint=f"use one of {', '.join(ENGINES)}")


__all__ = ["ENGINES", "engine_context"]

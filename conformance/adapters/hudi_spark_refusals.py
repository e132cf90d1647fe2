"""Apache Hudi's refusals, seen through py4j, as the spec's error kinds (``spec.errors``): what the ``hudi_spark``
adapter reports when Hudi refuses an operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from spec.errors import (
    ConfigConflict,
    HudiSpecError,
    InstantNotFound,
    InvalidConfig,
    InvalidOperation,
    SchemaMismatch,
    WriteConflict,
)

REFUSALS: Final[tuple[tuple[str, str, type[HudiSpecError]], ...]] = (
    ("HoodieWriteConflictException", "", WriteConflict),
    ("MissingSchemaFieldException", "", SchemaMismatch),
    ("SchemaBackwardsCompatibilityException", "", SchemaMismatch),
    ("SchemaCompatibilityException", "", SchemaMismatch),
    ("HoodieNotSupportedException", "", InvalidOperation),
    ("HoodieException", "Config conflict", ConfigConflict),
    ("HoodieException", "not found", InstantNotFound),
    ("IllegalArgumentException", "No enum constant", InvalidConfig),
)
"""Apache Hudi's refusals as the spec's error kinds: (Java exception class, a text its message holds, kind),
matched on the exception and each of its causes, by class alone (no other text is read)."""


def java_causes(err: BaseException) -> Iterator[Any]:
    """The Java exception behind ``err`` and each of its causes, outermost first: a ``Py4JJavaError``'s Java
    exception, or the one pyspark converted into its own exception class (``CapturedException``, e.g. its
    ``IllegalArgumentException``, which keeps the Java exception as its origin); none for anything else."""
    java = getattr(err, "java_exception", None) or getattr(err, "_origin", None)
    while java is not None:
        yield java
        java = java.getCause()


def refused(err: BaseException) -> HudiSpecError | None:
    """The spec error a Hudi refusal stands for (``java_causes``), or None for anything else."""
    for java in java_causes(err):
        name = str(java.getClass().getSimpleName())
        message = str(java.getMessage() or "")
        for cls, text, kind in REFUSALS:
            if name == cls and text in message:
                return kind(f"Apache Hudi refused: {name}: {' '.join(message.split())[:400]}")
    return None

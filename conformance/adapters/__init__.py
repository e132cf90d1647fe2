"""The implementations under test, by their ``--impl`` name: each adapter module puts one implementation behind
``conformance.interface.adapter.TableUnderTest``. An adapter's module is imported only when it is named, so that
the suite runs without the libraries of the implementations it does not test (PySpark, hudi-rs).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Final

from conformance.adapters.exec import ExecFactory
from conformance.interface.adapter import TableUnderTest
from spec.errors import InvalidConfig

BUILTIN_ADAPTERS: Final = {
    "spec": "conformance.adapters.spec_model:SpecModelAdapter",
    "reference": "conformance.adapters.reference_spark:ReferenceSparkAdapter",
    "reference_local": "conformance.adapters.reference_spark:ReferenceLocalAdapter",
    "reference_local_rows": "conformance.adapters.reference_spark:ReferenceLocalRowsAdapter",
    "hudi_rs": "conformance.adapters.hudi_rs:HudiRsAdapter",
    "hudi_spark": "conformance.adapters.hudi_spark:HudiSparkAdapter",
    "hudi_spark_reader": "conformance.adapters.hudi_spark_reader:HudiSparkReaderAdapter",
    "spec_reader": "conformance.adapters.spec_reader:SpecReaderAdapter",
}
"""``--impl`` names of the adapters that ship with the suite (``hudi-rs`` is accepted for ``hudi_rs``)."""


def resolve_impl(impl: str, writer: str = "reference") -> Callable[[], TableUnderTest]:
    """The adapter factory for ``--impl``: a built-in name, ``module:Class`` (a ``TableUnderTest``
    subclass constructible without arguments) or ``exec:COMMAND`` (a program speaking the process
    protocol, ``conformance.adapters.exec``; a reader program's tables are written by ``writer``)."""
    if impl.startswith("exec:"):
        return ExecFactory(impl.removeprefix("exec:"), resolve_impl(writer))

    target = BUILTIN_ADAPTERS.get(impl.replace("-", "_"), impl)
    module_name, sep, class_name = target.partition(":")
    if not sep or not module_name or not class_name:
        raise InvalidConfig(f"--impl {impl!r} is neither a built-in adapter nor module:Class (nor exec:COMMAND)",
                            hint=f"use {', '.join(BUILTIN_ADAPTERS)}, module:Class or exec:COMMAND")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise InvalidConfig(f"--impl {impl!r}: cannot import {module_name}: {err}",
                            hint="is the module on the Python path?") from err
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, TableUnderTest):
        raise InvalidConfig(f"--impl {impl!r}: {class_name} is not a TableUnderTest subclass in {module_name}",
                            hint="subclass conformance.interface.adapter.TableUnderTest")
    return cls


__all__ = ["BUILTIN_ADAPTERS", "resolve_impl"]

"""pytest plugin of the conformance suite (entry point ``pytest11``).

Dormant unless ``--hudi-impl`` is given: then a corpus's ``MANIFEST.json`` is collected as one test
per case and layer, run against that implementation (``spec``, ``reference``, ``hudi_rs`` or
``module:Class``)::

    pytest --hudi-impl mypackage.adapter:MyTable fixtures/MANIFEST.json [--hudi-suite writes] [--hudi-strict]

Each case runs once (its layers share the run); a layer's test passes, fails with the first
diverging step and its diff, is skipped with the reason (missing capability, layer not observed),
or is an expected failure (the adapter's known failures). A session in which no case executed
fails, as ``hudi-conformance run`` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hudi-conformance")
    group.addoption(
        "--hudi-impl",
        default=None,
        help="run the Hudi conformance cases against this implementation: spec, reference or module:Class",
    )
    group.addoption("--hudi-suite", default=None, help="only the cases of this suite (folder under fixtures/cases)")
    group.addoption("--hudi-strict", action="store_true", default=False,
                    help="also compare layer L3 (file names and log block sequences)")


class ConformanceFailure(Exception):
    """A layer diverged from the specification; the message is the rendered diff."""


def pytest_collect_file(file_path: Any, parent: pytest.Collector) -> pytest.Collector | None:
    if parent.config.getoption("--hudi-impl") and file_path.name == "MANIFEST.json" \
            and (file_path.parent / "cases").is_dir():
        return ConformanceManifest.from_parent(parent, path=file_path)
    return None


class ConformanceManifest(pytest.File):
    """A corpus: one item per case and layer; runs each case once, on its first item."""

    results: dict[str, Any]

    def collect(self) -> Iterator[pytest.Item]:
        from conformance.adapters import resolve_impl
        from conformance.interface.adapter import DEFAULT_LAYERS, LAYERS
        from conformance.runner import load_cases

        config = self.config
        self.factory = resolve_impl(config.getoption("--hudi-impl"))
        self.layers = LAYERS if config.getoption("--hudi-strict") else DEFAULT_LAYERS
        self.results = {}
        for fc in load_cases(self.path.parent, config.getoption("--hudi-suite")):
            for layer in self.layers:
                yield ConformanceItem.from_parent(self, name=f"{fc.suite}/{fc.case.id}[{layer}]", fixture=fc,
                                                  layer=layer)

    def result_of(self, fixture: Any) -> Any:
        from conformance.runner import run_case

        key = f"{fixture.suite}/{fixture.case.id}"
        if key not in self.results:
            self.results[key] = run_case(fixture, self.factory, self.layers)
        return self.results[key]


class ConformanceItem(pytest.Item):
    """One layer of one case."""

    def __init__(self, *, fixture: Any, layer: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fixture = fixture
        self.layer = layer

    def runtest(self) -> None:
        from conformance.runner import Verdict

        parent = self.parent
        assert isinstance(parent, ConformanceManifest)
        result = parent.result_of(self.fixture)
        layer = next(r for r in result.layers if r.layer == self.layer)
        if result.verdict != Verdict.SKIP:
            self.config.stash[_EXECUTED] = self.config.stash.get(_EXECUTED, 0) + 1
        if layer.verdict == Verdict.SKIP:
            pytest.skip(layer.detail or result.reason)
        if layer.verdict == Verdict.FAIL and result.verdict == Verdict.XFAIL:
            pytest.xfail(result.reason)
        if layer.verdict == Verdict.FAIL:
            raise ConformanceFailure(layer.detail)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ConformanceFailure):
            return f"{self.name} diverges from the specification:\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, self.name


_EXECUTED = pytest.StashKey[int]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With ``--hudi-impl``, a session that executed no case fails: nothing was shown to conform."""
    if session.config.getoption("--hudi-impl") and not session.config.stash.get(_EXECUTED, 0) \
            and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

"""The conformance matrix: every implementation against every case, as JSON and as a Markdown page.

    hudi-conformance report [--impl NAME ...] [--writer W] [--json OUT.json] [--markdown OUT.md]

``run_matrix`` runs the corpus on each implementation (built-in names, ``module:Class`` or
``exec:CMD``; readers write with ``--writer``) and keeps, per case, the verdict and the reason (the
missing capability, the known failure's cause, the first divergence). ``render_matrix`` turns that
JSON into the page the spec site shows (``docs/conformance-matrix.md`` is generated at build time
from the committed JSON of a real run, ``docs/conformance-matrix.json``).
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from conformance.adapter import TableUnderTest, resolve_impl
from conformance.runner import FixtureCase, RunResult, Verdict, load_cases, run_cases

DEFAULT_IMPLS: Final = ("spec", "reference", "reference_local", "hudi_rs", "hudi_spark")
SYMBOLS: Final = {"PASS": "pass", "FAIL": "**FAIL**", "XFAIL": "known failure", "SKIP": "skip"}


def factory_for(impl: str, writer: str) -> Callable[[], TableUnderTest]:
    """The adapter factory of ``impl``; a reader class taking a ``writer`` gets ``writer``'s factory."""
    factory = resolve_impl(impl, writer)
    if isinstance(factory, type) and "writer" in inspect.signature(factory.__init__).parameters:
        return functools.partial(factory, resolve_impl(writer))
    return factory


def _entry(impl: str, result: RunResult) -> dict[str, Any]:
    cases = {f"{c.suite}/{c.case_id}": {"verdict": str(c.verdict), "reason": c.reason or _first_lines(c.diff)}
             for c in result.cases}
    return {"impl": impl, "name": result.adapter, "counts": {str(v): result.count(v) for v in Verdict},
            "cases": cases}


def _first_lines(diff: str, width: int = 240) -> str:
    """A failure's reason: the diverging step and its first difference, on one line."""
    text = " ".join(line.strip() for line in diff.splitlines()[:3])
    return text if len(text) <= width else text[: width - 3] + "..."


def run_matrix(impls: Sequence[str], cases: Sequence[FixtureCase], corpus_version: Any, writer: str = "reference",
               progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every implementation against ``cases``: the matrix as JSON."""
    entries = []
    for impl in impls:
        factory = factory_for(impl, writer)
        try:
            result = run_cases(cases, factory)
        finally:
            if not isinstance(factory, type | functools.partial):
                getattr(factory, "close", lambda: None)()
        entries.append(_entry(impl, result))
        if progress is not None:
            progress(f"{impl}: {entries[-1]['counts']}")
    return {"corpus_version": corpus_version, "date": datetime.now(UTC).strftime("%Y-%m-%d"), "writer": writer,
            "cases": [f"{c.suite}/{c.case.id}" for c in cases], "implementations": entries}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_matrix(matrix: Mapping[str, Any]) -> str:
    """The matrix as Markdown: a summary per implementation, the known failures and failures with
    their reasons, then one row per case."""
    impls = matrix["implementations"]
    lines = [f"Corpus version **{matrix['corpus_version']}**, run on {matrix['date']} "
             f"(readers' tables written by `{matrix['writer']}`).", "",
             "| implementation | " + " | ".join(str(v) for v in Verdict) + " |",
             "|---|" + "---|" * len(Verdict)]
    for e in impls:
        lines.append(f"| `{e['name']}` | " + " | ".join(str(e["counts"][str(v)]) for v in Verdict) + " |")
    lines += ["", "## Failures and known failures", ""]
    notes = [(e["name"], case, r) for e in impls for case, r in e["cases"].items()
             if r["verdict"] in ("FAIL", "XFAIL")]
    lines += [f"- `{name}` — `{case}` — {SYMBOLS[r['verdict']]}: {_cell(r['reason'])}" for name, case, r in notes]
    lines += ["" if notes else "None.", "", "## Every case", "",
              "| case | " + " | ".join(f"`{e['name']}`" for e in impls) + " |",
              "|---|" + "---|" * len(impls)]
    for case in matrix["cases"]:
        cells = [SYMBOLS[e["cases"][case]["verdict"]] if case in e["cases"] else "—" for e in impls]
        lines.append(f"| `{case}` | " + " | ".join(cells) + " |")
    skips = {e["name"]: r["reason"] for e in impls for r in e["cases"].values() if r["verdict"] == "SKIP"}
    if skips:
        lines += ["", "Skips, by implementation (the first reason):", ""]
        lines += [f"- `{name}`: {_cell(reason)}" for name, reason in skips.items()]
    return "\n".join(lines) + "\n"


def write_matrix(matrix: Mapping[str, Any], json_out: str | Path | None, md_out: str | Path | None) -> None:
    if json_out:
        Path(json_out).write_text(json.dumps(matrix, indent=1, sort_keys=True) + "\n")
    if md_out:
        Path(md_out).write_text(render_matrix(matrix))


def corpus(fixtures: str | Path) -> tuple[list[FixtureCase], Any]:
    manifest = json.loads((Path(fixtures) / "MANIFEST.json").read_text())
    return load_cases(fixtures), manifest.get("corpus_version")

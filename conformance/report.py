"""The conformance matrix: every implementation against every case, as JSON and as a Markdown page.

    hudi-conformance report [--impl NAME ...] [--writer W] [--json OUT.json] [--markdown OUT.md]

``run_matrix`` runs the corpus on each implementation (built-in names, ``module:Class`` or
``exec:CMD``; readers write with ``--writer``) and keeps, per case, the verdict and the reason (the
missing capability, the known failure's cause, the first divergence). ``render_matrix`` turns that
JSON into the page the spec site shows (``docs/conformance-matrix.md`` is generated at build time
from the committed JSON of a real run, ``docs/conformance-matrix.json``).

Reader rows (``reader_row``, ``conformance.reader_rows``): a reader whose queries are costly (Apache Hudi's
Spark datasource, ``hudi_spark_reader``) reads each case's final table once, against the spec model; the spec's
reader on the tables of a writer with a reader of its own (``spec_reader`` with ``--writer hudi_spark``) is
compared with that reader (Apache Hudi's datasource) on the same table. Each entry names the writer of the
tables it read (``writer``; ``null`` for an implementation that writes its own), so runs with different
writers merge.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from conformance.adapters import resolve_impl
from conformance.adapters.exec import ExecFactory
from conformance.interface.adapter import TableUnderTest
from conformance.runner import CaseResult, FixtureCase, RunResult, Verdict, load_cases, run_cases

DEFAULT_IMPLS: Final = ("spec", "reference", "reference_local", "hudi_rs", "hudi_spark")
SYMBOLS: Final = {"PASS": "pass", "FAIL": "**FAIL**", "XFAIL": "known failure", "SKIP": "skip"}


def factory_for(impl: str, writer: str) -> Callable[[], TableUnderTest]:
    """The adapter factory of ``impl``; a reader class taking a ``writer`` gets ``writer``'s factory."""
    factory = resolve_impl(impl, writer)
    if isinstance(factory, type) and "writer" in inspect.signature(factory).parameters:
        return functools.partial(factory, resolve_impl(writer))
    return factory


def reader_row(impl: str, writer: str) -> Callable[[FixtureCase], CaseResult] | None:
    """How the matrix runs ``impl`` when it is a reader row (``conformance.reader_rows``), else None (the
    implementation runs every case step by step, ``run_cases``):

    - a reader that ``reads_final_table`` (``hudi_spark_reader``: a Spark job a query) reads the final table of
      each case ``writer`` leaves, every query the model answers on it, against the model
      (``read_final_table``);
    - the spec reader (``spec_reader``) on the tables of a writer with a reader of its own
      (``conformance.adapters.spec_reader.OWN_READERS``: Apache Hudi, ``hudi_spark``) reads the final table of
      each case against that reader's rows on the same table (``cross_read``), with the cases it is known to
      read otherwise."""
    from conformance.adapters.spec_reader import SpecReaderAdapter, own_reader, spec_rows
    from conformance.reader_rows import cross_read, read_final_table

    if impl.startswith("exec:"):
        return None
    cls = resolve_impl(impl, writer)
    if cls is SpecReaderAdapter:
        own = own_reader(writer)
        if own is None:
            return None
        theirs, known = own
        return functools.partial(cross_read, writer=resolve_impl(writer), theirs=theirs, ours=spec_rows,
                                 known=known)
    if isinstance(cls, type) and getattr(cls, "reads_final_table", False):
        return functools.partial(read_final_table, factory=factory_for(impl, writer))
    return None


def _entry(impl: str, result: RunResult, writer: str | None) -> dict[str, Any]:
    cases = {f"{c.suite}/{c.case_id}": {"verdict": str(c.verdict), "reason": c.reason or _first_lines(c.diff)}
             for c in result.cases}
    executed = next((c for c in result.cases if c.verdict != Verdict.SKIP), None)
    layers = {r.layer: r.detail if r.verdict == Verdict.SKIP else "" for r in executed.layers} if executed else {}
    return {"impl": impl, "name": result.adapter, "writer": writer,
            "counts": {str(v): result.count(v) for v in Verdict}, "cases": cases, "layers": layers}


def _first_lines(diff: str, width: int = 240) -> str:
    """A failure's reason: the diverging step and its first difference, on one line."""
    text = " ".join(line.strip() for line in diff.splitlines()[:3])
    return text if len(text) <= width else text[: width - 3] + "..."


NEEDS_APACHE_HUDI: Final = frozenset({"hudi_spark", "hudi_spark_reader"})
"""The implementations that run Apache Hudi in the process's Spark session (and ``--writer hudi_spark``)."""


def start_hudi_first(impls: Sequence[str], writer: str) -> bool:
    """Start the process's one Spark session with Apache Hudi's bundle when an implementation of the run needs it
    and the bundle is there: a session another implementation (the reference on Spark) started first would lack
    Hudi's classes, and every other implementation runs in Hudi's session as well. Whether it was started."""
    if not ({*impls, writer} & NEEDS_APACHE_HUDI):
        return False
    from conformance.adapters.hudi_spark import bundle, hudi_session

    jar = bundle()
    if jar is None:
        return False  # the Hudi rows SKIP, with the reason
    hudi_session(jar)
    return True


def run_matrix(impls: Sequence[str], cases: Sequence[FixtureCase], corpus_version: Any, writer: str = "reference",
               progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every implementation against ``cases``: the matrix as JSON (per implementation its counts, per
    case the verdict and reason, and per layer why it is not observed, empty when it is)."""
    from conformance.reader_rows import run_reader_rows

    start_hudi_first(impls, writer)
    entries = []
    for impl in impls:
        row = reader_row(impl, writer)
        if row is not None:
            name = str(getattr(resolve_impl(impl, writer), "name", impl))
            entries.append(_entry(impl, run_reader_rows(name, cases, row), writer))
        else:
            factory = factory_for(impl, writer)
            try:
                result = run_cases(cases, factory)
                reads = isinstance(factory, functools.partial) or (
                    isinstance(factory, ExecFactory) and factory.role == "reader")
            finally:
                if not isinstance(factory, type | functools.partial):
                    getattr(factory, "close", lambda: None)()
            entries.append(_entry(impl, result, writer if reads else None))
        if progress is not None:
            progress(f"{impl}: {entries[-1]['counts']}")
    return {"corpus_version": corpus_version, "date": datetime.now(UTC).strftime("%Y-%m-%d"), "writer": writer,
            "cases": [f"{c.suite}/{c.case.id}" for c in cases], "implementations": entries}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def label(entry: Mapping[str, Any], writer: str) -> str:
    """An implementation's name in the matrix: a reader of tables another writer than the run's (``writer``)
    wrote is named with it (``spec_reader on hudi_spark``)."""
    own = entry.get("writer")
    return f"{entry['name']} on {own}" if own and own != writer else str(entry["name"])


def render_matrix(matrix: Mapping[str, Any]) -> str:
    """The matrix as Markdown: a summary per implementation (with the writer of the tables each reader
    read), the known failures and failures with their reasons, then one row per case."""
    impls = [{**e, "name": label(e, matrix["writer"])} for e in matrix["implementations"]]
    writers = any("writer" in e for e in impls)
    lines = [f"Corpus version **{matrix['corpus_version']}**, run on {matrix['date']} "
             f"(readers' tables written by `{matrix['writer']}` unless their row names another writer).", "",
             "| implementation | " + ("tables written by | " if writers else "")
             + " | ".join(str(v) for v in Verdict) + " |",
             "|---|" + "---|" * (len(Verdict) + writers)]
    for e in impls:
        by = ("— | " if "writer" not in e else f"`{e['writer']}` | " if e["writer"] else "itself | ") \
            if writers else ""  # an entry of a run made before entries named their writer: not known
        lines.append(f"| `{e['name']}` | {by}" + " | ".join(str(e["counts"][str(v)]) for v in Verdict) + " |")
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
    lines += _departures_section(matrix.get("departures"))
    lines += ["", "## Layers each implementation is observed in", "",
              "| implementation | observed in | not observed, and why |", "|---|---|---|"]
    for e in impls:
        layers = e.get("layers") or {}
        seen = ", ".join(layer for layer, why in layers.items() if not why) or "—"
        unseen = "; ".join(f"{layer}: {why}" for layer, why in layers.items() if why) or "—"
        lines.append(f"| `{e['name']}` | {seen} | {_cell(unseen)} |")
    skips = {e["name"]: r["reason"] for e in impls for r in e["cases"].values() if r["verdict"] == "SKIP"}
    if skips:
        lines += ["", "Skips, by implementation (the first reason):", ""]
        lines += [f"- `{name}`: {_cell(reason)}" for name, reason in skips.items()]
    return "\n".join(lines) + "\n"


def _departures_section(departures: Mapping[str, Any] | None) -> list[str]:
    """The departures of a reader, each an exported table and the queries it reads wrong."""
    if not departures:
        return []
    lines = ["", f"## `{departures['reader']}` departures, reproducible from the export alone", "",
             f"Export the corpus with `{departures['export']}`; for each table below, read "
             "`OUT/<table>/table` with the parameters of each named query in `OUT/<table>/index.json` and "
             "compare with `OUT/<table>/expected/<query>.parquet` (rows as a multiset). The `departures/` "
             "tables are minimal: the case cut at the step where the reader first departs.", "",
             "| exported table | queries read differently | reason |", "|---|---|---|"]
    for t in departures["tables"]:
        queries = ", ".join(f"`{q}`" for q in t["queries"])
        lines.append(f"| `{t['table']}` | {queries} | {_cell(t['reason']) or '—'} |")
    return lines


def merge_matrices(matrices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Runs of the same corpus made apart (a slow engine on its own, a reader on another writer's tables) as
    one matrix: the implementations of each in order, the latest date, the first run's writer. Runs of
    different corpus versions or cases do not merge; runs with different writers merge when each entry names
    the writer of the tables it read (runs made before entries did must share the writer). An implementation
    may be in two runs only as the reader of two writers' tables."""
    from spec.errors import InvalidOperation

    first = matrices[0]
    for m in matrices[1:]:
        for key in ("corpus_version", "cases"):
            if m[key] != first[key]:
                raise InvalidOperation(f"the runs differ in {key}: {str(first[key])[:80]} vs {str(m[key])[:80]}",
                                       hint="merge only runs of the same corpus and cases")
        if m["writer"] != first["writer"] and any("writer" not in e for e in m["implementations"]):
            raise InvalidOperation(f"the runs differ in writer ({first['writer']} vs {m['writer']}) and a run's "
                                   "entries do not name the writer of the tables they read",
                                   hint="rerun it with this version of hudi-conformance report")
    impls = [e for m in matrices for e in m["implementations"]]
    names = [label(e, first["writer"]) for e in impls]
    if len(set(names)) != len(names):
        raise InvalidOperation(f"an implementation is in two runs: {names}", hint="merge each run once")
    merged = {**first, "date": max(m["date"] for m in matrices), "implementations": impls}
    departures = [m["departures"] for m in matrices if m.get("departures")]
    if departures:
        merged["departures"] = departures[-1]
    return merged


def apply_reruns(matrix: Mapping[str, Any], reruns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``matrix`` with some of its cases run again: each rerun (a run on a subset of the corpus's cases, after those
    cases' expectations changed, or of cases new to the corpus) replaces those cases' verdicts of each
    implementation it ran, matched by name and writer, and the counts are counted again. A rerun of a later
    corpus version adds its new cases (and the matrix takes that version; several reruns of it may each add
    some), provided the reruns together run them on every implementation of the matrix. A rerun of an earlier
    corpus version, of a case its version does not add, or of an implementation the matrix lacks is refused, as
    is a matrix left without a verdict of some implementation on some case."""
    from spec.errors import InvalidOperation

    out: dict[str, Any] = json.loads(json.dumps(matrix))
    entries = {label(e, out["writer"]): e for e in out["implementations"]}
    committed = matrix["corpus_version"]  # reruns of one later version may each add cases of it
    for run in reruns:
        newer = run["corpus_version"] > committed
        if run["corpus_version"] < out["corpus_version"] or (not newer and not set(run["cases"]) <= set(out["cases"])):
            raise InvalidOperation("a rerun must be of the matrix's corpus version and of some of its cases, or of a "
                                   "later version", hint="rerun cases of the committed corpus with --case")
        if newer:
            out["corpus_version"] = run["corpus_version"]
            out["cases"] = sorted({*out["cases"], *run["cases"]})
        for e in run["implementations"]:
            name = label(e, out["writer"])
            if name not in entries:
                raise InvalidOperation(f"the rerun's {name} is not in the matrix", hint="merge its whole run instead")
            target = entries[name]
            target["cases"].update(e["cases"])
            target["counts"] = {str(v): sum(1 for c in target["cases"].values() if c["verdict"] == str(v))
                                for v in Verdict}
    lacking = [f"{name}: {case}" for name, e in entries.items() for case in out["cases"] if case not in e["cases"]]
    if lacking:
        raise InvalidOperation(f"the reruns leave cases without a verdict: {', '.join(lacking[:5])}",
                               hint="rerun the corpus's new cases on every implementation of the matrix")
    out["date"] = max([out["date"], *(r["date"] for r in reruns)])
    return out


def write_matrix(matrix: Mapping[str, Any], json_out: str | Path | None, md_out: str | Path | None) -> None:
    if json_out:
        Path(json_out).write_text(json.dumps(matrix, indent=1, sort_keys=True) + "\n")
    if md_out:
        Path(md_out).write_text(render_matrix(matrix))


def corpus(fixtures: str | Path) -> tuple[list[FixtureCase], Any]:
    manifest = json.loads((Path(fixtures) / "MANIFEST.json").read_text())
    return load_cases(fixtures), manifest.get("corpus_version")

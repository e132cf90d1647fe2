"""The mutation harness: realistic bugs of the reference, one at a time, against the corpus.

Each ``Mutation`` is a small textual edit of a ``reference/`` file (a ``find`` text that occurs exactly
once, and its ``replace``ment), with the bug class it stands for and the cases most likely to catch it.
``run`` copies the project's code (``spec``, ``conformance``, ``reference``) to a fresh folder, applies
one mutation, and runs the stored corpus on the reference's local engine in a child process: the
hinted cases first, then every other case, stopping at the first case that fails (the mutation is
*caught*, with that case and layer). A mutation the corpus does not catch there is run against the
corpus again with the local engine's column-at-a-time fast paths off (``ReferenceLocalRowsAdapter``:
the record-by-record merge and log encoder, which the case language's JSON scalars never reach
otherwise), then against the state machine's ``ci`` profile (``conformance.machine``); one that
survives all three is reported as surviving.

``make mutants`` runs it (alone: it is minutes of work, never part of ``make test``) and writes the
report (``--report``). The ``stream`` suite is left out (streams start Spark even on the local engine).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
PACKAGES: Final = ("spec", "conformance", "reference")


@dataclass(frozen=True)
class Mutation:
    """One bug: ``find`` (exactly once in ``path``) becomes ``replace``."""

    id: str
    path: str
    find: str
    replace: str
    bug_class: str
    description: str
    hints: tuple[str, ...] = ()


def _m(id: str, path: str, find: str, replace: str, bug_class: str, description: str, *hints: str) -> Mutation:
    return Mutation(id, path, find, replace, bug_class, description, hints)


H, C, S, RB, CL, A = ("reference/io/handles.py", "reference/write/client.py", "reference/executors/compaction.py",
                      "reference/executors/rollback.py", "reference/executors/clean.py",
                      "reference/executors/archive.py")
B = "reference/io/buckets.py"
MUTATIONS: Final[tuple[Mutation, ...]] = (
    _m("base-num-writes", H, '"numWrites": table.num_rows,', '"numWrites": table.num_rows + 1,', "write stats",
       "a base file's numWrites one too many", "insert-upsert-delete-cow-v6"),
    _m("base-inserts-updates-swapped", H, '"numUpdateWrites": updates, "numInserts": inserts,',
       '"numUpdateWrites": inserts, "numInserts": updates,', "write stats",
       "a merged base file's numInserts and numUpdateWrites swapped", "insert-upsert-delete-cow-v6"),
    _m("base-deletes-zero", H, '"numDeletes": deletes, "numUpdateWrites"', '"numDeletes": 0, "numUpdateWrites"',
       "write stats", "a merged base file's deletes not counted", "insert-upsert-delete-cow-v6"),
    _m("row-path-deletes-uncounted", H, "                deletes += 1\n                continue",
       "                continue", "write stats", "the row path counts no delete of the delete operation",
       "insert-upsert-delete-cow-v6", "delete-reinsert-cow-v6"),
    _m("row-path-updates-uncounted", H, "                updates += 1\n                fresh_rows.append(row)",
       "                fresh_rows.append(row)", "write stats", "the row path counts no update",
       "commit-time-ordering-cow-v8", "dedupe-in-batch-cow-v6", "insert-upsert-delete-cow-v6"),
    _m("log-num-writes-with-deletes", H, '"numWrites": len(written), "numDeletes": n_deletes,',
       '"numWrites": len(in_file), "numDeletes": n_deletes,', "write stats",
       "a log file's numWrites counts its delete records too", "insert-upsert-delete-mor-v6"),
    _m("log-inserts-all", H, '"numInserts": len(written) - updates,', '"numInserts": len(written),', "write stats",
       "a log file's updates also counted as inserts", "insert-upsert-delete-logs-mor-v6"),
    _m("log-updates-zero", H, "updates = sum(1 for i in written if located[i] is not None)", "updates = 0",
       "write stats", "a log file's updates not counted", "insert-upsert-delete-logs-mor-v6"),
    _m("fast-path-duplicate-seqno", H, "numbers = pa.array(np.arange(start, start + n, dtype=np.int64))",
       "numbers = pa.array(np.zeros(n, dtype=np.int64))", "sequence numbers",
       "every new row of a base file gets record index 0", "insert-upsert-delete-cow-v6"),
    _m("seqno-constant-index", H, 'return f"{instant}_{task_partition}_{index}"',
       'return f"{instant}_{task_partition}_0"', "sequence numbers", "log records all get record index 0",
       "insert-upsert-delete-logs-mor-v6", "insert-upsert-delete-mor-v6"),
    _m("log-seqno-descending", H, "                    seq += 1", "                    seq -= 1", "sequence numbers",
       "log records numbered downwards", "insert-upsert-delete-logs-mor-v6"),
    _m("copied-rows-new-commit-time", H,
       "        parts.append(merged.set_column(merged.schema.get_field_index(FILE_NAME), FILE_NAME,",
       "        merged = merged.set_column(merged.schema.get_field_index(COMMIT_TIME), COMMIT_TIME,"
       " _constant(ctx.instant, merged.num_rows))\n"
       "        parts.append(merged.set_column(merged.schema.get_field_index(FILE_NAME), FILE_NAME,",
       "commit times", "rows copied into a merged base file take the new commit time",
       "insert-upsert-delete-cow-v6", "bulk-insert-upsert-cow-v6"),
    _m("log-commit-time-base-instant", H, "records.append({COMMIT_TIME: ctx.instant,",
       "records.append({COMMIT_TIME: spec.base_instant or ctx.instant,", "commit times",
       "log records carry their slice's base instant as commit time", "insert-upsert-delete-logs-mor-v6"),
    _m("fast-path-tie-incoming-loses", H, "base_wins = pc.greater(old_values, new_values)",
       "base_wins = pc.greater_equal(old_values, new_values)", "merge rule",
       "on the columnar fast path an equal ordering value keeps the stored row", "equal-ordering-fast-path-cow-v6"),
    _m("fast-path-ordering-reversed", H, "base_wins = pc.greater(old_values, new_values)",
       "base_wins = pc.less(old_values, new_values)", "merge rule",
       "on the columnar fast path the smaller ordering value wins", "insert-upsert-delete-cow-v6"),
    _m("row-path-ordering-ignored", H, "            if merge_handle_keeps_stored(stored, version, ctx.rule):",
       "            if False:", "merge rule",
       "on the row path the incoming record always wins", "insert-upsert-delete-cow-v6", "dedupe-in-batch-cow-v6"),
    _m("compaction-plan-drops-group", S,
       "plan = plan_compaction(t, [SliceRef.of(sl) for sl in view.latest_slices()], timeline",
       "plan = plan_compaction(t, [SliceRef.of(sl) for sl in view.latest_slices()][1:], timeline",
       "compaction plan", "the compaction plan leaves out the first file group with logs",
       "compaction-two-groups-mor-v6", "compaction-mor-v6"),
    _m("compaction-not-compacted", S, 'stats_by_partition(stats), True, {"schema": schema}, "COMPACT")',
       'stats_by_partition(stats), False, {"schema": schema}, "COMPACT")', "compaction metadata",
       "a compaction's commit metadata says not compacted", "compaction-mor-v6"),
    _m("compaction-operation-upsert", S, '{"schema": schema}, "COMPACT")', '{"schema": schema}, "UPSERT")',
       "compaction metadata", "a compaction's commit names operation UPSERT", "compaction-mor-v6"),
    _m("compaction-deletes-zero", S, '"numDeletes": deletes,', '"numDeletes": 0,',
       "compaction metadata", "a compaction's stat counts no delete", "compaction-mor-v6"),
    _m("compaction-inserts-all", S, '"numInserts": len(out_keys) - kept_count,', '"numInserts": len(out_keys),',
       "compaction metadata", "a compaction's stat counts every row as an insert", "compaction-mor-v6"),
    _m("rollback-leaves-base-files", RB, "                storage.delete(rel)\n                e.ok.append(path)",
       "                e.ok.append(path)", "rollback", "a rollback deletes none of the rolled-back write's files",
       "rollback-latest-cow-v6", "crash-then-rollback-cow-v6"),
    _m("rollback-no-command-block", RB,
       "append_blocks(storage, rel, [rollback_command_block(command_instant, target.requested)])",
       "append_blocks(storage, rel, [])", "rollback", "a v6 merge-on-read rollback appends no command block",
       "rollback-latest-logs-mor-v6", "rollback-latest-mor-v6"),
    _m("clean-deletes-nothing", CL, "                storage.delete(path)\n                ok.append(",
       "                ok.append(", "clean", "the cleaner records its deletions without deleting",
       "clean-latest-commits-cow-v6"),
    _m("clean-ignores-savepoints", CL, "tl, config, savepointed_files(storage, tl),", "tl, config, frozenset(),",
       "clean", "the cleaner deletes savepointed files", "clean-savepoint-cow-v6"),
    _m("archive-uncleaned-replace", A, "        chosen = hold_back_uncleaned_replaces(chosen, replaced_groups(",
       "        chosen = chosen or hold_back_uncleaned_replaces(chosen, replaced_groups(", "archival",
       "a replacecommit is archived before its replaced groups are cleaned",
       "archive-uncleaned-replace-cow-v6"),
    _m("operation-type-insert", C, "operation_type = WriteOperationType.of_option(op).value",
       'operation_type = WriteOperationType.of_option("upsert" if op == "insert" else op).value',
       "commit metadata", "an insert's commit names operation UPSERT", "insert-upsert-delete-cow-v6"),
    _m("delete-partition-operation", C, '{"schema": schema_json(table, None)}, WriteOperationType.DELETE_PARTITION',
       '{"schema": schema_json(table, None)}, WriteOperationType.INSERT_OVERWRITE', "commit metadata",
       "delete_partition's commit names operation INSERT_OVERWRITE", "delete-partition-cow-v6"),
    _m("replaced-ids-drop-one", B, "replace = {p: tuple(v) for p, v in replaced.items()}",
       "replace = {p: tuple(v)[1:] for p, v in replaced.items()}", "commit metadata",
       "a replacecommit names one replaced file group too few", "insert-overwrite-cow-v6", "insert-split-cow-v6"),
    _m("write-compacted-flag", B, "CommitMetadata(stats_by_partition(stats), False,",
       "CommitMetadata(stats_by_partition(stats), True,", "commit metadata",
       "a write's commit metadata says compacted", "insert-upsert-delete-cow-v6"),
)
"""The curated list (the stream suite's streaming writer is not mutated: streams need Spark)."""


def apply_mutation(root: Path, m: Mutation) -> None:
    """Apply ``m`` to the copy at ``root``; its ``find`` text must occur exactly once."""
    path = root / m.path
    text = path.read_text()
    if text.count(m.find) != 1:
        raise ValueError(f"{m.id}: the text to replace occurs {text.count(m.find)} times in {m.path}")
    path.write_text(text.replace(m.find, m.replace))


def copy_code(dest: Path) -> None:
    """The project's packages (no fixtures, no virtual environment) under ``dest``."""
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__"))


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    caught_by: str | None
    layer: str
    detail: str


def _child(root: Path, args: Sequence[str], timeout: int) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "conformance.mutants", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"caught_by": f"crash (exit {proc.returncode})", "layer": "-", "detail": proc.stderr[-300:]}
    result: dict[str, str] = json.loads(lines[-1])
    return result


ATTEMPTS: Final[tuple[tuple[str, ...], ...]] = (("--hinted",), ("--hinted", "--rows"), (), ("--rows",))
"""The corpus passes of a mutation, cheapest first: hinted cases on the local engine, on its
record-by-record paths, then every case on each."""


def run_one(m: Mutation, fixtures: Path, machine: bool = True, timeout: int = 1800) -> Outcome:
    """One mutation against the corpus on the local engine and on its record-by-record paths (the
    hinted cases on both first, then the whole corpus on both), then, if uncaught, the machine."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_code(root)
        apply_mutation(root, m)
        got: dict[str, str] = {}
        for extra in ATTEMPTS if m.hints else ATTEMPTS[2:]:
            got = _child(root, [*extra, "--worker", str(fixtures), *m.hints], timeout)
            if got.get("caught_by"):
                break
        if not got.get("caught_by") and machine:
            got = _child(root, ["--machine"], timeout)
    return Outcome(m, got.get("caught_by") or None, got.get("layer", ""), got.get("detail", ""))


def worker(fixtures: str, hints: Sequence[str], rows: bool = False, hinted: bool = False) -> dict[str, str]:
    """In the mutated copy: the corpus (``hinted``: only the hinted cases) on the local engine (``rows``:
    with its column-at-a-time fast paths off), hinted cases first; the first failing case, the layers
    it fails in, the first line of its diff."""
    from conformance.adapters.reference_spark import ReferenceLocalAdapter, ReferenceLocalRowsAdapter
    from conformance.runner import Verdict, load_cases, run_case

    adapter = ReferenceLocalRowsAdapter if rows else ReferenceLocalAdapter
    where = " (record-by-record paths)" if rows else ""
    cases = [c for c in load_cases(fixtures) if c.suite != "stream" and (not hinted or c.case.id in hints)]
    order = sorted(cases, key=lambda c: (hints.index(c.case.id) if c.case.id in hints else len(hints)))
    for fc in order:
        r = run_case(fc, adapter)
        if r.verdict == Verdict.FAIL or (r.verdict == Verdict.XFAIL and fc.case.id in hints):
            layers = ", ".join(x.layer for x in r.layers if x.verdict == Verdict.FAIL) or "-"
            first = next((ln.strip() for ln in r.diff.splitlines() if ln.startswith("  ")), r.diff)
            return {"caught_by": f"{fc.suite}/{fc.case.id}{where}", "layer": layers, "detail": first[:200]}
    return {"caught_by": "", "layer": "", "detail": "the corpus passes"}


def machine_worker() -> dict[str, str]:
    """In the mutated copy: the lockstep machine's ci profile on the local engine (no streams)."""
    from conformance.adapters.reference_spark import ReferenceLocalAdapter
    from conformance.machine import options_for, run_machine

    try:
        run_machine(ReferenceLocalAdapter, "ci", replace(options_for(ReferenceLocalAdapter), stream_deletes=False))
    except AssertionError as err:
        return {"caught_by": "machine (ci profile)", "layer": "", "detail": str(err).splitlines()[0][:200]}
    return {"caught_by": "", "layer": "", "detail": "survives the corpus and the machine"}


def report(outcomes: Sequence[Outcome], day: str | None = None) -> str:
    """The report as a Markdown table, headed by the day of the run (``day``, default today)."""
    day = day or datetime.date.today().isoformat()
    lines = [f"Run of {day}: {len(outcomes)} mutations of `reference/`, each against the corpus on the local "
             "engine and on its record-by-record paths (then the machine's ci profile if the corpus misses it).",
             "",
             "| mutation | bug class | description | caught by | layers |", "|---|---|---|---|---|"]
    for o in outcomes:
        lines.append(f"| `{o.mutation.id}` | {o.mutation.bug_class} | {o.mutation.description} | "
                     f"{o.caught_by or '**survives**'} | {o.layer} |")
    caught = sum(1 for o in outcomes if o.caught_by)
    lines.append(f"\n{caught} of {len(outcomes)} mutations caught.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance.mutants", description=__doc__)
    ap.add_argument("--worker", nargs="+", metavar=("FIXTURES", "HINT"))
    ap.add_argument("--machine", action="store_true")
    ap.add_argument("--rows", action="store_true", help="with --worker: the local engine's record-by-record paths")
    ap.add_argument("--hinted", action="store_true", help="with --worker: only the mutation's hinted cases")
    ap.add_argument("--fixtures", default=str(ROOT / "fixtures"))
    ap.add_argument("--only", nargs="*", default=None, help="mutation ids to run (default: all)")
    ap.add_argument("--no-machine", action="store_true", help="do not run the machine on survivors")
    ap.add_argument("--report", default=None, help="write the Markdown report here")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1:], args.rows, args.hinted)))
        return 0
    if args.machine:
        print(json.dumps(machine_worker()))
        return 0
    chosen = [m for m in MUTATIONS if not args.only or m.id in args.only]
    outcomes = []
    for m in chosen:
        o = run_one(m, Path(args.fixtures).resolve(), machine=not args.no_machine)
        print(f"{m.id}: {o.caught_by or 'SURVIVES'} {o.layer} {o.detail}", flush=True)
        outcomes.append(o)
    text = report(outcomes)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n")
    return 0 if all(o.caught_by for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())

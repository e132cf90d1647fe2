"""The conformance corpus, built by code: handwritten case builders, their expected observations from
the spec model, and ``fixtures/`` on disk.

``hudi-conformance generate [--out fixtures]`` writes

    <out>/cases/<suite>/<case>/case.json          the case (id, description, tags, provenance, config, ops)
    <out>/cases/<suite>/<case>/expected/step-<n>.json   the spec model's observation after step n
    <out>/MANIFEST.json                           corpus and generator versions, sha256 of every file

Expected data is the model's, never edited by hand. Generation is deterministic: the same code
writes the same bytes (JSON with sorted keys, fixed indentation, no timestamps), so a regenerated
corpus diffs clean. Cases under ``cases/regressions/`` (minimized failures written by
``write_regression``) are kept and re-expected on regeneration.

Builders are parametrized over table type (COW/MOR) and table version (6/8) where the rule they
exercise applies to both; each case's tags name the operations and bug classes it covers. Version 9
(Apache Hudi 1.1's table version, the version 8 timeline and file layout with 1.1's table properties)
has a selection of its own (``VERSION_9``): each operation on COW and MOR, the log path, every table
service and the timeline's actions, once each. The
builders of the ledger's bug classes live in ``conformance.cases_ledger``, the helpers every builder
uses in ``conformance.case_kit``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from conformance.case_kit import BOTH_TYPES, BOTH_VERSIONS, COW, MOR, Builder, rec, w
from conformance.case_kit import clean_config as _clean_config
from conformance.case_kit import config as _config
from conformance.case_kit import make_case as _case
from conformance.case_kit import short as _short
from conformance.cases_bucket import bucket_cases, bucket_stream_cases
from conformance.cases_clustering import clustering_small_files
from conformance.cases_concurrency import concurrency_cases
from conformance.cases_fidelity import (
    DUPLICATE_BUILDERS,
    bulk_insert_sort_mode,
    insert_into_small_file,
    null_ordering_and_partitions,
    option_conflicts,
    schema_changes,
    update_then_delete,
)
from conformance.cases_global import global_cases, record_index_cases
from conformance.cases_ledger import (
    archive_uncleaned_replace,
    compaction_after_archive,
    compaction_on_cow,
    compaction_two_groups,
    equal_ordering_fast_path,
    equal_ordering_row_path,
)
from conformance.interface.adapter import LAYERS
from conformance.interface.ops import Case, case_from_json, case_to_json
from spec.errors import InvalidOperation
from spec.model.operations import (
    Archive,
    Clean,
    Compact,
    Crash,
    DeletePartition,
    ExpectError,
    Restore,
    Rollback,
    Savepoint,
    Stream,
    StreamRecord,
    Write,
)

CORPUS_VERSION: Final = 8
GENERATOR_VERSION: Final = 2
REGRESSIONS: Final = "regressions"


# --- suite: writes ---------------------------------------------------------------------------------

def insert_upsert_delete(tt: str, v: int) -> Case:
    return _case("insert-upsert-delete", tt, v, "insert, upsert with a newer and an older ordering value, delete",
                 ["write:insert", "write:upsert", "write:delete", "bug:duplicates-after-upsert",
                  "bug:ordering-field-ignored"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1), rec(3, 1, "b")),
                  w("upsert", rec(1, 5), rec(2, 0), rec(4, 1, "b")),
                  w("delete", rec(3, 9, "b")),
                  w("upsert", rec(1, 3), rec(4, 7, "b"))])


def bulk_insert_then_upsert(tt: str, v: int) -> Case:
    return _case("bulk-insert-upsert", tt, v, "bulk_insert, then upserts into its file groups",
                 ["write:bulk_insert", "write:upsert"], _config(tt, v),
                 [w("bulk_insert", rec(1, 1), rec(2, 1, "b"), rec(3, 1, "b")),
                  w("upsert", rec(2, 2, "b"), rec(5, 1)),
                  w("upsert", rec(3, 3, "b"), rec(1, 2))])


def insert_overwrite(tt: str, v: int) -> Case:
    return _case("insert-overwrite", tt, v, "insert_overwrite replaces the file groups of the partitions it writes",
                 ["write:insert_overwrite", "replacecommit"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1), rec(3, 1, "b")),
                  w("insert_overwrite", rec(7, 1), rec(8, 2)),
                  w("upsert", rec(7, 3), rec(3, 2, "b"))])


def insert_overwrite_table(tt: str, v: int) -> Case:
    return _case("insert-overwrite-table", tt, v, "insert_overwrite_table replaces every file group",
                 ["write:insert_overwrite_table", "replacecommit"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1, "b")),
                  w("upsert", rec(1, 2)),
                  w("insert_overwrite_table", rec(9, 1, "c"))])


def delete_partition(tt: str, v: int) -> Case:
    return _case("delete-partition", tt, v, "delete_partition replaces a partition's groups without new files",
                 ["delete_partition", "replacecommit"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1, "b"), rec(3, 1, "b")),
                  DeletePartition(("b",)),
                  w("upsert", rec(4, 1, "b"), rec(1, 2))])


def dedupe_in_batch(tt: str, v: int) -> Case:
    return _case("dedupe-in-batch", tt, v, "versions of a key within one upsert batch combine on the ordering field",
                 ["write:upsert", "bug:duplicates-after-upsert", "bug:ordering-field-ignored"], _config(tt, v),
                 [w("upsert", rec(1, 2, v="keep"), rec(1, 1, v="lose"), rec(2, 1)),
                  w("upsert", rec(2, 5, v="new"), rec(2, 3, v="old"), rec(1, 1, v="older"))])


def delete_then_reinsert(tt: str, v: int) -> Case:
    return _case("delete-reinsert", tt, v, "a deleted key stays deleted after the next commit, and a re-insert "
                 "brings it back once", ["write:delete", "write:upsert", "bug:deleted-rows-reappear"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)),
                  w("delete", rec(1, 2)),
                  w("upsert", rec(2, 3)),
                  w("upsert", rec(1, 4, v="back"))])


def schema_evolution(tt: str, v: int) -> Case:
    return _case("schema-add-column", tt, v, "a later write adds a column; older rows read it as null",
                 ["write:upsert", "schema"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)),
                  w("upsert", rec(2, 2, extra_col="x"), rec(3, 1, extra_col="y"))])


def keys_and_partitions(tt: str, v: int) -> Case:
    cfg = _config(tt, v, record_key_fields=("id", "name"), partition_fields=("p", "zone"), hive_style=True)

    def r(i: int, ts: int, p: str) -> dict[str, Any]:
        return {**rec(i, ts, p), "name": f"n{i}", "zone": "z1"}

    return _case("complex-key-hive", tt, v, "a two-field record key and two hive-style partition fields",
                 ["write:insert", "write:upsert", "keygen:COMPLEX"], cfg,
                 [w("insert", r(1, 1, "a"), r(2, 1, "b")), w("upsert", r(1, 2, "a"), r(3, 1, "b"))])


def non_partitioned(tt: str, v: int) -> Case:
    return _case("non-partitioned", tt, v, "a table without partition fields",
                 ["write:insert", "write:upsert", "write:delete", "keygen:NON_PARTITION"],
                 _config(tt, v, partition_fields=()),
                 [w("insert", rec(1, 1), rec(2, 1)), w("upsert", rec(2, 2), rec(3, 1)), w("delete", rec(1, 1))])


def commit_time_ordering(tt: str, v: int) -> Case:
    return _case("commit-time-ordering", tt, v, "COMMIT_TIME_ORDERING: the latest write wins whatever its ts",
                 ["write:upsert", "merge:COMMIT_TIME_ORDERING"], _config(tt, v, merge_mode="COMMIT_TIME_ORDERING"),
                 [w("insert", rec(1, 5), rec(2, 5)), w("upsert", rec(1, 1, v="later")), w("delete", rec(2, 0))])


def insert_split(tt: str, v: int) -> Case:
    return _case("insert-split", tt, v, "one insert split into several new file groups (record size estimate "
                 "100, max file size 1000: 10 records a group, no small files)", ["write:insert", "layout"],
                 _config(tt, v, max_file_size=1000, record_size_estimate=100, small_file_limit=0),
                 [w("insert", *(rec(i, 1) for i in range(25)))])


# --- suite: services -------------------------------------------------------------------------------

def compaction(tt: str, v: int) -> Case:
    return _case("compaction", tt, v, "log updates and deletes survive compaction",
                 ["compact", "bug:compaction-drops-log-updates", "bug:deleted-rows-reappear"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1), rec(3, 1)),
                  w("upsert", rec(1, 2), rec(2, 0)),
                  w("delete", rec(3, 2)),
                  Compact(),
                  w("upsert", rec(2, 4), rec(3, 5, v="back"))])


def pending_compaction(tt: str, v: int) -> Case:
    return _case("pending-compaction", tt, v, "writes while a compaction is pending go to a new slice (not into the "
                 "planned one, no small-file routing into the group); reads see through the pending plan; the plan "
                 "completes after the write (out-of-order completion in v8)",
                 ["compact", "bug:slice-visibility-pending-compaction", "bug:small-file-routing-pending-compaction",
                  "bug:incremental-out-of-order-completion"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)),
                  w("upsert", rec(1, 2)),
                  Compact("schedule"),
                  w("upsert", rec(2, 3), rec(4, 1)),
                  w("insert", rec(5, 1)),
                  Compact("run"),
                  w("upsert", rec(5, 2))])


def inline_compaction(tt: str, v: int) -> Case:
    return _case("inline-compaction", tt, v, "inline compaction after every 2 delta commits",
                 ["compact", "inline"], _config(tt, v, inline_compact=True, compact_max_delta_commits=2),
                 [w("insert", rec(1, 1), rec(2, 1)), w("upsert", rec(1, 2)), w("upsert", rec(2, 3)),
                  w("upsert", rec(1, 4))])


def clean_latest_commits(tt: str, v: int) -> Case:
    return _case("clean-latest-commits", tt, v, "KEEP_LATEST_COMMITS with 1 retained: older slices go, the ones "
                 "the retained commit reads stay", ["clean", "bug:cleaner-removes-needed-files"],
                 _clean_config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1, "b")), w("upsert", rec(1, 2)), w("upsert", rec(1, 3)),
                  Clean(), w("upsert", rec(2, 2, "b")), Clean()])


def clean_file_versions(tt: str, v: int) -> Case:
    return _case("clean-file-versions", tt, v, "KEEP_LATEST_FILE_VERSIONS keeps the newest 2 slices of a group",
                 ["clean"], _config(tt, v, clean_policy="KEEP_LATEST_FILE_VERSIONS", clean_file_versions_retained=2),
                 [w("insert", rec(1, 1)), w("upsert", rec(1, 2)), w("upsert", rec(1, 3)), w("upsert", rec(1, 4)),
                  Clean()])


def clean_pending_compaction(tt: str, v: int) -> Case:
    return _case("clean-pending-compaction", tt, v, "the cleaner leaves the slices a pending compaction reads",
                 ["clean", "compact", "bug:cleaner-removes-needed-files"], _clean_config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)), w("upsert", rec(1, 2)), Compact("schedule"),
                  w("upsert", rec(2, 3)), w("upsert", rec(1, 4)), Clean(), Compact("run"), Clean()])


def clean_savepoint(tt: str, v: int) -> Case:
    return _case("clean-savepoint", tt, v, "the cleaner keeps savepointed files",
                 ["clean", "savepoint", "bug:cleaner-removes-needed-files"], _clean_config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)), Savepoint(), w("upsert", rec(1, 2)), w("upsert", rec(1, 3)),
                  w("upsert", rec(2, 3)), Clean()])


def auto_clean(tt: str, v: int) -> Case:
    return _case("auto-clean", tt, v, "automatic clean after each commit", ["clean", "auto"],
                 _clean_config(tt, v, auto_clean=True),
                 [w("insert", rec(1, 1)), w("upsert", rec(1, 2)), w("upsert", rec(1, 3)), w("upsert", rec(1, 4))])


def archival(tt: str, v: int) -> Case:
    return _case("archive", tt, v, "archival moves the oldest instants off the active timeline "
                 "(keep_min 2, keep_max 3)", ["archive", "clean"], _clean_config(tt, v),
                 [w("insert", rec(1, 1)), w("upsert", rec(1, 2)), w("upsert", rec(1, 3)), Clean(),
                  w("upsert", rec(1, 4)), w("upsert", rec(1, 5)), Archive()])


# --- suite: timeline -------------------------------------------------------------------------------

def rollback_latest(tt: str, v: int) -> Case:
    return _case("rollback-latest", tt, v, "roll back the latest write (MOR: a rollback command block), then "
                 "write again", ["rollback", "bug:rollback-command-blocks"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)), w("upsert", rec(1, 2), rec(3, 1)), Rollback(),
                  w("upsert", rec(1, 3)), Rollback(), w("upsert", rec(2, 5))])


def savepoint_restore(tt: str, v: int) -> Case:
    return _case("savepoint-restore", tt, v, "restore to a savepoint removes every later write",
                 ["savepoint", "restore"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)), Savepoint(), w("upsert", rec(1, 2), rec(3, 1)),
                  w("delete", rec(2, 2)), Restore(), w("upsert", rec(2, 4))])


def crash_then_write(tt: str, v: int) -> Case:
    return _case("crash-then-write", tt, v, "a write dies after both of its files, before its commit; the next "
                 "write rolls it back (its files and log blocks are never read)",
                 ["crash", "bug:uncommitted-log-blocks", "bug:rollback-command-blocks"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1, "b")), Crash(2), w("upsert", rec(1, 2), rec(2, 2, "b")),
                  w("upsert", rec(2, 3, "b"))])


def crash_then_rollback(tt: str, v: int) -> Case:
    return _case("crash-then-rollback", tt, v, "an explicit rollback of a failed write",
                 ["crash", "rollback"], _config(tt, v),
                 [w("insert", rec(1, 1)), Crash(0), w("upsert", rec(1, 2)), Rollback(), w("upsert", rec(1, 3))])


def expect_errors(tt: str, v: int) -> Case:
    return _case("expect-errors", tt, v, "refused operations leave the table as it was",
                 ["expect_error", "rollback"], _config(tt, v),
                 [w("insert", rec(1, 1)), ExpectError("schema_mismatch"), w("upsert", {"ts": 1, "p": "a", "v": "x"}),
                  ExpectError("instant_not_found"), Rollback("20000101000000000"), w("upsert", rec(1, 2))])


def expect_error_write(tt: str, v: int) -> Case:
    return _case("expect-error-write", tt, v, "a write without its record key field is refused",
                 ["expect_error", "write:upsert"], _config(tt, v),
                 [w("insert", rec(1, 1)), ExpectError("schema_mismatch"), w("upsert", {"ts": 1, "p": "a", "v": "x"}),
                  w("upsert", rec(1, 2))])


def fixed_instants(tt: str, v: int) -> Case:
    return _case("fixed-instants", tt, v, "writes at instant times the case names; rollback of a named instant",
                 ["write:upsert", "rollback", "instant_time"], _config(tt, v),
                 [Write("insert", (rec(1, 1),), "20240601000000000"),
                  Write("upsert", (rec(1, 2),), "20240601000100000"),
                  Rollback("20240601000100000")])


# --- suite: stream ---------------------------------------------------------------------------------

def _s(kind: str, r: dict[str, Any]) -> StreamRecord:
    return StreamRecord(kind, r)


def stream_buckets(tt: str, v: int) -> Case:
    return _case("stream-buckets", tt, v, "a streaming writer: I,U | U,U — insert buckets reused across checkpoints",
                 ["stream"], _config(tt, v),
                 [Stream(((_s("upsert", rec(1, 1)), _s("upsert", rec(2, 1)), _s("upsert", rec(1, 2))),
                          (_s("upsert", rec(2, 2)), _s("upsert", rec(3, 1, "b"))))),
                  Stream(((_s("upsert", rec(1, 3)),),))])


def stream_deletes(tt: str, v: int) -> Case:
    return _case("stream-deletes", tt, v, "streaming deletes, including of keys the table never held",
                 ["stream", "bug:deleted-rows-reappear"], _config(tt, v),
                 [Stream(((_s("upsert", rec(1, 1)), _s("upsert", rec(2, 1))),
                          (_s("delete", rec(1, 2)), _s("delete", rec(9, 2)), _s("upsert", rec(2, 3)))))])


# --- suite: logs ----------------------------------------------------------------------------------

def logs_only(builder: Builder) -> Builder:
    """A merge-on-read variant of a case with small-file routing off (``small_file_limit`` 0): inserts
    open new file groups and every update or delete goes to a log file, so the case exercises the
    log path (append handle, log merging, compaction, rollback of log appends) on its own."""
    def build(tt: str, v: int) -> Case:
        c = builder(tt, v)
        return replace(c, id=c.id.replace(f"-{_short(tt)}-v", f"-logs-{_short(tt)}-v"),
                       description=f"{c.description} (small-file routing off: every update goes to a log)",
                       tags=(*c.tags, "logs"), config=replace(c.config, small_file_limit=0))
    return build


LOG_BUILDERS: Final[tuple[Builder, ...]] = (insert_upsert_delete, dedupe_in_batch, delete_then_reinsert, compaction,
                                             pending_compaction, clean_pending_compaction, rollback_latest,
                                             savepoint_restore, crash_then_write, update_then_delete)
"""The builders whose merge-on-read, log-only variants form the ``logs`` suite."""


# --- the corpus -----------------------------------------------------------------------------------
def _grid(builder: Builder, types: Sequence[str] = BOTH_TYPES, versions: Sequence[int] = BOTH_VERSIONS
          ) -> Iterator[Case]:
    for tt in types:
        for v in versions:
            yield builder(tt, v)


def _diagonal(builder: Builder) -> Iterator[Case]:
    """A rule that does not depend on table type and version together: COW v6 and MOR v8."""
    yield builder(COW, 6)
    yield builder(MOR, 8)


VERSION_9: Final[dict[str, tuple[tuple[Builder, tuple[str, ...]], ...]]] = {
    "writes": ((insert_upsert_delete, BOTH_TYPES), (bulk_insert_then_upsert, BOTH_TYPES),
               (insert_overwrite, BOTH_TYPES), (insert_overwrite_table, (COW,)), (delete_partition, BOTH_TYPES),
               (delete_then_reinsert, (MOR,)), (schema_evolution, (COW,)), (keys_and_partitions, (MOR,)),
               (non_partitioned, (COW,)), (commit_time_ordering, (MOR,))),
    "services": ((compaction, (MOR,)), (pending_compaction, (MOR,)), (inline_compaction, (MOR,)),
                 (clean_latest_commits, BOTH_TYPES), (clean_savepoint, (COW,)), (clean_pending_compaction, (MOR,)),
                 (archival, (COW,)), (auto_clean, (MOR,))),
    "timeline": ((rollback_latest, BOTH_TYPES), (savepoint_restore, BOTH_TYPES), (crash_then_write, (COW,)),
                 (crash_then_rollback, (COW,)), (expect_error_write, (MOR,)), (fixed_instants, (COW,))),
    "stream": ((stream_buckets, (MOR,)),),
    "logs": ((logs_only(insert_upsert_delete), (MOR,)), (logs_only(compaction), (MOR,)),
             (logs_only(rollback_latest), (MOR,)), (logs_only(crash_then_write), (MOR,)),
             (logs_only(update_then_delete), (MOR,))),
}
"""The version 9 cases by suite (builder, table types): a selection, not the grid — each write operation on
COW and MOR, the log path, compaction (planned, pending, inline), clean (by commits, with a savepoint, with a
pending compaction, automatic), archival, rollback, savepoint and restore, crashes, a refused write and a
stream. Version 9 shares version 8's timeline and file layout, so the other rules are version 8's cases."""


def corpus() -> dict[str, list[Case]]:
    """Every generated case by suite (regressions are not built: they are read from disk)."""
    writes = [c for b in (insert_upsert_delete, bulk_insert_then_upsert, insert_overwrite, insert_overwrite_table,
                          delete_partition, dedupe_in_batch, delete_then_reinsert, schema_evolution,
                          keys_and_partitions, non_partitioned, insert_split) for c in _grid(b)]
    writes += list(_grid(commit_time_ordering, versions=(8,)))
    writes += [c for b in (*DUPLICATE_BUILDERS, insert_into_small_file, null_ordering_and_partitions,
                           option_conflicts, schema_changes) for c in _diagonal(b)]
    writes += [c for mode in ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION")
               for c in _diagonal(bulk_insert_sort_mode(mode))]
    writes += [c for b in (equal_ordering_fast_path, equal_ordering_row_path) for c in _grid(b)]
    writes += list(bucket_cases())
    writes += [*global_cases(), *record_index_cases()]
    services = [c for b in (compaction, pending_compaction, inline_compaction, clean_pending_compaction)
                for c in _grid(b, types=(MOR,))]
    services += [c for b in (clean_latest_commits, clean_savepoint) for c in _grid(b)]
    services += [*_grid(compaction_two_groups, types=(MOR,)), *_grid(compaction_on_cow, types=(COW,)),
                 *_grid(archive_uncleaned_replace), *_grid(compaction_after_archive, types=(MOR,)),
                 *_grid(clustering_small_files, versions=(6, 8, 9))]
    services += [c for b in (clean_file_versions, auto_clean, archival) for c in _grid(b, versions=(6, 8))
                 if c.config.table_type == COW or b is auto_clean]
    timeline = [c for b in (rollback_latest, savepoint_restore, crash_then_write, expect_error_write)
                for c in _grid(b)]
    timeline += [c for b in (crash_then_rollback, expect_errors, fixed_instants) for c in _grid(b, types=(COW,))]
    stream = [*_grid(stream_buckets), *_grid(stream_deletes, types=(MOR,)), *bucket_stream_cases()]
    logs = [c for b in LOG_BUILDERS for c in _grid(logs_only(b), types=(MOR,))]
    suites = {"writes": writes, "services": services, "timeline": timeline, "stream": stream, "logs": logs,
              "concurrency": concurrency_cases()}
    for suite, selection in VERSION_9.items():
        suites[suite] += [c for b, types in selection for c in _grid(b, types=types, versions=(9,))]
    return suites


# --- writing fixtures -----------------------------------------------------------------------------

def dumps(obj: Any) -> str:
    """The corpus's JSON text: sorted keys, one-space indent, a final newline (byte-stable)."""
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_case(root: Path, suite: str, case: Case, layers: Sequence[str] = LAYERS) -> list[Path]:
    """Write one case and its expected observations under ``root/cases/<suite>/<case id>/``."""
    from conformance.runner import expected_steps

    folder = root / "cases" / suite / case.id
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "expected").mkdir(parents=True)
    written = [folder / "case.json"]
    written[0].write_text(dumps(case_to_json(case)))
    for obs in expected_steps(case, layers):
        path = folder / "expected" / f"step-{obs['step']}.json"
        path.write_text(dumps(obs))
        written.append(path)
    return written


def write_manifest(root: Path) -> Path:
    """``MANIFEST.json``: versions, the number of cases and of golden tables, and the sha256 of every
    file under ``cases/`` and ``tables/`` (golden tables are kept as they are: ``generate`` hashes
    them, ``hudi-conformance tables`` writes them)."""
    files = sorted(p for folder in ("cases", "tables") for p in (root / folder).rglob("*") if p.is_file())
    tables = root / "tables"
    manifest = {"corpus_version": CORPUS_VERSION, "generator_version": GENERATOR_VERSION,
                "cases": sum(1 for p in files if p.name == "case.json" and p.parent.parent.parent.name == "cases"),
                "tables": sum(1 for p in tables.glob("*/case.json")) if tables.is_dir() else 0,
                "files": {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}}
    path = root / "MANIFEST.json"
    path.write_text(dumps(manifest))
    return path


def generate(out: str | Path = "fixtures", suites: Sequence[str] | None = None) -> dict[str, int]:
    """Regenerate the corpus under ``out``: every built case (the given suites, or all), the
    regressions already there re-expected, and the manifest. Returns the number of cases per suite."""
    root = Path(out)
    built = corpus()
    unknown = set(suites or ()) - set(built) - {REGRESSIONS}
    if unknown:
        raise InvalidOperation(f"unknown suite(s) {', '.join(sorted(unknown))}",
                               hint=f"the suites are: {', '.join([*built, REGRESSIONS])}")
    counts: dict[str, int] = {}
    for suite, cases in built.items():
        if suites and suite not in suites:
            continue
        ids = [c.id for c in cases]
        if len(set(ids)) != len(ids):
            raise InvalidOperation(f"suite {suite}: duplicate case ids", hint="give every case its own id")
        folder = root / "cases" / suite
        if folder.exists():
            shutil.rmtree(folder)
        for case in cases:
            write_case(root, suite, case)
        counts[suite] = len(cases)
    regressions = root / "cases" / REGRESSIONS
    if regressions.is_dir() and (not suites or REGRESSIONS in suites):
        cases = [case_from_json(json.loads((p / "case.json").read_text()))
                 for p in sorted(regressions.iterdir()) if (p / "case.json").is_file()]
        for case in cases:
            write_case(root, REGRESSIONS, case)
        counts[REGRESSIONS] = len(cases)
    write_manifest(root)
    return counts


def write_regression(root: str | Path, case: Case, reason: str) -> Path:
    """Write a minimized failing sequence (e.g. from hypothesis) as a case under
    ``cases/regressions/``, with its expected observations, and refresh the manifest. The case id
    is made unique by a hash of its operations; ``reason`` goes into its provenance."""
    digest = hashlib.sha256(dumps(case_to_json(replace(case, id="x", description="", provenance="")))
                            .encode()).hexdigest()[:10]
    named = replace(case, id=f"{case.id}-{digest}", provenance=f"hypothesis: {reason}")
    base = Path(root)
    write_case(base, REGRESSIONS, named)
    write_manifest(base)
    return base / "cases" / REGRESSIONS / named.id

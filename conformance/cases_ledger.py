"""The corpus's cases for what a writer leaves behind beyond the rows (the L4 ledger's bug classes):
the tie rule on equal ordering values on both merge paths (the columnar fast path and the record-by-
record row path), a compaction plan that must hold every file group with logs, compaction refused on
a copy-on-write table, archival of a replacecommit whose replaced file groups are not cleaned yet, a
compaction after archival moved deltacommits whose log files it must still take.
``conformance.generate.corpus`` places them in their suites."""

from __future__ import annotations

from conformance.case_kit import clean_config as _clean_config
from conformance.case_kit import config as _config
from conformance.case_kit import make_case as _case
from conformance.case_kit import rec, w
from conformance.interface.ops import Case
from spec.model.operations import Archive, Compact, ExpectError

# --- suite: writes ---------------------------------------------------------------------------------

def equal_ordering_fast_path(tt: str, v: int) -> Case:
    return _case("equal-ordering-fast-path", tt, v, "an upsert with the stored ordering value (integer, no deletes: "
                 "the columnar merge path): the incoming record wins the tie",
                 ["write:upsert", "bug:ordering-tie", "path:columnar"], _config(tt, v),
                 [w("insert", rec(1, 5), rec(2, 5)), w("upsert", rec(1, 5, v="tie"), rec(2, 4, v="older"))])


def equal_ordering_row_path(tt: str, v: int) -> Case:
    return _case("equal-ordering-row-path", tt, v, "the same tie with a delete in the batch (the record-by-record "
                 "merge path): the incoming record wins the tie, the delete removes its key",
                 ["write:upsert", "bug:ordering-tie", "path:row"], _config(tt, v),
                 [w("insert", *({**rec(i, 5), "_hoodie_is_deleted": False} for i in (1, 2, 3))),
                  w("upsert", *({**r, "_hoodie_is_deleted": d} for r, d in ((rec(1, 5, v="tie"), False),
                                                                             (rec(2, 4, v="older"), False),
                                                                             (rec(3, 6), True))))])


# --- suite: services -------------------------------------------------------------------------------

def compaction_two_groups(tt: str, v: int) -> Case:
    return _case("compaction-two-groups", tt, v, "a compaction plan holds every file group with logs (two partitions)",
                 ["compact", "bug:compaction-plan-incomplete"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1, "b")), w("upsert", rec(1, 2), rec(2, 2, "b")),
                  Compact("schedule"), Compact("run")])


def compaction_after_archive(tt: str, v: int) -> Case:
    return _case("compaction-after-archive", tt, v, "archival moves deltacommits off the active timeline while their "
                 "log files hold the only copy of their updates; the compaction after it takes those logs (their "
                 "deltacommits completed, as the archived timeline says) and every update survives (keep_min 2, "
                 "keep_max 3, one deltacommit enough for archival's compaction bound)",
                 ["compact", "archive", "bug:compaction-reverts-archived-updates"],
                 _config(tt, v, keep_min_commits=2, keep_max_commits=3, clean_commits_retained=1,
                         compact_max_delta_commits=1),
                 [w("insert", rec(1, 1), rec(2, 1), rec(3, 1), rec(4, 1)),
                  *(w("upsert", rec(k, 2, v=f"update-{k}")) for k in (1, 2, 3, 4)),
                  Archive(), Compact()])


def compaction_on_cow(tt: str, v: int) -> Case:
    return _case("compaction-on-cow", tt, v, "compaction on a copy-on-write table is refused in every mode, "
                 "run with nothing pending included (invalid_operation, not instant_not_found)",
                 ["compact", "expect_error"], _config(tt, v),
                 [w("insert", rec(1, 1)), ExpectError("invalid_operation"), Compact("run"),
                  ExpectError("invalid_operation"), Compact("schedule")])


def archive_uncleaned_replace(tt: str, v: int) -> Case:
    return _case("archive-uncleaned-replace", tt, v, "archival keeps a replacecommit whose replaced file groups "
                 "are not cleaned yet, and the commits after it (keep_min 2, keep_max 3, no clean)",
                 ["archive", "replacecommit", "bug:archive-uncleaned-replace"], _clean_config(tt, v),
                 [w("insert", rec(1, 1)), w("upsert", rec(1, 2)), w("insert_overwrite", rec(2, 1)),
                  w("upsert", rec(2, 2)), w("upsert", rec(2, 3)), w("upsert", rec(2, 4)), Archive()])

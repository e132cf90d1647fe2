"""Apache Hudi 1.2.0's bugs that the ``hudi_spark`` adapter meets running the corpus, each with its smallest
reproducer: the cases it fails (``KNOWN_FAILURES``, reported XFAIL), and the procedures' bugs the adapter goes
around with the write client they wrap (``conformance.adapters.hudi_spark.SparkPlanner``), whose cases pass.
"""

from __future__ import annotations

from typing import Final

ROLLBACK_ON_VERSION_6: Final = (
    "Apache Hudi 1.2.0 bug: CALL rollback_to_instant on a table version 6 table fails with HoodieIOException "
    "'Failed to scan metadata' (FileNotFoundException: .hoodie/timeline does not exist): "
    "RollbackToInstantTimeProcedure reads the active timeline with the layout 2 factory (ActiveTimelineV2) where a "
    "version 6 table has timeline layout 1. Smallest reproducer: write a table with hoodie.write.table.version=6 "
    "through the datasource (an insert, then an upsert), register it, CALL rollback_to_instant(table => 't', "
    "instant_time => '<the upsert's instant>')")
"""Hudi's bug behind the version 6 rollback cases (``rollback-latest-*-v6``, ``fixed-instants-cow-v6``,
``expect-errors-cow-v6``, ``crash-then-rollback-cow-v6``), which the adapter runs through the write client."""

RUN_COMPACTION_ON_COPY_ON_WRITE: Final = (
    "Apache Hudi 1.2.0 bug: CALL run_compaction(op => 'execute') on a copy-on-write table succeeds and does nothing, "
    "where Hudi's write client refuses compaction on a copy-on-write table (HoodieSparkCopyOnWriteTable.compact and "
    "scheduleCompaction: HoodieNotSupportedException, which op => 'schedule' does raise): RunCompactionProcedure "
    "filters the pending compaction instants (none) before it reaches the table. Smallest reproducer: write one "
    "record into a copy-on-write table through the datasource, register it, CALL run_compaction(op => 'execute', "
    "table => 't'): no error, no rows")
"""Hudi's bug behind ``compaction-on-cow`` (the spec refuses a compaction run on a copy-on-write table)."""

NULL_ORDERING_VALUE: Final = (
    "Apache Hudi 1.2.0 bug: an upsert of a record whose ordering field is null onto a key the table holds is not "
    "refused (Hudi 0.15 refused it before writing: the ordering field's value not found) but handled by the table "
    "type: copy-on-write fails inside the merge handle with NullPointerException (BufferedRecord.getOrderingValue() "
    "is null in the event-time comparison) after writing an empty base file, and leaves the commit inflight; "
    "merge-on-read appends it to the log, where it wins the merge. Smallest reproducer: a table with "
    "hoodie.table.ordering.fields=ts, insert {id: 1, p: 'a', ts: 1}, then upsert {id: 1, p: 'a', ts: null}")
"""Hudi's bug behind ``null-ordering-partition`` (the spec refuses the upsert, ``invalid_record``)."""

ARCHIVE_PROCEDURE_IGNORES_OPTIONS: Final = (
    "Apache Hudi 1.2.0 bug: CALL archive_commits builds its write config from its own arguments alone "
    "(ArchiveExecutorUtils.archive: min/max/retain commits, metadata), so the table's "
    "hoodie.compact.inline.max.delta.commits (set in the session) is not read and the archiver keeps the delta "
    "commits of the default trigger (5) for a compaction still to come (CompactionUtils."
    "getEarliestInstantToRetainForCompaction); later Hudi passes the session's options. Smallest reproducer: a "
    "merge-on-read table with hoodie.compact.inline.max.delta.commits=1, an insert and four upserts, "
    "CALL archive_commits(table => 't', min_commits => 2, max_commits => 3, retain_commits => 1): nothing archived")
"""Hudi's bug behind ``compaction-after-archive-mor-v6`` (the model bounds archival by the table's compaction
trigger), which the adapter runs through the write client."""

EAGER_ROLLBACK_BEHIND_A_COMMIT: Final = (
    "Apache Hudi 1.2.0 bug: a write that lost conflict resolution to a write that started after it and committed "
    "first is left inflight behind that commit, and the next single writer (hoodie.cleaner.policy.failed.writes "
    "EAGER, the default) cannot roll it back: its write fails with HoodieRollbackException 'Found commits after "
    "time :<the failed write>, please rollback greater commits first', and so does every later one. "
    "BaseRollbackActionExecutor.validateRollbackCommitSequence lets a failed write behind a commit be rolled back "
    "only if it has a heartbeat file ('remnants ... from a previous LAZY rollback config'), and the losing "
    "optimistic writer deleted its heartbeat as it failed. Smallest reproducer: insert keys 1 and 2 (one file "
    "group); two datasource upserts of key 1 and key 2 under optimistic_concurrency_control with failed writes "
    "LAZY, the later-started committing first, the other failing with HoodieWriteConflictException; then an "
    "upsert with the default options fails (tests/test_hudi_mixed_writers.py)")
"""Hudi's bug behind ``concurrent-same-group-reversed``: the spec rolls the failed write back before the next write,
as this project's writer does (and Hudi's own cleaner does under the LAZY policy, after the next commit)."""

KNOWN_FAILURES: Final[dict[str, str]] = {
    "compaction-on-cow-cow-v6": RUN_COMPACTION_ON_COPY_ON_WRITE,
    "compaction-on-cow-cow-v8": RUN_COMPACTION_ON_COPY_ON_WRITE,
    "null-ordering-partition-cow-v6": NULL_ORDERING_VALUE,
    "null-ordering-partition-mor-v8": NULL_ORDERING_VALUE,
    "concurrent-same-group-reversed-cow-v8": EAGER_ROLLBACK_BEHIND_A_COMMIT,
    "concurrent-same-group-reversed-mor-v9": EAGER_ROLLBACK_BEHIND_A_COMMIT,
}
"""Cases Apache Hudi 1.2.0 fails for a bug of its own (reported XFAIL), each naming the bug and its smallest
reproducer. Every other difference between the spec model and Apache Hudi is decided the other way: the
spec follows Hudi (docs/conformance.md, "Apache Hudi as the oracle"). Two bugs of Hudi's procedures are gone
around with the write client they wrap, so their cases pass: ``ROLLBACK_ON_VERSION_6`` (``SparkPlanner.rollback``)
and ``ARCHIVE_PROCEDURE_IGNORES_OPTIONS`` (``SparkPlanner.archive``)."""

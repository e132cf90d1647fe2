"""The ledger of a table: what every file on disk says about who wrote it, checked as invariants, and
the write statistics a commit's metadata must hold for the files it wrote.

A file is seen as ``FileRows``: its blocks (a base file is one block) with, per row, the commit time,
the commit sequence number and the record key. Rules (Hudi: ``HoodieRecord.generateSequenceId`` —
``<instant>_<task partition>_<record index>`` — and ``HoodieWriteHandle``/``HoodieMergeHandle``/
``HoodieAppendHandle``, which number records per handle and copy an unchanged record with its meta
columns as they were):

- a row's sequence number starts with its commit time, and no two rows of a file share one;
- a row a write produced carries that write's instant: in a log data block the block's instant, in a
  base file at most the file's instant; a row with an older commit time was copied, so it appears with
  the same (commit time, sequence number) in an older file of its group that is still on disk (when
  any is);
- the record indexes of one (instant, task partition) in a log file grow in file order — in table version 6
  only: Hudi 1.x orders a log block's records by their position in the slice's base file when it writes
  record positions (``HoodieLogBlock.addRecordPositionsIfRequired``; the delete block likewise), after
  numbering them in the order it processed them, so in version 8 and 9 the indexes need not grow (Apache
  Hudi 1.2.0, corpus case ``insert-upsert-delete-logs-mor-v8`` through ``--impl hudi_spark``);
- every data file is accounted for by an instant: a base file's instant and each data or delete
  block's instant is on the active timeline (completed or pending) or archived — an instant that was
  rolled back leaves no base file, and its log blocks only behind a rollback command block naming it.

Write statistics (Hudi: ``HoodieWriteStat`` in ``HoodieCommitMetadata.partitionToWriteStats``):
``numWrites`` the rows the file holds after the write (base) or the records appended (log),
``numUpdateWrites`` those replacing a key the file group held, ``numInserts`` the new keys,
``numDeletes`` the keys removed (base) or delete records appended (log). A compaction's stat counts
against the slice's base file: inserts are keys only the logs held, updates keys both held that the
logs changed, deletes base keys the logs removed (``HoodieCompactor``/``HoodieMergeHandle``).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieRecord``
(``generateSequenceId``), ``HoodieCreateHandle``, ``HoodieMergeHandle`` and ``HoodieAppendHandle``
(the meta columns they write, the ``HoodieWriteStat`` counts they set).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from spec.actions.compaction import CompactionOperation

MetaRow = tuple[str, str, str]
"""(commit time, commit sequence number, record key) of one row."""

Violation = tuple[str, str, str, str]
"""(rule, file name, instant, record key or "") of an invariant a file breaks."""


@dataclass(frozen=True)
class BlockRows:
    """A block of a data file: ``base`` (a whole base file), ``data``, ``delete`` or ``command``; its
    instant; its rows (data and base); the keys of its delete records; a command block's target."""

    kind: str
    instant: str
    rows: tuple[MetaRow, ...] = ()
    deletes: tuple[str, ...] = ()
    target: str | None = None


@dataclass(frozen=True)
class FileRows:
    """A data file as the ledger sees it: partition, file id, name, the instant in its name, blocks."""

    partition: str
    file_id: str
    name: str
    instant: str
    blocks: tuple[BlockRows, ...]

    @property
    def is_base(self) -> bool:
        """Whether this is a base file (one ``base`` block)."""
        return any(b.kind == "base" for b in self.blocks)

    def rows(self) -> list[MetaRow]:
        """Every row of the file, in file order."""
        return [r for b in self.blocks for r in b.rows]


@dataclass(frozen=True)
class StatCounts:
    """The counts of one write stat: partition, file id, file name, numWrites, numInserts,
    numUpdateWrites, numDeletes."""

    partition: str
    file_id: str
    name: str
    writes: int
    inserts: int
    updates: int
    deletes: int


@dataclass(frozen=True)
class CommitSummary:
    """What a completed commit's metadata says: operation type, compacted flag, its write stats, and
    the (partition, file id) of the file groups it replaced."""

    operation: str
    compacted: bool
    stats: tuple[StatCounts, ...]
    replaced: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Ledger:
    """A table's ledger: its data files, the instants that account for files (active in any state, or
    archived), the completed commits' summaries, the compaction plans on the active timeline, and the
    clean plans on it (per clean instant the (partition, file name) pairs its plan deletes)."""

    files: tuple[FileRows, ...]
    known: frozenset[str]
    commits: Mapping[str, CommitSummary]
    compactions: Mapping[str, tuple[CompactionOperation, ...]]
    cleans: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    table_version: int = 6
    """The table's version (the order of sequence numbers in a log file is a rule of version 6 only)."""


def _seq_parts(seqno: str) -> tuple[str, str, int] | None:
    parts = seqno.split("_")
    if len(parts) != 3 or not parts[2].lstrip("-").isdigit():
        return None
    return parts[0], parts[1], int(parts[2])


# --8<-- [start:invariants]
def seqno_violations(f: FileRows, ordered_logs: bool = True) -> list[Violation]:
    """Sequence numbers: well formed, prefixed by the row's commit time, unique in the file; in a log
    file the record indexes of each (instant, task partition) grow in file order (``ordered_logs``:
    table version 6)."""
    out: list[Violation] = []
    seen: set[str] = set()
    last: dict[tuple[str, str], int] = {}
    for ct, seq, key in f.rows():
        parts = _seq_parts(seq)
        if parts is None or parts[0] != ct:
            out.append(("sequence number not prefixed by the commit time", f.name, ct, key))
            continue
        if seq in seen:
            out.append(("sequence number appears twice", f.name, ct, key))
        seen.add(seq)
        if ordered_logs and not f.is_base:
            k = (parts[0], parts[1])
            if k in last and parts[2] <= last[k]:
                out.append(("sequence number out of order", f.name, ct, key))
            last[k] = parts[2]
    return out


def commit_time_violations(f: FileRows, older: Sequence[FileRows]) -> list[Violation]:
    """Commit times: a log data block's rows carry its instant; a base file's rows at most the file's
    instant, and a row with an older commit time appears with the same (commit time, sequence number)
    in an ``older`` file of the group, when any is left."""
    out: list[Violation] = []
    for b in f.blocks:
        if b.kind == "data":
            out += [("log row's commit time is not its block's instant", f.name, ct, k)
                    for ct, _, k in b.rows if ct != b.instant]
    if not f.is_base:
        return out
    before = {(k, ct, s) for g in older for ct, s, k in g.rows()}
    for ct, s, k in f.rows():
        if ct > f.instant:
            out.append(("commit time after the file's instant", f.name, ct, k))
        elif ct != f.instant and before and (k, ct, s) not in before:
            out.append(("copied row's commit time and sequence number held by no older file", f.name, ct, k))
    return out


def orphan_violations(f: FileRows, known: frozenset[str], rolled_back: frozenset[str] = frozenset()
                      ) -> list[Violation]:
    """A file no instant accounts for: a base file whose instant is not ``known`` (on the active timeline
    in any state, or archived), a data or delete block whose instant is neither known nor
    ``rolled_back`` (named by a rollback command block in a log file of the group)."""
    if f.is_base:
        return [] if f.instant in known else [("base file of an instant the timeline does not hold", f.name,
                                               f.instant, "")]
    return [(f"{b.kind} block of an instant neither on the timeline nor rolled back by a command block", f.name,
             b.instant, "") for b in f.blocks
            if b.kind in ("data", "delete") and b.instant not in known and b.instant not in rolled_back]


# --8<-- [end:invariants]


def older_files(f: FileRows, files: Sequence[FileRows]) -> list[FileRows]:
    """The files of ``f``'s group written before it (base files at an earlier instant, log files whose
    blocks are all earlier)."""
    return [g for g in files if g.partition == f.partition and g.file_id == f.file_id and g is not f
            and all(b.instant < f.instant for b in g.blocks if b.kind != "command")]


def ledger_violations(files: Sequence[FileRows], known: Iterable[str], table_version: int = 6) -> list[Violation]:
    """Every invariant violation of a table's data files (sorted, for a stable observation)."""
    k = frozenset(known)
    out: list[Violation] = []
    for f in files:
        group = [g for g in files if (g.partition, g.file_id) == (f.partition, f.file_id)]
        rolled = frozenset(c.target for g in group for c in g.blocks if c.kind == "command" and c.target)
        out += seqno_violations(f, ordered_logs=table_version < 8)
        out += commit_time_violations(f, older_files(f, files))
        out += orphan_violations(f, k, rolled)
    return sorted(out)


def base_stat(f: FileRows, previous: FileRows | None, concat: bool = False) -> StatCounts:
    """The stat of a base file a write produced: ``previous`` is the group's base file it merged
    (None for a new file group). ``concat``: an insert into a small file with duplicates allowed
    (``hoodie.merge.allow.duplicate.on.inserts``), written by ``HoodieConcatHandle``, which copies the
    stored rows and writes every incoming record as an insert (``writeInsertRecord``), never as an
    update, even when its key is stored already. A delete the handle took for a key the file never held (a
    bucket index sends it to its bucket's group: the block's ``deletes``) counts as a delete (Apache Hudi 1.2.0,
    corpus case ``bucket-index-cow-v8`` through ``--impl hudi_spark``)."""
    old = {k for _, _, k in previous.rows()} if previous is not None else set()
    rows = f.rows()
    new = [k for ct, _, k in rows if ct == f.instant]
    keys = {k for _, _, k in rows}
    updates = 0 if concat else sum(1 for k in new if k in old)
    absent = {k for b in f.blocks for k in b.deletes} - old  # deletes of keys the file never held
    return StatCounts(f.partition, f.file_id, f.name, len(rows), len(new) - updates, updates,
                      len(old - keys) + len(absent))


def clustering_stat(f: FileRows) -> StatCounts:
    """The stat of a base file a clustering wrote: every row an insert, nothing updated or deleted (Hudi's
    sort-and-size execution writes through ``HoodieRowCreateHandle``, whose ``close`` counts every record it wrote
    as an insert, whatever commit time the row keeps)."""
    rows = f.rows()
    return StatCounts(f.partition, f.file_id, f.name, len(rows), len(rows), 0, 0)


def compaction_stat(f: FileRows, base: FileRows | None, log_keys: Iterable[str]) -> StatCounts:
    """The stat of a base file a compaction produced from ``base`` and logs holding ``log_keys``. Updates are
    the keys both held that the logs hold and whose row a log record replaced (the row written is not the base
    file's, by commit time and sequence number): a log record that lost its merge to the base row is no update.
    Deletes are the keys the base file or a log held that the new file lacks: a log's delete of a key the base
    never held counts (a bucket index sends such deletes: corpus case ``bucket-index-mor-v8``).
    Measured with Apache Hudi 1.2.0 compacting table versions 6, 8 and 9, its own tables and ours
    (``HoodieMergeHandleFactory``'s compaction handles; corpus cases ``compaction-mor-v8`` and
    ``compaction-logs-mor-v6`` through ``--impl hudi_spark``)."""
    old_rows = {k: (ct, seq) for ct, seq, k in base.rows()} if base is not None else {}
    old = set(old_rows)
    new_rows = {k: (ct, seq) for ct, seq, k in f.rows()}
    out = set(new_rows)
    logs = set(log_keys)
    updated = {k for k in out & old & logs if new_rows[k] != old_rows[k]}
    return StatCounts(f.partition, f.file_id, f.name, len(f.rows()), len(out - old), len(updated),
                      len((old | logs) - out))


def log_stat(f: FileRows, t: str, located: Iterable[str]) -> StatCounts:
    """The stat of the records instant ``t`` appended to a log file; ``located`` are the keys the
    index found in the file group (they count as updates)."""
    data = [k for b in f.blocks if b.instant == t and b.kind == "data" for _, _, k in b.rows]
    deletes = sum(len(b.deletes) for b in f.blocks if b.instant == t and b.kind == "delete")
    loc = set(located)
    updates = sum(1 for k in data if k in loc)
    return StatCounts(f.partition, f.file_id, f.name, len(data), len(data) - updates, updates, deletes)


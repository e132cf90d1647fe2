"""The oracle's ledger (``spec.write.ledger``): the model's data files as the ledger sees them, the instants
that account for them, the commit metadata summary it predicts for every completed write and
compaction, its compaction plans and its clean plans.

Source: no Hudi class — the model's ``HoodieCommitMetadata`` (``partitionToWriteStats`` counts,
``operationType``, ``compacted``, ``partitionToReplaceFileIds``) derived from the files each instant
wrote, by the rules of ``spec.write.ledger``.
"""

from __future__ import annotations

from spec.actions.compaction import CompactionOperation
from spec.model.bucketing import model_bucket_index
from spec.model.files import COMMIT_SEQNO, COMMIT_TIME, RECORD_KEY, BaseFile, LogFile, ModelFileGroup, Row
from spec.model.state import TableState
from spec.model.writes import concatenates
from spec.timeline.instant import DATA_WRITES
from spec.write.ledger import (
    BlockRows,
    CommitSummary,
    FileRows,
    Ledger,
    StatCounts,
    base_stat,
    clustering_stat,
    compaction_stat,
    log_stat,
)


def _meta(rows: tuple[Row, ...]) -> tuple[tuple[str, str, str], ...]:
    return tuple((str(r[COMMIT_TIME]), str(r[COMMIT_SEQNO]), str(r[RECORD_KEY])) for r in rows)


def base_rows(g: ModelFileGroup, b: BaseFile) -> FileRows:
    """A model base file as the ledger sees it."""
    return FileRows(g.partition, g.file_id, b.name, b.instant,
                    (BlockRows("base", b.instant, _meta(b.rows), b.absent_deletes),))


def log_rows(g: ModelFileGroup, lf: LogFile) -> FileRows:
    """A model log file as the ledger sees it."""
    blocks = tuple(BlockRows(b.kind, b.instant, _meta(b.rows), tuple(k for k, _ in b.deletes), b.target)
                   for b in lf.blocks)
    return FileRows(g.partition, g.file_id, lf.name, lf.instant, blocks)


def group_files(g: ModelFileGroup) -> list[FileRows]:
    """The files of a model file group."""
    return [*(base_rows(g, b) for b in g.base_files), *(log_rows(g, lf) for lf in g.log_files)]


def files(state: TableState) -> tuple[FileRows, ...]:
    """The model's data files (replaced groups' files included until the cleaner removes them)."""
    return tuple(f for g in state.groups for f in group_files(g))


def known_instants(state: TableState) -> frozenset[str]:
    """The instants that account for files: every instant of the active timeline, every archived one."""
    return frozenset(i.requested for i in (*state.timeline, *state.archived))


def _applied_keys(logs: list[FileRows], state: TableState) -> set[str]:
    """The keys of the log blocks a compaction applies: blocks of completed instants no rollback names."""
    rolled = {b.target for g in logs for b in g.blocks if b.kind == "command"}
    return {k for g in logs for b in g.blocks if b.kind in ("data", "delete") and b.instant not in rolled
            and state.completion_time(b.instant) is not None for k in (*(k for _, _, k in b.rows), *b.deletes)}


def _stats(t: str, written: list[FileRows], every: list[FileRows], compacted: TableState | None,
           concat: bool = False, bucket_index: bool = False, clustered: bool = False) -> list[StatCounts]:
    """``bucket_index``: every record a log file of an existing group took was tagged with that group (an
    update, ``spec.index.bucket_index``), its key held or not."""
    out = []
    for f in written:
        group = [g for g in every if (g.partition, g.file_id) == (f.partition, f.file_id)]
        bases = sorted((g for g in group if g.is_base and g.instant < t), key=lambda g: g.instant)
        if clustered:
            out.append(clustering_stat(f))
        elif not f.is_base:
            before = {k for g in group for b in g.blocks if b.instant < t and b.kind in ("base", "data")
                      for _, _, k in b.rows}
            if bucket_index and before:
                before |= {k for b in f.blocks if b.instant == t for _, _, k in b.rows}
            out.append(log_stat(f, t, before))
        elif compacted is not None:
            plan = compacted.plan(t)
            op = next(o for o in plan.operations if (o.partition_path, o.file_id) == (f.partition, f.file_id)) \
                if plan is not None else None
            base = next((g for g in bases if op is not None and g.name == op.base_file), None)
            logs = [g for g in group if op is not None and g.name in op.log_files]
            out.append(compaction_stat(f, base, _applied_keys(logs, compacted)))
        else:
            out.append(base_stat(f, bases[-1] if bases else None, concat))
    return out


def commit_summaries(state: TableState) -> dict[str, CommitSummary]:
    """Per completed write or compaction on the active timeline, the commit metadata the model predicts."""
    every_group = [*state.groups, *state.cleaned]
    every = [f for g in every_group for f in group_files(g)]
    ops = dict(state.operations)
    clusterings = {c for c, _ in state.clusterings}
    out: dict[str, CommitSummary] = {}
    for inst in state.timeline:
        t = inst.requested
        if not inst.is_completed or inst.action not in DATA_WRITES:
            continue
        compaction = state.plan(t) is not None
        written = [f for f in every if (f.is_base and f.instant == t)
                   or (not f.is_base and any(b.instant == t and b.kind in ("data", "delete") for b in f.blocks))]
        written = list({(f.partition, f.name): f for f in written}.values())
        replaced = sorted({(g.partition, g.file_id) for g in every_group if g.replaced_by == t})
        out[t] = CommitSummary("COMPACT" if compaction else ops.get(t, "UNKNOWN"), compaction,
                               tuple(_stats(t, written, every, state if compaction else None,
                                            concatenates(state.config, ops.get(t, "").lower()),
                                            model_bucket_index(state.config, "upsert") is not None,
                                            t in clusterings)),
                               tuple(replaced))
    return out


def compactions(state: TableState) -> dict[str, tuple[CompactionOperation, ...]]:
    """The compaction plans of the compaction instants on the active timeline."""
    active = {i.requested for i in state.timeline}
    return {t: p.operations for t, p in state.compaction_plans if t in active}


def cleans(state: TableState) -> dict[str, tuple[tuple[str, str], ...]]:
    """The clean plans of the clean instants on the active timeline: the (partition, file name) pairs
    each deletes."""
    active = {i.requested for i in state.timeline}
    return {t: files for t, files in state.clean_plans if t in active}


# --8<-- [start:ledger]
def ledger(state: TableState) -> Ledger:
    """The model's ledger."""
    return Ledger(files(state), known_instants(state), commit_summaries(state), compactions(state), cleans(state),
                  state.table_version)
# --8<-- [end:ledger]

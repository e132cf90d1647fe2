"""Writers at once (``spec.model.operations.Concurrent``): the model's optimistic concurrency control.

Every member write starts from the same table: it takes its instant (requested times in member order) and
writes its data files, planned against the table as it was — no member sees another's files; they are on
storage, uncommitted (readers, and a compaction plan, see them as the table's rules say: a version 6 log file
belongs to its slice by its base instant). Then the members take their turns in ``commit_order``:

- a **write** resolves conflicts as Hudi's ``TransactionUtils.resolveWriteConflictIfAny`` does under the
  lock (``spec.timeline.conflict_resolution``: the candidates are the data-writing instants completed since
  it started and, before table version 8, the compactions scheduled after it; a candidate that touched one
  of its file groups conflicts). Without a conflict it commits (and runs its inline services, as any
  write). With one it aborts with ``write_conflict`` as Apache Hudi's writer leaves it: its data files
  written, its instant inflight, its heartbeat gone — a failed write, which the next writer rolls back
  (``BaseHoodieWriteClient.commitStats`` throws ``HoodieWriteConflictException`` from ``preCommit`` and
  rolls nothing back; measured with Apache Hudi 1.2.0's Spark writer, ``tests/test_hudi_mixed_writers.py``);
- a **table service** (compaction, clean) runs whole, beside the writes still pending, and resolves no
  conflict at its commit (``BaseHoodieTableServiceClient``: "do not do any conflict resolution here as we
  do with regular writes"). A compaction's plan names only committed files; the cleaner plans with the
  pending writes on the timeline.

The members start under optimistic concurrency's lazy failed-writes policy
(``hoodie.cleaner.policy.failed.writes=LAZY``): none rolls back another's pending instant as it starts.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9; the outcomes measured with 1.2.0):
``SimpleConcurrentFileWritesConflictResolutionStrategy``, ``TransactionUtils``, ``BaseHoodieWriteClient``
(``commitStats``, ``preCommit``), ``BaseHoodieTableServiceClient``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from spec.config.refused_options import BUCKET_CONFLICT_STRATEGY, conflict_strategy_of
from spec.config.write_operation import WriteOperationType, write_action
from spec.errors import InvalidOperation
from spec.model.actions import next_instant
from spec.model.operations import Clean, Compact, Concurrent, Write
from spec.model.state import Env, TableState, start_instant
from spec.model.writes import WritePlan, apply_files, evolve_schema, plan_write, prepare
from spec.timeline.conflict_resolution import (
    ConcurrentOperation,
    GroupId,
    candidate_instants,
    completed_set,
    find_write_conflict,
)
from spec.timeline.instant import State

Commit = Callable[[TableState, str, frozenset[GroupId], tuple[tuple[str, str], ...]], TableState]
"""Complete a started write whose files are written: (table, instant, the file groups it replaces, its schema) →
the table (committed, its inline services run)."""
Service = Callable[[TableState, Compact | Clean], TableState]
"""Run a table service whole: (table, the service) → the table."""


@dataclass(frozen=True)
class Started:
    """A member write that has started: its instant, action, plan, schema and operation type."""

    instant: str
    action: str
    plan: WritePlan
    schema: tuple[tuple[str, str], ...]
    operation_type: str

    @property
    def file_groups(self) -> frozenset[GroupId]:
        """The file groups it writes (new, merged or appended to) and replaces."""
        return frozenset({(p, f) for p, f, _ in self.plan.files} | set(self.plan.replaced))


def start(state: TableState, base: TableState, env: Env, op: Write) -> tuple[TableState, Started]:
    """A member write takes its instant and writes its data files, planned against ``base`` (the table as it was
    before any member started): its instant inflight, its files on storage (uncommitted), none committed."""
    schema = base.schema if op.operation == "delete" else evolve_schema(base.schema, op.records)
    recs = prepare(base, op.operation, op.records)
    t = next_instant(state, env)
    action = write_action(op.operation, state.config.is_mor, False)
    state = state.with_instant(start_instant(action, t).transition(State.INFLIGHT))
    plan = plan_write(replace(base, timeline=state.timeline, schema=schema), env, op.operation, recs, t)
    w = Started(t, str(action), plan, schema, WriteOperationType.of_option(op.operation).value)
    state = apply_files(state, plan.files, t)
    return replace(state, operations=(*state.operations, (t, w.operation_type)),
                   appended_logs=(*state.appended_logs, (t, tuple(plan.appended)))), w


def conflict(state: TableState, w: Started, at_start: frozenset[str],
             touched: dict[str, ConcurrentOperation]) -> ConcurrentOperation | None:
    """The instant ``w`` conflicts with at its commit, or None (``spec.timeline.conflict_resolution``).
    ``touched``: the operations of the instants completed beside it (writes, compactions)."""
    cands = candidate_instants(state.timeline_view(), w.instant, at_start, state.table_version, state.config.is_mor)
    others = []
    for c in cands:
        if c.requested in touched:
            others.append(touched[c.requested])
        elif (plan := state.plan(c.requested)) is not None:
            others.append(ConcurrentOperation.of_plan(c, plan.group_ids()))
    by_bucket = conflict_strategy_of(getattr(state.config, "index_type", None)) == BUCKET_CONFLICT_STRATEGY
    found = find_write_conflict(ConcurrentOperation(w.instant, w.action, w.operation_type, w.file_groups), others,
                                by_bucket)
    return found[0] if found is not None else None


def concurrent(state: TableState, env: Env, op: Concurrent, commit: Commit, service: Service) -> TableState:
    """The members of ``op`` at once (see the module rules); the case's ``outcomes`` must be the model's."""
    if not state.timeline:
        raise InvalidOperation("concurrent writers need a table: nothing was written yet",
                               hint="write once before the concurrent step")
    if state.crash_after is not None:
        raise InvalidOperation("a crash is armed: concurrent members cannot be killed", hint="crash before a write")
    for i, m in enumerate(op.members):
        if isinstance(m, Write) and m.options:
            raise InvalidOperation(f"concurrent.members[{i}] has write options of its own",
                                   hint="a concurrent member writes with the table's options")
    at_start = completed_set(state.timeline_view())
    base = state
    started: dict[int, Started] = {}
    for i, m in enumerate(op.members):
        if isinstance(m, Write):
            state, started[i] = start(state, base, env, m)
    outcomes: list[str] = ["ok"] * len(op.members)
    touched: dict[str, ConcurrentOperation] = {}
    for i in op.commit_order:
        m = op.members[i]
        if not isinstance(m, Write):
            before = {x.requested for x in state.timeline if x.is_completed}
            state = service(state, m)
            for x in state.timeline:
                if x.is_completed and x.requested not in before and (plan := state.plan(x.requested)) is not None:
                    touched[x.requested] = ConcurrentOperation(x.requested, str(x.action),
                                                               WriteOperationType.COMPACT.value, plan.group_ids())
            continue
        w = started[i]
        if conflict(state, w, at_start, touched) is not None:
            outcomes[i] = "write_conflict"  # left as it is: files written, instant inflight (a failed write)
            continue
        state = commit(state, w.instant, w.plan.replaced, w.schema)
        touched[w.instant] = ConcurrentOperation(w.instant, w.action, w.operation_type, w.file_groups)
    if tuple(outcomes) != op.outcomes:
        raise InvalidOperation(f"the members end {list(outcomes)}; the case expects {list(op.outcomes)}",
                               hint="fix the case's outcomes: the model decides by Hudi's conflict resolution")
    return state


def check_outcomes(op: Concurrent, got: Sequence[str], detail: Any = "") -> None:
    """An implementation's members ended as the case expects, else ``InvalidOperation`` saying how not."""
    if tuple(got) != op.outcomes:
        raise InvalidOperation(f"the concurrent members ended {list(got)}; the case expects {list(op.outcomes)}"
                               + (f" ({detail})" if detail else ""),
                               hint="the later of two writes to one file group aborts (write_conflict)")


__all__ = ["Commit", "Service", "Started", "check_outcomes", "concurrent", "conflict", "start"]

"""The oracle's table services: compaction, clean, rollback, savepoint, restore, archival.

Each service plans with ``spec.actions`` over the model's files (as a writer plans over a
listing) and then does what the plan says to the in-memory table: new base files for a
compaction, files removed by a clean, files removed or ROLLBACK command blocks appended by a
rollback, instants moved off the active timeline by archival. The preconditions (may this
rollback or savepoint happen?) are ``spec.actions``' too, the ones the reference's executors check.

Source: no Hudi class — the oracle's services plan with ``spec.actions`` (``CleanPlanner``,
``ScheduleCompactionActionExecutor``, ``HoodieTimelineArchiver``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from spec.actions.archive import hold_back_uncleaned_replaces, metadata_table_retains, plan_archive
from spec.actions.clean import plan_clean
from spec.actions.compaction import (
    CompactionPlan,
    compaction_base_instants,
    groups_under_compaction,
    plan_compaction,
    should_schedule_compaction,
)
from spec.actions.file_refs import GroupRef, SliceRef
from spec.actions.restore import plan_restore, savepoint_to_restore
from spec.actions.rollback import check_rollback_allowed, groups_of_files, instant_to_rollback, plan_rollback
from spec.actions.savepoint import last_clean, savepoint_instant
from spec.errors import InstantNotFound, InvalidOperation
from spec.file_group.file_naming import ROLLBACK_WRITE_TOKEN, parse_log_file_name
from spec.file_group.file_system_view import build_file_groups
from spec.model.files import FILE_NAME, RECORD_KEY, BaseFile, LogFile, ModelLogBlock, listing
from spec.model.metadata_timeline import after_instant
from spec.model.queries import merge_files, view
from spec.model.state import Env, TableState, complete, start_instant
from spec.model.writes import observed_size
from spec.timeline.instant import DATA_WRITES, Action, Instant, State, format_instant_time, parse_instant_time
from spec.write.service_configs import archive_config, clean_config, compaction_config


def next_instant(state: TableState, env: Env, given: str | None = None, floor: str | None = None) -> str:
    """A new instant time: the one given (it must be later than every instant on the timeline), else
    the clock's, bumped past the latest instant (and ``floor``) as Hudi's generator does."""
    latest = max(filter(None, (state.latest_instant_time(), floor)), default=None)
    if given is not None:
        if latest is not None and given <= latest:
            raise InvalidOperation(f"instant time {given} is not after the latest instant {latest}",
                                   hint="instant times must increase")
        return given
    t = env.next_instant()
    if latest is not None and t <= latest:
        t = format_instant_time(parse_instant_time(latest) + timedelta(milliseconds=1))
    return t


def finish(state: TableState, env: Env, t: str) -> TableState:
    """Complete instant ``t`` (v8: with a completion time from the clock)."""
    inst = state.instant(t)
    assert inst is not None
    done = next_instant(state, env) if state.table_version >= 8 else None
    state = state.with_instant(complete(inst, done, state.table_version))
    if inst.action == Action.ROLLBACK:
        return state  # recorded with its target (_rolled_back)
    return replace(state, metadata=after_instant(state.metadata, state.config, inst.action, t))


# --- compaction ---------------------------------------------------------------------------------

# --8<-- [start:compaction]
def schedule_compaction(state: TableState, env: Env, given: str | None = None) -> tuple[TableState, str | None]:
    """Plan a compaction of every latest slice with log files (groups under a pending compaction
    excluded); no instant when nothing qualifies."""
    if not state.config.is_mor:
        raise InvalidOperation("compaction applies to MERGE_ON_READ tables", hint="COW tables need no compaction")
    t = next_instant(state, env, given)
    busy = groups_under_compaction(pending_compaction_plans(state))
    slices = [SliceRef.of(g.latest_slice) for g in view(state) if g.latest_slice is not None]
    plan = plan_compaction(t, slices, state.timeline_view(), state.table_version, busy)
    if plan is None:
        return state, None
    state = state.with_instant(start_instant(Action.COMPACTION, t))
    return replace(state, compaction_plans=(*state.compaction_plans, (t, plan))), t


def pending_compaction_plans(state: TableState) -> list[CompactionPlan]:
    """The plans of the compactions still pending, oldest first."""
    return [p for t, p in state.compaction_plans if state.pending_instant(t)]


def run_compaction(state: TableState, env: Env, t: str | None = None) -> TableState:
    """Execute a pending compaction plan: per operation, a new base file at the compaction instant
    holding the slice's merged rows (each row keeps its commit time and sequence number)."""
    pending = [tt for tt, _ in state.compaction_plans if state.pending_instant(tt)]
    if t is None:
        if not pending:
            raise InstantNotFound("there is no pending compaction to run", hint="schedule one first")
        t = pending[0]
    plan = state.plan(t)
    if plan is None or t not in pending:
        raise InstantNotFound(f"no pending compaction at {t}", hint="name a scheduled compaction")
    inst = state.instant(t)
    assert inst is not None
    if inst.state == State.REQUESTED:
        state = state.with_instant(inst.transition(State.INFLIGHT))
    groups = {(g.partition, g.file_id): g for g in state.groups}
    new = list(state.groups)
    for op in plan.operations:
        g = groups[(op.partition_path, op.file_id)]
        base = next((b for b in g.base_files if b.name == op.base_file), None)
        rows = merge_files(state, base, [lf for n in op.log_files for lf in g.log_files if lf.name == n], None)
        name = BaseFile(op.file_id, t, ()).name
        out = tuple(sorted(({**r, FILE_NAME: name} for r in rows), key=lambda r: str(r[RECORD_KEY])))
        bf = BaseFile(op.file_id, t, out, observed_size(state, env, op.partition_path, op.file_id, t, len(out)))
        new[state.groups.index(g)] = g.with_base(bf)
    return finish(state.with_groups(new), env, t)


def maybe_inline_compaction(state: TableState, env: Env) -> TableState:
    """After a deltacommit of a merge-on-read table with inline compaction on: run every pending compaction, oldest
    first (``BaseHoodieTableServiceClient.inlineCompaction`` calls ``runAnyPendingCompactions``), then schedule and
    run a compaction once enough deltacommits followed the last one."""
    cfg = state.config
    if not (cfg.is_mor and cfg.inline_compact):
        return state
    for pending in [tt for tt, _ in state.compaction_plans if state.pending_instant(tt)]:
        state = run_compaction(state, env, pending)
    if should_schedule_compaction(state.timeline_view(), compaction_config(cfg)):
        state, t = schedule_compaction(state, env)
        if t is not None:
            state = run_compaction(state, env, t)
    return state
# --8<-- [end:compaction]


# --- clean --------------------------------------------------------------------------------------

def group_refs(state: TableState) -> list[GroupRef]:
    """Every file group with its visible slices (replaced groups included, marked), for planning."""
    pending = [i.requested for i in state.timeline if i.action == Action.COMPACTION and not i.is_completed]
    refs = []
    replaced = {(g.partition, g.file_id): g.replaced_by for g in state.groups}
    for vg in build_file_groups(listing(state.groups), state.timeline_view(), state.table_version, None, set(),
                                pending):
        r = replaced.get((vg.partition_path, vg.file_id))
        done = r if r is not None and state.completion_time(r) is not None else None
        refs.append(GroupRef(vg.partition_path, vg.file_id, tuple(SliceRef.of(s) for s in vg.slices), done))
    return refs


def clean(state: TableState, env: Env, given: str | None = None) -> TableState:
    """Plan and run the cleaner; an empty plan leaves no clean instant."""
    cfg = state.config
    conf = clean_config(cfg)
    pending_base = compaction_base_instants(pending_compaction_plans(state))
    now = env.now() if env.now is not None else state.latest_instant_time()
    plan = plan_clean(group_refs(state), state.timeline_view(), conf, state.savepointed_files(), pending_base, now)
    if plan.is_empty:
        return state
    t = next_instant(state, env, given)
    state = state.with_instant(start_instant(Action.CLEAN, t))
    doomed = plan.all_files()
    retained = plan.earliest_instant_to_retain
    state = replace(state, clean_plans=(*state.clean_plans, (t, tuple(sorted(doomed)))),
                    clean_retained=(*state.clean_retained, (t, retained.requested if retained else "")))
    return finish(remove_files(state, doomed, keep_aside=True), env, t)


def remove_files(state: TableState, doomed: frozenset[tuple[str, str]], keep_aside: bool = False) -> TableState:
    """The state without the files ``(partition, name)``; cleaned files are kept aside."""
    kept, gone = [], []
    for g in state.groups:
        names = frozenset(n for p, n in doomed if p == g.partition)
        left = g.without_files(names)
        if keep_aside and (len(left.base_files), len(left.log_files)) != (len(g.base_files), len(g.log_files)):
            gone.append(replace(g, base_files=tuple(b for b in g.base_files if b.name in names),
                                log_files=tuple(lf for lf in g.log_files if lf.name in names)))
        if not left.is_empty:
            kept.append(left)
    return replace(state, groups=tuple(kept), cleaned=(*state.cleaned, *gone))


# --- rollback and restore -----------------------------------------------------------------------

# --8<-- [start:rollback]
def rollback_instant(state: TableState, target: Instant, r: str) -> TableState:
    """Undo ``target`` with rollback time ``r``: the plan's files go, v6 MOR gets command blocks,
    the target leaves the timeline (its plan, replacements and schema with it)."""
    appended: dict[tuple[str, str], list[str]] = {}
    for written_by, logs in state.appended_logs:
        for p, f, log_name in logs if written_by == target.requested else ():
            appended.setdefault((p, f), []).append(log_name)
    every = groups_of_files([(g.partition, b.name) for g in state.groups for b in g.base_files]
                            + [(g.partition, lf.name) for g in state.groups for lf in g.log_files])
    plan = plan_rollback(target, every, state.config.table_type, state.table_version, appended)
    state = remove_files(state, plan.files_to_delete())
    groups = list(state.groups)
    for req in plan.requests:
        if req.command_block_log is None:
            continue
        name = parse_log_file_name(req.command_block_log)
        block = ModelLogBlock("command", r, target=target.requested)
        lf = LogFile(name.file_id, name.instant, name.version, (block,), r, ROLLBACK_WRITE_TOKEN)
        i = next(i for i, g in enumerate(groups) if (g.partition, g.file_id) == (req.partition_path, req.file_id))
        groups[i] = groups[i].with_log(lf)
    groups = [replace(g, replaced_by=None) if g.replaced_by == target.requested else g for g in groups]
    state = replace(state.with_groups(groups), schema_log=tuple(e for e in state.schema_log
                                                                if e[0] != target.requested))
    state = replace(state, schema=state.schema_log[-1][1] if state.schema_log else ())
    return state.without_instants([target.requested])


def rollback(state: TableState, env: Env, instant_time: str | None = None) -> TableState:
    """Roll back one write (the latest by default), if ``check_rollback_allowed`` allows it."""
    timeline = state.timeline_view()
    target = instant_to_rollback(timeline, instant_time)
    check_rollback_allowed(timeline, target)
    return _rolled_back(state, env, target)


def _rolled_back(state: TableState, env: Env, target: Instant, floor: str | None = None) -> TableState:
    """``target`` undone under a new, completed rollback instant (after ``floor`` when given)."""
    r = next_instant(state, env, floor=floor)
    state = state.with_instant(start_instant(Action.ROLLBACK, r))
    state = finish(rollback_instant(state, target, r), env, r)
    undone = (target.requested,) if target.is_completed else ()  # a failed write has no metadata deltacommit
    return replace(state, metadata=after_instant(state.metadata, state.config, Action.ROLLBACK, r, undone))


def rollback_failed_writes(state: TableState, env: Env, floor: str | None = None) -> TableState:
    """Before a write starts, every failed (pending) write is rolled back, newest first (the eager
    failed-writes policy); the rollbacks get instants after the latest one and ``floor`` (a write that names
    its instant time, ``table_model.start_commit``)."""
    failed = [i for i in state.timeline if not i.is_completed and i.action in DATA_WRITES]
    for inst in reversed(failed):
        state = _rolled_back(state, env, inst, floor)
    return state
# --8<-- [end:rollback]


def savepoint(state: TableState, env: Env, instant_time: str | None = None) -> TableState:
    """Savepoint a completed write, if ``savepoint_instant`` allows it: the files of the latest slices
    as of it are protected from cleaning."""
    timeline = state.timeline_view()
    newest_clean = last_clean(timeline)
    retained = dict(state.clean_retained).get(newest_clean.requested) if newest_clean else None
    instant_time = savepoint_instant(timeline, instant_time, retained)
    files = frozenset(n for g in view(state, instant_time) if (s := g.latest_slice) is not None
                      for n in ((s.base_file.name,) if s.base_file else ()) + tuple(f.name for f in s.log_files))
    done = next_instant(state, env) if state.table_version >= 8 else None
    sp = complete(Instant(instant_time, Action.SAVEPOINT, State.INFLIGHT), done, state.table_version)
    return replace(state.with_instant(sp), savepoints=(*state.savepoints, (instant_time, files)))


def restore(state: TableState, env: Env, savepoint_time: str | None = None) -> TableState:
    """Roll back every write after the savepoint, newest first, under one restore instant."""
    savepoint_time = savepoint_to_restore(state.timeline_view(), savepoint_time)
    targets = plan_restore(state.timeline_view(), savepoint_time)
    r = next_instant(state, env)
    state = state.with_instant(start_instant(Action.RESTORE, r))
    for target in targets:
        state = rollback_instant(state, target, r)
    later = {t for t, _ in state.savepoints if t > savepoint_time}  # their commits are gone: so are they
    state = replace(state, savepoints=tuple((t, f) for t, f in state.savepoints if t not in later),
                    timeline=tuple(i for i in state.timeline
                                   if not (i.action == Action.SAVEPOINT and i.requested in later)))
    return finish(state, env, r)


# --- archival -----------------------------------------------------------------------------------

def archive(state: TableState, env: Env) -> TableState:
    """Move the instants archival selects off the active timeline, holding back a replacecommit whose
    replaced file groups the cleaner has not removed yet (``spec.actions.archive.hold_back_uncleaned_replaces``)."""
    cfg = state.config
    retain: tuple[str, ...] = ()
    if state.metadata is not None:  # bounded by the metadata table's latest compaction (none: nothing archived)
        bound = metadata_table_retains(state.timeline_view(), state.metadata.compacted_during)
        if bound is None:
            return state
        retain = bound
    chosen = plan_archive(state.timeline_view(), archive_config(cfg), cfg.table_type, compaction_config(cfg), retain)
    replaced: dict[str, set[tuple[str, str]]] = {}
    for g in state.groups:
        if g.replaced_by is not None:
            replaced.setdefault(g.replaced_by, set()).add((g.partition, g.file_id))
    live = frozenset((g.partition, g.file_id) for g in state.groups if not g.is_empty)
    kept = hold_back_uncleaned_replaces(chosen, replaced, live)
    if not kept:
        return state
    keys = {(i.requested, i.action) for i in kept}
    return replace(state, timeline=tuple(i for i in state.timeline if (i.requested, i.action) not in keys),
                   archived=(*state.archived, *(i for i in chosen if (i.requested, i.action) in keys)))


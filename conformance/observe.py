"""Observations: what the harness sees of a table after a step, normalized so that two
implementations that conform leave equal observations.

Layers (``conformance.interface.adapter.LAYERS``):

- **L0 rows** — snapshot, read-optimized, time travel to each completed write, incremental over each
  window of completed instants; each a list of rows with the meta columns, sorted by (partition
  path, record key, row). Normalized: ``_hoodie_commit_time`` and the instant of
  ``_hoodie_commit_seqno`` become instant labels, the seqno's task partition and index are dropped
  (Spark task order), ``_hoodie_file_name`` keeps its instant and version with the file id as a
  group label and without the write token (both implementation-chosen).
- **L1 timeline** — the ordered (requested, action, state, completion) of the active timeline,
  times as labels, plus the step's outcome (``ok`` or the error kind raised).
- **L2 layout** — per partition its visible file groups by label: slices (base instant label, base
  file or not, log file versions) and the keys of the latest slice.
- **L3 files** (opt-in) — per partition the data file names (labels, no write token) and, for log
  files, the sequence of block kinds and instants.
- **L4 ledger** — what the table says about who wrote what (``spec.write.ledger``): per completed write or
  compaction its commit metadata (operation type, compacted flag, per file its numWrites, numInserts,
  numUpdateWrites, numDeletes, the replaced file groups); per compaction instant its plan (group, base
  file, log files); per clean instant the files its plan deletes; and the invariants every data file
  must hold (sequence numbers, commit times, every file accounted for by an instant), as a list of
  violations — empty for a conforming table.

Labels: instant times become ``t1, t2, ...`` in time order as the harness first sees them (times a
case fixes stay as they are); file ids become ``g1, g2, ...`` in creation order — new groups ordered
by their oldest slice's instant, then their keys. Labels persist over a case's steps, so the same
instant or group keeps its label from step to step.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from conformance.interface.adapter import DEFAULT_LAYERS, NotSupported, Query, RawGroup, TableUnderTest
from conformance.interface.ops import Case, to_json
from spec.errors import HudiSpecError, InvalidOperation
from spec.file_group.file_naming import is_base_file_name, is_log_file_name, parse_base_file_name, parse_log_file_name
from spec.write.ledger import ledger_violations

COMMIT_TIME: Final = "_hoodie_commit_time"
COMMIT_SEQNO: Final = "_hoodie_commit_seqno"
RECORD_KEY: Final = "_hoodie_record_key"
PARTITION_PATH: Final = "_hoodie_partition_path"
FILE_NAME: Final = "_hoodie_file_name"
START: Final = "start"
"""The begin of an incremental window that starts at the beginning of the table."""

Observation = dict[str, Any]
"""One step's observation: ``{"L0": ..., "L1": ..., "L2": ..., "L3": ...}`` (the layers observed)."""


def fixed_times(case: Case) -> frozenset[str]:
    """Instant times the case itself names: they are compared as they are, not as labels."""
    out: set[str] = set()
    for op in case.ops:
        for name in ("instant_time", "savepoint_time"):
            t = getattr(op, name, None)
            if isinstance(t, str):
                out.add(t)
    return frozenset(out)


class Normalizer:
    """Maps one table's instant times and file ids to labels, stable over the steps of a case."""

    def __init__(self, fixed: Iterable[str] = ()) -> None:
        self.fixed = frozenset(fixed)
        self.instants: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.bound: dict[str, str] = {}
        """For an implementation that chooses its own instant times: a time the case names → the time the
        implementation gave the operation that named it (``bind``)."""

    def bind(self, named: str, actual: str) -> None:
        """The implementation wrote at ``actual`` where the case named ``named``: ``actual`` is shown as
        ``named``, and an operation naming ``named`` later is given ``actual`` (instants mapped by order)."""
        self.bound[named] = actual
        self.instants[actual] = named

    def learn_instants(self, times: Iterable[str | None]) -> None:
        """Label the times not seen before, in time order."""
        for t in sorted({t for t in times if t and t not in self.instants and t not in self.fixed}):
            self.instants[t] = f"t{len(self.instants) - len(self.bound) + 1}"

    def instant(self, t: str | None) -> str | None:
        if t is not None and t in self.instants and self.instants[t] in self.bound:
            return self.instants[t]
        if t is None or t in self.fixed:
            return t
        if t not in self.instants:
            self.learn_instants([t])
        return self.instants[t]

    def actual(self, label: str | None) -> str | None:
        """The implementation's time for a label (None: the label is not an instant it has)."""
        if label is not None and label in self.bound:
            return self.bound[label]
        if label is None or label in self.fixed:
            return label
        return next((t for t, lab in self.instants.items() if lab == label), None)

    def learn_groups(self, groups: Iterable[tuple[tuple[Any, ...], str]]) -> None:
        """Label the file ids not seen before, ordered by their sort key (oldest instant, keys, id)."""
        for _, fid in sorted((k, f) for k, f in groups if f not in self.groups):
            if fid not in self.groups:
                self.groups[fid] = f"g{len(self.groups) + 1}"

    def group(self, file_id: str) -> str:
        if file_id not in self.groups:
            self.learn_groups([((), file_id)])
        return self.groups[file_id]

    # --- values ------------------------------------------------------------------------------

    def file_name(self, name: Any) -> Any:
        """A data file name with its file id as a label, its instant as a label, no write token."""
        if not isinstance(name, str):
            return name
        if name in self.groups:  # log records name their file group only
            return self.groups[name]
        if is_base_file_name(name):
            b = parse_base_file_name(name)
            return f"{self.group(b.file_id)}_{self.instant(b.instant)}{b.extension}"
        if is_log_file_name(name):
            lf = parse_log_file_name(name)
            return f".{self.group(lf.file_id)}_{self.instant(lf.instant)}.{lf.extension}.{lf.version}{lf.suffix}"
        return name

    def seqno(self, value: Any) -> Any:
        if not isinstance(value, str) or "_" not in value:
            return value
        return self.instant(value.split("_", 1)[0])

    def row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: _plain(v) for k, v in row.items()}
        if COMMIT_TIME in out and isinstance(out[COMMIT_TIME], str):
            out[COMMIT_TIME] = self.instant(out[COMMIT_TIME])
        if COMMIT_SEQNO in out:
            out[COMMIT_SEQNO] = self.seqno(out[COMMIT_SEQNO])
        if FILE_NAME in out:
            out[FILE_NAME] = self.file_name(out[FILE_NAME])
        return out


def _plain(value: Any) -> Any:
    """A value as JSON holds it (bytes as hex, non-finite floats as strings, dates as ISO text)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def row_key(row: Mapping[str, Any]) -> tuple[str, str]:
    """The identity of a row in a multiset: (partition path, record key)."""
    return (str(row.get(PARTITION_PATH, "")), str(row.get(RECORD_KEY, "")))


def sort_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted((dict(r) for r in rows), key=lambda r: (*row_key(r), json.dumps(r, sort_keys=True)))


# --- queries --------------------------------------------------------------------------------------

def window_name(begin: str | None, end: str) -> str:
    """An incremental window's name in an observation: ``<begin>..<end>`` (``start`` for no begin)."""
    return f"{begin or START}..{end}"


def parse_window(name: str) -> tuple[str | None, str]:
    begin, sep, end = name.partition("..")
    if not sep or not end:
        raise InvalidOperation(f"{name!r} is not an incremental window", hint="windows are named <begin>..<end>")
    return (None if begin == START else begin), end


QueryPlan = tuple[tuple[str, ...], tuple[tuple[str | None, str], ...]]
"""What L0 reads besides snapshot and read-optimized: time-travel instants, incremental windows
(labels, or the implementation's own times when planned by ``default_plan``)."""


def default_plan(timeline: Sequence[tuple[str, str, str, str | None]]) -> QueryPlan:
    """Time travel to every completed data write, incremental between any two of (start, their
    completions) — what an implementation's own timeline offers."""
    writes = [(req, done or req) for req, action, state, done in timeline
              if state == "COMPLETED" and action in ("commit", "deltacommit", "replacecommit")]
    ends = [e for _, e in writes]
    return tuple(t for t, _ in writes), tuple((b, e) for e in ends for b in (None, *ends) if b is None or b < e)


def adapter_plan(adapter: TableUnderTest) -> QueryPlan:
    """The adapter's own plan: ``default_plan`` over its timeline, time travel limited to the instants
    its optional ``query_instants()`` names (the model names the writes whose files all survive), and of those to
    the ones its optional ``time_travel_instants()`` names (the model: those Hudi answers, ``spec.read.time_travel``;
    incremental windows still end at each of ``query_instants()``)."""
    timeline = adapter.timeline()
    travel, windows = default_plan(timeline)
    chooser = getattr(adapter, "query_instants", None)
    if chooser is None:
        return travel, windows
    keep = set(chooser())
    done = {req: d or req for req, _, _, d in timeline}
    travel = tuple(t for t in travel if t in keep)
    ends = [done[t] for t in travel]
    windows = tuple((b, e) for e in ends for b in (None, *ends) if b is None or b < e)
    answered = getattr(adapter, "time_travel_instants", None)
    if answered is not None:
        allowed = set(answered())
        travel = tuple(t for t in travel if t in allowed)
    return travel, windows


def plan_of(expected: Mapping[str, Any]) -> QueryPlan | None:
    """The queries an expected observation holds (labels), None when it holds no L0."""
    l0 = expected.get("L0")
    if not isinstance(l0, Mapping):
        return None
    return (tuple(l0.get("time_travel", {})), tuple(parse_window(w) for w in l0.get("incremental", {})))


# --- observing ------------------------------------------------------------------------------------

def _read(adapter: TableUnderTest, norm: Normalizer, query: Query) -> Any:
    try:
        rows = adapter.rows(query)
    except HudiSpecError as err:
        return {"error": err.kind}
    return sort_rows(norm.row(r) for r in rows)


def observe_timeline(adapter: TableUnderTest, norm: Normalizer) -> list[list[Any]]:
    raw = adapter.timeline()
    norm.learn_instants(t for i in raw for t in (i[0], i[3]))
    return [[norm.instant(req), str(action), str(state), norm.instant(done)] for req, action, state, done in raw]


def observe_layout(adapter: TableUnderTest, norm: Normalizer) -> dict[str, list[list[Any]]]:
    raw = adapter.layout()
    norm.learn_groups(((min((s.base_instant for s in g.slices), default=""), g.keys, g.file_id), g.file_id)
                      for groups in raw.values() for g in groups)
    out: dict[str, list[list[Any]]] = {}
    for partition in sorted(raw):
        groups: list[RawGroup] = sorted(raw[partition], key=lambda g: int(norm.group(g.file_id)[1:]))
        out[partition] = [[norm.group(g.file_id),
                           [[norm.instant(s.base_instant), s.has_base, list(s.log_versions)] for s in g.slices],
                           sorted(g.keys)] for g in groups]
    return out


def observe_rows(adapter: TableUnderTest, norm: Normalizer, plan: QueryPlan | None) -> dict[str, Any]:
    """L0. With a plan of labels (from an expected observation) the labels are mapped to the
    implementation's times; a label it has no instant for reads as ``{"error": "no instant <label>"}``."""
    out: dict[str, Any] = {"snapshot": _read(adapter, norm, Query("snapshot")),
                           "read_optimized": _read(adapter, norm, Query("read_optimized"))}
    labelled = plan is not None
    if plan is None:
        plan = adapter_plan(adapter)
    travel: dict[str, Any] = {}
    for t in plan[0]:
        actual = norm.actual(t) if labelled else t
        name = t if labelled else str(norm.instant(t))
        travel[name] = ({"error": f"no instant {t}"} if actual is None
                        else _read(adapter, norm, Query("time_travel", as_of=actual)))
    windows: dict[str, Any] = {}
    for b, e in plan[1]:
        ab, ae = (norm.actual(b), norm.actual(e)) if labelled else (b, e)
        name = window_name(b, e) if labelled else window_name(norm.instant(b), str(norm.instant(e)))
        if ae is None or (b is not None and ab is None):
            windows[name] = {"error": f"no instant {e if ae is None else b}"}
        else:
            windows[name] = _read(adapter, norm, Query("incremental", begin=ab, end=ae))
    out["time_travel"] = dict(sorted(travel.items(), key=lambda kv: _label_order(kv[0])))
    out["incremental"] = dict(sorted(windows.items(), key=lambda kv: tuple(map(_label_order, kv[0].split("..")))))
    return out


def _label_order(label: str) -> tuple[int, str]:
    if len(label) > 1 and label[0] == "t" and label[1:].isdigit():
        return (int(label[1:]), "")
    return (-1 if label == START else 10**9, label)


def observe_files(adapter: TableUnderTest, norm: Normalizer) -> dict[str, list[list[Any]]]:
    raw = adapter.files()
    return {p: sorted([norm.file_name(name), [[kind, norm.instant(t) if t else t] for kind, t in blocks]]
                      for name, blocks in raw[p]) for p in sorted(raw)}


def observe_ledger(adapter: TableUnderTest, norm: Normalizer) -> dict[str, Any]:
    """L4: commit summaries and compaction plans by instant label, group and file labels; the sorted
    list of invariant violations (``spec.write.ledger.ledger_violations``)."""
    led = adapter.ledger()
    commits: dict[str, Any] = {}
    for t in sorted(led.commits):
        c = led.commits[t]
        replaced: dict[str, list[str]] = {}
        for p, fid in sorted(c.replaced):
            replaced.setdefault(p, []).append(norm.group(fid))
        stats = sorted([s.partition, norm.group(s.file_id), norm.file_name(s.name), s.writes, s.inserts, s.updates,
                        s.deletes] for s in sorted(c.stats, key=lambda s: (s.partition, s.file_id, s.name)))
        commits[str(norm.instant(t))] = {"operation": c.operation, "compacted": c.compacted, "stats": stats,
                                         "replaced": {p: sorted(v) for p, v in replaced.items()}}
    plans = {str(norm.instant(t)): sorted([o.partition_path, norm.group(o.file_id), norm.file_name(o.base_file),
                                           sorted(norm.file_name(n) for n in o.log_files)]
                                          for o in sorted(ops, key=lambda o: (o.partition_path, o.file_id)))
             for t, ops in sorted(led.compactions.items())}
    cleans = {str(norm.instant(t)): sorted([p, norm.file_name(n)] for p, n in files)
              for t, files in sorted(led.cleans.items())}
    return {"commits": commits, "compactions": plans, "cleans": cleans,
            "invariants": sorted([rule, norm.file_name(name), norm.instant(t), key]
                                 for rule, name, t, key in ledger_violations(led.files, led.known, led.table_version))}


def learn_groups_from_rows(adapter: TableUnderTest, norm: Normalizer) -> None:
    """Group labels from the snapshot's rows, for an implementation that cannot show its layout: each
    file group by the same sort key as ``observe_layout`` uses, as far as rows tell it (the instant of
    the file the rows name, or of the rows' oldest commit for a log record naming its group alone; the
    keys the group holds)."""
    try:
        rows = adapter.rows(Query("snapshot"))
    except HudiSpecError:
        return
    groups: dict[str, tuple[str, list[str]]] = {}
    for row in rows:
        name, key, time = (str(row.get(c) or "") for c in (FILE_NAME, RECORD_KEY, COMMIT_TIME))
        if is_base_file_name(name):
            fid, instant = parse_base_file_name(name).file_id, parse_base_file_name(name).instant
        elif is_log_file_name(name):
            fid, instant = parse_log_file_name(name).file_id, parse_log_file_name(name).instant
        else:
            fid, instant = name, time
        first, keys = groups.get(fid, (instant, []))
        groups[fid] = (min(first, instant), [*keys, key])
    norm.learn_groups(((instant, tuple(sorted(keys)), fid), fid) for fid, (instant, keys) in groups.items() if fid)


def observe(adapter: TableUnderTest, norm: Normalizer, layers: Sequence[str] = DEFAULT_LAYERS,
            plan: QueryPlan | None = None, outcome: str = "ok") -> Observation:
    """Observe the adapter's table in the given layers (those the adapter offers). The timeline is
    read first so instant labels follow time order; then the layout, so group labels follow creation."""
    offered = [layer for layer in layers if layer in adapter.layers]
    obs: Observation = {}
    timeline = observe_timeline(adapter, norm)
    if "L1" in offered:
        obs["L1"] = {"outcome": outcome, "timeline": timeline}
    try:  # group labels follow the layout even when L2 is not compared
        layout = observe_layout(adapter, norm)
    except (NotImplementedError, NotSupported):
        layout = None
        if "L0" in offered:
            learn_groups_from_rows(adapter, norm)
    if "L2" in offered and layout is not None:
        obs["L2"] = layout
    if "L0" in offered:
        obs["L0"] = observe_rows(adapter, norm, plan)
    if "L3" in offered:
        with contextlib.suppress(NotImplementedError, NotSupported):
            obs["L3"] = observe_files(adapter, norm)
    if "L4" in offered:
        with contextlib.suppress(NotImplementedError, NotSupported):
            obs["L4"] = observe_ledger(adapter, norm)
    return obs


def describe_op(op: Any) -> dict[str, Any]:
    """A step's operation as JSON, for reports and expected files."""
    obj = to_json(op)
    if len(obj.get("records", ())) > 3:  # a write's
        obj["records"] = f"{len(obj['records'])} records"
    return obj


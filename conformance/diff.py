"""Diffs between an expected and an observed step, per layer: what is missing, extra or changed.

- **L0**: per query, rows as multisets keyed by (partition path, record key): keys only expected are
  *missing*, keys only observed are *extra*, keys in both whose rows (or number of rows — duplicates)
  differ are *changed*, with the columns that differ. A query that failed on one side is changed.
- **L1**: the step's outcome (ok or the error raised) and the timeline entries, as multisets of
  (requested, action, state, completion); equal multisets in another order are *changed*.
- **L2**: per partition, file groups by label: slices and keys compared.
- **L3**: per partition, file names; for log files the block sequence.
- **L4**: commits and compaction plans by instant label (missing, extra, changed: which fields); the
  invariant violations as a multiset (an observed violation the spec does not predict is *extra*).

``render`` gives a short human-readable text: at most ``limit`` lines per kind.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.observe import Observation, row_key


@dataclass(frozen=True)
class LayerDiff:
    """The differences of one layer at one step."""

    layer: str
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def to_json(self) -> dict[str, Any]:
        return {"layer": self.layer, "missing": list(self.missing), "extra": list(self.extra),
                "changed": list(self.changed)}

    def render(self, limit: int = 8) -> str:
        lines = []
        for kind, items in (("missing", self.missing), ("extra", self.extra), ("changed", self.changed)):
            for item in items[:limit]:
                lines.append(f"  {kind:7} {item}")
            if len(items) > limit:
                lines.append(f"  {kind:7} ... and {len(items) - limit} more")
        return "\n".join(lines)


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def _rows_by_key(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    out: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(row_key(r), []).append(r)
    return out


def _row_change(exp: list[Mapping[str, Any]], obs: list[Mapping[str, Any]]) -> str | None:
    if len(exp) != len(obs):
        return f"{len(exp)} row(s) expected, {len(obs)} observed"
    a = sorted(exp, key=lambda r: json.dumps(r, sort_keys=True))
    b = sorted(obs, key=lambda r: json.dumps(r, sort_keys=True))
    diffs = []
    for ra, rb in zip(a, b, strict=True):
        for col in sorted(set(ra) | set(rb)):
            if ra.get(col, "<absent>") != rb.get(col, "<absent>"):
                diffs.append(f"{col}: {_short(ra.get(col, '<absent>'), 40)} → {_short(rb.get(col, '<absent>'), 40)}")
    return "; ".join(diffs[:4]) + (f"; +{len(diffs) - 4} more" if len(diffs) > 4 else "") if diffs else None


def diff_rows(where: str, expected: Any, observed: Any) -> LayerDiff:
    """One query's rows (or an ``{"error": ...}`` on either side)."""
    if isinstance(expected, Mapping) or isinstance(observed, Mapping) or expected is None or observed is None:
        if expected != observed:
            return LayerDiff("L0", changed=(f"{where}: expected {_short(expected, 60)}, observed "
                                            f"{_short(observed, 60)}",))
        return LayerDiff("L0")
    e, o = _rows_by_key(expected), _rows_by_key(observed)
    missing = tuple(f"{where} {p!r}/{k!r}" for p, k in sorted(set(e) - set(o)))
    extra = tuple(f"{where} {p!r}/{k!r}: {_short(o[(p, k)][0], 100)}" for p, k in sorted(set(o) - set(e)))
    changed = []
    for key in sorted(set(e) & set(o)):
        change = _row_change(e[key], o[key])
        if change:
            changed.append(f"{where} {key[0]!r}/{key[1]!r}: {change}")
    return LayerDiff("L0", missing, extra, tuple(changed))


def _merge(layer: str, parts: Sequence[LayerDiff]) -> LayerDiff:
    return LayerDiff(layer, tuple(m for p in parts for m in p.missing), tuple(x for p in parts for x in p.extra),
                     tuple(c for p in parts for c in p.changed))


def diff_l0(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> LayerDiff:
    parts = [diff_rows(q, expected.get(q), observed.get(q)) for q in ("snapshot", "read_optimized")]
    for group in ("time_travel", "incremental"):
        exp, obs = expected.get(group, {}), observed.get(group, {})
        for name in sorted(set(exp) | set(obs)):
            label = f"{group}[{name}]"
            if name not in obs:
                parts.append(LayerDiff("L0", missing=(f"{label}: the query was not answered",)))
            elif name not in exp:
                parts.append(LayerDiff("L0", extra=(f"{label}: a query the spec does not predict",)))
            else:
                parts.append(diff_rows(label, exp[name], obs[name]))
    return _merge("L0", parts)


def diff_l1(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> LayerDiff:
    changed = []
    if expected.get("outcome") != observed.get("outcome"):
        changed.append(f"outcome: expected {expected.get('outcome')}, observed {observed.get('outcome')}")
    e = Counter(tuple(i) for i in expected.get("timeline", []))
    o = Counter(tuple(i) for i in observed.get("timeline", []))
    missing = tuple(f"instant {_short(list(i))}" for i in sorted((e - o).elements(), key=str))
    extra = tuple(f"instant {_short(list(i))}" for i in sorted((o - e).elements(), key=str))
    if not missing and not extra and expected.get("timeline") != observed.get("timeline"):
        changed.append("the timeline's instants are in another order")
    return LayerDiff("L1", missing, extra, tuple(changed))


def diff_l2(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> LayerDiff:
    missing, extra, changed = [], [], []
    for p in sorted(set(expected) | set(observed)):
        e = {g[0]: g for g in expected.get(p, [])}
        o = {g[0]: g for g in observed.get(p, [])}
        missing += [f"partition {p!r} group {g}: {_short(e[g][1:], 100)}" for g in sorted(set(e) - set(o))]
        extra += [f"partition {p!r} group {g}: {_short(o[g][1:], 100)}" for g in sorted(set(o) - set(e))]
        for g in sorted(set(e) & set(o)):
            if e[g][1] != o[g][1]:
                changed.append(f"partition {p!r} group {g} slices: {_short(e[g][1], 60)} → {_short(o[g][1], 60)}")
            if e[g][2] != o[g][2]:
                lost = sorted(set(e[g][2]) - set(o[g][2]))
                gained = sorted(set(o[g][2]) - set(e[g][2]))
                changed.append(f"partition {p!r} group {g} keys: missing {_short(lost, 50)}, "
                               f"extra {_short(gained, 50)}")
    return LayerDiff("L2", tuple(missing), tuple(extra), tuple(changed))


def diff_l3(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> LayerDiff:
    missing, extra, changed = [], [], []
    for p in sorted(set(expected) | set(observed)):
        e = {f[0]: f[1] for f in expected.get(p, [])}
        o = {f[0]: f[1] for f in observed.get(p, [])}
        missing += [f"partition {p!r} file {n}" for n in sorted(set(e) - set(o))]
        extra += [f"partition {p!r} file {n}" for n in sorted(set(o) - set(e))]
        changed += [f"partition {p!r} file {n} blocks: {_short(e[n], 60)} → {_short(o[n], 60)}"
                    for n in sorted(set(e) & set(o)) if e[n] != o[n]]
    return LayerDiff("L3", tuple(missing), tuple(extra), tuple(changed))


def diff_l4(expected: Mapping[str, Any], observed: Mapping[str, Any]) -> LayerDiff:
    missing, extra, changed = [], [], []
    for section in ("commits", "compactions", "cleans"):
        e, o = expected.get(section, {}), observed.get(section, {})
        missing += [f"{section} {t}: {_short(e[t], 100)}" for t in sorted(set(e) - set(o))]
        extra += [f"{section} {t}: {_short(o[t], 100)}" for t in sorted(set(o) - set(e))]
        for t in sorted(set(e) & set(o)):
            if e[t] == o[t]:
                continue
            if isinstance(e[t], Mapping) and isinstance(o[t], Mapping):
                changed += [f"{section} {t} {k}: {_short(e[t].get(k), 70)} → {_short(o[t].get(k), 70)}"
                            for k in sorted(set(e[t]) | set(o[t])) if e[t].get(k) != o[t].get(k)]
            else:
                changed.append(f"{section} {t}: {_short(e[t], 70)} → {_short(o[t], 70)}")
    ev, ov = (Counter(tuple(v) for v in obs.get("invariants", [])) for obs in (expected, observed))
    missing += [f"invariant {list(v)}" for v in sorted((ev - ov).elements())]
    extra += [f"invariant violated: {list(v)}" for v in sorted((ov - ev).elements())]
    return LayerDiff("L4", tuple(missing), tuple(extra), tuple(changed))


DIFFERS = {"L0": diff_l0, "L1": diff_l1, "L2": diff_l2, "L3": diff_l3, "L4": diff_l4}


def diff_step(expected: Observation, observed: Observation, layers: Sequence[str]) -> dict[str, LayerDiff]:
    """Per layer (of ``layers``), the differences of one step. A layer the expected side holds and the
    observed side lacks is one ``missing`` entry."""
    out = {}
    for layer in layers:
        if layer not in expected:
            continue
        if layer not in observed:
            out[layer] = LayerDiff(layer, missing=(f"{layer} was not observed",))
            continue
        out[layer] = DIFFERS[layer](expected[layer], observed[layer])
    return out


def render_step(step: int, op: Mapping[str, Any] | None, diffs: Mapping[str, LayerDiff], limit: int = 8) -> str:
    """The text a failure shows: the step, its operation, and each failing layer's diff."""
    head = f"step {step}" + (f" ({_short(op, 100)})" if op else "")
    lines = [head]
    for layer, d in diffs.items():
        if not d.ok:
            lines.append(f" {layer}:")
            lines.append(d.render(limit))
    return "\n".join(lines)

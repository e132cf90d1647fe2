"""The benchmark's charts: seconds and peak memory per job, engine and row count, as SVG.

Drawn from the results JSON the bench writes beside the performance page (``docs/performance.json``,
``report.page_json_path``), so the charts show the numbers of the table above them. Plain SVG, no
plotting library: one horizontal bar per job and row count on a logarithmic axis (the jobs span
three orders of magnitude), a job without a number labelled with why; and the scale jobs' curves
(seconds and the driver's peak memory against rows, ``curve_svg``).

``python -m bench.charts --from-page docs/performance.md`` rebuilds that JSON from the page's own
table, for a run whose JSON was not kept.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.report import BEGIN_MARK, COLUMNS, END_MARK
from reference.diagrams.svg import BLUE, GREEN, INK, MUTED, ORANGE, PURPLE, Canvas

METRICS = {"seconds": ("seconds", "s"), "warm_seconds": ("warm seconds", "s"), "peak_rss_mb": ("peak RSS", "MB")}
ROW_COLOURS = (BLUE, ORANGE, GREEN, PURPLE)
_LABEL_W, _PLOT_W, _BAR_H, _TOP = 290, 540, 11, 54


def _number(cell: str) -> float | None:
    cell = cell.strip()
    return float(cell.replace(",", "")) if re.fullmatch(r"[\d,]+(\.\d+)?", cell) else None


def results_from_page(text: str) -> list[dict[str, Any]]:
    """The result rows of the tables the bench wrote between the page's markers: job, engine, row count ``n``,
    status (and reason), seconds, warm seconds and peak RSS."""
    body = text[text.index(BEGIN_MARK):text.index(END_MARK)]
    out: list[dict[str, Any]] = []
    n: int | None = None
    header = "| " + " | ".join(COLUMNS) + " |"
    in_table = False
    for line in body.splitlines():
        heading = re.fullmatch(r"#+ ([\d,]+) rows", line.strip())
        if heading:
            n = int(heading.group(1).replace(",", ""))
        if line.strip() == header:
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
        if not in_table or line.startswith("|---") or n is None:
            continue
        cells = dict(zip(COLUMNS, [c.strip() for c in line.strip().strip("|").split("|")], strict=True))
        seconds = _number(cells["seconds"])
        status, _, reason = ("ok", "", "") if seconds is not None else cells["seconds"].partition(": ")
        out.append({"job": cells["job"], "engine": cells["engine"], "n": n, "status": status,
                    "reason": reason or None, "seconds": seconds, "warm_seconds": _number(cells["warm s"]),
                    "peak_rss_mb": _number(cells["peak RSS MB"])})
    return out


def _nice(value: float, down: bool) -> float:
    """The nearest 1, 2 or 5 times a power of ten below (``down``) or above ``value``."""
    decade = 10.0 ** math.floor(math.log10(value))
    steps = [decade * m for m in (1, 2, 5, 10)]
    return max(v for v in steps if v <= value) if down else min(v for v in steps if v >= value)


def _log_ticks(low: float, high: float) -> list[float]:
    ticks, t = [], 10.0 ** math.floor(math.log10(low))
    while t <= high * 1.0001:
        ticks += [v for v in (t, 2 * t, 5 * t) if low <= v <= high * 1.0001]
        t *= 10
    return ticks


def chart_svg(results: Sequence[Mapping[str, Any]], metric: str = "seconds") -> str:
    """One chart of ``metric`` (``seconds``, ``warm_seconds`` or ``peak_rss_mb``): a group of bars per job, one
    bar per row count, on a log axis; jobs in the order of the results."""
    label, unit = METRICS[metric]
    sizes = list(dict.fromkeys(int(r["n"]) for r in results))
    jobs = list(dict.fromkeys((str(r["job"]), str(r["engine"])) for r in results))
    by_key = {(str(r["job"]), int(r["n"])): r for r in results}
    values = [float(r[metric]) for r in results if r.get(metric)]
    low = _nice(min(values), down=True) if values else 0.1
    high = _nice(max(values) * 1.3, down=False) if values else 1.0
    group_h = len(sizes) * (_BAR_H + 2) + 8
    canvas = Canvas(_LABEL_W + _PLOT_W + 90, _TOP + len(jobs) * group_h + 30, f"Benchmark: {label} per job")

    def x_of(v: float) -> float:
        return _LABEL_W + (math.log10(v) - math.log10(low)) / (math.log10(high) - math.log10(low)) * _PLOT_W

    canvas.text(10, 18, f"{label} ({unit}, log scale) per job and engine", size=14, bold=True)
    for i, n in enumerate(sizes):
        cx = _LABEL_W + i * 150
        canvas.rect(cx, 28, 12, 10, fill=ROW_COLOURS[i % len(ROW_COLOURS)], stroke="none", rx=1)
        canvas.text(cx + 17, 37, f"{n:,} rows", size=11)
    bottom = _TOP + len(jobs) * group_h
    for t in _log_ticks(low, high):
        x = x_of(t)
        canvas.line(x, _TOP - 6, x, bottom, stroke="#e1e6ec")
        canvas.text(x, bottom + 14, f"{t:g}", size=10, anchor="middle", fill=MUTED, mono=True)
    for j, (job, engine) in enumerate(jobs):
        y = _TOP + j * group_h
        canvas.text(_LABEL_W - 8, y + group_h / 2, job, size=10.5, anchor="end", mono=True)
        canvas.text(_LABEL_W - 8, y + group_h / 2 + 11, engine, size=9, anchor="end", fill=MUTED)
        for i, n in enumerate(sizes):
            r = by_key.get((job, n))
            by = y + 4 + i * (_BAR_H + 2)
            value = r.get(metric) if r else None
            if not value:
                why = "not run" if r is None else (f"{r['status']}" if r.get("status") != "ok" else "—")
                canvas.text(_LABEL_W + 4, by + _BAR_H - 2, why, size=9, fill=MUTED, italic=True)
                continue
            w = max(x_of(float(value)) - _LABEL_W, 1.5)
            colour = ROW_COLOURS[i % len(ROW_COLOURS)]
            canvas.rect(_LABEL_W, by, w, _BAR_H, fill=colour, stroke="none", rx=1,
                        tip=f"{job}, {n:,} rows: {value:,} {unit}")
            canvas.text(_LABEL_W + w + 4, by + _BAR_H - 1.5, f"{float(value):,.2f}".rstrip("0").rstrip("."),
                        size=9, fill=INK)
    return canvas.render()


_Curve = tuple[str, str, Callable[[Mapping[str, Any]], Any]]
CURVES: dict[str, _Curve] = {"scale_seconds": ("seconds", "s", lambda r: r.get("seconds")),
          "scale_driver_mb": ("driver peak RSS (Python + JVM)", "MB",
                              lambda r: (r["extra"]["driver_python_peak_kb"] + r["extra"]["driver_jvm_peak_kb"]) / 1024
                              if "driver_jvm_peak_kb" in (r.get("extra") or {}) else None)}


def curve_svg(results: Sequence[Mapping[str, Any]], metric: str = "scale_seconds") -> str:
    """The scale jobs' curve of ``metric`` (a key of ``CURVES``) against rows: one line per job, both axes
    logarithmic (a straight line of slope 1 is cost linear in rows); each point labelled with its value
    and, for the seconds, the table's file groups."""
    label, unit, value_of = CURVES[metric]
    points: dict[str, list[tuple[int, float, Mapping[str, Any]]]] = {}
    for r in results:
        if r.get("status") == "ok" and "file_groups" in (r.get("extra") or {}) and value_of(r):
            points.setdefault(str(r["job"]), []).append((int(r["n"]), float(value_of(r)), r))
    width, height, left, top, plot_w, plot_h = 860, 330, 70, 50, 560, 230
    canvas = Canvas(width, height, f"Benchmark: scale, {label}")
    canvas.text(10, 18, f"{label} ({unit}, log scale) against rows (log scale): ours and Apache Hudi's on a "
                "standalone cluster", size=13, bold=True)
    if not points:
        canvas.text(left, top + 20, "no scale job ran", size=11, fill=MUTED, italic=True)
        return canvas.render()
    ns = [n for ps in points.values() for n, _, _ in ps]
    vs = [v for ps in points.values() for _, v, _ in ps]
    n_lo, n_hi = _nice(min(ns), down=True), _nice(max(ns), down=False)
    v_lo, v_hi = _nice(min(vs), down=True), _nice(max(vs) * 1.2, down=False)
    if n_hi <= n_lo:
        n_hi = n_lo * 10
    if v_hi <= v_lo:
        v_hi = v_lo * 10

    def x_of(n: float) -> float:  # the points kept off the edges, so their labels fit beside them
        span = math.log10(n_hi) - math.log10(n_lo)
        return left + 20 + (math.log10(n) - math.log10(n_lo)) / span * (plot_w - 110)

    def y_of(v: float) -> float:
        return top + plot_h - (math.log10(v) - math.log10(v_lo)) / (math.log10(v_hi) - math.log10(v_lo)) * plot_h

    for t in _log_ticks(v_lo, v_hi):
        canvas.line(left, y_of(t), left + plot_w, y_of(t), stroke="#e1e6ec")
        canvas.text(left - 6, y_of(t) + 3, f"{t:g}", size=10, anchor="end", fill=MUTED, mono=True)
    for n in sorted(set(ns)):
        canvas.line(x_of(n), top, x_of(n), top + plot_h, stroke="#e1e6ec")
        canvas.text(x_of(n), top + plot_h + 14, f"{n:,}", size=10, anchor="middle", fill=MUTED, mono=True)
    for i, (job, ps) in enumerate(points.items()):
        colour = ROW_COLOURS[i % len(ROW_COLOURS)]
        ps.sort()
        canvas.path(" ".join(f"{'M' if k == 0 else 'L'}{x_of(n):.1f},{y_of(v):.1f}" for k, (n, v, _) in enumerate(ps)),
                    stroke=colour, width=1.8, dash="5 3" if job.startswith("apache_hudi_") else None)  # Hudi's dashed
        for n, v, r in ps:
            canvas.circle(x_of(n), y_of(v), 3, fill=colour)
            groups = f", {r['extra']['file_groups']} groups" if metric == "scale_seconds" else ""
            canvas.text(x_of(n) + 5, y_of(v) - 4, f"{v:,.1f}{groups}", size=8.5, fill=INK)
        canvas.rect(left + plot_w + 16, top + i * 18, 12, 10, fill=colour, stroke="none", rx=1)
        name = job.replace("hudi_spec_cluster_", "").replace("apache_hudi_cluster_", "Apache Hudi ")
        canvas.text(left + plot_w + 33, top + i * 18 + 9, name, size=10.5, mono=True)
    return canvas.render()


def charts_from_json(path: Path) -> dict[str, str]:
    """Per metric, the chart of the results JSON at ``path`` (the bar charts, then the scale curves)."""
    results = json.loads(path.read_text())["results"]
    charts = {metric: chart_svg(results, metric) for metric in ("seconds", "peak_rss_mb")}
    return {**charts, **{metric: curve_svg(results, metric) for metric in CURVES}}


def main(argv: list[str] | None = None) -> int:
    """Write the JSON beside the page from the page's own table (``--from-page PAGE``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.charts", description=__doc__)
    parser.add_argument("--from-page", type=Path, required=True, help="the performance page")
    args = parser.parse_args(argv)
    from bench.report import page_json_path

    text = args.from_page.read_text()
    results = results_from_page(text)
    out = page_json_path(args.from_page)
    measured = re.search(r"Measured by `([^`]+)` from (\S+) to (\S+)", text)
    data = {"schema": "hudi-spec-bench/1", "source": "rebuilt from the page's table by python -m bench.charts",
            "command": measured.group(1) if measured else None, "started": measured.group(2) if measured else None,
            "finished": measured.group(3) if measured else None,
            "rows": list(dict.fromkeys(r["n"] for r in results)), "results": results}
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(results)} results written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

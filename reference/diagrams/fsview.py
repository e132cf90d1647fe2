"""A table's file groups over time, drawn from its file system view (``spec.file_group.file_system_view``).

Columns are the instants of the active timeline, rows the visible file groups. Each base file and log
file sits in the column of the instant that wrote it; a band behind them marks each file slice, from
its base instant up to the next slice. ``fsview_mermaid`` states the same as a Mermaid flowchart, one
subgraph per file group and one node per slice, for ``hudi-spec fsview TABLE --output mermaid``.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.diagrams.svg import (
    BLUE,
    BLUE_FILL,
    GREEN,
    GREEN_FILL,
    GREY_FILL,
    INK,
    MUTED,
    Canvas,
)
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView
from spec.file_group.log_file.log_format import read_log_file
from spec.storage.hoodie_storage import Storage


@dataclass(frozen=True)
class Chip:
    """One file of a slice as drawn: the file, whether it is a log file, and the instant that wrote it."""

    file: DataFile
    is_log: bool
    instant: str


def log_instant(storage: Storage | None, log: DataFile, slice_: FileSlice, table_version: int) -> str:
    """The instant that wrote a log file: from its name from table version 8 on; before, the name carries the
    slice's base instant, so it is the first block's ``INSTANT_TIME`` header (the name's when unreadable)."""
    name_instant = next(n.instant for f, n in zip(slice_.log_files, slice_.log_file_names, strict=True) if f == log)
    if table_version >= 8 or storage is None:
        return name_instant
    for record in read_log_file(storage, log.path):
        if record.block is not None and record.block.instant_time:
            return record.block.instant_time
    return name_instant


def slice_chips(storage: Storage | None, slice_: FileSlice, table_version: int) -> list[Chip]:
    """The files of a slice, base file first, logs in read order."""
    chips = [Chip(slice_.base_file, False, slice_.base_instant)] if slice_.base_file else []
    return chips + [Chip(f, True, log_instant(storage, f, slice_, table_version)) for f in slice_.log_files]


def short_id(file_id: str, keep: int = 8) -> str:
    """A file id cut to its head and tail (UUID prefixes are long and alike)."""
    return file_id if len(file_id) <= 2 * keep + 1 else f"{file_id[:keep]}…{file_id[-keep:]}"


def _mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;")


def fsview_mermaid(view: FileSystemView) -> str:
    """A Mermaid flowchart of the view: one subgraph per file group, a node per slice listing its base file and
    log files, slices linked in order."""
    lines = ["flowchart LR"]
    for g_no, group in enumerate(view.groups):
        title = f"{group.partition_path or '(unpartitioned)'} / {group.file_id}"
        lines += [f'    subgraph g{g_no}["{_mermaid_label(title)}"]', "        direction LR"]
        for s_no, sl in enumerate(group.slices):
            parts = [f"slice {sl.base_instant}"]
            parts.append(f"base {sl.base_file.name} ({sl.base_file.size:,} B)" if sl.base_file else "no base file")
            parts += [f"log {f.name} ({f.size:,} B)" for f in sl.log_files]
            lines.append(f'        g{g_no}s{s_no}["{_mermaid_label("<br/>".join(parts))}"]')
        lines += [f"        g{g_no}s{s_no - 1} --> g{g_no}s{s_no}" for s_no in range(1, len(group.slices))]
        lines.append("    end")
    return "\n".join(lines) + "\n"


_LEFT, _COL_W, _HEAD, _ROW_H, _CHIP_H = 190, 128, 58, 74, 22


def fsview_svg(view: FileSystemView, storage: Storage | None = None, title: str = "File groups over time") -> str:
    """The view as an SVG picture: instants left to right, a row per file group, a chip per file, a band per
    slice. With ``storage``, the log files of version-6 tables are placed by their blocks' instant."""
    version = view.config.table_version
    instants = list(view.timeline.instants)
    column = {inst.requested: i for i, inst in enumerate(instants)}
    width = _LEFT + max(len(instants), 1) * _COL_W + 20
    canvas = Canvas(width, _HEAD + len(view.groups) * _ROW_H + 34, title)
    for i, inst in enumerate(instants):
        x = _LEFT + i * _COL_W + _COL_W / 2
        canvas.text(x, 18, inst.action, size=12, anchor="middle", bold=True,
                    fill=INK if inst.is_completed else MUTED, italic=not inst.is_completed)
        canvas.text(x, 33, inst.requested, size=9.5, anchor="middle", mono=True, fill=MUTED)
        if not inst.is_completed:
            canvas.text(x, 46, inst.state.value.lower(), size=10, anchor="middle", fill=MUTED, italic=True)
        canvas.line(x, _HEAD - 6, x, _HEAD + len(view.groups) * _ROW_H, stroke="#d5dbe3", dash="3 3")
    for row, group in enumerate(view.groups):
        y = _HEAD + row * _ROW_H
        canvas.text(10, y + 30, group.partition_path or "(unpartitioned)", size=12, bold=True)
        canvas.text(10, y + 46, short_id(group.file_id), size=10.5, mono=True, fill=MUTED)
        for s_no, sl in enumerate(group.slices):
            chips = slice_chips(storage, sl, version)
            start = column.get(sl.base_instant, 0)
            nxt = group.slices[s_no + 1].base_instant if s_no + 1 < len(group.slices) else None
            end = max([start, *(column.get(c.instant, start) for c in chips)])
            if nxt is not None and nxt in column:
                end = max(end, column[nxt] - 1)
            bx = _LEFT + start * _COL_W + 4
            canvas.rect(bx, y + 6, (end - start + 1) * _COL_W - 8, _ROW_H - 12, fill=GREY_FILL, stroke="#b8c2cc",
                        rx=8, tip=f"file slice {sl.base_instant}")
            canvas.text(bx + 6, y + 19, f"slice {sl.base_instant}", size=9.5, fill=MUTED, mono=True)
            used: dict[int, int] = {}
            for chip in chips:
                col = column.get(chip.instant, start)
                k = used.get(col, 0)
                used[col] = k + 1
                _draw_chip(canvas, chip, _LEFT + col * _COL_W + 12, y + 26 + k * 4)
    ly = _HEAD + len(view.groups) * _ROW_H + 14
    canvas.rect(_LEFT, ly - 9, 12, 12, fill=BLUE_FILL, stroke=BLUE)
    canvas.text(_LEFT + 18, ly + 1, "base file", size=11)
    canvas.rect(_LEFT + 100, ly - 9, 12, 12, fill=GREEN_FILL, stroke=GREEN)
    canvas.text(_LEFT + 118, ly + 1, "log file", size=11)
    canvas.rect(_LEFT + 190, ly - 9, 24, 12, fill=GREY_FILL, stroke="#b8c2cc", rx=4)
    canvas.text(_LEFT + 220, ly + 1, "file slice (a base instant and the logs on it)", size=11)
    return canvas.render()


def _draw_chip(canvas: Canvas, chip: Chip, x: float, y: float) -> None:
    w = _COL_W - 24
    fill, stroke = (GREEN_FILL, GREEN) if chip.is_log else (BLUE_FILL, BLUE)
    canvas.rect(x, y, w, _CHIP_H, fill=fill, stroke=stroke, tip=f"{chip.file.name} ({chip.file.size:,} bytes)")
    label = f"log .{chip.file.name.rsplit('.log.', 1)[-1].split('_')[0]}" if chip.is_log else "base"
    canvas.text(x + w / 2, y + 15, f"{label} · {human_size(chip.file.size)}", size=10, anchor="middle")


def human_size(n: int) -> str:
    """Bytes in B, KiB or MiB, as a chip shows them."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"

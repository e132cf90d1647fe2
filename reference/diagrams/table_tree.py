"""A table's folders and files, each file named for what it is: the table config, the timeline's instant files,
partition metadata, base files and log files, drawn from a table on local disk.

Every label is worked out by the spec's own parsers: an instant file by
``spec.timeline.layout.parse_instant_file_name`` (its action, state and times), a data file by
``spec.file_group.file_naming`` (its file group, and the instant or the log version it belongs to). Files the
spec does not name (anything a reader ignores) are drawn without a label. Folders come first, then files, each
sorted by name, so the same table always gives the same picture.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reference.diagrams.fsview import human_size, short_id
from reference.diagrams.svg import (
    BLUE,
    BLUE_FILL,
    GREEN,
    GREEN_FILL,
    GREY_FILL,
    INK,
    MUTED,
    ORANGE,
    ORANGE_FILL,
    PURPLE,
    PURPLE_FILL,
    Canvas,
    text_width,
)
from spec.config.table_config import TableConfig
from spec.errors import HudiSpecError
from spec.file_group.file_naming import is_base_file_name, is_log_file_name, parse_base_file_name, parse_log_file_name
from spec.timeline.layout import is_instant_file_name, parse_instant_file_name, timeline_dir


@dataclass(frozen=True)
class Entry:
    """One line of the tree: its depth, name, whether it is a folder, what it is (``kind``) and a note."""

    depth: int
    name: str
    folder: bool
    kind: str  # "folder", "config", "instant", "partition", "base", "log" or "other"
    note: str = ""


def describe(rel: str, layout: int) -> tuple[str, str]:
    """What the file at ``rel`` (relative to the table) is, and a note saying so in a few words."""
    name = rel.rsplit("/", 1)[-1]
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    if rel == ".hoodie/hoodie.properties":
        return "config", "the table config: name, type, version, keys"
    if folder == timeline_dir(layout).rstrip("/") and is_instant_file_name(name, layout):
        inst = parse_instant_file_name(name, layout)
        state = f"completed at {inst.completed}" if inst.is_completed and inst.completed else inst.state.value.lower()
        return "instant", f"instant {inst.requested}: {inst.action}, {state}"
    if name == ".hoodie_partition_metadata":
        return "partition", "partition metadata (its depth)"
    if not rel.startswith(".hoodie/") and is_base_file_name(name):
        base = parse_base_file_name(name)
        return "base", f"base file of group {short_id(base.file_id)}, slice {base.instant}"
    if not rel.startswith(".hoodie/") and is_log_file_name(name):
        log = parse_log_file_name(name)
        # from table version 8 a log file's name carries the instant that wrote it; before, its slice's base instant
        written = f"written by {log.instant}" if layout >= 2 else f"on slice {log.instant}"
        return "log", f"log file of group {short_id(log.file_id)}, {written}"
    return "other", ""


def tree_entries(root: Path, layout: int, max_files: int = 20) -> list[Entry]:
    """The tree of the table at ``root``: folders first, then files, each by name; a folder of more than
    ``max_files`` files shows its first ones and a line saying how many more."""
    out: list[Entry] = []

    def walk(folder: Path, depth: int) -> None:
        children = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name))
        files = [p for p in children if not p.is_dir()]
        for child in children:
            rel = child.relative_to(root).as_posix()
            if child.is_dir():
                out.append(Entry(depth, child.name + "/", True, "folder"))
                walk(child, depth + 1)
            elif files.index(child) < max_files:
                kind, note = describe(rel, layout)
                out.append(Entry(depth, child.name, False, kind, f"{note} · {human_size(child.stat().st_size)}"
                                 if note else human_size(child.stat().st_size)))
        if len(files) > max_files:
            out.append(Entry(depth, f"… {len(files) - max_files} more files", False, "other"))

    out.append(Entry(0, root.name + "/", True, "folder", "the table's base path"))
    walk(root, 1)
    return out


_FILLS = {"config": (PURPLE_FILL, PURPLE), "instant": (ORANGE_FILL, ORANGE), "partition": (GREY_FILL, MUTED),
          "base": (BLUE_FILL, BLUE), "log": (GREEN_FILL, GREEN)}
_LINE_H, _INDENT, _TOP = 21, 18, 30


def table_tree_svg(root: Path, title: str | None = None) -> str:
    """The folders and files of the table at ``root`` as an SVG picture, a note beside each file the spec names.
    ``root`` must hold a table (``TableConfig.load``); its timeline layout says where instant files are."""
    try:
        config = TableConfig.load(str(root))
    except HudiSpecError as err:
        raise HudiSpecError(f"{root} is not a table to draw: {err}") from err
    entries = tree_entries(root, config.timeline_layout)
    name_w = max(e.depth * _INDENT + text_width(e.name, 11.5, mono=True) for e in entries) + 24
    note_w = max(text_width(e.note, 11) for e in entries)
    width = 20 + name_w + note_w + 20
    canvas = Canvas(width, _TOP + len(entries) * _LINE_H + 10,
                    title or f"The folders and files of table {config.name} (table version {config.table_version})")
    canvas.text(10, 18, f"table {config.name} · {config.table_type} · table version {config.table_version}",
                size=13, bold=True)
    for row, e in enumerate(entries):
        y = _TOP + row * _LINE_H
        x = 12 + e.depth * _INDENT
        if e.depth:  # the branch from the parent folder
            canvas.line(x - _INDENT + 5, y + 4, x - _INDENT + 5, y + 14, stroke="#b8c2cc")
            canvas.line(x - _INDENT + 5, y + 14, x - 3, y + 14, stroke="#b8c2cc")
        fill, stroke = _FILLS.get(e.kind, ("none", "none"))
        if e.kind in _FILLS:
            canvas.rect(x - 2, y + 3, text_width(e.name, 11.5, mono=True) + 6, 16, fill=fill, stroke=stroke, rx=3)
        canvas.text(x + 1, y + 15, e.name, size=11.5, mono=True, bold=e.folder,
                    fill=MUTED if e.kind == "other" and not e.folder else INK)
        if e.note:
            italic = e.kind == "instant" and "completed" not in e.note
            canvas.text(20 + name_w, y + 15, e.note, size=11, fill=MUTED, italic=italic)
    return canvas.render()

"""A log block byte by byte: the frame of ``spec.file_group.log_file.log_format.BLOCK_FIELDS``, and a real block cut
along it.

The top row is the field table: fixed fields as wide as their bytes, variable ones (header, content,
footer) as ragged boxes, with the offset of each fixed field. The bottom row, when a block is given,
is that block's ``block_parts``: each field's real offset, length and value (the bytes in hex where
they are few), so the picture shows what the encoder writes.
"""

from __future__ import annotations

from collections.abc import Sequence

from reference.diagrams.svg import (
    BLUE,
    BLUE_FILL,
    GREEN,
    GREEN_FILL,
    INK,
    MUTED,
    ORANGE,
    ORANGE_FILL,
    Canvas,
)
from spec.file_group.log_file.log_format import BLOCK_FIELDS, BlockField, BlockType, HeaderKey, LogBlock, block_parts

_PX_PER_BYTE, _VAR_W, _LEFT, _BOX_H = 17, 150, 10, 62


def field_widths(fields: Sequence[BlockField] = BLOCK_FIELDS) -> list[float]:
    """The drawn width of each field: its bytes for a fixed field, a fixed width for a variable one."""
    return [f.size * _PX_PER_BYTE if f.size is not None else _VAR_W for f in fields]


def _describe(f: BlockField, data: bytes, block: LogBlock) -> str:
    if f.name == "magic":
        return data.decode("ascii", "replace")
    if f.name == "block type":
        return f"{BlockType(block.block_type).name} ({int(block.block_type)})"
    if f.name in ("header", "footer"):
        entries = block.header if f.name == "header" else block.footer
        keys = [HeaderKey(k).name if k in HeaderKey._value2member_map_ else str(k) for k, _ in entries]
        return ", ".join(keys) if keys else "empty"
    if f.name == "content":
        return "records" if block.is_data else "—"
    return f"{int.from_bytes(data, 'big', signed=True):,}"


def block_layout_svg(block: LogBlock | None = None, fields: Sequence[BlockField] = BLOCK_FIELDS,
                     caption: str = "") -> str:
    """The field table as boxes and, when ``block`` is given, that block's bytes field by field."""
    widths = field_widths(fields)
    total_w = _LEFT * 2 + sum(widths)
    rows = 2 if block is not None else 1
    canvas = Canvas(total_w, 40 + rows * (_BOX_H + 56) - 30, "Log block layout")
    canvas.text(_LEFT, 16, "the frame (BLOCK_FIELDS): offsets of the fixed fields, sizes in bytes", size=12,
                fill=MUTED)
    x, y = float(_LEFT), 40.0
    offset: int | None = 0
    for f, w in zip(fields, widths, strict=True):
        variable = f.size is None
        fill, stroke = (ORANGE_FILL, ORANGE) if variable else (BLUE_FILL, BLUE)
        canvas.rect(x, y, w, _BOX_H, fill=fill, stroke=stroke, rx=2, dash="6 3" if variable else None,
                    tip=f"{f.name}: {f.value}")
        for i, word in enumerate(_wrap(f.name, w)):
            canvas.text(x + w / 2, y + 18 + i * 14, word, size=11.5, anchor="middle", bold=True)
        canvas.text(x + w / 2, y + _BOX_H + 14, "var" if variable else f"{f.size} B", size=10.5, anchor="middle",
                    fill=MUTED)
        if offset is not None:
            canvas.text(x, y - 5, str(offset), size=10, mono=True, fill=INK)
        offset = None if variable or offset is None else offset + (f.size or 0)
        x += w
    if block is not None:
        y = 40 + _BOX_H + 56
        parts = block_parts(block)
        canvas.text(_LEFT, y - 22, caption or f"a real {BlockType(block.block_type).name}: "
                    f"{sum(len(d) for _, d in parts):,} bytes", size=12, fill=MUTED)
        x, pos = float(_LEFT), 0
        for (f, data), w in zip(parts, widths, strict=True):
            canvas.rect(x, y, w, _BOX_H, fill=GREEN_FILL, stroke=GREEN, rx=2, tip=f"{f.name}: {len(data)} bytes")
            canvas.text(x, y - 5, f"{pos:,}", size=10, mono=True)
            shown = data.hex(" ") if f.size is not None and len(data) <= 4 else data.hex()
            if f.size is not None and len(data) <= 8:
                canvas.text(x + w / 2, y + 16, shown if len(shown) * 6 < w else data.hex()[-8:], size=9,
                            anchor="middle", mono=True, fill=MUTED)
            for i, word in enumerate(_wrap(_describe(f, data, block), w, 10.5)):
                if i < 3:
                    canvas.text(x + w / 2, y + 32 + i * 13, word, size=10.5, anchor="middle")
            if f.size is None:
                canvas.text(x + w / 2, y + _BOX_H - 5, f"{len(data):,} B", size=10.5, anchor="middle", fill=MUTED)
            pos += len(data)
            x += w
        canvas.text(x, y - 5, f"{pos:,}", size=10, mono=True, anchor="end")
    return canvas.render()


def _wrap(text: str, width: float, size: float = 11.5) -> list[str]:
    """Words of ``text`` on lines that fit ``width`` (roughly)."""
    limit = max(int(width / (size * 0.6)) - 1, 3)
    lines: list[str] = []
    for word in text.replace("_", "_\u0001").replace(" ", " \u0001").split("\u0001"):
        if lines and len(lines[-1]) + len(word.rstrip()) <= limit:
            lines[-1] += word
        else:
            lines.append(word)
    return [line.rstrip() for line in lines]

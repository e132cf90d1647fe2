"""A small SVG canvas: boxes, text, lines and arrows, written as one self-contained ``<svg>`` element.

The element carries its own styles and no blank line, so Markdown passes it through as a raw HTML
block; it scales to the width of the page (``viewBox``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from zlib import crc32

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
MONO = "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace"
INK = "#1f2933"
MUTED = "#616e7c"
BLUE = "#3d6fb6"
BLUE_FILL = "#dce8f8"
GREEN = "#2f855a"
GREEN_FILL = "#daf2e4"
ORANGE = "#c05621"
ORANGE_FILL = "#fdebd9"
GREY_FILL = "#f2f4f7"
PURPLE = "#6b46c1"
PURPLE_FILL = "#ebe4fb"


def text_width(text: str, size: float, mono: bool = False) -> float:
    """A rough width of ``text`` in pixels at font ``size`` (enough to size boxes around labels)."""
    return len(text) * size * (0.62 if mono else 0.56)


@dataclass
class Canvas:
    """Shapes added in drawing order; ``render`` returns the ``<svg>`` element."""

    width: float
    height: float
    title: str
    items: list[str] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, *, fill: str = "none", stroke: str = INK,
             rx: float = 4, dash: str | None = None, stroke_width: float = 1.2, tip: str | None = None) -> None:
        """A rectangle (rounded by ``rx``); ``tip`` shows on hover."""
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        body = f"<title>{escape(tip)}</title>" if tip else ""
        self.items.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
                          f'fill="{fill}" stroke="{stroke}" stroke-width="{stroke_width}"{extra}>{body}</rect>')

    def circle(self, x: float, y: float, r: float, *, fill: str = INK, stroke: str = "none") -> None:
        """A circle centred at ``(x, y)``."""
        self.items.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}" stroke="{stroke}"/>')

    def text(self, x: float, y: float, text: str, *, size: float = 12, anchor: str = "start", fill: str = INK,
             bold: bool = False, mono: bool = False, italic: bool = False) -> None:
        """One line of text whose baseline starts (or, by ``anchor``, centres or ends) at ``(x, y)``."""
        style = (' font-weight="600"' if bold else "") + (' font-style="italic"' if italic else "")
        self.items.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                          f'font-family="{MONO if mono else FONT}" fill="{fill}"{style}>{escape(text)}</text>')

    def line(self, x1: float, y1: float, x2: float, y2: float, *, stroke: str = INK, width: float = 1.2,
             arrow: bool = False, dash: str | None = None) -> None:
        """A straight line, with an arrow head at its end when ``arrow``."""
        self.path(f"M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}", stroke=stroke, width=width, arrow=arrow, dash=dash)

    def path(self, d: str, *, stroke: str = INK, width: float = 1.2, arrow: bool = False,
             dash: str | None = None) -> None:
        """An SVG path (``d``), unfilled; an arrow head at its end when ``arrow`` (coloured as the stroke)."""
        marker = f' marker-end="url(#{self._marker_id(stroke)})"' if arrow else ""
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{width}"{marker}{extra}/>')

    def _marker_id(self, colour: str) -> str:
        return f"arrow-{crc32(self.title.encode()):08x}-{colour.lstrip('#')}"

    def render(self) -> str:
        """The ``<svg>`` element, on lines without blank ones."""
        colours = sorted({c for c in (INK, MUTED, BLUE, GREEN, ORANGE, PURPLE)})
        markers = "".join(
            f'<marker id="{self._marker_id(c)}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
            for c in colours)
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width:.0f} {self.height:.0f}" '
                f'width="{self.width:.0f}" role="img" aria-label="{escape(self.title)}" '
                f'style="max-width:100%;height:auto;background:#fff">')
        return "\n".join([head, f"<title>{escape(self.title)}</title>", f"<defs>{markers}</defs>",
                          *self.items, "</svg>"])

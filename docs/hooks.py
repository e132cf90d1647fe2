"""MkDocs hooks of the spec site: pages generated from the code at build time, so they cannot drift.

``<!-- hudi-spec:options -->`` on a page is replaced by the table of every write option of
``reference.options.REGISTRY``: key, default, accepted values and meaning, with the aliases each
key is also known by.
"""

from __future__ import annotations

from typing import Any

OPTIONS_MARKER = "<!-- hudi-spec:options -->"
_MIB = 1024 * 1024


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _default(value: str | None) -> str:
    """How a default reads in the table: none, empty, or the value (sizes also in MiB)."""
    if value is None:
        return "—"
    if value == "":
        return "(empty)"
    shown = f"`{value}`"
    if value.isdigit() and int(value) >= _MIB and int(value) % _MIB == 0:
        shown += f" ({int(value) // _MIB} MiB)"
    return shown


def options_table() -> str:
    """The markdown table of ``REGISTRY``, in registry order."""
    from reference.options import REGISTRY

    lines = ["| option | default | values | meaning |", "|---|---|---|---|"]
    for opt in REGISTRY:
        key = f"`{opt.key}`"
        if opt.aliases:
            key += "<br>also " + ", ".join(f"`{a}`" for a in opt.aliases)
        values = ", ".join(f"`{c}`" for c in opt.choices)
        lines.append(f"| {key} | {_default(opt.default)} | {values} | {_cell(opt.doc)} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the generated-content markers of a page."""
    if OPTIONS_MARKER in markdown:
        markdown = markdown.replace(OPTIONS_MARKER, options_table())
    return markdown

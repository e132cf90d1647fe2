"""MkDocs hooks of the spec site: pages generated from the code at build time, so they cannot drift.

``<!-- hudi-spec:options -->`` on a page is replaced by the table of every write option of the
settings registry (``spec.config.registry.WRITER_OPTIONS``): key, default, accepted values and
meaning, with the aliases each key is also known by.

``<!-- hudi-spec:settings -->`` is replaced by the table of every setting of the registry
(``spec.config.registry.SETTINGS``): key, default, the Hudi ``ConfigProperty`` that declares it
and the name it is carried as.

``<!-- hudi-spec:refused-options -->`` is replaced by the table of every option the writer refuses
(``spec.config.refused_options.REFUSED``): key, what it changes, the values accepted and what to do.

``<!-- hudi-spec:matrix -->`` is replaced by the conformance matrix rendered from the committed
run ``docs/conformance-matrix.json`` (``conformance.report.render_matrix``).

``<!-- hudi-spec:sources spec/a.py spec/b.py -->`` is replaced by a note quoting the "Source"
paragraph of each module's docstring: the Apache Hudi classes and methods the module states.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

OPTIONS_MARKER = "<!-- hudi-spec:options -->"
SETTINGS_MARKER = "<!-- hudi-spec:settings -->"
MATRIX_MARKER = "<!-- hudi-spec:matrix -->"
REFUSED_MARKER = "<!-- hudi-spec:refused-options -->"
SOURCES_MARKER = re.compile(r"<!-- hudi-spec:sources ((?:spec/[\w/]+\.py ?)+) -->")
_ROOT = Path(__file__).resolve().parent.parent
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
    """The markdown table of the writer's options, in registry order."""
    from spec.config.registry import WRITER_OPTIONS

    lines = ["| option | default | values | meaning |", "|---|---|---|---|"]
    for opt in WRITER_OPTIONS:
        key = f"`{opt.key}`"
        if opt.aliases:
            key += "<br>also " + ", ".join(f"`{a}`" for a in opt.aliases)
        values = ", ".join(f"`{c}`" for c in opt.choices)
        lines.append(f"| {key} | {_default(opt.default)} | {values} | {_cell(opt.doc)} |")
    return "\n".join(lines)


def settings_table() -> str:
    """The markdown table of every setting of the registry, in registry order."""
    from spec.config.registry import SETTINGS

    lines = ["| key | default | declared by | carried as | writer option |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        lines.append(f"| `{s.key}` | {_default(s.default)} | `{s.declared_by}` | `{s.name}` | "
                     f"{'yes' if s.writer_option else 'no: fixed'} |")
    return "\n".join(lines)


def refused_options_table() -> str:
    """The markdown table of the options the writer refuses, in the order they are matched."""
    from spec.config.refused_options import REFUSED

    lines = ["| option | changes | accepted | instead |", "|---|---|---|---|"]
    for r in REFUSED:
        key = f"`{r.key}*`" if r.key.endswith(".") else f"`{r.key}`"
        accepted = ", ".join(v if " " in v else f"`{v}`" for v in r.accepted) or "—"
        lines.append(f"| {key} | {_cell(r.concern)}: {_cell(r.does)} | {_cell(accepted)} | {_cell(r.hint)} |")
    return "\n".join(lines)


def source_paragraph(module: str) -> str:
    """The paragraph of ``module``'s docstring that starts with "Source", on one line, in Markdown."""
    doc = ast.get_docstring(ast.parse((_ROOT / module).read_text())) or ""
    for paragraph in doc.split("\n\n"):
        if paragraph.startswith("Source"):
            return " ".join(paragraph.split()).replace("``", "`")
    raise ValueError(f"{module}: its docstring has no Source paragraph")


def matrix_page() -> str:
    """The conformance matrix of the committed run (``docs/conformance-matrix.json``)."""
    import json

    from conformance.report import render_matrix

    return render_matrix(json.loads((_ROOT / "docs" / "conformance-matrix.json").read_text()))


def sources_note(modules: list[str]) -> str:
    """An admonition quoting the Source paragraph of each module."""
    lines = ['!!! info "Apache Hudi sources"', ""]
    for module in modules:
        lines += [f"    `{module}` — {source_paragraph(module)}", ""]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the generated-content markers of a page."""
    if OPTIONS_MARKER in markdown:
        markdown = markdown.replace(OPTIONS_MARKER, options_table())
    if SETTINGS_MARKER in markdown:
        markdown = markdown.replace(SETTINGS_MARKER, settings_table())
    if REFUSED_MARKER in markdown:
        markdown = markdown.replace(REFUSED_MARKER, refused_options_table())
    if MATRIX_MARKER in markdown:
        markdown = markdown.replace(MATRIX_MARKER, matrix_page())
    return SOURCES_MARKER.sub(lambda m: sources_note(m.group(1).split()), markdown)

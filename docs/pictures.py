"""MkDocs hook of the spec site's pictures: each drawn at build time from the code or a real table.

``<!-- hudi-spec:picture NAME [ARG] -->`` on a page is replaced by the picture ``NAME`` of ``PICTURES``
as an inline SVG figure (no script, nothing fetched when the page is viewed), followed, where the
picture has one, by its Mermaid source in a folded block:

- ``timeline-states VERSION``: the instant state machine of a table version, from
  ``spec.timeline.instant.TRANSITIONS`` and ``REVERSIONS``;
- ``file-groups``: the file groups of the golden table ``FILE_GROUP_TABLE`` (written by our writer),
  from its file system view; its Mermaid is what ``hudi-spec fsview TABLE --output mermaid`` prints;
- ``table-tree``: the folders and files of that golden table, each file named for what it is
  (``reference.diagrams.table_tree``);
- ``log-block``: the block frame of ``spec.file_group.log_file.log_format.BLOCK_FIELDS`` and the first block of a real
  log file of that table, cut along it;
- ``buckets``: the partitioner's worked example, from ``spec.write.partitioner.assign_buckets``;
- ``bench METRIC``: the benchmark chart of ``seconds`` or ``peak_rss_mb`` from the results JSON beside
  the performance page.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FILE_GROUP_TABLE = ROOT / "fixtures" / "tables" / "compaction-logs-mor-v8" / "table"
BENCH_JSON = ROOT / "docs" / "performance.json"
MARKER = re.compile(r"<!-- hudi-spec:picture ([\w-]+)(?: ([\w.-]+))? -->")

Picture = tuple[str, str, str | None]  # svg, caption, mermaid source (or None)


def timeline_states(version: str | None) -> Picture:
    """The state machine of table version ``version``."""
    from reference.diagrams.timeline import state_machine_mermaid, state_machine_svg

    v = int(version or 8)
    return (state_machine_svg(v), f"Instant states and the files they leave, table version {v}: drawn from "
            "<code>TRANSITIONS</code> and <code>REVERSIONS</code> in <code>spec/timeline/active_timeline.py</code>.",
            state_machine_mermaid(v))


def file_groups(_: str | None) -> Picture:
    """The file groups of the golden table over its timeline."""
    from reference.diagrams.fsview import fsview_mermaid, fsview_svg
    from spec.file_group.file_system_view import FileSystemView
    from spec.storage.hoodie_storage import Storage

    storage = Storage(str(FILE_GROUP_TABLE))
    view = FileSystemView.load(storage)
    return (fsview_svg(view, storage, "File groups of the golden table compaction-logs-mor-v8"),
            "The golden table <code>fixtures/tables/compaction-logs-mor-v8</code>, written by this project's "
            "writer (an insert; an upsert and a delete into logs; a compaction; an upsert whose key deleted before "
            "opens a new file group), drawn from its file system view.",
            fsview_mermaid(view))


def table_tree(_: str | None) -> Picture:
    """The folders and files of the golden table."""
    from reference.diagrams.table_tree import table_tree_svg

    return (table_tree_svg(FILE_GROUP_TABLE, "Folders and files of the golden table compaction-logs-mor-v8"),
            "A merge-on-read table as this project's writer left it (<code>fixtures/tables/compaction-logs-mor-v8"
            "</code>): <code>.hoodie/</code> holds the table config and the timeline, one file per state of each "
            "instant; the partition <code>a/</code> holds base files and the log files on them. Each note is what "
            "the spec's parsers read from the file's name.", None)


def log_block(_: str | None) -> Picture:
    """The frame, and the first block of the golden table's first log file."""
    from reference.diagrams.log_layout import block_layout_svg
    from spec.file_group.log_file.log_format import read_log_file
    from spec.storage.hoodie_storage import Storage

    storage = Storage(str(FILE_GROUP_TABLE))
    path = sorted(p.relative_to(FILE_GROUP_TABLE).as_posix() for p in FILE_GROUP_TABLE.glob("*/.*.log.*"))[0]
    block = read_log_file(storage, path)[0].block
    return (block_layout_svg(block), "Above, <code>BLOCK_FIELDS</code>; below, the first block of "
            f"<code>{Path(path).name}</code> in the golden table, as <code>block_parts</code> cuts it.", None)


def buckets(_: str | None) -> Picture:
    """The worked example's buckets and weights."""
    from reference.diagrams.buckets import buckets_svg

    return (buckets_svg(), "The worked example as <code>assign_buckets</code>, <code>insert_position</code> "
            "and <code>route_insert</code> compute it.", None)


def bench(metric: str | None) -> Picture:
    """A chart of the published benchmark run."""
    if str(ROOT) not in sys.path:  # the bench is a folder of the repository, not an installed package
        sys.path.insert(0, str(ROOT))
    from bench.charts import charts_from_json

    m = metric or "seconds"
    return (charts_from_json(BENCH_JSON)[m], "Drawn from <code>docs/performance.json</code>, the run the tables "
            "below show.", None)


PICTURES: dict[str, Callable[[str | None], Picture]] = {
    "timeline-states": timeline_states, "file-groups": file_groups, "table-tree": table_tree, "log-block": log_block,
    "buckets": buckets, "bench": bench,
}


def figure(name: str, arg: str | None) -> str:
    """The Markdown of one picture: an inline SVG figure and, if any, its Mermaid source folded below."""
    svg, caption, mermaid = PICTURES[name](arg)
    out = f'<figure class="hudi-picture">\n{svg}\n<figcaption>{caption}</figcaption>\n</figure>\n'
    if mermaid:
        body = "\n".join("    " + line if line else "" for line in ["```mermaid", *mermaid.splitlines(), "```"])
        out += f'\n??? example "The same as Mermaid"\n\n{body}\n'
    return out


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the picture markers of a page."""
    return MARKER.sub(lambda m: figure(m.group(1), m.group(2)), markdown)

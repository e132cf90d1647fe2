"""Bucket assignment of a worked example, drawn from ``spec.write.partitioner``'s output.

The example is the spec page's: one partition, updates of one file group, inserts that fill the
partition's small files and then new file groups. The picture shows the buckets ``assign_buckets``
made, the records each takes, and the insert weights as a ruler from 0 to 1 on which
``insert_position`` places a few keys and ``route_insert`` sends each to its bucket.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

from reference.diagrams.svg import (
    BLUE,
    BLUE_FILL,
    GREEN,
    GREEN_FILL,
    INK,
    MUTED,
    PURPLE,
    Canvas,
)
from spec.write.partitioner import (
    BucketAssignment,
    InsertBucket,
    PartitionerConfig,
    SmallFile,
    SmallFileCandidate,
    WorkloadProfile,
    assign_buckets,
    insert_position,
    route_insert,
    route_update,
    select_small_files,
)

MB = 1024 * 1024


@dataclass(frozen=True)
class WorkedExample:
    """A write into one partition: the records per file group (None: inserts), its file groups' sizes, the
    settings and average record size, and keys whose inserts the picture routes."""

    partition: str = "2024/01/01"
    counts: tuple[tuple[str | None, int], ...] = (("f1", 1000), (None, 250_000))
    candidates: tuple[SmallFileCandidate, ...] = (SmallFileCandidate("f1", 110 * MB),
                                                  SmallFileCandidate("f3", 90 * MB),
                                                  SmallFileCandidate("f2", 60 * MB))
    config: PartitionerConfig = field(default_factory=lambda: PartitionerConfig(small_file_limit=100 * MB,
                                                                                max_file_size=120 * MB))
    avg_record_size: int = 1024
    keys: tuple[str, ...] = ("trip-1000", "trip-7", "trip-42")

    def small_files(self) -> list[SmallFile]:
        """The partition's small files (copy-on-write rule)."""
        return select_small_files(self.candidates, self.config.small_file_limit, merge_on_read=False,
                                  config=self.config)

    def assign(self) -> BucketAssignment:
        """The buckets ``assign_buckets`` makes (new file id prefixes ``new-0``, ``new-1``, ...)."""
        profile = WorkloadProfile.from_counts({(self.partition, f): n for f, n in self.counts})
        ids = count()
        return assign_buckets(profile, {self.partition: self.small_files()}, self.config, self.avg_record_size,
                              lambda: f"new-{next(ids)}")


_LEFT, _RULER_W, _ROW = 20, 880, 34


def buckets_svg(example: WorkedExample | None = None) -> str:
    """The example's buckets and insert weights as an SVG picture."""
    ex = example or WorkedExample()
    a = ex.assign()
    updates = {f: n for f, n in ex.counts if f is not None}
    sizes = {c.file_id: c.base_size for c in ex.candidates}
    weights = a.insert_buckets.get(ex.partition, ())
    height = 70 + len(a.buckets) * _ROW + 170
    canvas = Canvas(_LEFT * 2 + _RULER_W, height, "Bucket assignment of the worked example")
    inserts = a.inserts.get(ex.partition, 0)
    canvas.text(_LEFT, 18, f"partition {ex.partition}: {inserts:,} inserts, "
                + ", ".join(f"{n:,} updates of {f}" for f, n in updates.items())
                + f"; max file size {ex.config.max_file_size // MB} MB, small-file limit "
                f"{ex.config.small_file_limit // MB} MB, {ex.avg_record_size:,}-byte records", size=12, fill=MUTED)
    canvas.text(_LEFT, 44, "bucket", size=11, bold=True)
    canvas.text(_LEFT + 70, 44, "kind", size=11, bold=True)
    canvas.text(_LEFT + 150, 44, "file group", size=11, bold=True)
    canvas.text(_LEFT + 330, 44, "records it takes", size=11, bold=True)
    biggest = max([*updates.values(), *a.expected_records.values(), 1])
    for b in a.buckets:
        y = 56 + b.number * _ROW
        colour, fill = (BLUE, BLUE_FILL) if b.kind == "UPDATE" else (GREEN, GREEN_FILL)
        canvas.text(_LEFT + 12, y + 17, str(b.number), size=13, bold=True, anchor="middle")
        canvas.rect(_LEFT + 60, y + 3, 74, 20, fill=fill, stroke=colour)
        canvas.text(_LEFT + 97, y + 17, b.kind, size=10.5, anchor="middle", fill=colour, bold=True)
        size = sizes.get(b.file_id)
        label = b.file_id + (f" ({size // MB} MB)" if size is not None and b.kind == "UPDATE" else " (new)")
        canvas.text(_LEFT + 150, y + 17, label, size=12, mono=True)
        x = _LEFT + 330.0
        for n, what, bar in ((updates.get(b.file_id, 0), "updates", BLUE),
                             (a.expected_records.get(b.number, 0), "inserts", GREEN)):
            if n:
                w = max(n / biggest * 380, 3)
                canvas.rect(x, y + 5, w, 16, fill=bar, stroke=bar, rx=2)
                canvas.text(x + w + 6, y + 17, f"{n:,} {what}", size=11)
                x += w + 110
    _ruler(canvas, ex, a, weights, 56 + len(a.buckets) * _ROW + 30, updates)
    return canvas.render()


def _ruler(canvas: Canvas, ex: WorkedExample, a: BucketAssignment, weights: tuple[InsertBucket, ...], y: float,
           updates: dict[str, int]) -> None:
    canvas.text(_LEFT, y, "insert weights: records / inserts, summed along 0 … 1; an insert goes where "
                "floorMod(hash, inserts) / inserts falls", size=12, fill=MUTED)
    y += 16
    start = 0.0
    for w in weights:
        x0, x1 = _LEFT + start * _RULER_W, _LEFT + w.cumulative_weight * _RULER_W
        kind = a.bucket(w.bucket).kind
        colour, fill = (BLUE, BLUE_FILL) if kind == "UPDATE" else (GREEN, GREEN_FILL)
        canvas.rect(x0, y, x1 - x0, 34, fill=fill, stroke=colour, rx=0, tip=f"bucket {w.bucket}: weight {w.weight}")
        canvas.text((x0 + x1) / 2, y + 14, f"bucket {w.bucket}", size=11, anchor="middle", bold=True)
        canvas.text((x0 + x1) / 2, y + 28, f"{w.weight:.5f}", size=10.5, anchor="middle", mono=True)
        canvas.text(x1, y + 48, f"{w.cumulative_weight:.5f}".rstrip("0").rstrip("."), size=10, anchor="end"
                    if w.cumulative_weight >= 0.99 else "middle", mono=True, fill=MUTED)
        start = w.cumulative_weight
    canvas.text(_LEFT, y + 48, "0", size=10, mono=True, fill=MUTED)
    for i, key in enumerate(ex.keys):
        r = insert_position(key, ex.partition, a)
        x = _LEFT + r * _RULER_W
        ky = y + 70 + i * 16
        canvas.line(x, ky - 10, x, y + 36, stroke=PURPLE, arrow=True)
        right = r > 0.6  # a label near the end runs leftwards
        canvas.text(x - 5 if right else x + 5, ky, f"{key}: r = {r:.6f} → bucket {route_insert(key, ex.partition, a)}",
                    size=11, fill=PURPLE, anchor="end" if right else "start")
    ky = y + 70 + len(ex.keys) * 16 + 4
    for f in updates:
        canvas.text(_LEFT, ky, f"an update of {f} → bucket {route_update(f, a)} (its file group's; no weight)",
                    size=11, fill=INK)
        ky += 16

"""The oracle's account of a table's metadata table: what of its timeline the data table's archival depends on.

A table of version 8 or 9 keeps a metadata table unless ``hoodie.metadata.enable`` is false (the writer's
``files`` partition, ``spec.metadata.writer``). Its timeline gets a deltacommit when it is created (at the first
data commit), one per data commit (commit, deltacommit, replacecommit, compaction) and one per clean, each at
the data instant's time; a data commit first compacts it once ``COMPACT_MAX_DELTA_COMMITS`` deltacommits were
requested after its latest compaction (``spec.metadata.writer.compaction_due``; the compaction's instant follows
the data instant's requested time, so that instant's own deltacommit counts for the compaction before it). A
rolled-back data instant's deltacommit is removed, or, when a compaction already merged it, the metadata table
is built anew, as after a restore (``reference.metadata.writer``, Hudi's
``HoodieBackedTableMetadataWriter``).

The data table's archival is bounded by the latest compaction (``spec.actions.archive.metadata_table_retains``):
``MetadataTimeline.compacted_during`` is the data instant whose commit ran it.

Source (Apache Hudi 1.0.x for table version 8, 1.1.x for 9; measured with 1.2.0; 0.15.x, for table version 6, keeps
the rule in ``HoodieTimelineArchiver`` and the model no version 6 metadata table): ``HoodieBackedTableMetadataWriter``
(``update``, ``compactIfNecessary``, ``validateRollback``), ``TimelineArchiverV2``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from spec.metadata.writer import COMPACT_MAX_DELTA_COMMITS
from spec.timeline.instant import Action

INIT: Final = ""
"""The creation's deltacommit (before every data instant)."""
COMMITS: Final = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION})


@dataclass(frozen=True)
class MetadataTimeline:
    """The deltacommits requested after the latest compaction (data instant times; ``INIT`` for the
    creation's) and the data instant whose commit ran that compaction (None before the first)."""

    deltas: tuple[str, ...] = (INIT,)
    compacted_during: str | None = None

    def committed(self, t: str) -> MetadataTimeline:
        """Data commit ``t`` recorded: compacted first when due, then ``t``'s deltacommit (requested before
        that compaction, so not after it)."""
        if len(self.deltas) >= COMPACT_MAX_DELTA_COMMITS:
            return MetadataTimeline((), t)
        return replace(self, deltas=(*self.deltas, t))

    def cleaned(self, t: str) -> MetadataTimeline:
        """Clean ``t`` recorded (no compaction runs before a clean's deltacommit)."""
        return replace(self, deltas=(*self.deltas, t))

    def rolled_back(self, target: str) -> MetadataTimeline:
        """Data instant ``target``'s deltacommit removed; built anew when the latest compaction merged it
        (it completed before the compaction: a data instant before the one whose commit compacted)."""
        if self.compacted_during is not None and target < self.compacted_during:
            return MetadataTimeline()
        return replace(self, deltas=tuple(d for d in self.deltas if d != target))


def metadata_enabled(config: Any) -> bool:
    """Whether a model table keeps a metadata table: version 8 or 9, ``hoodie.metadata.enable`` not false."""
    return bool(config.table_version >= 8 and str(config.option("hoodie.metadata.enable", "true")).lower() != "false")


def after_instant(meta: MetadataTimeline | None, config: Any, action: str, t: str,
                  target: tuple[str, ...] = ()) -> MetadataTimeline | None:
    """The metadata table after data-table instant ``t`` of ``action`` completed (``target``: the data instants a
    rollback undid, newest first); None when the table keeps none."""
    if not metadata_enabled(config):
        return None
    if action == Action.RESTORE:
        return None if meta is None else MetadataTimeline()
    if meta is None:
        if action not in COMMITS:
            return None
        meta = MetadataTimeline()
    if action in COMMITS:
        return meta.committed(t)
    if action == Action.CLEAN:
        return meta.cleaned(t)
    if action == Action.ROLLBACK:
        for x in target:
            meta = meta.rolled_back(x)
    return meta


__all__ = ["MetadataTimeline", "after_instant", "metadata_enabled"]

"""The corpus's clustering cases: small file groups (one per insert) clustered as Hudi's size-based plan and
sort-and-size execution cluster them, sorted by a column; a write after it updates a key of a new group; a second
clustering looks only at the partition written since (Hudi's incremental window). ``conformance.generate.corpus``
places them in the services suite."""

from __future__ import annotations

from conformance.case_kit import config as _config
from conformance.case_kit import make_case as _case
from conformance.case_kit import rec, w
from conformance.interface.ops import Case
from spec.model.operations import Cluster

SORT_BY_V = (("hoodie.clustering.plan.strategy.sort.columns", "v"),)


def clustering_small_files(tt: str, v: int) -> Case:
    return _case("clustering-small-files", tt, v, "five small file groups in two partitions (small file handling "
                 "off), an update on one, clustered sorted by v: one new group per partition replaces them, every row "
                 "keeps its commit time; an upsert after it updates a key in its new group; the second clustering "
                 "takes only the partition written since the first",
                 ["cluster", "replacecommit"], _config(tt, v, small_file_limit=0),
                 [w("insert", rec(1, 1), rec(2, 1), rec(3, 1, "b")), w("insert", rec(4, 1), rec(5, 1, "b")),
                  w("insert", rec(6, 1)), w("upsert", rec(2, 2, v="a-update")),
                  Cluster(SORT_BY_V), w("upsert", rec(4, 3, v="after")), Cluster(SORT_BY_V)])


__all__ = ["clustering_small_files"]

"""The global indexes (``spec.index.global_index``: ``GLOBAL_BLOOM``, ``GLOBAL_SIMPLE``): their settings and refusals,
the tag rule branch by branch, the model moving a key across partitions with the update-partition-path option on and
keeping it in place with it off, and the local writer doing what the model does; pure and fast. Apache Hudi's side
is ``tests/test_global_index_hudi.py`` (and the corpus cases ``global-*-index-*``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conformance.case_kit import COW, MOR, config, rec, w
from reference.config.options import parse_options
from reference.write.client import WriteClient
from spec.config.registry import BY_KEY
from spec.errors import InvalidConfig, UnsupportedOption
from spec.index.global_index import (
    DEFAULT_UPDATE_PARTITION_PATH,
    GLOBAL_BLOOM,
    GLOBAL_SIMPLE,
    UPDATE_PARTITION_PATH,
    GlobalIndexConfig,
    Location,
    MergeOutcome,
    Routed,
    Written,
    global_index_config,
    needs_merged_lookup,
    route,
)
from spec.model.operations import Stream, StreamRecord
from spec.model.queries import snapshot
from spec.model.table_model import TableModel
from spec.read.reader import read_table

ON = GlobalIndexConfig(GLOBAL_SIMPLE, True)
OFF = GlobalIndexConfig(GLOBAL_BLOOM, False)
A1 = Location("a", "f1")


def test_settings_are_hudis_and_bad_ones_are_refused() -> None:
    cfg = parse_options({"hoodie.index.type": "global_simple"})
    assert (cfg.index_type, cfg.simple_index_update_partition_path, cfg.bloom_index_update_partition_path) == (
        GLOBAL_SIMPLE, True, True)
    for index, key in UPDATE_PARTITION_PATH.items():
        assert BY_KEY[key].default == DEFAULT_UPDATE_PARTITION_PATH[index]
        assert global_index_config(index, {}, True) == GlobalIndexConfig(index, index != "RECORD_INDEX")
        assert global_index_config(index, {key: "false"}, True) == GlobalIndexConfig(index, False)
        assert global_index_config(index, {}, False) == GlobalIndexConfig(index, False)  # not partitioned: no moves
        with pytest.raises(InvalidConfig, match="not a boolean"):
            global_index_config(index, {key: "yes"}, True)
    assert global_index_config("BLOOM", {}, True) is None
    other = {UPDATE_PARTITION_PATH[GLOBAL_SIMPLE]: "false"}
    assert global_index_config(GLOBAL_BLOOM, other, True) == GlobalIndexConfig(GLOBAL_BLOOM, True)  # its own option


def test_merged_lookups_are_hudis() -> None:
    """``tagGlobalLocationBackToRecords``: merge-on-read always (either setting), a move with the option on, a delete
    under event-time ordering when the option is on; copy-on-write with the option off never."""
    for is_mor in (False, True):
        for event_time in (False, True):
            for deleting in (False, True):
                assert not needs_merged_lookup(OFF, False, event_time, "b", deleting, A1)
                assert needs_merged_lookup(OFF, True, event_time, "a", deleting, A1)
                assert needs_merged_lookup(ON, is_mor, event_time, "b", deleting, A1)
                assert needs_merged_lookup(ON, is_mor, event_time, "a", deleting, A1) == (
                    is_mor or (event_time and deleting))


def test_the_routes_are_hudis() -> None:
    assert route(ON, "b", []) == (Routed("b", None, Written.INCOMING),)  # a new key: an insert where it is named
    assert route(OFF, "b", [(A1, None)]) == (Routed("a", "f1", Written.INCOMING),)  # tagged where it is
    assert route(ON, "b", [(A1, MergeOutcome.INCOMING)]) == (Routed("a", "f1", Written.DELETE),
                                                             Routed("b", None, Written.INCOMING))  # moved
    assert route(OFF, "b", [(A1, MergeOutcome.INCOMING)]) == (Routed("a", None, Written.INCOMING),)  # MOR, off
    assert route(ON, "a", [(A1, MergeOutcome.INCOMING)]) == (Routed("a", "f1", Written.INCOMING),)
    assert route(ON, "b", [(A1, MergeOutcome.STORED)]) == (Routed("a", "f1", Written.STORED),)  # written again
    assert route(ON, "z", [(A1, MergeOutcome.DELETE)]) == (Routed("a", "f1", Written.INCOMING),)  # deleted there
    # a merge-on-read key moved before: its old base file still has it, its log deleted it
    moved = [(A1, MergeOutcome.ABSENT), (Location("b", "f2"), MergeOutcome.INCOMING)]
    assert route(ON, "c", moved) == (Routed("b", "f2", Written.DELETE), Routed("c", None, Written.INCOMING))
    assert route(ON, "c", [(A1, MergeOutcome.ABSENT)]) == (Routed("c", None, Written.INCOMING),)


def _rows(model: TableModel) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["_hoodie_partition_path"], r["p"], r["v"], r["_hoodie_commit_time"])
                  for r in snapshot(model.state))


@pytest.mark.parametrize("table_type", [COW, MOR])
def test_the_model_moves_a_key_with_the_option_on_and_keeps_it_with_it_off(table_type: str) -> None:
    results = {}
    for update in (True, False):
        model = TableModel(config(table_type, 8, index_type=GLOBAL_SIMPLE,
                                  options=((UPDATE_PARTITION_PATH[GLOBAL_SIMPLE], str(update).lower()),)))
        model.apply(w("insert", rec(1, 5), rec(2, 5), rec(3, 5)))
        first = {r[0]: r[4] for r in _rows(model)}
        model.apply(w("upsert", rec(1, 6, "b", v="moved"), rec(2, 1, "c", v="older")))
        model.apply(w("delete", rec(3, 9, "z")))
        rows = _rows(model)
        assert [r[0] for r in rows] == [1, 2]  # key 3 deleted though its delete named partition z
        results[update] = rows
        # the older upsert of key 2 loses its merge in either case: the stored row stays in a
        older = next(r for r in rows if r[0] == 2)
        assert older[1:4] == ("a", "a", "v2@5")
        # moved: the stored row of key 2 is written again (a new commit time); kept in place under COW: untouched
        assert (older[4] != first[2]) == (update or table_type == MOR)
    assert next(r for r in results[True] if r[0] == 1)[1:4] == ("b", "b", "moved")
    assert next(r for r in results[False] if r[0] == 1)[1:4] == ("a", "b", "moved")  # the file keeps p=b


def test_a_batch_is_combined_by_key_alone() -> None:
    model = TableModel(config(COW, 8, index_type=GLOBAL_BLOOM))
    model.apply(w("upsert", rec(1, 5, "a"), rec(1, 7, "b"), rec(1, 6, "c")))
    assert [(r[0], r[1]) for r in _rows(model)] == [(1, "b")]


def test_streaming_into_a_global_index_is_refused() -> None:
    model = TableModel(config(MOR, 8, index_type=GLOBAL_SIMPLE))
    with pytest.raises(UnsupportedOption, match=r"streaming write with hoodie\.index\.type=GLOBAL_SIMPLE"):
        model.apply(Stream(((StreamRecord("upsert", rec(1, 1)),),)))


@pytest.mark.parametrize(("table_type", "update"), [("COPY_ON_WRITE", True), ("MERGE_ON_READ", False),
                                                    ("MERGE_ON_READ", True)])
def test_the_local_writer_reads_what_the_model_predicts(tmp_path: Path, table_type: str, update: bool) -> None:
    index = GLOBAL_BLOOM if update else GLOBAL_SIMPLE
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index,
               UPDATE_PARTITION_PATH[index]: str(update).lower(), "hoodie.metadata.enable": "false"}
    model = TableModel(config(table_type, 8, index_type=index,
                              options=((UPDATE_PARTITION_PATH[index], str(update).lower()),)))
    client = WriteClient(str(tmp_path / "t"), engine="local")
    for op in (w("insert", rec(1, 5), rec(2, 5), rec(3, 5, "b")),
               w("upsert", rec(1, 6, "b", v="moved"), rec(2, 1, "c", v="older"), rec(4, 6, "c")),
               w("delete", rec(3, 9, "z"), rec(99, 9, "z")),
               w("upsert", rec(1, 7, "a", v="back"), rec(3, 8, "b", v="again"))):
        client.write(pa.Table.from_pylist(list(op.records)), op.operation, options)
        model.apply(op)
        got = sorted((r["id"], r["_hoodie_partition_path"], r["p"], r["v"])
                     for r in read_table(str(tmp_path / "t")).to_pylist())
        assert got == [r[:4] for r in _rows(model)], op.operation

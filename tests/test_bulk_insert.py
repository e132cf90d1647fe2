"""``spec.write.bulk_insert``: the files a bulk insert writes for a given input partitioning and sort mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec.errors import InvalidConfig
from spec.write.bulk_insert import bulk_insert_files

INPUTS = [["a", "b", "a"], ["b", "c"]]
KEYS = [["3", "1", "2"], ["5", "4"]]


def _layout(mode: str) -> list[tuple[int, str, tuple[tuple[int, int], ...]]]:
    return [(f.task, f.partition_path, f.records) for f in bulk_insert_files(INPUTS, mode, KEYS)]


def test_none_writes_a_file_per_partition_path_of_each_input_partition_in_input_order() -> None:
    assert _layout("NONE") == [(0, "a", ((0, 0), (0, 2))), (0, "b", ((0, 1),)), (1, "b", ((1, 0),)),
                               (1, "c", ((1, 1),))]


def test_partition_sort_writes_the_same_files_with_rows_in_key_order() -> None:
    assert _layout("PARTITION_SORT") == [(0, "a", ((0, 2), (0, 0))), (0, "b", ((0, 1),)), (1, "b", ((1, 0),)),
                                         (1, "c", ((1, 1),))]


def test_partition_path_repartition_writes_one_file_per_partition_path() -> None:
    assert [(p, len(r)) for _, p, r in _layout("PARTITION_PATH_REPARTITION")] == [("a", 2), ("b", 2), ("c", 1)]
    assert len({t for t, _, _ in _layout("PARTITION_PATH_REPARTITION")}) == 3


def test_global_sort_of_one_output_partition_sorts_by_partition_path_then_key() -> None:
    assert _layout("GLOBAL_SORT") == [(0, "a", ((0, 2), (0, 0))), (0, "b", ((0, 1), (1, 0))), (0, "c", ((1, 1),))]


def test_one_input_partition_gives_one_file_per_partition_path_in_every_mode() -> None:
    for mode in ("NONE", "PARTITION_SORT", "GLOBAL_SORT", "PARTITION_PATH_REPARTITION"):
        files = bulk_insert_files([["x", "y", "x", "x"]], mode)
        assert sorted(f.partition_path for f in files) == ["x", "y"], mode


def test_an_unknown_sort_mode_is_refused() -> None:
    with pytest.raises(InvalidConfig, match="not a sort mode"):
        bulk_insert_files(INPUTS, "RANDOM")


@pytest.mark.parametrize("version", [6, 8, 9])
def test_the_reference_completes_a_bulk_insert_into_merge_on_read_as_a_commit(tmp_path: Path, version: int) -> None:
    """``spec.config.write_operation.write_action``: Apache Hudi's row writer completes a bulk insert into a
    merge-on-read table as a ``commit`` (measured on versions 6, 8 and 9; bulk-insert-none-mor-v8); the
    upsert after it is a deltacommit and a read merges both."""
    import pyarrow as pa

    from reference.api import HudiTable
    from spec.read.reader import read_table

    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.write.table.version": str(version)}
    table = HudiTable(str(tmp_path / "t"), engine="local")
    first = table.write(pa.Table.from_pylist([{"id": 1, "p": "a", "ts": 1, "v": "x"},
                                              {"id": 2, "p": "a", "ts": 1, "v": "y"}]), "bulk_insert", opts)
    second = table.write(pa.Table.from_pylist([{"id": 1, "p": "a", "ts": 2, "v": "z"}]), "upsert", opts)
    # a bulk insert into the existing table takes the table's type: a deltacommit (duplicates-bulk-insert-mor-v8)
    third = table.write(pa.Table.from_pylist([{"id": 3, "p": "a", "ts": 1, "v": "w"}]), "bulk_insert", opts)
    assert (first.action, second.action, third.action) == ("commit", "deltacommit", "deltacommit")
    rows = read_table(str(tmp_path / "t")).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "z"), (2, "y"), (3, "w")]

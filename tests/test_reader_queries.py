"""The reader's query forms on the real tables: one Arrow table per file slice, partition pruning
(against hudi-rs's partition filters), column projection, and typed errors for bad queries."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spec.errors import InvalidOperation
from spec.read.reader import TableReader, iter_table, read_table
from spec.schema.table_schema import META_FIELDS, PARTITION_PATH
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset


def test_iterator_yields_one_table_per_slice_and_adds_up_to_the_table(any_real_table: RealTable) -> None:
    path = str(any_real_table.path)
    reader = TableReader(path)
    parts = list(iter_table(path))
    slices = reader.view().latest_slices()
    assert len(parts) <= len(slices)
    assert all(p.num_rows > 0 for p in parts)
    whole = read_table(path)
    joined = pa.concat_tables(parts, promote_options="permissive") if parts else None
    assert as_multiset(joined) == as_multiset(whole)
    for part in parts:  # a part is one file group's rows: one partition, one file id
        if reader.config.populate_meta_fields:
            assert len(set(part.column(PARTITION_PATH).to_pylist())) == 1
            assert len({name.split("_")[0] for name in part.column("_hoodie_file_name").to_pylist()}) == 1


def _hudi_rs_partition(path: str, fields: tuple[str, ...], partition: str) -> pa.Table | None:
    """hudi-rs's read with an equality filter on each partition field, the values from the path."""
    import hudi
    from hudi import HudiReadOptions

    values = [seg.split("=", 1)[-1] for seg in partition.split("/")]
    filters = [(f, "=", v) for f, v in zip(fields, values, strict=True)]
    batches = hudi.HudiTableBuilder.from_base_uri(path).build().read(HudiReadOptions().with_filters(filters))
    return pa.Table.from_batches(batches) if batches else None


def test_partition_pruning_reads_exactly_the_partitions_rows(any_real_table: RealTable) -> None:
    path = str(any_real_table.path)
    reader = TableReader(path)
    partitions = reader.view().partitions()
    if partitions in ([], [""]):
        assert as_multiset(read_table(path, partition_filter=[""])) == as_multiset(read_table(path))
        return
    fields = reader.config.partition_fields
    drop = () if reader.config.populate_meta_fields else META_FIELDS
    seen: list[str] = []
    for p in partitions:
        ours = read_table(path, partition_filter=[p])
        def only(x: str, p: str = p) -> bool:
            return x == p

        assert as_multiset(read_table(path, partition_filter=only)) == as_multiset(ours)
        assert ours.num_rows > 0
        seen += as_multiset(ours)
        if reader.config.populate_meta_fields:
            assert set(ours.column(PARTITION_PATH).to_pylist()) == {p}
        if reader.config.keygen_type != "TIMESTAMP" and "Timestamp" not in (reader.config.keygen_class or ""):
            # the partition path holds the field values: hudi-rs's filter selects the same rows
            assert as_multiset(ours, drop) == as_multiset(_hudi_rs_partition(path, fields, p), drop), p
    assert sorted(seen) == as_multiset(read_table(path))
    assert read_table(path, partition_filter=["no-such-partition"]).num_rows == 0


def test_column_projection_in_every_query(real_tables: list[RealTable]) -> None:
    table = next(t for t in real_tables if t.name.endswith("v8_trips_8i3u1d"))
    path = str(table.path)
    cols = ["uuid", "fare", "_hoodie_commit_time"]
    reader = TableReader(path)
    commits = reader.timeline.commits_timeline().instants
    queries: list[dict[str, object]] = [{}, {"query": "read_optimized"}, {"as_of": commits[2].requested},
                                        {"query": "incremental", "begin": commits[1].completed}]
    for kw in queries:
        full = read_table(path, **kw)  # type: ignore[arg-type]
        projected = read_table(path, columns=cols, **kw)  # type: ignore[arg-type]
        assert projected.column_names == cols
        assert as_multiset(projected) == as_multiset(full.select(cols)), kw
        for part in iter_table(path, columns=cols, **kw):  # type: ignore[arg-type]
            assert part.column_names == cols


def test_bad_queries_raise_typed_errors(real_tables: list[RealTable]) -> None:
    path = str(next(t for t in real_tables if t.name.endswith("v6_trips_8i1u")).path)
    with pytest.raises(InvalidOperation, match="unknown query type"):
        read_table(path, "latest")
    with pytest.raises(InvalidOperation, match="not an instant time"):
        read_table(path, as_of="2025-01-01")
    with pytest.raises(InvalidOperation, match="begin/end apply to incremental"):
        read_table(path, begin="20250101000000000")
    with pytest.raises(InvalidOperation, match="no column 'nope'"):
        read_table(path, columns=["uuid", "nope"])


def test_time_travel_before_the_first_commit_is_empty(real_tables: list[RealTable]) -> None:
    path = str(next(t for t in real_tables if t.name.endswith("v6_trips_8i1u")).path)
    first = TableReader(path).timeline.commits_timeline().instants[0].requested
    before = str(int(first) - 1)
    assert read_table(path, as_of=before).num_rows == 0
    assert read_table(path, as_of=first).num_rows == 8  # the 8 inserts of the first deltacommit
    assert read_table(path, "incremental", end=before).num_rows == 0

"""File groups and slices (spec.file_group.file_system_view): the visibility and slicing rules of
docs/spec/file_system_view.md on
hand-made listings, then every real table's latest slices against hudi-rs's ``get_file_slices``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from spec.config.table_config import MERGE_ON_READ, TableConfig
from spec.file_group.file_naming import parse_log_file_name
from spec.file_group.file_system_view import DataFile, FileSlice, FileSystemView, build_file_groups, list_data_files
from spec.read.reader import TableReader
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from tests.conftest import RealTable

T1, T2, T3, T4, T5 = (f"2025010100000{i}000" for i in range(1, 6))
V6 = TableConfig.create("t", MERGE_ON_READ, 6, ("id",), "ts")
V8 = TableConfig.create("t", MERGE_ON_READ, 8, ("id",), "ts")


def base(file_id: str, instant: str, partition: str = "p") -> DataFile:
    return DataFile(partition, f"{file_id}_0-1-1_{instant}.parquet")


def log(file_id: str, instant: str, version: int = 1, partition: str = "p") -> DataFile:
    return DataFile(partition, f".{file_id}_{instant}.log.{version}_0-1-1")


def v6_timeline(*names: str) -> Timeline:
    return Timeline.from_file_names(names, 1)


def v8_timeline(*names: str) -> Timeline:
    return Timeline.from_file_names(names, 2)


def shape(view: FileSystemView) -> list[tuple[str, str, str | None, list[str]]]:
    """(file id, base instant, base file, log files) of each latest slice."""
    return shape_of(view.latest_slices())


def slices(view: FileSystemView, file_id: str) -> list[tuple[str, int]]:
    group = view.group("p", file_id)
    assert group is not None
    return [(s.base_instant, len(s.log_files)) for s in group.slices]


def test_v6_slices_by_base_instant_and_logs_by_the_instant_in_their_name() -> None:
    tl = v6_timeline(f"{T1}.deltacommit", f"{T2}.deltacommit", f"{T3}.commit")
    files = [base("f", T1), log("f", T1), log("f", T1, 2), base("f", T3), log("f", T3)]
    view = FileSystemView.build(files, tl, V6)
    assert slices(view, "f") == [(T1, 2), (T3, 1)]
    assert shape(view) == [("f", T3, base("f", T3).name, [log("f", T3).name])]


def test_v6_base_of_an_incomplete_instant_is_invisible_logs_are_not_filtered_by_name() -> None:
    tl = v6_timeline(f"{T1}.deltacommit", f"{T2}.commit.requested", f"{T2}.inflight",
                     f"{T3}.deltacommit.requested")
    files = [base("f", T1), base("f", T2), log("f", T1), base("g", T3)]
    view = FileSystemView.build(files, tl, V6)
    # T2's base file and the group only T3 wrote are invisible; the log (named by base T1) stays:
    # its blocks are filtered when scanned
    assert shape(view) == [("f", T1, base("f", T1).name, [log("f", T1).name])]


def test_an_instant_before_the_active_timeline_counts_as_completed() -> None:
    tl = v6_timeline(f"{T3}.commit")  # T1 archived
    view = FileSystemView.build([base("f", T1), base("g", T3)], tl, V6)
    assert [s.file_id for s in view.latest_slices()] == ["f", "g"]


def test_v8_logs_join_slices_by_their_deltacommit_completion_time() -> None:
    # D1 completes before the compaction T3 is requested; D2 starts before T3 and completes after it
    tl = v8_timeline(f"{T1}_{T1[:-3]}100.deltacommit", f"{T2}_{T2[:-3]}500.deltacommit",
                     f"{T3}.compaction.requested", f"{T3}_{T4}.commit",
                     f"{T2[:-3]}200_{T3[:-3]}500.deltacommit")
    d2 = f"{T2[:-3]}200"
    files = [base("f", T1), log("f", T2), log("f", d2), base("f", T3)]
    view = FileSystemView.build(files, tl, V8)
    assert slices(view, "f") == [(T1, 1), (T3, 1)]
    assert [f.name for f in view.latest_slices()[0].log_files] == [log("f", d2).name]


def test_v8_files_of_incomplete_instants_are_invisible() -> None:
    tl = v8_timeline(f"{T1}_{T1[:-3]}100.deltacommit", f"{T2}.deltacommit.inflight", f"{T3}.commit.requested")
    files = [base("f", T1), log("f", T2), base("f", T3)]
    assert shape(FileSystemView.build(files, tl, V8)) == [("f", T1, base("f", T1).name, [])]


def test_v8_log_only_group_keeps_one_slice() -> None:
    tl = v8_timeline(f"{T1}_{T1[:-3]}100.deltacommit", f"{T2}_{T2[:-3]}100.deltacommit")
    (group,) = build_file_groups([log("f", T1), log("f", T2)], tl, 8)
    assert [(s.base_instant, len(s.log_files)) for s in group.slices] == [(T1, 2)]


@pytest.mark.parametrize("version", [6, 8])
def test_a_pending_compaction_slice_is_read_with_the_slice_before_it(version: int) -> None:
    if version == 6:
        tl = v6_timeline(f"{T1}.deltacommit", f"{T2}.compaction.requested", f"{T3}.deltacommit")
        files = [base("f", T1), log("f", T1), log("f", T2)]  # v6: the log after the plan is named by T2
    else:
        tl = v8_timeline(f"{T1}_{T1[:-3]}100.deltacommit", f"{T2}.compaction.requested",
                         f"{T3}_{T3[:-3]}100.deltacommit", f"{T1[:-3]}500_{T1[:-3]}600.deltacommit")
        files = [base("f", T1), log("f", f"{T1[:-3]}500"), log("f", T3)]
    view = FileSystemView.build(files, tl, V6 if version == 6 else V8)
    (sl,) = view.latest_slices()
    assert (sl.base_instant, sl.base_file, len(sl.log_files)) == (T1, files[0], 2)


def test_replaced_file_groups_are_gone_from_the_replacecommit_on() -> None:
    tl = v6_timeline(f"{T1}.commit", f"{T2}.replacecommit", f"{T3}.commit")
    files = [base("f", T1), base("g", T2), base("h", T3)]
    view = FileSystemView.build(files, tl, V6, replacements={("p", "f"): T2})
    assert [s.file_id for s in view.latest_slices()] == ["g", "h"]
    assert [s.file_id for s in view.latest_file_slices("p", as_of=T1)] == ["f"]
    assert [s.file_id for s in view.latest_file_slices("p", as_of=T2)] == ["g"]


def test_time_travel_cuts_slices_and_logs_at_the_query_instant() -> None:
    tl = v8_timeline(f"{T1}_{T1[:-3]}100.commit", f"{T2}_{T2[:-3]}100.deltacommit",
                     f"{T3}_{T3[:-3]}100.commit", f"{T4}_{T4[:-3]}100.deltacommit")
    files = [base("f", T1), log("f", T2), base("f", T3), log("f", T4), base("g", T3)]
    at = {t: shape(FileSystemView.build(files, tl, V8, as_of=t)) for t in (T1, T2, T3, T4)}
    assert at[T1] == [("f", T1, base("f", T1).name, [])]
    assert at[T2] == [("f", T1, base("f", T1).name, [log("f", T2).name])]
    assert at[T3] == [("f", T3, base("f", T3).name, []), ("g", T3, base("g", T3).name, [])]
    assert at[T4][0][3] == [log("f", T4).name]
    latest = FileSystemView.build(files, tl, V8)
    for t, expected in at.items():
        assert shape_of(latest.latest_file_slices("p", as_of=t)) == expected


def test_queries_by_partition_and_base_files() -> None:
    tl = v6_timeline(f"{T1}.deltacommit", f"{T2}.deltacommit")
    files = [base("f", T1, "a"), log("f", T1, 1, "a"), base("g", T2, "b"), log("h", T2, 1, "b")]
    view = FileSystemView.build(files, tl, V6)
    assert view.partitions() == ["a", "b"]
    assert [g.file_id for g in view.all_file_groups("b")] == ["g", "h"]
    assert [f.name for f in view.latest_base_files()] == [files[0].name, files[2].name]
    assert [f.name for f in view.latest_base_files("b")] == [files[2].name]
    assert shape_of(view.latest_file_slices("a")) == [("f", T1, files[0].name, [files[1].name])]


def shape_of(sls: Sequence[FileSlice]) -> list[tuple[str, str, str | None, list[str]]]:
    """(file id, base instant, base file, log files) of each slice."""
    return [(s.file_id, s.base_instant, s.base_file.name if s.base_file else None,
             [f.name for f in s.log_files]) for s in sls]


# --- real tables against hudi-rs -------------------------------------------------------------


def _hudi_rs_slices(path: str, as_of: str | None) -> list[tuple[str, str, str, tuple[str, ...]]]:
    import hudi
    from hudi import HudiReadOptions

    table = hudi.HudiTableBuilder.from_base_uri(path).build()
    opts = HudiReadOptions() if as_of is None else HudiReadOptions().with_as_of_timestamp(as_of)
    return sorted((s.partition_path, s.file_id, s.base_file_name, tuple(s.log_file_names))
                  for s in table.get_file_slices(opts))


def test_latest_slices_equal_hudi_rs(any_real_table: RealTable) -> None:
    """For every real table, at the latest instant and as of every completed instant: the same file
    groups, base files and log files as hudi-rs. hudi-rs lists every log file of the slice whatever
    its instant and filters blocks when reading; v8 names logs by their deltacommit, so a v8 log
    after the query instant is compared as absent here."""
    path = str(any_real_table.path)
    reader = TableReader(path)
    if reader.timeline.latest_completed() is None:
        assert FileSystemView.load(reader.storage).latest_slices() == []
        return
    listing = list_data_files(Storage(path))
    completed = reader.timeline.completed().instants
    points = sorted({t for i in completed for t in (i.requested, i.completed) if t})
    for as_of in [None, *points]:
        view = FileSystemView.load(reader.storage, as_of=as_of, files=listing)
        ours = sorted((s.partition_path, s.file_id, s.base_file.name if s.base_file else "",
                       tuple(f.name for f in s.log_files)) for s in view.latest_slices())
        theirs = _hudi_rs_slices(path, as_of)
        if reader.config.table_version >= 8 and as_of is not None:
            theirs = [(p, f, b, tuple(x for x in logs if parse_log_file_name(x).instant <= as_of))
                      for p, f, b, logs in theirs]
        assert ours == theirs, as_of

"""Commit metadata: every real commit file parses and round-trips; v6 JSON is byte-identical."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.commit_metadata import CommitMetadata, format_commit_metadata, parse_commit_metadata, write_stat
from spec.errors import MetadataFormatError
from spec.timeline import Timeline, format_instant_file_name, timeline_dir
from tests.conftest import RealTable


def test_real_commit_files_round_trip(real_table: RealTable) -> None:
    timeline = Timeline.load(str(real_table.path))
    folder = real_table.path / timeline_dir(timeline.layout)
    for inst in timeline.commits_timeline().instants:
        data = (folder / format_instant_file_name(inst, timeline.layout)).read_bytes()
        md = parse_commit_metadata(data)
        assert md.partition_to_write_stats, "a completed write lists the files it wrote"
        assert (md.partition_to_replace_file_ids is not None) == (inst.action == "replacecommit")
        again = format_commit_metadata(md, real_table.table_version)
        assert parse_commit_metadata(again) == md
        if real_table.table_version == 6:
            assert again == data, "v6 JSON is written exactly as Jackson writes it"
        for stat in md.all_write_stats():
            assert (real_table.path / stat.path).exists() or inst.action == "replacecommit" or stat.is_log


names = st.text(alphabet="abcdefghij0123456789=/", min_size=0, max_size=12)
counts = st.integers(0, 10**9)


@st.composite
def metadata(draw: st.DrawFn) -> CommitMetadata:
    parts = draw(st.lists(names, max_size=3, unique=True))
    stats = {p: tuple(write_stat(fileId=f"f{i}-0", path=f"{p}/f{i}-0_0-1-1_20240101000000000.parquet",
                                 partitionPath=p, numWrites=draw(counts), numInserts=draw(counts),
                                 totalWriteBytes=draw(counts), fileSizeInBytes=draw(counts))
                      for i in range(draw(st.integers(0, 3))))
             for p in parts}
    replace = draw(st.one_of(st.none(), st.dictionaries(names, st.lists(names, max_size=2).map(tuple), max_size=2)))
    return CommitMetadata(stats, draw(st.booleans()), draw(st.dictionaries(names, names, max_size=3)),
                          draw(st.sampled_from(["UPSERT", "INSERT", "BULK_INSERT", "COMPACT"])), replace)


@pytest.mark.parametrize("version", [6, 8])
@given(md=metadata())
def test_round_trip(version: int, md: CommitMetadata) -> None:
    assert parse_commit_metadata(format_commit_metadata(md, version)) == md


def test_empty_file_is_empty_metadata_and_garbage_is_typed() -> None:
    assert parse_commit_metadata(b"") == CommitMetadata()
    with pytest.raises(MetadataFormatError):
        parse_commit_metadata(b"{not json")
    with pytest.raises(MetadataFormatError):
        parse_commit_metadata(b"Obj\x01garbage")

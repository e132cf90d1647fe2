"""The archived timeline's formats (``spec.timeline.lsm_timeline``, ``spec.timeline.archived_timeline``,
``spec.file_group.log_file.archived_log``): each parse/format pair round-trips, damage is a typed error,
and the completion times of archived instants answer ``Timeline.completion_time`` — read once, and only
for instants older than the active timeline.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidName, MetadataFormatError
from spec.file_group.log_file.archived_log import (
    ARCHIVE_BATCH,
    archive_log_name,
    format_archive_blocks,
    is_archive_log_name,
    parse_archive_log,
)
from spec.file_group.log_file.log_format import read_blocks
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.archived_completions import ArchivedCompletions
from spec.timeline.archived_timeline import (
    archived_instants_of_entries,
    format_archived_entry,
    parse_archived_entry,
)
from spec.timeline.avro_model import (
    HoodieActionInstant,
    HoodieCleanerPlan,
    HoodieCleanFileInfo,
    HoodieCompactionOperation,
    HoodieCompactionPlan,
    HoodieInstantInfo,
    HoodieRollbackMetadata,
    format_avro_metadata,
    parse_timeline_content,
)
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata, write_stat
from spec.timeline.instant import Action, Instant, State
from spec.timeline.lsm_timeline import (
    HISTORY_DIR,
    LsmFileName,
    LsmInstant,
    ManifestEntry,
    format_lsm_file,
    format_manifest,
    format_version,
    latest_snapshot_version,
    manifest_path,
    parse_lsm_file,
    parse_lsm_file_name,
    parse_manifest,
    parse_version,
    read_completion_times,
)

T = [f"2024010100000{i}000" for i in range(10)]
times = st.integers(10**16, 10**17 - 1).map(str)
blobs = st.none() | st.binary(min_size=1, max_size=40)


# --- the LSM timeline -------------------------------------------------------------------------------

@given(st.lists(st.builds(LsmInstant, times, st.none() | times, st.sampled_from(["commit", "deltacommit", "clean"]),
                          blobs, blobs), max_size=12))
def test_lsm_files_round_trip(rows: list[LsmInstant]) -> None:
    assert parse_lsm_file(format_lsm_file(rows)) == tuple(rows)


def test_lsm_file_footer_is_parquet_avros() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(pa.BufferReader(format_lsm_file([LsmInstant(T[1], T[2], "commit")]))).metadata.metadata
    assert meta[b"writer.model.name"] == b"avro"
    assert b'"name":"HoodieLSMTimelineInstant"' in meta[b"parquet.avro.schema"]


@given(st.lists(st.builds(ManifestEntry, st.from_regex(r"[0-9]{17}_[0-9]{17}_[0-9]\.parquet", fullmatch=True),
                          st.integers(0, 2**40)), max_size=6))
def test_manifests_round_trip(entries: list[ManifestEntry]) -> None:
    data = format_manifest(entries)
    assert parse_manifest(data) == tuple(entries)
    assert data.startswith(b'{\n  "files" : [') or data == b'{\n  "files" : [ ]\n}'


@given(st.integers(0, 10**6))
def test_version_files_round_trip(n: int) -> None:
    assert parse_version(format_version(n)) == n


@given(times, times, st.integers(0, 9))
def test_lsm_file_names_round_trip(a: str, b: str, layer: int) -> None:
    name = LsmFileName(a, b, layer)
    assert parse_lsm_file_name(name.format()) == name


@pytest.mark.parametrize("name", ["manifest_1", "_version_", "1_2.parquet", "a_b_0.parquet", "1_2_10.parquet"])
def test_other_names_are_not_lsm_files(name: str) -> None:
    with pytest.raises(InvalidName):
        parse_lsm_file_name(name)


@pytest.mark.parametrize("data", [b"not json", b"[1, 2]", b'{"files": 3}', b'{"files": [{"fileLen": 1}]}'])
def test_a_damaged_manifest_is_a_typed_error(data: bytes) -> None:
    with pytest.raises(MetadataFormatError) as info:
        parse_manifest(data, "manifest_7")
    assert "manifest_7" in info.value.message and info.value.hint


def _history(storage: Storage, files: dict[str, list[LsmInstant]], version: int, version_file: bool = True) -> None:
    for name, rows in files.items():
        storage.write_atomic(f"{HISTORY_DIR}/{name}", format_lsm_file(rows))
    storage.write_atomic(manifest_path(version), format_manifest(
        [ManifestEntry(n, storage.size(f"{HISTORY_DIR}/{n}")) for n in files]))
    if version_file:
        storage.write_atomic(f"{HISTORY_DIR}/_version_", format_version(version))


def test_readers_read_only_what_the_latest_manifest_names(tmp_path: Path) -> None:
    """A data file no manifest names (an archival killed before its manifest) is never read; without a version
    file the highest manifest is the latest snapshot (``LSMTimeline.latestSnapshotVersion``)."""
    storage = Storage(str(tmp_path))
    first = LsmFileName(T[1], T[2]).format()
    _history(storage, {first: [LsmInstant(T[1], T[3], "deltacommit"), LsmInstant(T[2], None, "clean")]}, 1)
    storage.write_atomic(f"{HISTORY_DIR}/{LsmFileName(T[4], T[5]).format()}",
                         format_lsm_file([LsmInstant(T[4], T[6], "deltacommit")]))
    assert read_completion_times(storage) == {T[1]: T[3], T[2]: T[2]}  # no completion time: the requested time
    storage.delete(f"{HISTORY_DIR}/_version_")
    assert latest_snapshot_version(storage) == 1


def test_archived_completion_times_are_read_once_and_only_when_the_active_timeline_does_not_know() -> None:
    loads: list[int] = []

    def load() -> dict[str, str]:
        loads.append(1)
        return {T[1]: T[2], T[6]: T[7]}

    archived = ArchivedCompletions(load)
    timeline = Timeline.from_file_names([f"{T[0]}.clean.requested", f"{T[3]}.deltacommit.requested",
                                         f"{T[4]}_{T[5]}.deltacommit"], 2).with_archived(archived)
    assert timeline.completion_time(T[4]) == T[5] and not loads  # on the active timeline
    assert timeline.completion_time(T[3]) is None and not loads  # pending
    assert timeline.completion_time(T[1]) == T[2]
    assert timeline.completion_time(T[6]) == T[7]  # archived though newer than the pending clean at T[0]
    assert timeline.completion_time(T[8]) is None
    assert timeline.filter(lambda i: i.is_completed).completion_time(T[1]) == T[2]
    assert loads == [1]
    assert timeline.is_completed_before(T[3], T[1]) and not timeline.is_completed_before(T[2], T[1])


# --- the version-6 archive --------------------------------------------------------------------------------

def _contents() -> list[tuple[Instant, bytes]]:
    stat = write_stat(fileId="f1", path="p/f1_1-0-1_x.parquet", partitionPath="p", numWrites=3)
    commit = format_commit_metadata(CommitMetadata({"p": (stat,)}, False, {"schema": "{}"}, "UPSERT"), 6)
    plan = format_avro_metadata(HoodieCleanerPlan(
        earliest_instant_to_retain=HoodieActionInstant(timestamp=T[1], action="commit", state="COMPLETED"),
        policy="KEEP_LATEST_COMMITS", version=2,
        file_paths_to_be_deleted_per_partition={"p": (HoodieCleanFileInfo(file_path="/t/p/a.parquet",
                                                                          is_bootstrap_base_file=False),)}), 6)
    compaction = format_avro_metadata(HoodieCompactionPlan(operations=(HoodieCompactionOperation(
        base_instant_time=T[1], delta_file_paths=(".f1_1.log.1_0-1-0",), file_id="f1", partition_path="p"),),
        version=2), 6)
    rollback = format_avro_metadata(HoodieRollbackMetadata(
        start_rollback_time=T[5], time_taken_in_millis=3, total_files_deleted=0, commits_rollback=(T[4],),
        partition_metadata={}, version=1, instants_rollback=(HoodieInstantInfo(commit_time=T[4], action="commit"),)),
        6)
    return [(Instant(T[1], Action.COMMIT, State.REQUESTED), b""),
            (Instant(T[1], Action.COMMIT, State.INFLIGHT), commit),
            (Instant(T[1], Action.COMMIT, State.COMPLETED), commit),
            (Instant(T[2], Action.CLEAN, State.REQUESTED), plan),
            (Instant(T[3], Action.COMPACTION, State.INFLIGHT), compaction),
            (Instant(T[5], Action.ROLLBACK, State.COMPLETED), rollback)]


@pytest.mark.parametrize("case", range(len(_contents())))
def test_archived_entries_round_trip(case: int) -> None:
    """An entry reads back as the instant and the content its timeline file held."""
    inst, content = _contents()[case]
    back = parse_archived_entry(format_archived_entry(inst, content, T[9]))
    assert back.instant == inst and back.state_transition_time == T[9]
    assert back.content == (parse_timeline_content(inst, content) if content else None)


def test_archived_logs_round_trip_ten_entries_a_block() -> None:
    entries = [format_archived_entry(i, c, T[9]) for i, c in _contents()] * 3
    data = format_archive_blocks(entries, 6)
    assert parse_archive_log(data) == entries
    assert len([r for r in read_blocks(data) if r.block is not None]) == -(-len(entries) // ARCHIVE_BATCH)
    assert parse_archive_log(data[:-5]) == entries[:ARCHIVE_BATCH * (len(entries) // ARCHIVE_BATCH)]  # torn tail


def test_archived_instants_collapse_to_the_highest_state() -> None:
    entries = [format_archived_entry(i, c) for i, c in _contents()]
    listed = [(a.requested, a.action, a.state) for a in archived_instants_of_entries(entries + entries[:2])]
    assert listed == [(T[1], "commit", "COMPLETED"), (T[2], "clean", "REQUESTED"), (T[3], "compaction", "INFLIGHT"),
                      (T[5], "rollback", "COMPLETED")]


def test_archive_log_names() -> None:
    assert archive_log_name(1) == ".commits_.archive.1_1-0-1"
    assert is_archive_log_name(archive_log_name(12)) and not is_archive_log_name(".f1_1.log.1_0-1-0")


def test_files_of_archived_instants_are_listed_when_the_metadata_table_is_built() -> None:
    """An archived commit newer than a clean left pending on the active timeline still wrote committed files."""
    from spec.metadata.writer import listed_at_initialization

    timeline = Timeline.from_file_names([f"{T[0]}.clean.requested", f"{T[5]}_{T[6]}.commit",
                                         f"{T[7]}.commit.requested"], 2)
    archived = timeline.with_archived(ArchivedCompletions({T[2]: T[3]}))
    assert listed_at_initialization(T[2], archived) and not listed_at_initialization(T[2], timeline)
    assert listed_at_initialization(T[5], archived) and not listed_at_initialization(T[7], archived)
    assert not listed_at_initialization(T[4], archived)  # neither active nor archived: a write that is gone


def test_the_archived_entrys_strings_are_java_strings_as_in_hudis_generated_schema() -> None:
    """Apache Hudi's archiver writes the schema of its generated ``HoodieArchivedMetaEntry`` class into the block
    header, whose strings carry ``"avro.java.string":"String"``; Hudi 1.2.0's ``ArchivedTimelineLoaderV1`` casts
    ``commitTime`` to ``String`` and fails on a header without it (measured with ``show_archived_commits``:
    ``tests/test_apache_hudi_reads.py``)."""
    from spec.timeline.archived_timeline import archived_entry_schema

    for version in (6, 8, 9):
        fields = {f["name"]: f["type"] for f in archived_entry_schema(version)["fields"]}
        for name in ("commitTime", "actionType", "actionState", "stateTransitionTime"):
            assert fields[name] == ["null", {"type": "string", "avro.java.string": "String"}], (version, name)

"""The LSM timeline of table versions 8 and 9 (``spec.timeline.lsm_timeline``): history file names, manifests, the
version file, the rows; and a version 9 table archived by the reference, read back by those rules alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from reference.executors import archive as arch
from spec.actions.archive import ArchiveConfig
from spec.config.table_config import COPY_ON_WRITE, TableConfig
from spec.errors import InvalidName, MetadataFormatError
from spec.storage.hoodie_storage import Storage
from spec.timeline.commit_metadata import CommitMetadata, format_commit_metadata
from spec.timeline.instant import Action, format_instant_time
from spec.timeline.layout import HISTORY_DIRS
from spec.timeline.lsm_timeline import (
    HISTORY_DIR,
    LSM_INSTANT_SCHEMA,
    VERSION_FILE,
    LsmFileName,
    ManifestEntry,
    format_manifest,
    format_version,
    latest_snapshot_version,
    manifest_path,
    new_file_name,
    parse_lsm_file_name,
    parse_manifest,
    plan_bytes,
)


def test_history_file_names() -> None:
    f = LsmFileName("20250101000000000", "20250101000500000", 1)
    assert f.format() == "20250101000000000_20250101000500000_1.parquet" and parse_lsm_file_name(f.format()) == f
    for bad in ("a_b_0.parquet", "1_2_10.parquet", "1_2_0.parq", "manifest_1"):
        with pytest.raises(InvalidName):
            parse_lsm_file_name(bad)
    # named after the first and last *requested* time: an instant requested last but completed first still
    # ends the name (Hudi's page says the greatest completion time)
    assert new_file_name(["20250101000500000", "20250101000000000"]) == LsmFileName("20250101000000000",
                                                                                    "20250101000500000", 0)
    with pytest.raises(MetadataFormatError):
        new_file_name([])


def test_manifests_and_the_version_file(tmp_path: Path) -> None:
    entries = [ManifestEntry("1_2_0.parquet", 10), ManifestEntry("3_4_0.parquet", 20)]
    text = format_manifest(entries)
    # Jackson's default pretty printer: objects one field a line, arrays inline
    assert text == (b'{\n  "files" : [ {\n    "fileName" : "1_2_0.parquet",\n    "fileLen" : 10\n  }, {\n'
                    b'    "fileName" : "3_4_0.parquet",\n    "fileLen" : 20\n  } ]\n}')
    assert parse_manifest(text) == tuple(entries) and parse_manifest(format_manifest([])) == ()
    for bad in (b"[", b'{"files": [{"fileName": 3}]}', b'{"files": 3}'):
        with pytest.raises(MetadataFormatError):
            parse_manifest(bad)
    assert manifest_path(3) == f"{HISTORY_DIR}/manifest_3"
    storage = Storage(tmp_path / "t")
    assert latest_snapshot_version(storage) == -1  # no history
    for v in (1, 2):
        storage.write_atomic(manifest_path(v), format_manifest(entries))
    storage.write_atomic(f"{HISTORY_DIR}/1_2_0.parquet", b"")
    assert latest_snapshot_version(storage) == 2  # without a version file: the highest manifest
    storage.write_atomic(f"{HISTORY_DIR}/{VERSION_FILE}", format_version(1))
    assert latest_snapshot_version(storage) == 1  # the version file wins
    storage.write_atomic(f"{HISTORY_DIR}/{VERSION_FILE}", b"garbage")
    assert latest_snapshot_version(storage) == 2  # a damaged one is passed over


def test_which_file_is_a_rows_plan() -> None:
    assert plan_bytes(Action.CLEAN, b"plan", b"x") == b"plan"
    assert plan_bytes(Action.COMPACTION, b"plan", None) == b"plan"
    assert plan_bytes(Action.REPLACE_COMMIT, b"req", b"inflight") == b"inflight"
    assert plan_bytes(Action.CLUSTERING, b"req", b"") == b"req"
    assert plan_bytes(Action.COMMIT, b"", b"") is None and plan_bytes(Action.DELTA_COMMIT, b"x", b"y") is None


def test_a_version_9_table_archived_is_read_back_by_the_rules(tmp_path: Path) -> None:
    """Archival of a version 9 table (the reference executor) leaves a history the rules read: one level-0 file
    named after the archived instants' requested times, listed with its length by the manifest the version file
    names, rows under HoodieLSMTimelineInstant whose metadata is the completed file's Avro bytes."""
    storage = Storage(tmp_path / "t")
    table = TableConfig.create("a", COPY_ON_WRITE, 9, ("id",), "ts", ("part",), "SIMPLE")
    storage.write_atomic(".hoodie/hoodie.properties", table.to_bytes())
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    times = [format_instant_time(t0 + timedelta(minutes=n)) for n in range(5)]
    for n, t in enumerate(times):
        done = format_instant_time(t0 + timedelta(minutes=n, seconds=30))
        storage.write_atomic(f"part=a/f{n}-0_0-0-0_{t}.parquet", b"")
        storage.create_if_absent(f".hoodie/timeline/{t}.commit.requested", b"")
        storage.create_if_absent(f".hoodie/timeline/{t}.inflight", b"")
        storage.create_if_absent(f".hoodie/timeline/{t}_{done}.commit", format_commit_metadata(CommitMetadata(), 9))
    result = arch.archive(storage, table, ArchiveConfig(keep_min_commits=2, keep_max_commits=3))
    archived = [i.requested for i in result.archived]
    assert archived == times[:3]
    history = HISTORY_DIRS[2]
    version = latest_snapshot_version(storage)
    assert version == 1 and storage.read(f"{history}/{VERSION_FILE}") == format_version(1)
    (entry,) = parse_manifest(storage.read(manifest_path(version)))
    assert parse_lsm_file_name(entry.file_name) == new_file_name(archived)
    assert entry.file_len == storage.size(f"{history}/{entry.file_name}")
    parquet = pq.ParquetFile(storage.full(f"{history}/{entry.file_name}"))
    assert parquet.schema_arrow.names == [f["name"] for f in LSM_INSTANT_SCHEMA["fields"]]
    rows = parquet.read().to_pylist()
    assert [r["instantTime"] for r in rows] == archived
    assert all(r["metadata"][:4] == b"Obj\x01" and r["version"] == 1 for r in rows)  # Avro, not JSON

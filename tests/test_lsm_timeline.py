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
    LSM_INSTANT_SCHEMA,
    VERSION_FILE,
    LSMFile,
    ManifestEntry,
    format_manifest,
    format_version_file,
    latest_version,
    manifest_name,
    manifest_version,
    new_file,
    next_version,
    parse_lsm_file_name,
    parse_manifest,
    plan_bytes,
)


def test_history_file_names() -> None:
    f = LSMFile("20250101000000000", "20250101000500000", 1)
    assert f.name == "20250101000000000_20250101000500000_1.parquet" and parse_lsm_file_name(f.name) == f
    for bad in ("a_b_0.parquet", "1_2_10.parquet", "1_2_0.parq", "manifest_1"):
        with pytest.raises(InvalidName):
            parse_lsm_file_name(bad)
    # named after the first and last *requested* time: an instant requested last but completed first still
    # ends the name (Hudi's page says the greatest completion time)
    assert new_file(["20250101000500000", "20250101000000000"]) == LSMFile("20250101000000000",
                                                                           "20250101000500000", 0)
    with pytest.raises(MetadataFormatError):
        new_file([])


def test_manifests_and_the_version_file() -> None:
    entries = [ManifestEntry("1_2_0.parquet", 10), ManifestEntry("3_4_0.parquet", 20)]
    text = format_manifest(entries)
    # Jackson's default pretty printer: objects one field a line, arrays inline
    assert text == (b'{\n  "files" : [ {\n    "fileName" : "1_2_0.parquet",\n    "fileLen" : 10\n  }, {\n'
                    b'    "fileName" : "3_4_0.parquet",\n    "fileLen" : 20\n  } ]\n}')
    assert parse_manifest(text) == entries and parse_manifest(format_manifest([])) == []
    for bad in (b"[", b'{"files": [{"fileName": "x"}]}', b'{"files": 3}'):
        with pytest.raises(MetadataFormatError):
            parse_manifest(bad)
    assert manifest_name(3) == "manifest_3" and manifest_version("manifest_12") == 12
    assert manifest_version("manifest_x") is None and manifest_version("_version_") is None
    names = ["manifest_1", "manifest_2", "1_2_0.parquet", VERSION_FILE]
    assert latest_version(format_version_file(1), names) == 1  # the version file wins
    assert latest_version(b"garbage", names) == 2 and latest_version(None, names) == 2  # else the highest manifest
    assert latest_version(None, ["1_2_0.parquet"]) == -1
    assert next_version(-1) == 1 and next_version(4) == 5


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
    names = [f.name for f in storage.list(history)]
    version = latest_version(storage.read(f"{history}/{VERSION_FILE}"), names)
    assert version == 1
    (entry,) = parse_manifest(storage.read(f"{history}/{manifest_name(version)}"))
    assert parse_lsm_file_name(entry.file_name) == new_file(archived)
    assert entry.file_len == storage.size(f"{history}/{entry.file_name}")
    parquet = pq.ParquetFile(storage.full(f"{history}/{entry.file_name}"))
    assert parquet.schema_arrow.names == [f["name"] for f in LSM_INSTANT_SCHEMA["fields"]]
    rows = parquet.read().to_pylist()
    assert [r["instantTime"] for r in rows] == archived
    assert all(r["metadata"][:4] == b"Obj\x01" and r["version"] == 1 for r in rows)  # Avro, not JSON

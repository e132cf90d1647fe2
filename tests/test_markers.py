"""Write markers (``spec.write.markers``): their names, and a failed write undone from them by the next write (the
local engine; the Spark engine in ``tests/test_writer.py``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from reference.api import HudiTable
from spec.errors import InvalidName
from spec.read.reader import read_table
from spec.write.markers import IOType, is_marker_name, marked_file, marker_dir, marker_path


def test_marker_names() -> None:
    m = marker_path("20250101000000000", "p=1/f1-0_0-1-2_20250101000000000.parquet", "CREATE")
    assert m == ".hoodie/.temp/20250101000000000/p=1/f1-0_0-1-2_20250101000000000.parquet.marker.CREATE"
    assert marked_file("20250101000000000", m) == ("p=1/f1-0_0-1-2_20250101000000000.parquet", IOType.CREATE)
    log = marker_path("2", ".f1-0_2.log.1_0-1-2", "APPEND")
    assert marked_file("2", log) == (".f1-0_2.log.1_0-1-2", IOType.APPEND)
    for bad in (m.replace("CREATE", "WRITE"), m.replace(".marker.", "."), marker_dir("1") + "/x.marker.CREATE"):
        with pytest.raises(InvalidName):
            marked_file("20250101000000000", bad)
    with pytest.raises(ValueError):
        marker_path("1", "f.parquet", "DELETE")


def test_a_killed_write_is_undone_from_its_markers(tmp_path: Path) -> None:
    """Markers are gone once a write completes; a write killed after naming a half-written file in a marker (a file
    no commit metadata lists) is rolled back by the next write, which deletes that file and the marker folder."""
    path = tmp_path / "t"
    table = HudiTable(str(path), engine="local")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "9",
               "hoodie.metadata.enable": "false"}
    table.write(pa.table({"id": ["a"], "ts": [1]}), "upsert", options)
    assert not list((path / ".hoodie" / ".temp").rglob("*.marker.*"))
    base = next(path.glob("*.parquet"))
    failed = "20990101000000000"
    (path / ".hoodie" / "timeline" / f"{failed}.commit.requested").write_bytes(b"")
    (path / ".hoodie" / "timeline" / f"{failed}.inflight").write_bytes(b"")
    partial = path / f"{base.name.split('_')[0]}_0-9-9_{failed}.parquet"
    partial.write_bytes(b"PAR1 half a file")
    marker = path / marker_path(failed, partial.name, "CREATE")
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    # and a writer killed while it created its next marker left that marker's temporary sibling (the local atomic
    # create's): before, the next write's rollback refused it as a marker of no known form and the table was stuck
    (marker.parent / f".{marker.name.replace(partial.name, 'next-0_0-9-9.parquet')}.{'ab' * 16}.tmp").write_bytes(b"")
    assert is_marker_name(marker.name) and not is_marker_name(f".{marker.name}.{'ab' * 16}.tmp")
    table.write(pa.table({"id": ["b"], "ts": [1]}), "upsert", options)
    assert not partial.exists() and not (path / marker_dir(failed)).exists()
    assert sorted(read_table(str(path)).column("id").to_pylist()) == ["a", "b"]

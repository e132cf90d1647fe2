"""A local table is listed with ``os`` and its parquet files read by the reader ``pq.ParquetFile`` wraps, so that a
local read imports neither ``pyarrow.parquet`` nor ``pyarrow.fs`` (which imports ``ssl``): the answers are those
of ``pyarrow.fs.LocalFileSystem`` and ``pq.ParquetFile``, which a ``Storage`` given that file system still uses."""

from __future__ import annotations

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from reference.cli import main
from spec.errors import InvalidTable
from spec.storage.hoodie_storage import Storage


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("local")
    src = folder / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": i, "ts": 1, "city": c} for i, c in enumerate("abcab")]), src)
    path = folder / "t"
    for _ in range(2):
        assert main(["write", str(path), "--input", str(src), "--record-key", "id", "--ordering-field", "ts",
                     "--partition-field", "city"]) == 0
    (path / "a" / "broken").symlink_to(folder / "nowhere")  # a link to nothing: left out by both
    return path


def test_listing_and_questions_answer_as_pyarrows_local_file_system(table: Path) -> None:
    ours, theirs = Storage(table), Storage(table, pafs.LocalFileSystem())
    assert ours.local and theirs.local and ours.root == str(table.resolve())
    for rel in ("", ".hoodie", ".hoodie/metadata", "a", "missing"):
        for recursive in (False, True):
            assert ours.list(rel, recursive) == theirs.list(rel, recursive), (rel, recursive)
    assert any(f.is_dir for f in ours.list("")) and len(ours.list("", recursive=True)) > 20
    files = [f.path for f in ours.list("", recursive=True) if not f.is_dir]
    for rel in [*files, "a", ".hoodie", "missing", "a/broken"]:
        assert (ours.exists(rel), ours.is_dir(rel), ours.size(rel)) == (
            theirs.exists(rel), theirs.is_dir(rel), theirs.size(rel)), rel
    assert all(ours.read(rel) == theirs.read(rel) for rel in files)
    with pytest.raises(NotADirectoryError):
        ours.list(files[0])
    with pytest.raises(InvalidTable, match="does not exist"):
        ours.read("missing")


def test_a_local_parquet_file_reads_as_parquet_file_reads_it(table: Path, tmp_path: Path) -> None:
    ours, theirs = Storage(table), Storage(table, pafs.LocalFileSystem())
    bases = [f.path for f in ours.list("", recursive=True) if f.path.endswith(".parquet") and "/." not in f.path]
    assert bases
    for rel in bases:
        read = ours.read_parquet(rel)
        assert read.equals(theirs.read_parquet(rel)) and read.equals(pq.ParquetFile(table / rel).read())
        assert read.schema.metadata == pq.ParquetFile(table / rel).read().schema.metadata
        assert ours.read_parquet(rel, ["id"]).column_names == ["id"]
    odd = Storage(tmp_path)  # an extension type (uuid) comes back as ParquetFile gives it
    values = pa.array([uuid.uuid4().bytes for _ in range(3)], pa.uuid())
    pq.write_table(pa.table({"u": values}), tmp_path / "u.parquet")
    assert odd.read_parquet("u.parquet").equals(pq.ParquetFile(tmp_path / "u.parquet").read())
    assert odd.read_parquet("u.parquet").schema.field("u").type == pa.uuid()
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "u.parquet").read_bytes()[:40])
    with pytest.raises(InvalidTable, match="is not a readable parquet file"):
        odd.read_parquet("cut.parquet")
    with pytest.raises(InvalidTable, match="is missing"):
        odd.read_parquet("gone.parquet")

"""Damage is never hidden: a write stops on a table whose timeline names missing or undecodable
files, a read says which corrupt log blocks it skipped, the command line reports unreadable input
files and unknown options in its own style, and a compaction killed half way is finished by the next
inline compaction. Local engine throughout."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pyarrow as pa
import pytest

from reference.cli import main
from reference.write.client import WriteClient
from spec.errors import CorruptBlock, InvalidTable, MetadataFormatError
from spec.file_group.log_file.corrupt_block import SkippedBlock
from spec.read.reader import read_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Action, Instant, State
from tests.test_bad_input import options, refused_unchanged, rows, snapshot

KINDS = [(tt, v) for tt in ("COPY_ON_WRITE", "MERGE_ON_READ") for v in (6, 8)]


def table(path: Path, table_type: str, version: int, **extra: str) -> WriteClient:
    client = WriteClient(str(path), engine="local")
    client.write(pa.Table.from_pylist(rows()), "upsert", options(table_type, version, **extra))
    return client


@pytest.mark.parametrize(("table_type", "version"), KINDS)
def test_a_missing_base_file_stops_the_next_write(tmp_path: Path, table_type: str, version: int) -> None:
    """Before: the next MOR upsert wrote duplicate keys. After: InvalidTable naming the file, instant
    and what to do; the table unchanged."""
    path = tmp_path / "t"
    client = table(path, table_type, version)
    gone = glob.glob(str(path / "sf" / "*.parquet"))[0]
    os.remove(gone)
    err = refused_unchanged(path, lambda: client.write(pa.Table.from_pylist(rows(key="k0")), "upsert",
                                                       options(table_type, version)), InvalidTable)
    assert os.path.basename(gone) in err.message and "rollback" in (err.hint or "")


@pytest.mark.parametrize(("table_type", "version"), KINDS)
@pytest.mark.parametrize("damage", [b"{not json", b"\x00garbage", b"Obj\x01broken"])
def test_an_undecodable_first_commit_is_refused_on_every_table_kind(tmp_path: Path, table_type: str, version: int,
                                                                    damage: bytes) -> None:
    """Before: refused on COW v6, written over on MOR v8. After: MetadataFormatError on all four."""
    path = tmp_path / "t"
    client = table(path, table_type, version)
    timeline = Timeline.load(str(path))
    (done,) = timeline.completed().instants
    name = next(n for n in timeline.files_of(done.requested) if "." + done.action in n and "inflight" not in n
                and "requested" not in n)
    folder = path / ".hoodie" / ("timeline" if version >= 8 else "")
    (folder / name).write_bytes(damage)
    err = refused_unchanged(path, lambda: client.write(pa.Table.from_pylist(rows(key="k3")), "upsert",
                                                       options(table_type, version)), MetadataFormatError)
    assert done.requested in err.message


def test_an_inflight_compaction_is_finished_by_the_next_inline_compaction(tmp_path: Path) -> None:
    """Before: a killed compaction stayed pending until run by hand. After: the next write with
    inline compaction rolls it back to requested and runs it (``runAnyPendingCompactions``)."""
    from reference.executors.compaction import schedule_compaction

    path = tmp_path / "t"
    client = table(path, "MERGE_ON_READ", 8)
    client.write(pa.Table.from_pylist(rows(key="k0")), "upsert", options("MERGE_ON_READ", 8))
    t = schedule_compaction(client)
    assert t is not None
    # a compactor that died after writing half a base file: the instant inflight, a partial file
    inflight = f"{t}.compaction.inflight"
    (path / ".hoodie" / "timeline" / inflight).write_bytes(b"")
    partial = path / "sf" / f"{'0' * 8}-0000-0000-0000-{'0' * 12}-0_0-0-0_{t}.parquet.inprogress"
    partial.write_bytes(b"PAR1")
    client.write(pa.Table.from_pylist(rows(key="k5")), "upsert",
                 options("MERGE_ON_READ", 8, **{"hoodie.compact.inline": "true",
                                                "hoodie.compact.inline.max.delta.commits": "100"}))
    timeline = Timeline.load(str(path))
    assert [i.state for i in timeline.instants if i.requested == t] == [State.COMPLETED]
    assert any(i.action == Action.ROLLBACK for i in timeline.instants)
    assert not partial.exists()
    assert sorted(read_table(str(path)).column("_hoodie_record_key").to_pylist()) == ["k0", "k1", "k5"]


def damaged_log_table(tmp_path: Path) -> tuple[Path, Path]:
    """A MOR v6 table whose only log file has its last block cut short."""
    path = tmp_path / "t"
    client = table(path, "MERGE_ON_READ", 6)
    client.write(pa.Table.from_pylist(rows(key="k0", v="new")), "upsert", options("MERGE_ON_READ", 6))
    (log,) = [Path(p) for p in glob.glob(str(path / "sf" / ".*.log.*"))]
    data = log.read_bytes()
    log.write_bytes(data[: len(data) - 40])
    return path, log


def test_the_reader_returns_the_corrupt_blocks_it_skipped(tmp_path: Path) -> None:
    path, log = damaged_log_table(tmp_path)
    skipped: list[SkippedBlock] = []
    rows_read = read_table(str(path), skipped=skipped)
    assert [s.path for s in skipped] == [f"sf/{log.name}"]
    assert skipped[0].offset == 0 and skipped[0].length == log.stat().st_size and skipped[0].reason
    assert rows_read.num_rows == 2  # the skipped block's update is not applied: the rows are older


def test_cli_read_warns_per_log_file_and_strict_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: same exit code, no warning. After: one warning line per damaged log file; --strict:
    CorruptBlock, exit 2, no rows printed."""
    path, log = damaged_log_table(tmp_path)
    assert main(["read", str(path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    warnings = captured.err.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("hudi-spec read: warning: skipped 1 corrupt block(s) in ")
    assert log.name in warnings[0]
    assert main(["read", str(path), "--strict"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"hudi-spec read: {CorruptBlock.__name__}: ")
    assert main(["read", str(path), "--strict", "--engine", "spark"]) == 2  # refused before Spark starts


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("in.parquet", b"this is text, not parquet", "parquet"), ("in.json", b'{"id": 1,', "JSON lines"),
    ("in.csv", b"\xff\xfe\x00bad", "CSV")])
def test_cli_write_names_an_unreadable_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                                 content: bytes, expected: str) -> None:
    """Before: ``unexpected ArrowInvalid`` (exit 3). After: InvalidOperation naming the file (exit 2),
    no table created."""
    src = tmp_path / name
    src.write_bytes(content)
    code = main(["write", str(tmp_path / "t"), "--input", str(src), "--record-key", "id", "--engine", "local"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("hudi-spec write: InvalidOperation: ") and str(src) in err and expected in err
    assert snapshot(tmp_path / "t") is None


def test_cli_unknown_option_is_one_warning_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a raw Python UserWarning with its source line. After: one line in the CLI's style."""
    src = tmp_path / "in.json"
    src.write_text('{"id": "1", "ts": 1}\n')
    assert main(["write", str(tmp_path / "t"), "--input", str(src), "--record-key", "id", "--engine", "local",
                 "--option", "hoodie.bogus=1", "--output", "json"]) == 0
    err = capsys.readouterr().err
    assert err == "hudi-spec write: warning: unknown Hudi option 'hoodie.bogus' is ignored by hudi-spec's writer\n"


# --- missing and truncated data files: typed errors, never older rows ----------------------------

def _written(path: Path, table_type: str, version: int) -> WriteClient:
    client = table(path, table_type, version)
    client.write(pa.Table.from_pylist(rows(v="new")), "upsert", options(table_type, version))
    return client


def _latest_base(path: Path) -> Path:
    return max((Path(p) for p in glob.glob(str(path / "sf" / "*.parquet"))), key=lambda p: p.name.rsplit("_", 1)[1])


@pytest.mark.parametrize("version", [6, 8])
@pytest.mark.parametrize("use_metadata_table", [True, False])
def test_a_deleted_latest_base_file_is_a_typed_error_not_the_previous_values(tmp_path: Path, version: int,
                                                                            use_metadata_table: bool) -> None:
    """Before: v6 read the previous file slice's values silently; v8 raised FileNotFoundError. After:
    InvalidTable naming the file and the instant that wrote it."""
    path = tmp_path / "t"
    _written(path, "COPY_ON_WRITE", version)
    gone = _latest_base(path)
    gone.unlink()
    with pytest.raises(InvalidTable) as info:
        read_table(str(path), use_metadata_table=use_metadata_table)
    assert gone.name in info.value.message and info.value.hint


@pytest.mark.parametrize("version", [6, 8])
def test_a_deleted_log_file_with_a_delete_block_is_a_typed_error_not_the_deleted_rows(tmp_path: Path,
                                                                                     version: int) -> None:
    """Before: v6 brought the deleted rows back, silently. After: InvalidTable naming the log file (a
    read-optimized query reads no log file: it reads the base file as before)."""
    path = tmp_path / "t"
    client = table(path, "MERGE_ON_READ", version)
    client.write(pa.Table.from_pylist(rows()[:1]), "delete", options("MERGE_ON_READ", version))
    (log,) = [Path(p) for p in glob.glob(str(path / "sf" / ".*.log.*"))]
    log.unlink()
    for query in ("snapshot", "incremental"):
        with pytest.raises(InvalidTable) as info:
            read_table(str(path), query)
        assert log.name in info.value.message
    assert sorted(read_table(str(path), "read_optimized").column("_hoodie_record_key").to_pylist()) == ["k0", "k1"]


def test_the_checker_reports_a_missing_file(tmp_path: Path) -> None:
    from conformance.checker import check_table

    path = tmp_path / "t"
    _written(path, "COPY_ON_WRITE", 6)
    gone = _latest_base(path)
    gone.unlink()
    report = check_table(str(path))
    assert not report.ok
    assert any(f.code == "missing-file" and f.path.endswith(gone.name) for f in report.errors)


@pytest.mark.parametrize("version", [6, 8])
def test_a_truncated_base_file_is_a_typed_error_on_read_and_on_the_next_write(tmp_path: Path, version: int) -> None:
    """Before: ArrowInvalid on read and on the next write. After: InvalidTable naming the file; the write
    leaves the table as it was."""
    path = tmp_path / "t"
    client = table(path, "COPY_ON_WRITE", version)
    (base,) = [Path(p) for p in glob.glob(str(path / "sf" / "*.parquet"))]
    base.write_bytes(base.read_bytes()[: base.stat().st_size // 2])
    with pytest.raises(InvalidTable) as info:
        read_table(str(path))
    assert base.name in info.value.message and info.value.hint
    err = refused_unchanged(path, lambda: client.write(pa.Table.from_pylist(rows(key="k0")), "upsert",
                                                       options("COPY_ON_WRITE", version)), InvalidTable)
    assert base.name in err.message


def test_a_healthy_table_reads_the_commit_metadata_of_its_latest_slices_only(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The missing-file check of a read decodes the commit metadata of the instants since the oldest latest
    file slice, not of the whole timeline."""
    import spec.file_group.file_system_view as fsv

    path = tmp_path / "t"
    client = table(path, "COPY_ON_WRITE", 6)
    for i in range(6):
        client.write(pa.Table.from_pylist(rows(v=f"v{i}")), "upsert", options("COPY_ON_WRITE", 6))
    read: list[str] = []
    original = fsv.read_instant_content

    def counting(storage: Storage, inst: Instant, layout: int) -> bytes:
        read.append(inst.requested)
        return original(storage, inst, layout)

    monkeypatch.setattr(fsv, "read_instant_content", counting)
    assert read_table(str(path)).num_rows == 2
    assert len(read) <= 1, read

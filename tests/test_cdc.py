"""The CDC query's rules (``spec.read.cdc``), as pure functions: which case each write stat is, which instants a
window reads (requested times), what is refused. The images against Apache Hudi's own CDC query are in
``tests/test_cdc_hudi.py`` (every logging mode, both table types)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from reference.cli import main
from reference.write.client import WriteClient
from spec.config.write_operation import WriteOperationType as Op
from spec.errors import InvalidOperation, InvalidTable
from spec.file_group.file_system_view import DataFile
from spec.read.cdc import (
    DATA_BEFORE,
    DATA_BEFORE_AFTER,
    OP_KEY_ONLY,
    CdcInferCase,
    CdcRecord,
    cdc_table,
    check_begin_active,
    read_cdc,
    split_of_stat,
)
from spec.timeline.commit_metadata import WriteStat
from tests.test_bad_input import options, rows

T0, T1 = "20260101000000000", "20260101000001000"
FID = "f1-0"
OLD = f"{FID}_0-1-1_{T0}.parquet"
NEW = f"{FID}_0-2-2_{T1}.parquet"
LISTING = [DataFile("a", OLD), DataFile("a", NEW)]


def _stat(path: str, **counts: int) -> WriteStat:
    return WriteStat(file_id=FID, path=f"a/{path}", prev_commit=T0, **counts)  # type: ignore[arg-type]


def test_a_stat_with_cdc_logs_is_read_as_logged_with_the_slices_its_mode_needs() -> None:
    logged = WriteStat(file_id=FID, path=f"a/{NEW}", prev_commit=T0, num_writes=2, num_update_writes=1,
                       cdc_stats={f"a/.{FID}_{T1}.log.1_0-2-2.cdc": 100})
    full = split_of_stat(T1, logged, "a", Op.UPSERT, DATA_BEFORE_AFTER, LISTING)
    assert (full.case, full.files, full.before, full.after) == (CdcInferCase.AS_IS, (f"a/.{FID}_{T1}.log.1_0-2-2.cdc",),
                                                                 None, None)
    keys = split_of_stat(T1, logged, "a", Op.UPSERT, OP_KEY_ONLY, LISTING)
    assert keys.before is not None and keys.before.base_file == DataFile("a", OLD)  # the previous commit's base
    assert keys.after is not None and keys.after.base_file is not None and keys.after.base_file.name == NEW
    before = split_of_stat(T1, logged, "a", Op.UPSERT, DATA_BEFORE, LISTING)
    assert before.before is None and before.after == keys.after


def test_base_file_stats_are_inserts_deletes_or_refused() -> None:
    inserts = split_of_stat(T1, _stat(NEW, num_writes=3, num_inserts=3), "a", Op.INSERT, DATA_BEFORE_AFTER, LISTING)
    assert (inserts.case, inserts.files) == (CdcInferCase.BASE_FILE_INSERT, (f"a/{NEW}",))
    gone = split_of_stat(T1, _stat(NEW, num_deletes=2), "a", Op.DELETE, DATA_BEFORE_AFTER, LISTING)
    assert gone.case == CdcInferCase.BASE_FILE_DELETE and gone.before is not None
    assert gone.before.base_file == DataFile("a", OLD)
    with pytest.raises(InvalidTable, match="no CDC file"):  # updates without a CDC log: Hudi refuses it too
        split_of_stat(T1, _stat(NEW, num_writes=2, num_update_writes=1), "a", Op.UPSERT, DATA_BEFORE_AFTER, LISTING)
    with pytest.raises(InvalidTable, match="not in the table"):  # the previous base file was cleaned
        split_of_stat(T1, _stat(NEW, num_deletes=2), "a", Op.DELETE, DATA_BEFORE_AFTER, [DataFile("a", NEW)])


def test_a_log_stat_is_read_against_the_slice_it_appended_to_and_a_pending_compaction() -> None:
    log = f".{FID}_{T1}.log.1_0-2-2"
    stat = WriteStat(file_id=FID, path=f"a/{log}", base_file=OLD, log_files=(f".{FID}_{T0}.log.1_0-1-1", log),
                     log_version=1, num_writes=1)
    split = split_of_stat(T1, stat, "a", Op.UPSERT, DATA_BEFORE_AFTER, LISTING)
    assert split.case == CdcInferCase.LOG_FILE and split.files == (f"a/{log}",) and split.before is not None
    assert split.before.base_file == DataFile("a", OLD)
    assert [f.name for f in split.before.log_files] == [f".{FID}_{T0}.log.1_0-1-1"]  # not the log itself
    only_logs = WriteStat(file_id=FID, path=f"a/{log}", log_files=(log,), log_version=1, num_writes=1)
    pending = {("a", FID): (OLD, (f".{FID}_{T0}.log.1_0-1-1",))}
    compacting = split_of_stat(T1, only_logs, "a", Op.UPSERT, DATA_BEFORE_AFTER, LISTING, pending)
    assert compacting.before is not None and compacting.before.base_file == DataFile("a", OLD)
    assert [f.name for f in compacting.before.log_files] == [f".{FID}_{T0}.log.1_0-1-1"]


def test_a_begin_before_the_archived_timeline_is_refused() -> None:
    check_begin_active(T1, T0)
    check_begin_active(None, T1)
    with pytest.raises(InvalidOperation, match="archived"):
        check_begin_active(T0, T1)


def test_the_cdc_query_answers_hudis_four_string_columns() -> None:
    table = cdc_table([CdcRecord("u", T1, {"id": 1, "v": "a"}, {"id": 1, "v": "b"}), CdcRecord("i", T1, None, {})])
    assert table.schema == pa.schema([(c, pa.string()) for c in ("op", "ts_ms", "before", "after")])
    assert table.column("before").to_pylist() == ['{"id":1,"v":"a"}', None]


def test_a_table_without_cdc_is_refused_by_the_query_and_the_command(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t"
    WriteClient(str(path), engine="local").write(pa.Table.from_pylist(rows()), "upsert",
                                                 options("COPY_ON_WRITE", 8))
    with pytest.raises(InvalidOperation, match="change data capture"):
        read_cdc(str(path))
    argv = ["read", str(path), "--query", "incremental", "--begin", "00000000000000", "--incremental-format", "cdc"]
    assert main(argv) == 2
    assert "change data capture" in capsys.readouterr().err
    assert main(["read", str(path), "--incremental-format", "cdc"]) == 2
    assert "--query incremental" in capsys.readouterr().err

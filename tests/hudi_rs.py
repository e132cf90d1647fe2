"""Reading tables with hudi-rs (the ``hudi`` package), normalized for comparison with our reader."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa

from spec.config.table_config import TableConfig
from spec.file_group.file_naming import is_base_file_name, parse_base_file_name, parse_log_file_name
from spec.file_group.file_system_view import list_data_files
from spec.metadata.metadata_table import METADATA_TABLE_PATH
from spec.storage.hoodie_storage import Storage


def hudi_rs_read(path: str, *, read_optimized: bool = False, as_of: str | None = None,
                 incremental: tuple[str | None, str] | None = None,
                 storage_options: dict[str, str] | None = None) -> pa.Table | None:
    """Rows hudi-rs reads for one query (None when it returns no batches); ``storage_options`` reach
    an object store (endpoint, keys, region)."""
    import hudi
    from hudi import HudiQueryType, HudiReadOptions

    builder = hudi.HudiTableBuilder.from_base_uri(path)
    if storage_options:
        builder = builder.with_storage_options(storage_options)
    table = builder.build()
    opts = HudiReadOptions()
    if read_optimized:
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    if as_of:
        opts = opts.with_as_of_timestamp(as_of)
    if incremental:
        opts = opts.with_query_type(HudiQueryType.Incremental)
        if incremental[0]:
            opts = opts.with_start_timestamp(incremental[0])
        opts = opts.with_end_timestamp(incremental[1])
    batches = table.read(opts)
    return pa.Table.from_batches(batches) if batches else None


def log_only_file_groups(path: str) -> set[tuple[str, str]]:
    """The (partition path, file id) of each file group of the table that has log files and no base file."""
    base: set[tuple[str, str]] = set()
    logs: set[tuple[str, str]] = set()
    for f in list_data_files(Storage(path)):
        if is_base_file_name(f.name):
            base.add((f.partition_path, parse_base_file_name(f.name).file_id))
        elif f.name.startswith("."):
            logs.add((f.partition_path, parse_log_file_name(f.name).file_id))
    return logs - base


def hudi_rs_read_listing_storage(path: str) -> pa.Table | None:
    """hudi-rs's snapshot of the table with its files listed from storage rather than the metadata table.

    hudi-rs has no read option for that: it lists through the metadata table whenever ``files`` is among the
    table's ``hoodie.table.metadata.partitions`` (``is_metadata_table_enabled``; a ``hoodie.metadata.enable=false``
    option does not turn it off), so a copy of the table without its metadata table is read."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "t"
        shutil.copytree(path, copy)
        shutil.rmtree(copy / METADATA_TABLE_PATH, ignore_errors=True)
        storage = Storage(str(copy))
        cfg = TableConfig.load(storage)
        props = {k: v for k, v in cfg.props.items() if k != "hoodie.table.metadata.partitions"}
        storage.write_atomic(".hoodie/hoodie.properties", TableConfig(props).to_bytes())
        return hudi_rs_read(str(copy))


def _file_id(file_name: str) -> str:
    return parse_base_file_name(file_name).file_id if is_base_file_name(file_name) else file_name


def check_hudi_rs_snapshot(path: str, model_rows: list[dict[str, Any]], project: Any = None) -> None:
    """hudi-rs's snapshot of the table against the model's rows (each with ``_hoodie_partition_path`` and
    ``_hoodie_file_name``; compared after ``project``, a row to a comparable value, default the whole row).

    hudi-rs departs from Hudi on a table with a metadata table: listing through it
    (``file_groups_from_files_partition_records``, "only supports file groups with base files") it drops every
    file group that has only log files, which Hudi's ``HoodieTableFileSystemView`` keeps (and Hudi's Flink and
    streaming writers make). So: with a ``files`` partition, hudi-rs's rows are exactly the model's minus those of
    the log-only file groups, and read listing storage they are the model's; without one, they are the model's."""
    proj = project or (lambda r: json.dumps(r, sort_keys=True, default=_plain))

    def rows(table: pa.Table | None) -> list[Any]:
        return sorted(proj(r) for r in (table.to_pylist() if table is not None else []))

    everything = sorted(proj(r) for r in model_rows)
    theirs = rows(hudi_rs_read(path))
    if "files" not in TableConfig.load(Storage(path)).metadata_partitions:
        assert theirs == everything
        return
    dropped = log_only_file_groups(path)
    kept = sorted(proj(r) for r in model_rows
                  if (r["_hoodie_partition_path"], _file_id(r["_hoodie_file_name"])) not in dropped)
    assert theirs == kept, "hudi-rs through the metadata table: the model's rows minus log-only file groups'"
    assert rows(hudi_rs_read_listing_storage(path)) == everything, "hudi-rs listing storage: the model's rows"


def as_multiset(table: pa.Table | None, drop: tuple[str, ...] = ()) -> list[str]:
    """A table's rows as a sorted list of canonical JSON strings (a multiset over all columns)."""
    if table is None or table.num_columns == 0:
        return []
    keep = [c for c in table.column_names if c not in drop]
    return sorted(json.dumps(r, sort_keys=True, default=_plain) for r in table.select(keep).to_pylist())


def _plain(value: Any) -> str:
    return repr(value)

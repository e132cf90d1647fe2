"""A table's creation by its first write: hoodie.properties from the write's options, the ``.hoodie``
folders, and — when that first write fails before any commit completed — everything removed again.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

from reference.config.options import WriteConfig
from spec.config.table_config import COMMIT_TIME_ORDERING, TableConfig
from spec.errors import InvalidConfig
from spec.schema.table_schema import avro_schema_from_arrow, record_name_for_table
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.layout import HISTORY_DIRS, timeline_dir


def new_table_config(cfg: WriteConfig, schema: pa.Schema) -> TableConfig:
    """The hoodie.properties a first write with these options creates (nothing written yet)."""
    if not cfg.table_name:
        raise InvalidConfig("a new table needs hoodie.table.name", hint="pass options={'hoodie.table.name': ...}")
    avro = avro_schema_from_arrow(schema, *record_name_for_table(cfg.table_name))
    # no record key field: keys are generated (spec.keygen.auto_record_key); Apache Hudi 1.2.0 creates such a
    # table with no hoodie.table.recordkey.fields, no ordering field and COMMIT_TIME_ORDERING
    keyless = not cfg.record_key_fields
    return TableConfig.create(cfg.table_name, cfg.table_type, cfg.table_version, cfg.record_key_fields,
                              None if keyless else cfg.ordering_field, cfg.partition_fields, cfg.keygen_type,
                              cfg.hive_style, cfg.url_encode,
                              merge_mode=COMMIT_TIME_ORDERING if keyless else cfg.merge_mode,
                              create_schema=json.dumps(avro), extra=cdc_properties(cfg))


def cdc_properties(cfg: WriteConfig) -> dict[str, str]:
    """The change data capture keys of a new table's hoodie.properties (none without it): Apache Hudi 1.2.0
    writes both, the mode even when it is the default (``HoodieTableConfig``)."""
    if not cfg.cdc_enabled:
        return {}
    return {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": cfg.cdc_logging_mode}


def write_table_files(storage: Storage, table: TableConfig) -> None:
    """Create ``.hoodie`` with hoodie.properties and the folders Hudi's writers expect."""
    layout = table.timeline_layout
    for folder in (".hoodie/.temp", ".hoodie/.aux/.bootstrap/.partitions", ".hoodie/.aux/.bootstrap/.fileids",
                   ".hoodie/.schema", timeline_dir(layout), HISTORY_DIRS[layout]):
        storage.mkdirs(folder)
    storage.create_if_absent(".hoodie/hoodie.properties", table.to_bytes())


def remove_new_files(storage: Storage, before: set[str] | None) -> None:
    """Undo a table creation: delete every file and folder under the base path that is not in
    ``before`` (what was there before the first write started; None: the base path did not exist)."""
    if before is None:
        if storage.is_dir(""):
            storage.fs.delete_dir(storage.root)
        return
    new = [f for f in storage.list("", recursive=True) if f.path not in before]
    new_dirs = {f.path for f in new if f.is_dir}
    for f in new:
        if posixpath.dirname(f.path) in new_dirs:
            continue  # deleted with its folder
        if f.is_dir:
            storage.delete_dir(f.path)
        else:
            storage.delete(f.path)


@contextmanager
def table_created_by(storage: Storage, table: TableConfig, new: bool) -> Iterator[None]:
    """The first write's table creation as part of its transaction: ``.hoodie`` is written when the
    write's checks have passed, and removed again, with everything else the write left, when the write
    fails before any commit completed — a refused or failed first write leaves no table behind."""
    if not new:
        yield
        return
    before = {f.path for f in storage.list("", recursive=True)} if storage.is_dir("") else None
    try:
        write_table_files(storage, table)
        yield
    except BaseException:
        if Timeline.load(storage, table.timeline_layout).latest_completed() is None:
            remove_new_files(storage, before)
        raise


__all__ = ["new_table_config", "remove_new_files", "table_created_by", "write_table_files"]

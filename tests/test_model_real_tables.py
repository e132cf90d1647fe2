"""The model's layout predictions agree with tables Apache Hudi actually wrote.

For each real table, the recipe is replayed from the table itself: every completed write of its
timeline (operation from the commit metadata, records = the rows and deletes that instant wrote,
found in its base files and log blocks) is applied to the spec model at the same instant time;
rollbacks and compactions are replayed at their instants too. Then the model's layout (per
partition: file groups with their slices and keys) must equal the layout read from disk.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import Any

import fastavro
import pyarrow.parquet as pq
import pytest

from conformance.interface.ops import CreateTable
from spec.config.table_config import TableConfig
from spec.file_group.file_system_view import FileSystemView, list_data_files
from spec.file_group.log_file.delete_block import decode_delete_records
from spec.file_group.log_file.log_blocks import decode_records
from spec.file_group.log_file.log_format import BlockType, read_blocks
from spec.model import Env, TableModel, predict
from spec.model.operations import Compact, DeletePartition, Rollback, Write
from spec.model.queries import layout
from spec.read.reader import TableReader
from spec.read.slice_merge import record_key_of
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.commit_metadata import parse_commit_metadata
from spec.timeline.layout import format_instant_file_name, timeline_dir

KEYGENS = {"SimpleKeyGenerator": "SIMPLE", "ComplexKeyGenerator": "COMPLEX",
           "NonpartitionedKeyGenerator": "NON_PARTITION", "TimestampBasedKeyGenerator": "TIMESTAMP"}


def _keygen(cfg: TableConfig) -> str:
    if cfg.keygen_type:
        return cfg.keygen_type
    return KEYGENS[(cfg.keygen_class or "").rsplit(".", 1)[-1]]


def _scalar(v: Any) -> Any:
    return v if v is None or isinstance(v, bool | int | float | str) else str(v)


class Recipe:
    """What each instant of a real table wrote: rows (by base files and data blocks) and deletes."""

    def __init__(self, path: Any) -> None:
        self.storage = Storage(str(path))
        self.cfg = TableConfig.load(self.storage)
        self.timeline = Timeline.load(self.storage, self.cfg.timeline_layout)
        self.fields = {*self.cfg.record_key_fields, *self.cfg.partition_fields}
        if self.cfg.ordering_field:
            self.fields.add(self.cfg.ordering_field)
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self.deletes: dict[str, list[tuple[str, str]]] = {}
        single = len(self.timeline.commits_timeline().instants) == 1
        for f in list_data_files(self.storage):
            if f.name.endswith(".parquet"):
                instant = f.name.rsplit("_", 1)[1].split(".")[0]
                for row in pq.read_table(self.storage.full(f.path), filesystem=self.storage.fs).to_pylist():
                    if row.get("_hoodie_commit_time") == instant or (single and row.get("_hoodie_commit_time") is None):
                        self.rows.setdefault(instant, []).append(row)
            else:
                for rec in read_blocks(self.storage.read(f.path)):
                    b = rec.block
                    if b is None or b.instant_time is None:
                        continue
                    if b.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK):
                        self.rows.setdefault(b.instant_time, []).extend(decode_records(b))
                    elif b.block_type == BlockType.DELETE_BLOCK:
                        self.deletes.setdefault(b.instant_time, []).extend(
                            (d.record_key or "", d.partition_path or "") for d in decode_delete_records(b))

    def metadata(self, inst: Any) -> Any:
        name = format_instant_file_name(inst, self.timeline.layout)
        return self.storage.read(posixpath.join(timeline_dir(self.timeline.layout), name))

    def config(self) -> CreateTable:
        """The table's configuration from hoodie.properties, plus the one writer setting the recipes
        change: hudi-rs's MOR recipes (the .sql beside each zip, e.g. v6_trips_8i1u,
        v6_nonpartitioned_rollback, v6_simplekeygen_nonhivestyle_overwritetable) set
        ``hoodie.parquet.small.file.limit = 0``; the COW recipes keep Hudi's default."""
        c = self.cfg
        options = tuple((k, v) for k, v in c.props.items() if k.startswith("hoodie.keygen.timebased."))
        return CreateTable(
            table_name=c.name, table_type=c.table_type, table_version=c.table_version,
            record_key_fields=c.record_key_fields, partition_fields=c.partition_fields,
            ordering_field=c.ordering_field, key_generator=_keygen(c), hive_style=c.hive_style_partitioning,
            merge_mode="EVENT_TIME_ORDERING" if c.ordering_field else "COMMIT_TIME_ORDERING", options=options,
            small_file_limit=0 if c.is_mor else 104857600)

    def record(self, row: dict[str, Any]) -> dict[str, Any]:
        return {k: _scalar(row.get(k)) for k in sorted(self.fields)}

    def delete_record(self, key: str, partition: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        fields = self.cfg.record_key_fields
        if len(fields) == 1:
            out[fields[0]] = key
        else:
            out.update(dict(part.split(":", 1) for part in key.split(",")))
        values = partition.split("/") if partition else []
        for f, v in zip(self.cfg.partition_fields, values, strict=False):
            out[f] = v.split("=", 1)[1] if self.cfg.hive_style_partitioning else v
        return out

    def ops(self) -> list[Any]:
        """The table's recipe as case-language operations, in timeline order."""
        out: list[Any] = []
        for inst in self.timeline.completed().instants:
            t = inst.requested
            if inst.action == "rollback":
                target = _rollback_target(self.metadata(inst))
                out.append(self._write(t=target, operation="upsert"))
                out.append(Rollback(target))
            elif inst.action in ("commit", "deltacommit", "replacecommit"):
                md = parse_commit_metadata(self.metadata(inst))
                op = (md.operation_type or "UPSERT").lower().removesuffix("_prepped")
                if op == "compact":
                    out.append(Compact(instant_time=t))
                elif op == "delete_partition":
                    out.append(DeletePartition(tuple(md.partition_to_replace_file_ids), t))
                else:
                    out.append(self._write(t, op))
        return out

    def _write(self, t: str, operation: str) -> Write:
        if operation == "delete":
            return Write("delete", tuple(self.delete_record(k, p) for k, p in self.deletes.get(t, [])), t)
        rows = [self.record(r) for r in self.rows.get(t, [])]
        return Write(operation, tuple(rows), t)


def _rollback_target(data: bytes) -> str:
    import io

    (md,) = list(fastavro.reader(io.BytesIO(data)))
    return str(md["commitsRollback"][0])


def real_layout(path: Any, as_of: str | None = None, with_logs: bool = True) -> dict[str, Counter[Any]]:
    """Per partition: the multiset of (slices, keys) of the visible file groups on disk (as of an instant)."""
    reader = TableReader(str(path))
    out: dict[str, Counter[Any]] = {}
    for g in FileSystemView.load(reader.storage, as_of=as_of).groups:
        sl = g.latest_slice
        table = reader.read_slice(sl, as_of) if sl is not None else None
        keys = frozenset(record_key_of(r, reader.config) for r in (table.to_pylist() if table is not None else []))
        slices = tuple((s.base_instant, s.base_file is not None,
                        tuple(lf.version for lf in s.log_file_names) if with_logs else ()) for s in g.slices)
        out.setdefault(g.partition_path, Counter())[(slices, keys)] += 1
    return out


def model_layout(m: TableModel, with_logs: bool = True) -> dict[str, Counter[Any]]:
    out: dict[str, Counter[Any]] = {}
    for p, groups in layout(m.state).items():
        for g in groups:
            slices = tuple((s.base_instant, s.has_base, s.log_versions if with_logs else ()) for s in g.slices)
            out.setdefault(p, Counter())[(slices, frozenset(g.keys))] += 1
    return out


def replay(real_table: Any, steps: int | None = None) -> tuple[Recipe, TableModel]:
    """The table's recipe (its first ``steps`` operations) applied to a fresh model."""
    recipe = Recipe(real_table.path)
    m = TableModel(recipe.config(), Env.deterministic(start="20000101000000000"))
    for op in recipe.ops()[:steps]:
        m.apply(op)
    return recipe, m


def test_model_layout_agrees_with_the_real_table(real_table: Any) -> None:
    _, m = replay(real_table)
    assert model_layout(m) == real_layout(real_table.path)


def test_model_layout_after_the_first_commit_agrees(real_table: Any) -> None:
    """After the first write: the same file groups, base instants and keys as the table had then (log
    versions are left out: a v6 reader as of an instant still lists the later logs of a slice)."""
    recipe, m = replay(real_table, steps=1)
    ops = recipe.ops()
    if not ops:
        assert layout(m.state) == {} and real_layout(real_table.path) == {}
        return
    first = ops[0].instant_time
    predicted = model_layout(m, with_logs=False)
    assert predicted == real_layout(real_table.path, as_of=first, with_logs=False)
    if real_table.name.startswith("sample_table/cow/v6_"):
        # the first INSERT of these tables creates one file group per partition
        assert all(sum(groups.values()) == 1 for groups in predicted.values())


def _rows(rows: Any, ordering: str | None) -> Counter[Any]:
    return Counter((r["_hoodie_partition_path"], str(r["_hoodie_record_key"]), r["_hoodie_commit_time"],
                    r.get(ordering) if ordering else None) for r in rows)


def _keyed_rows(rows: Any, ordering: str | None, cfg: TableConfig) -> Counter[Any]:
    """Rows of a table without meta columns: the key rebuilt from the key fields, and the ordering value."""
    return Counter((record_key_of(r, cfg), r.get(ordering) if ordering else None) for r in rows)


def test_model_rows_agree_with_the_spec_reader_on_the_real_table(real_table: Any) -> None:
    """Snapshot, read-optimized, time-travel and incremental rows (key, partition, commit time, ordering
    value) of the replayed recipe equal what the spec reader reads from the table Apache Hudi wrote.

    A table without meta columns (``hoodie.populate.meta.fields=false``) has no partition path or
    commit time in its rows: there rows are compared by the key rebuilt from the key fields and the
    ordering value, and the incremental query, which needs the commit time column, is refused."""
    from spec.errors import InvalidOperation
    from spec.model.queries import query_instants, read_optimized, snapshot
    from spec.read.reader import read_table

    recipe, m = replay(real_table)
    config = m.state.config
    f = config.ordering_field
    with_meta = recipe.cfg.populate_meta_fields

    def rows(found: Any) -> Counter[Any]:
        return _rows(found, f) if with_meta else _keyed_rows(found, f, recipe.cfg)

    def real(**kw: Any) -> Counter[Any]:
        table = read_table(str(real_table.path), **kw)
        return rows(table.to_pylist() if table is not None else [])

    assert rows(snapshot(m.state)) == real(query="snapshot")
    if config.is_mor:
        assert rows(read_optimized(m.state)) == real(query="read_optimized")
    instants = query_instants(m.state)
    assert bool(instants) == bool(recipe.timeline.commits_timeline().instants)
    for t in instants:
        assert rows(snapshot(m.state, t)) == real(query="snapshot", as_of=t), t
    if not with_meta:
        with pytest.raises(InvalidOperation, match=r"populate\.meta\.fields=false"):
            real(query="incremental", begin=None)
        return
    # windows run between completion times; the model's clock chose its own (v8), so each endpoint
    # is mapped to the real completion time of the same instant
    real_done = {i.requested: i.completed or i.requested for i in recipe.timeline.instants}
    to_real = {i.completed or i.requested: real_done[i.requested] for i in m.state.timeline
               if i.requested in real_done}
    for (begin, end), found in predict(m.state).incremental.items():
        b, e = (None if begin is None else to_real[begin]), to_real[end]
        assert rows(found) == real(query="incremental", begin=b, end=e), (b, e)

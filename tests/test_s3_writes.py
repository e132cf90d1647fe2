"""Every write step on S3 (moto on 127.0.0.1), as a user writes there: ``s3://`` URIs, the AWS variables.

After each step — inserts, upserts (merge-on-read: log files, each a new object), deletes, bulk
insert, insert overwrite, compaction, clean — the spec reader and hudi-rs (given the endpoint and
keys as storage options) read exactly the rows the spec model predicts. A representative set of
table kinds (one per table version, log writes included) runs in ``make test``; every table type and
version (6, 8, 9) under the ``slow`` mark. And the
request bill: a 60-row upsert into 3 file groups costs at most ``UPSERT_REQUEST_BUDGET`` requests.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from conformance.interface.ops import CreateTable
from reference.api import HudiTable
from reference.executors.archive import archive
from reference.executors.clean import clean
from reference.executors.common import load_table
from reference.executors.restore import restore
from reference.executors.rollback import rollback
from reference.executors.savepoint import savepoint_create, savepoint_delete
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.model import Env, TableModel
from spec.model.operations import Archive, Clean, Compact, Restore, Rollback, Savepoint, Write
from spec.model.queries import snapshot
from spec.read.reader import read_table
from spec.timeline.active_timeline import Timeline
from tests.hudi_rs import hudi_rs_read

UPSERT_REQUEST_BUDGET = 80
KINDS = [("COPY_ON_WRITE", 6), ("COPY_ON_WRITE", 8), ("COPY_ON_WRITE", 9), ("MERGE_ON_READ", 6), ("MERGE_ON_READ", 8),
         ("MERGE_ON_READ", 9)]
FAST_KINDS = [("COPY_ON_WRITE", 8), ("MERGE_ON_READ", 6), ("MERGE_ON_READ", 9)]


def _options(table_type: str, version: int) -> dict[str, str]:
    return {"hoodie.table.name": "s3t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": str(version),
            "hoodie.clean.automatic": "false", "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "20", "hoodie.keep.max.commits": "30"}


def _rec(i: int, ts: int, city: str = "sf") -> dict[str, Any]:
    return {"id": i, "ts": ts, "city": city, "v": f"v{i}@{ts}"}


STEPS: list[tuple[str, list[dict[str, Any]]]] = [
    ("insert", [_rec(1, 1), _rec(2, 1), _rec(3, 1, "la")]),
    ("upsert", [_rec(1, 5), _rec(2, 0), _rec(4, 1, "la")]),
    ("upsert", [_rec(3, 6, "la"), _rec(5, 1, "ny")]),
    ("delete", [_rec(2, 9)]),
    ("bulk_insert", [_rec(6, 1, "ny")]),
    ("insert_overwrite", [_rec(7, 1, "ny")]),
]


def _triples(rows: Any) -> list[tuple[str, str, str]]:
    return sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"], r["v"]) for r in rows)


def check_against_model(path: str, model: TableModel, s3_server: Any, step: str) -> None:
    """After ``step``, the spec reader and hudi-rs (given the server as storage options) read the model's snapshot."""
    predicted = _triples(snapshot(model.state))
    assert _triples(read_table(path).to_pylist()) == predicted, step
    theirs = hudi_rs_read(path, storage_options=s3_server.storage_options())
    assert _triples(theirs.to_pylist() if theirs is not None else []) == predicted, f"hudi-rs after {step}"


def _every_step(path: str, s3_server: Any, table_type: str, version: int) -> None:
    config = CreateTable(table_type=table_type, table_version=version, partition_fields=("city",),
                         clean_commits_retained=1)
    model = TableModel(config, Env.deterministic())
    table = HudiTable(path, engine="local")
    options = _options(table_type, version)

    def check(step: str) -> None:
        check_against_model(path, model, s3_server, step)

    for op, batch in STEPS:
        table.write(pa.Table.from_pylist(batch), op, options)
        model.apply(Write(op, tuple(batch)))
        check(op)
    if table_type == "MERGE_ON_READ":
        logs = [o["Key"] for o in s3_server.client().list_objects_v2(Bucket=path.split("/")[2])["Contents"]
                if ".log." in o["Key"]]
        assert logs, "the merge-on-read upserts wrote no log files"
        assert table.compact(options) is not None
        model.apply(Compact())
        check("compaction")
    storage, cfg = load_table(path)
    assert clean(storage, cfg, CleanConfig("KEEP_LATEST_COMMITS", 1, 3, 24)).instant is not None
    model.apply(Clean())
    check("clean")


@pytest.mark.parametrize(("table_type", "version"), FAST_KINDS)
def test_every_write_step_on_s3_reads_as_the_model_predicts(table_type: str, version: int, s3_server: Any,
                                                            s3_path: str) -> None:
    _every_step(s3_path, s3_server, table_type, version)


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "version"), [k for k in KINDS if k not in FAST_KINDS])
def test_every_write_step_on_s3_every_kind(table_type: str, version: int, s3_server: Any, s3_path: str) -> None:
    _every_step(s3_path, s3_server, table_type, version)


def _services(path: str, s3_server: Any, table_type: str, version: int) -> None:
    """Savepoint, more writes, rollback, restore and archival on S3, each read as the model predicts."""
    config = CreateTable(table_type=table_type, table_version=version, partition_fields=("city",),
                         clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3)
    model = TableModel(config, Env.deterministic())
    table = HudiTable(path, engine="local")
    options = {**_options(table_type, version), "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
               "hoodie.archive.automatic": "false"}

    def check(step: str) -> None:
        check_against_model(path, model, s3_server, step)

    def write(op: str, batch: list[dict[str, Any]]) -> None:
        table.write(pa.Table.from_pylist(batch), op, options)
        model.apply(Write(op, tuple(batch)))

    for op, batch in STEPS[:3]:
        write(op, batch)
    storage, cfg = load_table(path)
    savepoint_create(storage, cfg)
    model.apply(Savepoint())
    write("upsert", [_rec(1, 7), _rec(8, 1, "la")])
    write("upsert", [_rec(2, 8), _rec(9, 1)])
    check("writes after the savepoint")
    rollback(storage, cfg)
    model.apply(Rollback())
    check("rollback")
    savepoint = Timeline.load(path).filter_actions("savepoint").instants[0].requested
    restore(storage, cfg, savepoint)
    model.apply(Restore())
    check("restore")
    savepoint_delete(storage, cfg, savepoint)  # (rows do not depend on it: the model keeps its savepoint)
    # enough writes for the metadata table (versions 8 and 9) to compact once, before which nothing is archived
    # (spec.actions.archive.metadata_table_retains, as Apache Hudi's TimelineArchiverV2)
    for i in range(10):
        write("upsert", [_rec(10 + i, 1)])
    assert archive(storage, cfg, ArchiveConfig(2, 3)).archived
    model.apply(Archive())
    check("archival")


@pytest.mark.parametrize(("table_type", "version"), [("MERGE_ON_READ", 6)])
def test_rollback_savepoint_restore_archival_on_s3(table_type: str, version: int, s3_server: Any,
                                                   s3_path: str) -> None:
    _services(s3_path, s3_server, table_type, version)


@pytest.mark.slow
@pytest.mark.parametrize(("table_type", "version"), [k for k in KINDS if k != ("MERGE_ON_READ", 6)])
def test_rollback_savepoint_restore_archival_on_s3_every_kind(table_type: str, version: int, s3_server: Any,
                                                              s3_path: str) -> None:
    _services(s3_path, s3_server, table_type, version)


def upsert_requests(s3_server: Any, path: str, table_type: str = "COPY_ON_WRITE") -> Counter[str]:
    """The requests of a 60-row upsert into 3 file groups (one per partition) of a table written once."""
    options = {**_options(table_type, 8), "hoodie.clean.automatic": "true"}

    def batch(ts: int) -> pa.Table:
        return pa.Table.from_pylist([{"id": i, "ts": ts, "city": f"c{i % 3}", "v": f"v{i}@{ts}"} for i in range(60)])

    table = HudiTable(path, engine="local")
    table.write(batch(1), "upsert", options)
    s3_server.log.clear()
    table.write(batch(2), "upsert", options)
    requests = Counter(f"{m} {'list' if 'list-type' in q else 'object'}" for m, _, q in s3_server.log.snapshot())
    assert sorted(r["v"] for r in read_table(path).to_pylist()) == sorted(f"v{i}@2" for i in range(60))
    return requests


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_60_row_upsert_into_3_file_groups_costs_at_most_80_requests(table_type: str, s3_server: Any,
                                                                      s3_path: str) -> None:
    requests = upsert_requests(s3_server, s3_path, table_type)
    assert sum(requests.values()) <= UPSERT_REQUEST_BUDGET, requests

"""The corpus's cases for each rule where a writer could depart from Apache Hudi (the fidelity
issue's departures): duplicate keys in one batch per operation (Hudi's ``hoodie.combine.before.*``),
an insert into a small file keeping duplicates (``HoodieConcatHandle``), null ordering values and
null or empty partition values, bulk_insert per sort mode (``BulkInsertSortMode``), schema changes
allowed and refused (``SchemaChangeUtils.isTypeUpdateAllow``) and write options that conflict with
the table (``HoodieWriterUtils.validateTableConfig``), and a delete after a logged update of its key, whose
ordering value Hudi's reader needs as Hudi writes it. ``conformance.generate.corpus`` places them in the writes
suite (the last in the logs suite)."""

from __future__ import annotations

from typing import Final

from conformance.case_kit import COW, MOR, Builder, rec, w
from conformance.case_kit import config as _config
from conformance.case_kit import make_case as _case
from conformance.interface.ops import Case, Op
from spec.model.operations import ExpectError, Write

WRITE_OPERATIONS_ALL: Final = ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table", "upsert",
                               "delete")


def duplicates_in_batch(operation: str, combine: bool = False) -> Builder:
    """Two versions of one key in one batch of ``operation``: Hudi combines them only where the
    operation's ``hoodie.combine.before.*`` option is on (upsert, delete: on; the inserting
    operations: off, so both versions are written)."""
    def build(tt: str, v: int) -> Case:
        key = "insert" if operation in ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table") \
            else operation
        options = (("hoodie.combine.before.insert", "true"),) if combine else ()
        first = w("insert", rec(1, 1), rec(2, 1, "b"))
        batch = (w("delete", rec(2, 2, "b"), rec(2, 3, "b")) if operation == "delete"
                 else w(operation, rec(3, 2, v="x"), rec(3, 1, v="y"), rec(1, 4, v="z")))
        name = f"duplicates-{operation.replace('_', '-')}{'-combined' if combine else ''}"
        return _case(name, tt, v, f"two versions of one key in one {operation} batch: "
                     f"hoodie.combine.before.{key} {'on' if combine or key in ('upsert', 'delete') else 'off'}",
                     [f"write:{operation}", "duplicates", "bug:duplicates-after-upsert"],
                     _config(tt, v, options=options), [first, batch])
    return build


DUPLICATE_BUILDERS: Final[tuple[Builder, ...]] = (
    *(duplicates_in_batch(op) for op in WRITE_OPERATIONS_ALL), duplicates_in_batch("insert", combine=True))


def insert_into_small_file(tt: str, v: int) -> Case:
    return _case("insert-small-file-duplicates", tt, v, "an insert routed to a small file keeps the file's rows and "
                 "appends every incoming record, a key the file holds included (hoodie.merge.allow.duplicate."
                 "on.inserts, Hudi's concat handle)", ["write:insert", "duplicates"], _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)), w("insert", rec(1, 5, v="again"), rec(3, 1))])


def null_ordering_and_partitions(tt: str, v: int) -> Case:
    return _case("null-ordering-partition", tt, v, "a null ordering value is kept by an insert (which does not "
                 "combine) and refused by an upsert (which does); a null or empty partition value goes to "
                 "__HIVE_DEFAULT_PARTITION__", ["write:insert", "write:upsert", "expect_error", "null"],
                 _config(tt, v),
                 [w("insert", rec(1, 1), {"id": 2, "ts": None, "p": "a", "v": "n"}, {"id": 3, "ts": 1, "p": None,
                                                                                   "v": "np"},
                    {"id": 4, "ts": 1, "p": "", "v": "ep"}),
                  ExpectError("invalid_record"), w("upsert", {"id": 1, "ts": None, "p": "a", "v": "x"}),
                  w("upsert", rec(2, 3, v="over-null"), {"id": 3, "ts": 2, "p": None, "v": "np2"})])


def bulk_insert_sort_mode(mode: str) -> Builder:
    """bulk_insert under one ``hoodie.bulkinsert.sort.mode``: no workload profile, so a batch larger
    than the insert sizing's file (record size estimate 100, max file size 1000) still gives one file
    per partition path of its one input partition (``spec.write.bulk_insert``)."""
    def build(tt: str, v: int) -> Case:
        return _case(f"bulk-insert-{mode.lower().replace('_', '-')}", tt, v,
                     f"bulk_insert with hoodie.bulkinsert.sort.mode={mode}: one new file group per partition path, "
                     "however many records", ["write:bulk_insert", "layout", "bulk_insert_sort_mode"],
                     _config(tt, v, max_file_size=1000, record_size_estimate=100, small_file_limit=0,
                             options=(("hoodie.bulkinsert.sort.mode", mode),)),
                     [w("bulk_insert", *(rec(i, 1, "a" if i % 4 else "b") for i in range(25, 0, -1))),
                      w("upsert", rec(3, 2), rec(4, 2, "b"))])
    return build


def schema_changes(tt: str, v: int) -> Case:
    """Column types across writes (``spec.schema.evolution``)."""
    return _case("schema-change", tt, v, "a column evolves long → double → string (older files read by casting), "
                 "a long written into the string column is written as a string, a boolean is refused",
                 ["write:upsert", "schema", "expect_error"], _config(tt, v),
                 [w("insert", rec(1, 1, n=1), rec(2, 1, "b", n=2)),
                  w("upsert", rec(1, 2, n=1.5)),
                  w("upsert", rec(3, 1, n="s")),
                  w("upsert", rec(4, 1, n=7)),
                  ExpectError("schema_mismatch"), w("upsert", rec(5, 1, n=True)),
                  w("upsert", rec(1, 3, n="t"))])


def option_conflicts(tt: str, v: int) -> Case:
    """Write options against the table's hoodie.properties (``spec.write.writer_utils``): the table type's
    write option naming the other type is taken with the table's type, its table property is compared, and
    its value is the enum's name (Apache Hudi 1.2.0)."""
    other_type = MOR if tt == COW else COW
    conflicting = (("hoodie.table.type", other_type),
                   ("hoodie.datasource.write.recordkey.field", "v"),
                   ("hoodie.datasource.write.precombine.field", "v"),
                   ("hoodie.datasource.write.partitionpath.field", "v"),
                   ("hoodie.datasource.write.hive_style_partitioning", "true"),
                   ("hoodie.datasource.write.partitionpath.urlencode", "true"))
    # another hoodie.write.table.version is no case here: Apache Hudi upgrades the table to it
    # (hoodie.write.auto.upgrade), which this specification does not describe, so the writer refuses it by design
    # (spec.write.writer_utils.validate_table_version, tests/test_writer_utils.py)
    ops: list[Op] = [w("insert", rec(1, 1), rec(2, 1, "b")),
                     Write("upsert", (rec(2, 2, "b"),), options=(("hoodie.datasource.write.table.type", other_type),))]
    for key, value in conflicting:
        ops += [ExpectError("config_conflict"), Write("upsert", (rec(1, 2),), options=((key, value),))]
    # the key generator's type names a new table's: taken, with the table's key generator keying the write
    ops.append(Write("upsert", (rec(2, 3, "b"),), options=(("hoodie.datasource.write.keygenerator.type", "COMPLEX"),)))
    ops += [ExpectError("invalid_config"),
            Write("upsert", (rec(1, 2),), options=(("hoodie.datasource.write.table.type", tt.lower()),))]
    same = (("hoodie.datasource.write.table.type", tt), ("hoodie.table.type", tt),
            ("hoodie.datasource.write.recordkey.field", "id"), ("hoodie.write.table.version", str(v)))
    ops.append(Write("upsert", (rec(1, 3),), options=same))
    return _case("option-conflicts", tt, v, "a write whose hoodie.datasource.write.table.type names the other "
                 "type is written with the table's type, one whose key generator type names another with the "
                 "table's key generator; a write whose table type property, record key, ordering "
                 "field, partition fields, hive-style or url-encoded partitioning "
                 "differs from the table's is refused (config_conflict), and one whose table type is not the "
                 "enum's name (invalid_config), each leaving the table as it was; repeating the table's values "
                 "is not a conflict", ["expect_error", "options", "config_conflict"], _config(tt, v), ops)


def update_then_delete(tt: str, v: int) -> Case:
    """A key updated, then deleted by the delete operation: on the log path the delete follows the key's logged
    update, and its ordering value is Hudi's natural-order default, ``Integer`` 0 (a null one fails Apache Hudi
    1.2.0's reader: ``spec.file_group.log_file.delete_block.NATURAL_ORDERING``)."""
    return _case("update-then-delete", tt, v, "a key updated, then deleted by the delete operation, then another "
                 "key updated", ["write:upsert", "write:delete", "bug:delete-after-logged-update-unreadable"],
                 _config(tt, v),
                 [w("insert", rec(1, 1), rec(2, 1)),
                  w("upsert", rec(1, 2)),
                  w("delete", rec(1, 3)),
                  w("upsert", rec(2, 4))])

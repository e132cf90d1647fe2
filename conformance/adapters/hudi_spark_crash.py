"""A crash of Apache Hudi's write at the point a case names (``crash``), by Hudi's own failure paths: after all
of the write's data files, before its commit, by a pre-commit validation that fails; before its first data file,
after its inflight instant, by direct markers whose folder cannot be made (Hudi writes a data file's marker before
the file, so the write fails in its first write task). Hudi's next write rolls the failed one back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from conformance.adapters.hudi_spark_refusals import java_causes
from spec.errors import InvalidOperation

FAILING_VALIDATOR: Final = {
    "hoodie.precommit.validators": "org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator",
    "hoodie.precommit.validators.single.value.sql.queries": "select count(*) from <TABLE_NAME> where 1 = 0#1",
}
"""A pre-commit validation that always fails (the query counts no rows, 1 is expected): Hudi's write stops after
its data files, before its commit (``SparkValidatorUtils.runValidators``: ``HoodieValidationException``)."""

DIRECT_MARKERS: Final = {"hoodie.write.markers.type": "DIRECT"}
"""Markers written as files under ``.hoodie/.temp/<instant>/`` by the write task itself (``DirectWriteMarkers``),
each before its data file."""

MARKER_ROOT: Final = ".hoodie/.temp"


def crash_options(after_files: int) -> dict[str, str]:
    """The write options that stop a write after ``after_files`` data files: none written (0), by direct
    markers under a marker root that is not a folder; else after all of them, by a failing validator."""
    return dict(DIRECT_MARKERS) if after_files == 0 else dict(FAILING_VALIDATOR)


def failed_at(err: BaseException, java_class: str) -> bool:
    """Whether Hudi's failure ``err`` was caused by a Java exception of that simple name
    (``hudi_spark_refusals.java_causes``)."""
    return any(str(java.getClass().getSimpleName()) == java_class for java in java_causes(err))


def data_files(table: Path) -> set[Path]:
    """The files in the table's partitions (none of ``.hoodie``, no checksums)."""
    return {f for f in table.rglob("*") if f.is_file() and ".hoodie" not in f.parts
            and not f.name.endswith(".crc") and not f.name.startswith(".hoodie_partition_metadata")}


def stopped_write(table: Path, after: int, write: Callable[[dict[str, str]], None],
                  pending: Callable[[], list[str]]) -> None:
    """``write`` (given the options on top of its own) on ``table``, stopped after ``after`` data files
    (``crash_options``): it must fail with Hudi's failure at that point and leave a pending instant
    (``pending``) with no data file (0) or with ``after`` of them, else the case cannot be run here
    (``InvalidOperation``). The marker root is put back as it was."""
    root = table / MARKER_ROOT
    aside = root.with_name(root.name + ".aside")
    before = data_files(table)
    if after == 0 and root.exists():
        root.rename(aside)
    try:
        if after == 0:
            root.parent.mkdir(parents=True, exist_ok=True)
            root.write_bytes(b"")
        try:
            write(crash_options(after))
        except Exception as err:
            if not failed_at(err, "HoodieValidationException" if after else "ParentNotDirectoryException"):
                raise
        else:
            raise InvalidOperation(f"the write was to stop after {after} data files but committed",
                                   hint="see crash_options")
    finally:
        if after == 0:
            root.unlink(missing_ok=True)
            if aside.exists():
                aside.rename(root)
    files = data_files(table) - before
    if not pending():
        raise InvalidOperation("the stopped write left no pending instant", hint="see crash_options")
    if after == 0 and files:
        raise InvalidOperation(f"the write stopped before its first data file wrote {len(files)}",
                               hint="see crash_options")
    if after and len(files) != after:
        raise InvalidOperation(f"Apache Hudi's write stops before its first data file or after its last; the "
                               f"case stops it after {after} of its {len(files)}",
                               hint="crash with after_files 0, or the write's number of files")

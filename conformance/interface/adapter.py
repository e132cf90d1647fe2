"""The interface between the conformance suite and an implementation under test.

An implementation plugs in as a ``TableUnderTest``: it declares its ``capabilities`` (the table
types, table versions and operations it supports), creates a table for a case's configuration,
applies operations one at a time, and answers raw reads — the timeline, per partition the file
groups it sees, and the rows of a query. The harness (``conformance.observe``) turns those raw
answers into normalized observations, the same way for every implementation, the spec model
included.

Rules:

- A case that needs a capability the adapter does not declare is reported ``SKIP`` with the
  missing capabilities as the reason — never ``PASS``.
- ``apply`` must raise a ``spec.errors`` error (``HudiSpecError`` subclass) when the implementation
  refuses an operation; an ``expect_error`` case step checks its kind.
- ``expect_error`` is handled by the harness, never passed to an adapter.
- An adapter that writes a table directory can leave the reads to ``DirectoryReads``, which reads
  it with the spec's own reader (``spec.read.reader``, ``spec.file_group.file_system_view``,
  ``spec.timeline.active_timeline``), so
  any implementation that writes a table on disk is observed the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from conformance.interface.ops import Case, CreateTable, to_json
from spec.model.operations import Concurrent, ExpectError, Operation, OperationHandler, Write, dispatch
from spec.storage.hoodie_storage import Storage
from spec.write.ledger import Ledger

LAYERS: Final = ("L0", "L1", "L2", "L3", "L4")
"""L0 rows, L1 timeline, L2 layout, L3 bytes (file names and block sequences; opt-in), L4 ledger (commit
metadata, compaction plans, meta-column and file-accounting invariants)."""

DEFAULT_LAYERS: Final = ("L0", "L1", "L2", "L4")


@dataclass(frozen=True)
class Query:
    """One read: ``snapshot``, ``read_optimized``, ``time_travel`` (``as_of``) or ``incremental``
    (``begin`` exclusive — None is the start of the table — to ``end`` inclusive). Times are the
    implementation's own instant times."""

    kind: str
    as_of: str | None = None
    begin: str | None = None
    end: str | None = None


@dataclass(frozen=True)
class RawSlice:
    """A file slice as an implementation reports it: base instant, whether it has a base file, the
    versions of its log files."""

    base_instant: str
    has_base: bool
    log_versions: tuple[int, ...]


@dataclass(frozen=True)
class RawGroup:
    """A visible file group: its file id, slices oldest first, the record keys of its latest slice."""

    file_id: str
    slices: tuple[RawSlice, ...]
    keys: tuple[str, ...]


RawTimeline = tuple[tuple[str, str, str, str | None], ...]
"""Active timeline, ordered: (requested time, action, state, completion time or None)."""

RawLayout = Mapping[str, Sequence[RawGroup]]
"""Partition path → its visible file groups."""

RawRows = Sequence[Mapping[str, Any]]
"""Rows of a query with the five meta columns and the data columns."""


class _Needs(OperationHandler[frozenset[str]]):
    """The capabilities an operation needs: ``write:<operation>`` for a write, none for ``expect_error``
    (the harness checks it), else the operation's JSON name."""

    def _named(self, op: Operation) -> frozenset[str]:
        return frozenset({str(to_json(op)["op"])})

    def write(self, op: Write) -> frozenset[str]:
        """``write:<operation>``."""
        return frozenset({f"write:{op.operation}"})

    def expect_error(self, op: ExpectError) -> frozenset[str]:
        """None: the harness checks it."""
        return frozenset()

    def concurrent(self, op: Concurrent) -> frozenset[str]:
        """``concurrent`` and what each member needs."""
        return frozenset({"concurrent"}).union(*(dispatch(self, m) for m in op.members))

    delete_partition = compact = cluster = clean = rollback = savepoint = restore = archive = stream = crash = _named


_NEEDS: Final = _Needs()


def op_capabilities(op: Operation) -> frozenset[str]:
    """The capabilities an operation needs (``spec.model.operations.dispatch`` over ``_Needs``)."""
    return dispatch(_NEEDS, op)


def config_capabilities(config: CreateTable) -> set[str]:
    """What a table configuration needs: its table type, ``v<version>``, its key generator, its merge
    mode, its index when it names one (``index:<type>``), and the services it turns on inside writes
    (``inline_compact``, ``auto_clean``, ``auto_archive``: each also needs the service itself)."""
    needs = {config.table_type, f"v{config.table_version}", f"keygen:{config.resolved_key_generator}",
             f"merge:{config.merge_mode}"}
    if config.index_type is not None:
        needs.add(f"index:{config.index_type}")
    for flag, service in (("inline_compact", "compact"), ("auto_clean", "clean"), ("auto_archive", "archive")):
        if getattr(config, flag):
            needs |= {flag, service}
    return needs


def required_capabilities(case: Case) -> frozenset[str]:
    """Every capability a case needs (``expect_error`` needs none: the harness checks it)."""
    return frozenset(config_capabilities(case.config).union(
        *(op_capabilities(op) for op in case.ops if not isinstance(op, CreateTable))))


def missing_capabilities(case: Case, capabilities: frozenset[str]) -> list[str]:
    """The capabilities a case needs that an adapter lacks, sorted (empty: the case can run)."""
    return sorted(required_capabilities(case) - capabilities)


class NotSupported(Exception):
    """An implementation cannot answer this read at all (a program whose protocol has no such request):
    the layer it feeds is reported as not supported by the implementation, never as a crash."""


# --8<-- [start:table_under_test]
class TableUnderTest:
    """Base class of adapters. Subclasses set ``name`` and ``capabilities`` and implement ``create``,
    ``apply`` and the three raw reads (``timeline``, ``layout``, ``rows``), or mix in
    ``DirectoryReads`` and set ``self.path``.

    ``layers`` says which layers the adapter can be observed in (a read-only adapter that cannot see
    the layout leaves out L2; those layers are SKIPped). ``known_failures`` maps case ids to the
    reason they are expected to fail (reported XFAIL, not FAIL)."""

    name: ClassVar[str] = "adapter"
    capabilities: ClassVar[frozenset[str]] = frozenset()
    layers: ClassVar[frozenset[str]] = frozenset(LAYERS)
    known_failures: ClassVar[Mapping[str, str]] = {}
    chooses_instant_times: ClassVar[bool] = False
    """Whether the implementation picks its own instant times (Apache Hudi's datasource): the runner then maps a
    case's named instants to the implementation's by order (``conformance.runner.apply_choosing_times``)."""
    crash_points: ClassVar[tuple[int, ...]] = (0, 1, 2)
    """The ``after_files`` values of ``crash`` the lockstep state machine draws for this implementation: where it
    can stop a write. One that can stop a write only before its first data file or after its last (a killed
    process, as the reference is) declares ``(0, 99)``; a case that stops it between files is refused there."""
    unavailable: str | None = None
    """Why the implementation cannot run here (a missing jar, a missing program): every case is then
    SKIPped with this reason."""
    unobserved: Mapping[str, str] = {}
    """Optional: per layer the adapter is not observed in, why (shown as that layer's SKIP reason)."""

    def create(self, config: CreateTable, workdir: Path) -> None:
        """Create the table a case runs on (``workdir`` is a fresh, empty directory)."""
        raise NotImplementedError

    def apply(self, op: Operation) -> None:
        """Apply one operation; raise a ``spec.errors`` error when the implementation refuses it."""
        raise NotImplementedError

    def timeline(self) -> RawTimeline:
        raise NotImplementedError

    def layout(self) -> RawLayout:
        raise NotImplementedError

    def rows(self, query: Query) -> RawRows:
        raise NotImplementedError

    def files(self) -> Mapping[str, Sequence[tuple[str, tuple[tuple[str, str], ...]]]]:
        """L3: per partition the data file names, each with its log blocks as (block type, instant)
        (empty for base files). Optional: adapters without it are not observed in L3."""
        raise NotImplementedError

    def ledger(self) -> Ledger:
        """L4: the table's ledger (``spec.write.ledger.Ledger``: data files with their meta columns, the
        instants that account for them, commit summaries, compaction plans). Optional: adapters
        without it are not observed in L4."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what ``create`` acquired (called once per case, also after a failure)."""
# --8<-- [end:table_under_test]


class ReaderOfWrittenTables(TableUnderTest):
    """A reader under test: ``writer`` (an adapter that leaves a table directory at ``.path``) creates the
    table and applies every operation, and the subclass reads it (``rows``). Observed in its rows (L0)
    alone; the writer's timeline and layout are passed through, and the writer's known failures are the
    reader's too (the reader sees the writer's table), with ``own_failures`` added."""

    layers: ClassVar[frozenset[str]] = frozenset({"L0"})
    reads_final_table: ClassVar[bool] = False
    """True for a reader whose queries are costly (a Spark job each): the conformance matrix reads each case's
    final table with it once (``conformance.reader_rows.read_final_table``), not the table after every step."""

    def __init__(self, writer: Any, own_failures: Mapping[str, str]) -> None:
        self.writer = writer
        self.unobserved = {layer: f"not supported by {self.name}: a reader is compared in its rows (L0) alone"
                           for layer in LAYERS[1:]}
        self.known_failures = {**dict(getattr(writer, "known_failures", {})), **own_failures}  # type: ignore[misc]

    @property
    def capabilities(self) -> frozenset[str]:  # type: ignore[override]  # the writer's
        caps: frozenset[str] = self.writer.capabilities
        return caps

    @property
    def path(self) -> str:
        return str(self.writer.path)

    def create(self, config: CreateTable, workdir: Path) -> None:
        self.writer.create(config, workdir)

    def apply(self, op: Operation) -> None:
        self.writer.apply(op)

    def timeline(self) -> RawTimeline:
        tl: RawTimeline = self.writer.timeline()
        return tl

    def layout(self) -> RawLayout:
        out: RawLayout = self.writer.layout()
        return out

    def close(self) -> None:
        self.writer.close()


class DirectoryReads:
    """Raw reads of a table directory at ``self.path`` with the spec's reader, file system view and
    timeline: what any implementation that writes a table on disk is observed with."""

    path: str

    def timeline(self) -> RawTimeline:
        from spec.config.table_config import TableConfig
        from spec.timeline.active_timeline import Timeline

        storage = Storage(self.path)
        if not storage.exists(".hoodie/hoodie.properties"):
            return ()
        tl = Timeline.load(storage, TableConfig.load(storage).timeline_layout)
        return tuple((i.requested, str(i.action), str(i.state), i.completed) for i in tl.instants)

    def layout(self) -> RawLayout:
        from spec.file_group.file_system_view import FileSystemView
        from spec.read.reader import TableReader

        storage = Storage(self.path)
        if not storage.exists(".hoodie/hoodie.properties"):
            return {}
        reader = TableReader(storage)
        out: dict[str, list[RawGroup]] = {}
        for g in FileSystemView.load(storage).groups:
            sl = g.latest_slice
            table = reader.read_slice(sl) if sl is not None else None
            keys: tuple[str, ...] = ()
            if table is not None and table.num_columns:
                keys = tuple(sorted(str(k) for k in table.column("_hoodie_record_key").to_pylist()))
            slices = tuple(RawSlice(s.base_instant, s.base_file is not None,
                                    tuple(lf.version for lf in s.log_file_names)) for s in g.slices)
            out.setdefault(g.partition_path, []).append(RawGroup(g.file_id, slices, keys))
        return out

    def rows(self, query: Query) -> RawRows:
        from spec.read.reader import read_table

        storage = Storage(self.path)
        if not storage.exists(".hoodie/hoodie.properties"):
            return []
        kind = "snapshot" if query.kind == "time_travel" else query.kind
        table = read_table(storage, kind, as_of=query.as_of, begin=query.begin, end=query.end)
        return table.to_pylist() if table.num_columns else []

    def files(self) -> Mapping[str, Sequence[tuple[str, tuple[tuple[str, str], ...]]]]:
        from spec.file_group.file_naming import is_log_file_name
        from spec.file_group.file_system_view import list_data_files
        from spec.file_group.log_file.log_format import read_log_file

        storage = Storage(self.path)
        out: dict[str, list[tuple[str, tuple[tuple[str, str], ...]]]] = {}
        for f in list_data_files(storage):
            blocks: tuple[tuple[str, str], ...] = ()
            if is_log_file_name(f.name):
                blocks = tuple(_block_kind(r) for r in read_log_file(storage, f.path))
            out.setdefault(f.partition_path, []).append((f.name, blocks))
        return {p: sorted(v) for p, v in sorted(out.items())}


    def archived_times(self) -> frozenset[str]:
        """The archived instants' times, as the spec reads the table's archived timeline (they account for files
        as the active ones do), in the folder the table's config names (``hoodie.archivelog.folder``)."""
        from spec.actions.archive import archived_instants
        from spec.config.table_config import TableConfig
        from spec.storage.hoodie_storage import Storage

        storage = Storage(self.path)
        if not storage.exists(".hoodie/hoodie.properties"):
            return frozenset()
        return frozenset(i.requested for i in archived_instants(storage, TableConfig.load(storage)))

    def ledger(self) -> Ledger:
        from conformance.interface.ledger_reads import directory_ledger

        return directory_ledger(self.path, self.archived_times())


def _block_kind(record: Any) -> tuple[str, str]:
    """A log block as L3 compares it: its kind (data, delete, command, corrupt) and its instant."""
    from spec.file_group.log_file.log_format import BlockType

    block = record.block
    if block is None:
        return ("corrupt", "")
    kind = {BlockType.DELETE_BLOCK: "delete", BlockType.COMMAND_BLOCK: "command"}.get(block.block_type, "data")
    return (kind, str(block.instant_time or ""))

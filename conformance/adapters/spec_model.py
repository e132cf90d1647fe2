"""The spec model as an implementation under test: the oracle, in memory, observed through the same
harness code as any other adapter (its raw reads go through ``conformance.observe`` like a table
directory's). It supports every operation of the case language, so it passes every case — the
generated fixtures are its own observations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, cast

from conformance.interface.adapter import (
    LAYERS,
    Query,
    RawGroup,
    RawLayout,
    RawRows,
    RawSlice,
    RawTimeline,
    TableUnderTest,
)
from conformance.interface.ops import INDEX_TYPES, KEY_GENERATORS, MERGE_MODES, OP_NAMES, TABLE_TYPES, CreateTable
from spec.errors import InvalidOperation
from spec.model import Env, TableModel
from spec.model.ledger import ledger as model_ledger
from spec.model.operations import WRITE_OPERATIONS, Operation
from spec.model.queries import incremental, layout, query_instants, snapshot, time_travel_instants
from spec.write.ledger import Ledger

ALL_CAPABILITIES: frozenset[str] = frozenset(
    {*TABLE_TYPES, "v6", "v8", "v9", *(f"write:{w}" for w in WRITE_OPERATIONS),
     *(f"keygen:{k}" for k in KEY_GENERATORS), *(f"merge:{m}" for m in MERGE_MODES),
     *(f"index:{i}" for i in INDEX_TYPES),
     "inline_compact", "auto_clean", "auto_archive",
     *(name for name in OP_NAMES if name not in ("create_table", "write", "expect_error"))})
"""Every capability the case language can ask for."""


class SpecModelAdapter(TableUnderTest):
    """``spec.model.TableModel`` behind the adapter interface, with the deterministic environment
    (instants one second apart from 2024-01-01, file id prefixes ``00000000-0000-4000-8000-<n>``)."""

    name: ClassVar[str] = "spec"
    capabilities: ClassVar[frozenset[str]] = ALL_CAPABILITIES
    layers: ClassVar[frozenset[str]] = frozenset(LAYERS)

    def __init__(self) -> None:
        self.model: TableModel | None = None

    def create(self, config: CreateTable, workdir: Path) -> None:
        self.model = TableModel(cast(Any, config), Env.deterministic())

    @property
    def _model(self) -> TableModel:
        if self.model is None:
            raise InvalidOperation("the table was not created", hint="call create(config, workdir) first")
        return self.model

    def apply(self, op: Operation) -> None:
        self._model.apply(op)

    def timeline(self) -> RawTimeline:
        return tuple((i.requested, str(i.action), str(i.state), i.completed) for i in self._model.state.timeline)

    def layout(self) -> RawLayout:
        return {p: [RawGroup(g.file_id, tuple(RawSlice(s.base_instant, s.has_base, s.log_versions) for s in g.slices),
                             g.keys) for g in groups]
                for p, groups in layout(self._model.state).items()}

    def rows(self, query: Query) -> RawRows:
        state = self._model.state
        if query.kind == "snapshot":
            return snapshot(state)
        if query.kind == "read_optimized":
            return snapshot(state, None, read_optimized=True)
        if query.kind == "time_travel":
            return snapshot(state, query.as_of)
        if query.kind == "incremental":
            return incremental(state, query.begin, query.end)
        raise InvalidOperation(f"unknown query {query.kind!r}", hint="snapshot, read_optimized, time_travel or "
                               "incremental")

    def query_instants(self) -> tuple[str, ...]:
        """The time-travel reads the model predicts (completed writes whose files all survive)."""
        return query_instants(self._model.state)

    def time_travel_instants(self) -> tuple[str, ...]:
        """Those of ``query_instants`` a time-travel query may name (``spec.read.time_travel``)."""
        return time_travel_instants(self._model.state)

    def ledger(self) -> Ledger:
        return model_ledger(self._model.state)

    def files(self) -> Mapping[str, Sequence[tuple[str, tuple[tuple[str, str], ...]]]]:
        out: dict[str, list[tuple[str, tuple[tuple[str, str], ...]]]] = {}
        for g in self._model.state.groups:
            names: list[tuple[str, tuple[tuple[str, str], ...]]] = [(b.name, ()) for b in g.base_files]
            names += [(lf.name, tuple((b.kind, b.instant) for b in lf.blocks)) for lf in g.log_files]
            out.setdefault(g.partition, []).extend(names)
        return {p: sorted(v) for p, v in sorted(out.items()) if v}

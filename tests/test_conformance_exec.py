"""The process protocol (``--impl exec:CMD``, docs/conformance-protocol.md).

Two programs written against the protocol page alone are run as separate processes: the reference
(a writer) must give exactly the results its Python adapter gives — a representative subset on the
local engine here, the whole corpus under ``-m slow`` — and hudi-rs (a reader) exactly the results
of its Python adapter. Programs that break the protocol end the step as a crash, never a pass.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import resolve_impl
from conformance.adapters.exec import (
    KIND_COLUMN,
    ExecFactory,
    ProtocolError,
    encode_op,
    parse_hello,
    parse_layout,
    raise_error,
)
from conformance.adapters.exec_cmds.reference_cmd import decode_op
from conformance.adapters.hudi_rs import HudiRsAdapter
from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.interface.adapter import RawGroup, RawSlice
from conformance.runner import FixtureCase, Verdict, load_cases, run_case, run_cases
from spec.errors import InstantNotFound
from spec.model.operations import Clean, Concurrent, Stream, StreamRecord, Write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REFERENCE_CMD = f"{sys.executable} -m conformance.adapters.exec_cmds.reference_cmd --engine local"
HUDI_RS_CMD = f"{sys.executable} -m conformance.adapters.exec_cmds.hudi_rs_cmd"

WRITER_SUBSET = ("insert-upsert-delete-logs-mor-v8", "expect-errors-cow-v6", "schema-add-column-cow-v8",
                 "archive-cow-v8", "concurrent-same-group-cow-v6")
"""Log appends, refusals checked by kind, an added column, archiving (whose archived instants still account for
files in L4), writers at once; the rest under slow."""
ROWS_SUBSET = ("insert-upsert-delete-logs-mor-v8", "expect-errors-cow-v6")
"""Cases for a writer answering the reads itself (``reads: rows``)."""
READER_SUBSET = ("insert-upsert-delete-cow-v8", "pending-compaction-mor-v8", "pending-compaction-mor-v6")
"""A pass and two of hudi-rs's known departures (a version 8 incremental window before a compaction completed,
read from the compacted file; logs written while a compaction is pending, on version 6)."""


def _cases(ids: tuple[str, ...] | None = None) -> list[FixtureCase]:
    return [fc for fc in load_cases(FIXTURES) if ids is None or fc.case.id in ids]


def _same_results(direct: Any, through_exec: Any) -> None:
    """Every case's verdict, layers, first divergence and diff are the same (names aside)."""
    theirs = json.dumps([c.to_json() for c in through_exec.cases]).replace(through_exec.adapter, direct.adapter)
    assert json.loads(theirs) == [c.to_json() for c in direct.cases]
    assert through_exec.executed > 0


@pytest.fixture
def reference_exec() -> Any:
    factory = resolve_impl(f"exec:{REFERENCE_CMD}")
    yield factory
    factory.close()  # type: ignore[attr-defined]


def test_reference_through_exec_passes_what_the_reference_passes(reference_exec: Any) -> None:
    cases = _cases(WRITER_SUBSET)
    assert len(cases) == len(WRITER_SUBSET)
    through_exec = run_cases(cases, reference_exec)
    assert through_exec.adapter == "reference_local_exec"
    _same_results(run_cases(cases, ReferenceLocalAdapter), through_exec)
    assert {c.verdict for c in through_exec.cases} == {Verdict.PASS}


@pytest.mark.slow
def test_reference_through_exec_passes_the_whole_corpus(reference_exec: Any) -> None:
    cases = _cases()
    through_exec = run_cases(cases, reference_exec)
    assert through_exec.ok and through_exec.count(Verdict.SKIP) == 0
    _same_results(run_cases(cases, ReferenceLocalAdapter), through_exec)


def test_hudi_rs_through_exec_reads_what_its_python_adapter_reads() -> None:
    cases = _cases(READER_SUBSET)
    factory = ExecFactory(HUDI_RS_CMD, writer=resolve_impl("reference_local"))
    try:
        through_exec = run_cases(cases, factory)
    finally:
        factory.close()
    direct = run_cases(cases, lambda: HudiRsAdapter(ReferenceLocalAdapter))
    _same_results(direct, through_exec)
    verdicts = {c.case_id: c.verdict for c in through_exec.cases}
    assert [verdicts[c] for c in READER_SUBSET] == [Verdict.PASS, Verdict.XFAIL, Verdict.XFAIL]
    assert all(r.verdict == Verdict.SKIP and "not supported by hudi_rs_exec" in r.detail
               for c in through_exec.cases for r in c.layers if r.layer != "L0")


@pytest.mark.slow
def test_hudi_rs_through_exec_reads_the_whole_corpus_as_its_python_adapter() -> None:
    cases = _cases()
    factory = ExecFactory(HUDI_RS_CMD, writer=resolve_impl("reference_local"))
    try:
        through_exec = run_cases(cases, factory)
    finally:
        factory.close()
    assert through_exec.ok and through_exec.count(Verdict.SKIP) == 0
    _same_results(run_cases(cases, lambda: HudiRsAdapter(ReferenceLocalAdapter)), through_exec)


# --- protocol version 2: a writer answering the reads itself -----------------------------------------

def _run_rows(cmd_args: str, ids: tuple[str, ...]) -> Any:
    factory = resolve_impl(f"exec:{REFERENCE_CMD} --reads rows {cmd_args}")
    try:
        return run_cases(_cases(ids), factory, layers=("L0", "L1", "L2", "L4"))
    finally:
        factory.close()  # type: ignore[attr-defined]


def test_a_version_2_program_answering_reads_is_observed_in_its_layout() -> None:
    through_exec = _run_rows("", ROWS_SUBSET)
    assert through_exec.adapter == "reference_local_exec_rows_v2"
    direct = run_cases(_cases(ROWS_SUBSET), ReferenceLocalAdapter, layers=("L0", "L1", "L2"))
    for mine, theirs in zip(direct.cases, through_exec.cases, strict=True):
        layers = {r.layer: r for r in theirs.layers}
        assert [layers[r.layer].verdict for r in mine.layers] == [Verdict.PASS] * 3  # L0, L1 and L2 compared
        assert layers["L4"].verdict == Verdict.SKIP and "not supported by reference_local_exec_rows_v2" in \
            layers["L4"].detail
        assert theirs.verdict == Verdict.PASS


def test_a_version_1_program_answering_reads_still_runs_without_layout() -> None:
    """Without a layout, file groups are labelled from the snapshot's rows: a write splitting into two
    groups still reads as the model's g1 and g2."""
    through_exec = _run_rows("--protocol 1", (ROWS_SUBSET[0], "insert-split-cow-v6"))
    assert through_exec.adapter == "reference_local_exec_rows_v1" and len(through_exec.cases) == 2
    for case in through_exec.cases:
        layers = {r.layer: r for r in case.layers}
        assert case.verdict == Verdict.PASS, case.diff
        assert layers["L0"].verdict == layers["L1"].verdict == Verdict.PASS
        assert layers["L2"].verdict == Verdict.SKIP
        assert "not supported by reference_local_exec_rows_v1: it does not answer `layout` (protocol 1" in \
            layers["L2"].detail


def test_a_version_1_writer_of_a_directory_still_passes() -> None:
    factory = resolve_impl(f"exec:{REFERENCE_CMD} --protocol 1")
    try:
        through_exec = run_cases(_cases(("archive-cow-v8",)), factory)
    finally:
        factory.close()  # type: ignore[attr-defined]
    assert [c.verdict for c in through_exec.cases] == [Verdict.PASS]


# --- the protocol's pieces --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_records_files_round_trip_through_a_program(tmp_path: Path, fmt: str) -> None:
    write = Write("upsert", ({"id": 1, "p": "a", "ts": 2.5}, {"id": 2, "p": "b", "ts": 1.0}), "20240101000000000")
    encoded = encode_op(write, tmp_path, "step-1", fmt)
    assert "records" not in encoded and encoded["records_file"]["count"] == 2
    assert decode_op(json.loads(json.dumps(encoded))) == write
    stream = Stream(((StreamRecord("upsert", {"id": 1, "ts": 1}), StreamRecord("delete", {"id": 2, "ts": 1})),))
    encoded = encode_op(stream, tmp_path, "step-2", fmt)
    assert len(encoded["checkpoint_files"]) == 1
    assert decode_op(encoded) == stream
    if fmt == "json":
        first = json.loads(Path(encoded["checkpoint_files"][0]["path"]).read_text().splitlines()[0])
        assert first[KIND_COLUMN] == "upsert"
    both = Concurrent((Write("upsert", ({"id": 1, "p": "a", "ts": 3},)), Clean()), (1, 0), ("ok", "ok"))
    encoded = encode_op(both, tmp_path, "step-3", fmt)
    assert "records" not in encoded["members"][0] and encoded["members"][0]["records_file"]["count"] == 1
    assert decode_op(json.loads(json.dumps(encoded))) == both


def test_hello_is_checked() -> None:
    assert parse_hello({"protocol": 1, "role": "reader"}).reads == "rows"
    assert parse_hello({"protocol": 1, "capabilities": ["v6"]}).capabilities == {"v6"}
    assert parse_hello({"protocol": 1, "reads": "rows", "answers": ["timeline", "layout"]}).answers == {"timeline"}
    assert parse_hello({"protocol": 2, "reads": "rows"}).answers == {"timeline", "layout"}
    assert parse_hello({"protocol": 2, "reads": "rows", "answers": ["timeline"]}).answers == {"timeline"}
    for bad in ({"protocol": 3}, {"protocol": 1, "role": "both"}, {"protocol": 1, "record_formats": ["csv"]},
                {"protocol": 2, "answers": ["layout"]}, {"protocol": 2, "answers": ["timeline", "files"]}):
        with pytest.raises(ProtocolError):
            parse_hello(bad)


def test_a_layout_answer_is_checked() -> None:
    layout = parse_layout({"p=1": [{"file_id": "f1", "keys": ["1", "2"],
                                    "slices": [{"base_instant": "001", "has_base": True, "log_versions": [1, 2]}]}]})
    assert layout == {"p=1": [RawGroup("f1", (RawSlice("001", True, (1, 2)),), ("1", "2"))]}
    for bad in ({"p": [{"slices": []}]}, {"p": [{"file_id": "f", "slices": [{"has_base": True}]}]}, ["p"]):
        with pytest.raises(ProtocolError):
            parse_layout(bad)


def test_a_refusal_raises_its_error_kind() -> None:
    with pytest.raises(InstantNotFound, match="no such commit"):
        raise_error({"kind": "instant_not_found", "message": "no such commit"}, "apply")
    with pytest.raises(ProtocolError):
        raise_error({"kind": "not-a-kind"}, "apply")


FAKE = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        print(json.dumps({"id": req["id"], "ok": True, "protocol": 1, "capabilities": CAPS, **HELLO}), flush=True)
    elif req["type"] in ("create", "apply", "read"):
        print(json.dumps({"id": req["id"], "ok": True}), flush=True)
    elif req["type"] == "timeline" and HELLO:
        print(json.dumps({"id": req["id"], "ok": True, "timeline": []}), flush=True)
    else:
        print(ANSWER, flush=True)
"""


def _fake_program(tmp_path: Path, answer: str, hello: dict[str, Any] | None = None) -> str:
    """A program answering ``answer`` to every apply (or, with ``hello``, to every layout request)."""
    script = tmp_path / "fake.py"
    caps = sorted(ReferenceLocalAdapter.capabilities)
    fake = FAKE if hello else FAKE.replace('("create", "apply", "read")', '("create",)')
    script.write_text(fake.replace("CAPS", repr(caps)).replace("ANSWER", answer).replace("HELLO", repr(hello or {})))
    return f"{sys.executable} {script}"


@pytest.mark.parametrize(("answer", "outcome"), [
    ("json.dumps({'id': req['id'], 'ok': True, 'layout': {'': [{'slices': 3}]}})",
     "crashed ProtocolError while observed"),
    ("json.dumps({'id': req['id'], 'ok': False, 'error': {'kind': 'invalid_table', 'message': 'no'}})",
     "crashed InvalidTable while observed: no")])
def test_a_version_2_program_failing_its_layout_fails_the_case(tmp_path: Path, answer: str, outcome: str) -> None:
    factory = ExecFactory(_fake_program(tmp_path, answer, {"protocol": 2, "reads": "rows"}))
    try:
        result = run_case(_cases(("insert-upsert-delete-cow-v6",))[0], factory)
    finally:
        factory.close()
    assert result.verdict == Verdict.FAIL and result.first_divergence == 1
    assert outcome in result.diff


def test_a_program_without_layout_is_never_asked_for_it(tmp_path: Path) -> None:
    """Version 2 with ``answers: [timeline]``: a layout request would get the 'not json' answer and crash."""
    factory = ExecFactory(_fake_program(tmp_path, "'not json'", {"protocol": 2, "reads": "rows",
                                                                  "answers": ["timeline"]}))
    try:
        result = run_case(_cases(("insert-upsert-delete-cow-v6",))[0], factory, layers=("L1", "L2"))
    finally:
        factory.close()
    layers = {r.layer: r for r in result.layers}
    assert layers["L2"].verdict == Verdict.SKIP and "does not answer `layout`" in layers["L2"].detail
    assert layers["L1"].verdict == Verdict.FAIL  # the fake's timeline is empty: compared, and wrong


@pytest.mark.parametrize("answer", ["'not json'", "json.dumps({'id': -1, 'ok': True})", "'{}'[:0] or sys.exit(3)"])
def test_a_program_breaking_the_protocol_crashes_the_case(tmp_path: Path, answer: str) -> None:
    factory = ExecFactory(_fake_program(tmp_path, answer))
    try:
        result = run_case(_cases(("insert-upsert-delete-cow-v6",))[0], factory)
    finally:
        factory.close()
    assert result.verdict == Verdict.FAIL
    assert "crashed ProtocolError" in result.diff

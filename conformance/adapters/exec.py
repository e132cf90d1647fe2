"""An implementation in any language, as a program speaking the process protocol (``--impl exec:CMD``).

The protocol (docs/conformance-protocol.md, versions 1 and 2): JSON lines over the program's stdin
and stdout, one response per request — ``hello`` (protocol version, role, capabilities), then per
case ``create`` and one ``apply`` per operation (a write's records in a JSON Lines or Parquet file),
and ``read`` / ``timeline`` (and, from version 2, ``layout``) for programs that answer reads
themselves. A writer with ``reads: directory`` is observed by reading its table directory
(``DirectoryReads``, the archived timeline included); a reader is paired with a writer adapter
(``--writer``, by default the reference) and observed in L0. A layer a program cannot be observed in
(a version-1 program answering reads itself has no ``layout``) is SKIPped as not supported by it.

One program serves a whole run: ``ExecFactory`` starts it on first use and hands every case's
adapter the same session.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import queue
import shlex
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from conformance.interface.adapter import (
    LAYERS,
    DirectoryReads,
    NotSupported,
    Query,
    RawGroup,
    RawLayout,
    RawRows,
    RawSlice,
    RawTimeline,
    TableUnderTest,
)
from conformance.interface.ops import CreateTable, to_json
from spec.errors import ERROR_KINDS, HudiSpecError, InvalidConfig
from spec.model.operations import Concurrent, Operation

PROTOCOL_VERSIONS: Final = (1, 2)
ANSWERS: Final = {1: ("timeline",), 2: ("timeline", "layout")}
"""The reads a ``reads: rows`` writer answers by protocol version (unless its ``hello`` lists fewer)."""
ANSWER_LAYERS: Final = {"timeline": "L1", "layout": "L2"}
KIND_COLUMN: Final = "_conformance_kind"
"""The field of a stream checkpoint's records file that says ``upsert`` or ``delete``."""
TIMEOUT: Final = 900.0
"""Seconds the suite waits for one response."""


class ProtocolError(Exception):
    """The program broke the protocol (bad JSON, wrong id, exited): the step crashed."""


@dataclass(frozen=True)
class Hello:
    """What a program said of itself in its ``hello`` response."""

    protocol: int
    name: str
    role: str
    reads: str
    capabilities: frozenset[str]
    record_formats: tuple[str, ...]
    known_failures: Mapping[str, str] = field(default_factory=dict)
    answers: frozenset[str] = frozenset(ANSWERS[1])
    """The observation requests a ``reads: rows`` writer answers (``timeline``, and ``layout`` from
    version 2)."""


def parse_hello(msg: Mapping[str, Any]) -> Hello:
    """Check a ``hello`` response and keep what it declares; ProtocolError when malformed."""
    if msg.get("protocol") not in PROTOCOL_VERSIONS:
        raise ProtocolError(f"the program speaks protocol {msg.get('protocol')!r}; the suite speaks "
                            f"{list(PROTOCOL_VERSIONS)}")
    role = msg.get("role", "writer")
    reads = msg.get("reads", "directory" if role == "writer" else "rows")
    if role not in ("writer", "reader") or reads not in ("directory", "rows"):
        raise ProtocolError(f"hello: role {role!r} / reads {reads!r}: role is writer or reader, reads is "
                            "directory or rows")
    formats = tuple(f for f in msg.get("record_formats", ["json"]) if f in ("json", "parquet"))
    if not formats:
        raise ProtocolError("hello: record_formats names neither json nor parquet")
    version = int(msg["protocol"])
    answers = msg.get("answers", list(ANSWERS[version])) if version >= 2 else list(ANSWERS[1])
    if not isinstance(answers, list) or not set(answers) <= set(ANSWERS[version]) or "timeline" not in answers:
        raise ProtocolError(f"hello: answers {answers!r}: a list of {list(ANSWERS[version])}, timeline always "
                            "among them")
    return Hello(version, str(msg.get("name", "exec")), role, reads, frozenset(map(str, msg.get("capabilities", []))),
                 formats, {str(k): str(v) for k, v in dict(msg.get("known_failures", {})).items()},
                 frozenset(map(str, answers)))


class ExecSession:
    """One running program: requests out, responses in (a thread reads stdout; stderr goes to a file
    whose tail explains a failure)."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.argv = shlex.split(command)
        if not self.argv:
            raise InvalidConfig("exec: needs a command", hint='--impl exec:"program args"')
        self.proc: subprocess.Popen[str] | None = None
        self.next_id = 0
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: IO[str] | None = None
        self._hello: Hello | None = None

    def _start(self) -> subprocess.Popen[str]:
        self.stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115  # lives as long as the program
        self.lines = queue.Queue()
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                text=True, bufsize=1)
        assert proc.stdout is not None
        threading.Thread(target=_pump, args=(proc.stdout, self.lines), daemon=True).start()
        self.proc = proc
        atexit.register(self.close)
        return proc

    def _running(self) -> subprocess.Popen[str]:
        """The program, started (and greeted: ``hello`` is always its first request) when not running."""
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        proc = self._start()
        self._hello = parse_hello(self._send(proc, "hello", protocol_versions=list(PROTOCOL_VERSIONS)))
        return proc

    def request(self, type_: str, **members: Any) -> dict[str, Any]:
        """Send one request, return its response's members; a refusal raises its ``spec.errors`` kind."""
        return self._send(self._running(), type_, **members)

    def _send(self, proc: subprocess.Popen[str], type_: str, **members: Any) -> dict[str, Any]:
        self.next_id += 1
        line = json.dumps({"id": self.next_id, "type": type_, **members})
        try:
            assert proc.stdin is not None
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            text = self.lines.get(timeout=TIMEOUT)
        except (BrokenPipeError, OSError, queue.Empty) as err:
            raise ProtocolError(f"{type_}: no response ({type(err).__name__}){self._tail()}") from err
        if text is None:
            raise ProtocolError(f"{type_}: the program exited (code {proc.wait()}){self._tail()}")
        return self._response(type_, text)

    def _response(self, type_: str, text: str) -> dict[str, Any]:
        try:
            msg = json.loads(text)
        except json.JSONDecodeError as err:
            raise ProtocolError(f"{type_}: a response is one JSON object per line, got {text[:200]!r}") from err
        if not isinstance(msg, dict) or msg.get("id") != self.next_id:
            raise ProtocolError(f"{type_}: response {text[:200]!r} does not answer request {self.next_id}")
        if msg.get("ok") is True:
            return msg
        return raise_error(msg.get("error"), type_)

    def hello(self) -> Hello:
        self._running()
        assert self._hello is not None
        return self._hello

    def _tail(self, chars: int = 2000) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0)
        text = self.stderr.read()[-chars:]
        return f"\n--- the program's stderr (tail) ---\n{text}" if text.strip() else ""

    def close(self) -> None:
        """Close the program's stdin and wait for it (killed after 10 seconds)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        if line.strip():
            lines.put(line)
    lines.put(None)


def raise_error(error: Any, type_: str) -> dict[str, Any]:
    """Raise the ``spec.errors`` error a refusal names (ProtocolError for an unknown kind)."""
    if not isinstance(error, dict) or error.get("kind") not in ERROR_KINDS:
        raise ProtocolError(f"{type_}: a refusal's error is {{\"kind\": <an error kind>, \"message\": ...}}, got "
                            f"{error!r}")
    cls: type[HudiSpecError] = ERROR_KINDS[error["kind"]]
    raise cls(str(error.get("message", "")))


# --- encoding operations --------------------------------------------------------------------------

def write_records(records: Sequence[Mapping[str, Any]], path: Path, fmt: str) -> dict[str, Any]:
    """A records file (JSON Lines or Parquet) and its description in a request."""
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist([dict(r) for r in records]), path.with_suffix(".parquet"))
        path = path.with_suffix(".parquet")
    else:
        path = path.with_suffix(".jsonl")
        path.write_text("".join(json.dumps(dict(r)) + "\n" for r in records))
    return {"path": str(path), "format": fmt, "count": len(records)}


def encode_op(op: Operation, folder: Path, stem: str, fmt: str) -> dict[str, Any]:
    """An operation as an ``apply`` request sends it: records moved into files under ``folder``."""
    obj = to_json(op)
    if "records" in obj:  # a write's
        obj["records_file"] = write_records(obj.pop("records"), folder / stem, fmt)
    if "checkpoints" in obj:  # a stream's
        obj["checkpoint_files"] = [
            write_records([{**r["record"], KIND_COLUMN: r["kind"]} for r in cp], folder / f"{stem}-cp{i}", fmt)
            for i, cp in enumerate(obj.pop("checkpoints"), 1)]
    if isinstance(op, Concurrent):  # its members' records, each in files of their own
        obj["members"] = [encode_op(m, folder, f"{stem}-m{i}", fmt) for i, m in enumerate(op.members)]
    return obj


def config_json(config: CreateTable) -> dict[str, Any]:
    obj = to_json(config)
    del obj["op"]
    return obj


# --- the adapter ----------------------------------------------------------------------------------

class ExecAdapter(DirectoryReads, TableUnderTest):
    """One case's table on a program (``ExecSession``); a reader's table is written by ``writer``."""

    def __init__(self, session: ExecSession, writer: Callable[[], TableUnderTest] | None) -> None:
        self.session = session
        self.hello_ = session.hello()
        if self.hello_.role == "reader" and writer is None:
            raise InvalidConfig("the program is a reader: its tables need a writer",
                                hint="name one with --writer (e.g. reference)")
        self.writer: Any = writer() if self.hello_.role == "reader" and writer is not None else None
        self.scratch: Path | None = None
        self.steps = 0

    # what the program declared
    @property
    def name(self) -> str:  # type: ignore[override]
        return self.hello_.name

    @property
    def capabilities(self) -> frozenset[str]:  # type: ignore[override]
        return self.writer.capabilities if self.writer is not None else self.hello_.capabilities

    @property
    def layers(self) -> frozenset[str]:  # type: ignore[override]
        if self.writer is not None:
            return frozenset({"L0"})
        if self.hello_.reads == "directory":
            return frozenset(LAYERS)
        return frozenset({"L0", *(ANSWER_LAYERS[a] for a in self.hello_.answers)})

    @property
    def unobserved(self) -> Mapping[str, str]:  # type: ignore[override]
        """Why each layer the program is not observed in is not (a reader's, or what a program answering
        reads itself does not answer)."""
        if self.writer is not None:
            return {layer: f"not supported by {self.name}: a reader is compared in its rows (L0) alone"
                    for layer in LAYERS if layer != "L0"}
        missing = {layer: f"not supported by {self.name}: it answers reads itself (reads: rows), and "
                   f"the protocol has no request for {layer}" for layer in ("L3", "L4")}
        for answer, layer in ANSWER_LAYERS.items():
            if layer not in self.layers:
                missing[layer] = (f"not supported by {self.name}: it does not answer `{answer}` (protocol "
                                  f"{self.hello_.protocol}{'; version 2 adds it' if self.hello_.protocol < 2 else ''})")
        return {} if self.hello_.reads == "directory" else dict(sorted(missing.items()))

    @property
    def known_failures(self) -> Mapping[str, str]:  # type: ignore[override]
        """The program's; for a reader, the writer's too (the reader sees the writer's table)."""
        if self.writer is not None:
            return {**dict(self.writer.known_failures), **self.hello_.known_failures}
        return self.hello_.known_failures

    def create(self, config: CreateTable, workdir: Path) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="exec-", dir=workdir))
        self.steps = 0
        if self.writer is not None:
            self.writer.create(config, workdir)
            self.path = str(self.writer.path)
            return
        self.path = str(workdir / config.table_name)
        self.session.request("create", table_path=self.path, config=config_json(config))

    def apply(self, op: Operation) -> None:
        if self.writer is not None:
            self.writer.apply(op)
            return
        assert self.scratch is not None
        self.steps += 1
        encoded = encode_op(op, self.scratch, f"step-{self.steps}", self.hello_.record_formats[0])
        self.session.request("apply", table_path=self.path, op=encoded)

    def timeline(self) -> RawTimeline:
        if self.writer is not None:
            tl: RawTimeline = self.writer.timeline()
            return tl
        if self.hello_.reads == "directory":
            return DirectoryReads.timeline(self)
        answer = self.session.request("timeline", table_path=self.path)
        return tuple((str(r), str(a), str(s), None if c is None else str(c)) for r, a, s, c in answer["timeline"])

    def layout(self) -> RawLayout:
        if self.writer is not None:
            out: RawLayout = self.writer.layout()
            return out
        if self.hello_.reads == "directory":
            return DirectoryReads.layout(self)
        if "layout" not in self.hello_.answers:
            raise NotSupported(self.unobserved["L2"])
        answer = self.session.request("layout", table_path=self.path)
        return parse_layout(answer.get("layout"))

    def archived_times(self) -> frozenset[str]:
        """The archived instants the program's table directory holds (its archived timeline, read by the
        specification's reader of it, ``spec.actions.archive.archived_instants``)."""
        from spec.actions.archive import archived_instants
        from spec.config.table_config import TableConfig
        from spec.storage.hoodie_storage import Storage

        storage = Storage(self.path)
        if not storage.exists(".hoodie/hoodie.properties"):
            return frozenset()
        return frozenset(i.requested for i in archived_instants(storage, TableConfig.load(storage)))

    def rows(self, query: Query) -> RawRows:
        if self.writer is None and self.hello_.reads == "directory":
            return DirectoryReads.rows(self, query)
        assert self.scratch is not None
        self.steps += 1
        target = self.scratch / f"read-{self.steps}.parquet"
        answer = self.session.request("read", table_path=self.path, rows_path=str(target),
                                      query={"kind": query.kind, "as_of": query.as_of, "begin": query.begin,
                                             "end": query.end})
        return read_rows(answer.get("rows_file"))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def parse_layout(obj: Any) -> RawLayout:
    """A ``layout`` answer (partition path → file groups, each ``{file_id, slices: [{base_instant,
    has_base, log_versions}], keys}``) as the suite observes it; ProtocolError when malformed."""
    try:
        return {str(partition): [RawGroup(str(g["file_id"]),
                                          tuple(RawSlice(str(s["base_instant"]), bool(s["has_base"]),
                                                         tuple(int(v) for v in s.get("log_versions", ())))
                                                for s in g["slices"]),
                                          tuple(str(k) for k in g.get("keys", ())))
                                 for g in groups]
                for partition, groups in dict(obj).items()}
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ProtocolError(f"layout: {str(obj)[:200]!r} is not partition → [{{file_id, slices: [{{base_instant, "
                            f"has_base, log_versions}}], keys}}] ({type(err).__name__}: {err})") from err


def read_rows(path: str | None) -> RawRows:
    """The rows of a ``read`` answer's Parquet file (none for null or a file without rows)."""
    if path is None:
        return []
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return table.to_pylist() if table.num_rows else []


class ExecFactory:
    """``--impl exec:CMD``: makes each case's ``ExecAdapter`` on one shared program."""

    def __init__(self, command: str, writer: Callable[[], TableUnderTest] | None = None) -> None:
        """``writer``: the adapter factory that writes a reader program's tables (``conformance.adapters.
        resolve_impl`` resolves ``--writer``); a writer program needs none."""
        self.session = ExecSession(command)
        self.writer = writer

    def __call__(self) -> ExecAdapter:
        return ExecAdapter(self.session, self.writer)

    @property
    def role(self) -> str | None:
        """The role the program declared in its ``hello`` (``writer`` or ``reader``), None before it started."""
        hello = self.session._hello
        return hello.role if hello is not None else None

    def close(self) -> None:
        self.session.close()

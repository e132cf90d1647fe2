"""Work in a separate process, reported so that a failure can be diagnosed from the test log alone.

Every test that runs work in another process goes through this module: a command (``run``, or ``start``
for one that runs beside the test), or a function in a fresh interpreter (``call``). When the process does
not end as the test expects, the failure names the command, how it ended (its exit status, or the signal
that killed it), how long it ran, and the last lines of its output and error output. Python children run
with ``faulthandler`` on (``PYTHONFAULTHANDLER``), so a native crash prints every thread's stack before
the process dies.

No wall-clock bound decides a verdict. ``hang_after`` guards against a hang only: it is set far above the
work's normal time (the default, ``HANG_AFTER``, stays under pytest-timeout's bound of the whole test, so
this report comes first), and when it expires the process is asked for its threads' stacks (SIGABRT, which
``faulthandler`` answers), stopped, and the failure says it hung.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
HANG_AFTER = 600.0  # seconds: far above any single process of the suite (the slowest take about a minute)
TAIL_LINES = 40
POLL = 0.05


class ProcessFailed(AssertionError):
    """A process did not end as the test expected; the message is its report."""


def describe_status(returncode: int) -> str:
    """``exit status 3`` or ``killed by signal SIGSEGV (11)``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {name} ({-returncode})"
    return f"exit status {returncode}"


def tail(text: str, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of ``text``, saying how many were left out."""
    kept = text.rstrip("\n").splitlines()
    if len(kept) <= lines:
        return "\n".join(kept)
    return f"[... {len(kept) - lines} lines before ...]\n" + "\n".join(kept[-lines:])


@dataclass(frozen=True)
class Ended:
    """A process that has ended: how, after how long, and everything it printed."""

    command: tuple[str, ...]
    returncode: int | None  # None: still running (a report taken while it runs)
    stdout: str
    stderr: str
    seconds: float
    hung: bool = False  # still running after its hang guard: stopped by the test

    @property
    def status(self) -> str:
        if self.returncode is None:
            return "still running"
        if self.hung:
            stopped = describe_status(self.returncode)
            return f"hung: still running after {self.seconds:.0f} s, then stopped ({stopped})"
        return describe_status(self.returncode)

    def report(self, expected: str = "") -> str:
        """The failure message: what was expected, the command, how it ended, the tails of its output."""
        head = f"{expected}\n" if expected else ""
        shown = shlex.join(self.command)
        if len(shown) > 600:
            shown = shown[:600] + " ..."
        return (f"{head}process `{shown}`: {self.status}, after {self.seconds:.1f} s\n"
                f"--- its stdout (last {TAIL_LINES} lines) ---\n{tail(self.stdout)}\n"
                f"--- its stderr (last {TAIL_LINES} lines) ---\n{tail(self.stderr)}")

    def expect(self, returncode: int = 0, what: str = "") -> Ended:
        """This, if the process ended with ``returncode`` (negative: killed by that signal); else the report."""
        if self.hung or self.returncode != returncode:
            expected = f"expected {describe_status(returncode)}" + (f" ({what})" if what else "")
            raise ProcessFailed(self.report(expected))
        return self


def child_env(env: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """An environment for a child that runs a script of the project: ``env`` (default: this process's) with
    the project on ``PYTHONPATH``, plus ``extra``."""
    out = dict(os.environ if env is None else env)
    path = out.get("PYTHONPATH")
    out["PYTHONPATH"] = str(ROOT) if not path else f"{ROOT}{os.pathsep}{path}"
    out.update(extra)
    return out


def _with_faulthandler(env: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(os.environ if env is None else env)
    out["PYTHONFAULTHANDLER"] = "1"  # a Python child prints every thread's stack on a fatal signal
    return out


class Running:
    """A process started by ``start``: its output goes to files, read at any time without blocking it.

    Use it as a context manager: on leaving, a process still running is killed (with its whole group when
    it has a session of its own)."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                 new_session: bool = False, stdin: bool = False) -> None:
        self.command = tuple(str(c) for c in command)
        self.new_session = new_session
        self._out: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed by __exit__)
        self._err: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._read = 0  # how much of stdout ``next_line`` has consumed
        self._started = time.monotonic()
        self._ended: Ended | None = None
        self.proc = subprocess.Popen(self.command, env=_with_faulthandler(env), cwd=cwd, stdout=self._out,
                                     stderr=self._err, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                     start_new_session=new_session)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.kill()
        self._reap_group()
        for f in (self._out, self._err):
            f.close()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    @staticmethod
    def _text(f: IO[bytes]) -> str:
        # pread: the child shares the file's offset, which a read here must not move
        fd = f.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def stdout(self) -> str:
        return self._text(self._out)

    def stderr(self) -> str:
        return self._text(self._err)

    def _snapshot(self, hung: bool = False) -> Ended:
        return Ended(self.command, self.proc.poll(), self.stdout(), self.stderr(), time.monotonic() - self._started,
                     hung)

    def _reap_group(self) -> None:
        if self.new_session:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers of its group (a JVM, workers), if any

    def _stop_hung(self) -> Ended:
        """Ask the hung process for its threads' stacks (faulthandler answers SIGABRT), then kill it."""
        seconds = time.monotonic() - self._started
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGABRT)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reap_group()
        ended = self._snapshot()
        self._ended = Ended(ended.command, ended.returncode, ended.stdout, ended.stderr, seconds, hung=True)
        return self._ended

    def report(self, expected: str = "") -> str:
        """The report of this process as it stands (still running, or how it ended)."""
        return (self._ended or self._snapshot()).report(expected)

    def finish(self, hang_after: float = HANG_AFTER) -> Ended:
        """Wait for the process to end (still running ``hang_after`` seconds from now: a hang, stopped); how
        it ended."""
        if self._ended is None:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            try:
                self.proc.wait(timeout=hang_after)
            except subprocess.TimeoutExpired:
                return self._stop_hung()
            self._reap_group()
            self._ended = self._snapshot()
        return self._ended

    def kill(self, sig: int = signal.SIGKILL) -> Ended:
        """Send ``sig`` and wait for the process to end; how it ended."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)
        return self.finish()

    def send_line(self, line: str) -> None:
        """Write one line to the process's stdin (``start(..., stdin=True)``)."""
        assert self.proc.stdin is not None, "started without stdin"
        try:
            self.proc.stdin.write((line.rstrip("\n") + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise ProcessFailed(self.report("could not send a line: the process had ended")) from None

    def next_line(self, hang_after: float = HANG_AFTER, expected: str = "a line of output") -> str:
        """The next line the process prints (without its newline); the report if it ends first or hangs."""
        waited = time.monotonic()
        while True:
            text = self.stdout()[self._read:]
            if "\n" in text:
                line = text.split("\n", 1)[0]
                self._read += len(line) + 1
                return line
            if self.proc.poll() is not None:
                self._reap_group()
                raise ProcessFailed(self._snapshot().report(f"expected {expected}, but the process ended"))
            if time.monotonic() - waited > hang_after:
                raise ProcessFailed(self._stop_hung().report(f"expected {expected} within {hang_after:.0f} s"))
            time.sleep(POLL)

    def wait_for_line(self, line: str, hang_after: float = HANG_AFTER) -> None:
        """Wait until the process prints ``line`` (skipping any other); the report if it ends first or hangs."""
        while self.next_line(hang_after, expected=f"the line {line!r}") != line:
            pass


def start(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
          new_session: bool = False, stdin: bool = False) -> Running:
    """Start ``command`` beside the test (see ``Running``); ``new_session`` gives it a process group of its
    own, killed whole when it ends; ``stdin`` opens a pipe for ``send_line``."""
    return Running(command, env=env, cwd=cwd, new_session=new_session, stdin=stdin)


def run(command: Sequence[str], *, hang_after: float = HANG_AFTER, env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None, new_session: bool = False) -> Ended:
    """Run ``command`` to its end; how it ended (check it with ``Ended.expect`` or ``Ended.report``)."""
    with start(command, env=env, cwd=cwd, new_session=new_session) as running:
        return running.finish(hang_after)


def python(*args: str) -> list[str]:
    """A command running this interpreter."""
    return [sys.executable, *args]


# A fresh interpreter runs one function: the caller's sys.path first (so the function's module imports as it
# did here), then the function and its arguments unpickled, then its result pickled. It ends with os._exit,
# without interpreter finalization: the result is written and nothing is left to clean up, while
# finalization would stop tracemalloc with native threads still running (see test_log_format_corrupt).
_CALL = """
import os, pickle, sys, traceback
with open(sys.argv[1], "rb") as f:
    sys.path[:0] = pickle.load(f)
    try:
        fn, args = pickle.load(f)
        result = fn(*args)
        with open(sys.argv[2], "wb") as out:
            pickle.dump(result, out)
        code = 0
    except BaseException:
        traceback.print_exc()
        code = 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
"""


def call(fn: Callable[..., Any], *args: Any, hang_after: float = HANG_AFTER,
         env: Mapping[str, str] | None = None) -> Any:
    """``fn(*args)`` in a fresh interpreter (``fn`` a module-level function, ``args`` picklable); its result.

    An exception in the child, a crash or a hang fails with the child's report (an exception's traceback
    is in its stderr)."""
    with tempfile.TemporaryDirectory(prefix="call-") as folder:
        script, job, result = (Path(folder) / name for name in ("call.py", "job.pickle", "result.pickle"))
        script.write_text(_CALL)
        with job.open("wb") as f:
            pickle.dump([p for p in sys.path if p], f)
            pickle.dump((fn, args), f)
        ended = run(python(str(script), str(job), str(result)), hang_after=hang_after, env=child_env(env))
        ended.expect(0, f"{fn.__module__}.{fn.__qualname__} in a fresh process")
        with result.open("rb") as f:
            return pickle.load(f)


@contextlib.contextmanager
def reported(*children: Running) -> Iterator[None]:
    """Any failure inside (an assertion, a timeout) also reports the state of ``children``: a child that
    died explains a test that waited for it."""
    try:
        yield
    except BaseException as err:
        if isinstance(err, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        reports = "\n\n".join(c.report(f"child {i + 1} of {len(children)}:") for i, c in enumerate(children))
        raise ProcessFailed(f"{type(err).__name__}: {err}\n\n{reports}") from err

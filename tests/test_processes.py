"""The suite's one way to run work in another process (``tests/processes.py``): a failure says how the
process ended and shows the end of its output, so a one-off failure can be read from the CI log alone."""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import pytest

from tests import processes


def _add(a: int, b: int) -> int:
    return a + b


def _raises() -> None:
    raise ValueError("the value that went wrong")


def _crashes() -> None:
    print("last words before the crash", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)  # as a native crash ends a process


def _hangs() -> None:
    time.sleep(600)


def test_a_function_runs_in_a_fresh_interpreter_and_returns_its_value() -> None:
    assert processes.call(_add, 2, 3) == 5
    assert processes.call(os.getpid) != os.getpid()


def test_an_exception_in_the_child_is_reported_with_its_traceback() -> None:
    with pytest.raises(processes.ProcessFailed) as failed:
        processes.call(_raises)
    report = str(failed.value)
    assert "exit status 1" in report and "test_processes._raises in a fresh process" in report
    assert "ValueError: the value that went wrong" in report and "in _raises" in report


def test_a_crash_names_the_signal_and_shows_the_stacks_and_the_output() -> None:
    with pytest.raises(processes.ProcessFailed) as failed:
        processes.call(_crashes)
    report = str(failed.value)
    assert "killed by signal SIGSEGV (11)" in report
    assert "last words before the crash" in report  # its stdout's tail
    assert "Fatal Python error: Segmentation fault" in report and "in _crashes" in report  # faulthandler's stacks


def test_a_hang_is_stopped_and_reported_as_a_hang_with_the_stacks() -> None:
    started = time.monotonic()
    with pytest.raises(processes.ProcessFailed) as failed:
        processes.call(_hangs, hang_after=2)
    assert time.monotonic() - started < 60
    report = str(failed.value)
    assert re.search(r"hung: still running after \d+ s, then stopped \(killed by signal SIGABRT \(6\)\)", report)
    assert "in _hangs" in report  # where it hung, from faulthandler


def test_a_command_that_ends_otherwise_than_expected_is_reported() -> None:
    done = processes.run(processes.python("-c", "import sys; print('out'); sys.exit('bad input')"))
    assert (done.returncode, done.stdout, done.stderr) == (1, "out\n", "bad input\n")
    with pytest.raises(processes.ProcessFailed) as failed:
        done.expect(0, "a clean exit")
    report = str(failed.value)
    assert report.startswith("expected exit status 0 (a clean exit)\nprocess `")
    assert "exit status 1" in report and "--- its stdout" in report and "bad input" in report
    assert done.expect(1) is done


def test_a_child_beside_the_test_talks_line_by_line_and_is_killed_on_leaving() -> None:
    echo = "import sys\nprint('ready', flush=True)\nfor line in sys.stdin:\n    print(line.upper(), end='', flush=True)"
    with processes.start(processes.python("-c", echo), stdin=True) as child:
        child.wait_for_line("ready")
        child.send_line("one")
        assert child.next_line() == "ONE"
        pid = child.pid
    assert child.finish().returncode == -signal.SIGKILL  # still running when the test left it
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_child_that_ends_before_its_line_is_reported() -> None:
    with processes.start([sys.executable, "-c", "import sys; sys.exit(3)"]) as child, \
            pytest.raises(processes.ProcessFailed) as failed:
        child.wait_for_line("held")
    assert "expected the line 'held', but the process ended" in str(failed.value)
    assert "exit status 3" in str(failed.value)


def test_a_failure_beside_children_reports_them_too() -> None:
    with processes.start(processes.python("-c", "print('child says hi')")) as child:
        child.finish()
        with pytest.raises(processes.ProcessFailed) as failed, processes.reported(child):
            raise TimeoutError("waited too long for the child")
    report = str(failed.value)
    assert report.startswith("TimeoutError: waited too long for the child")
    assert "child 1 of 1:" in report and "child says hi" in report and "exit status 0" in report

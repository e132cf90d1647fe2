"""The test suite's own setup: real tables found beside the project, one skip line without them,
and derandomized property tests under the CI profile."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import settings

from tests import processes

ROOT = Path(__file__).resolve().parents[1]


def _pytest(*args: str) -> processes.Ended:
    env = {k: v for k, v in os.environ.items() if k not in ("HUDI_RS_TABLES", "HUDI_RS_TABLES_V9", "HYPOTHESIS_PROFILE",
                                                             "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
    return processes.run(processes.python("-m", "pytest", "-p", "no:cacheprovider", "-q", "-ra", "-n", "0", *args),
                         cwd=ROOT, env=env)


def test_ci_profile_is_derandomized_without_a_database() -> None:
    profile = settings.get_profile("ci")
    assert profile.derandomize and profile.database is None
    for explore in ("long", "dev"):  # whichever profile is loaded
        assert not settings.get_profile(explore).derandomize and settings.get_profile(explore).database is not None


def test_a_bare_clone_reports_the_real_table_tests_in_one_skip_line() -> None:
    """Without the tables every test that needs them skips from one place: one summary line, with
    where the tables come from; the tests beside them in the same files still run."""
    run = _pytest("--hudi-rs-tables", "none", "--hudi-rs-tables-v9", "none",
                  "tests/test_checker.py",
                  "tests/test_model_real_tables.py", "tests/test_log_format.py", "tests/test_reader_queries.py")
    run.expect(0)
    skipped = [ln for ln in run.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert len(skipped) == 1, run.report("expected one SKIPPED line")
    assert "hudi-rs" in skipped[0] and "Apache-2.0" in skipped[0] and "HUDI_RS_TABLES" in skipped[0]
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (passed|skipped|failed|error)", run.stdout))
    assert counts.get("passed", 0) > 0 and not counts.get("failed") and not counts.get("error")
    grouped = re.match(r"SKIPPED \[(\d+)\]", skipped[0])
    assert grouped is not None and int(grouped.group(1)) == counts["skipped"]


def _unit_flags() -> list[str]:
    """The pytest flags of ``make unit`` that concern workers (from the Makefile itself)."""
    words = next(ln for ln in (ROOT / "Makefile").read_text().splitlines() if '-m "not slow"' in ln).split()
    return ["--dist", words[words.index("--dist") + 1], *(w for w in words if w.startswith("--max-worker-restart"))]


def test_a_crashed_worker_stops_the_run_instead_of_hanging(tmp_path: Path) -> None:
    """A worker that dies in native code is not replaced: the run ends at once, naming the test it ran
    (with file-by-file scheduling, xdist replacing a crashed worker can leave the session waiting forever)."""
    (tmp_path / "test_b.py").write_text("import os\n\n\ndef test_dies():\n    os._exit(1)\n\n\n"
                                        "def test_after():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
    run = processes.run(processes.python("-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "1",
                                         "--rootdir", str(tmp_path), *_unit_flags(), str(tmp_path)),
                        cwd=tmp_path, env=env)
    assert "--max-worker-restart=0" in _unit_flags()
    run.expect(1, "the crashed worker's test failed")
    assert "crashed while running 'test_b.py::test_dies'" in run.stdout, run.report("expected the crash named")
    assert "replacing crashed worker" not in run.stdout, run.report("expected no worker replaced")
    assert re.search(r"^1 failed in ", run.stdout, re.M), run.report("expected 1 failed")  # test_after never ran

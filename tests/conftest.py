"""Shared test setup: hypothesis profiles, the real Apache Hudi tables, one Spark session.

Hypothesis runs derandomized under the ``ci`` profile (the default): the same commit draws the
same examples on every run, so CI passes or fails by the code, never by the dice. Random
exploration is the ``long`` profile (``make slow``), which keeps its example database.

The real tables (written by Apache Hudi, shipped as zips beside the project) are found without
configuration in ``../shared/external/hudi-rs-tables`` beside the repository; the
``--hudi-rs-tables DIR`` pytest option or the ``HUDI_RS_TABLES`` environment variable point
elsewhere. Where there are none, every test that needs them skips from one place, so the
summary reports them once, in one line, with how to get them.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

# ci: derandomized (examples drawn from a seed fixed by each test's name), no example database,
# so a commit's result never depends on earlier runs; dev: random, for exploring at a desk;
# long: random and many, for `make slow` (a failure it finds is kept as an explicit example).
settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# (every setting the profiles differ in is set in each: a profile's unset settings are looked up in
# whichever profile is loaded, so "long" must say it is random and keeps a database)
EXPLORE_DATABASE = DirectoryBasedExampleDatabase(Path(__file__).resolve().parents[1] / ".hypothesis" / "examples")
settings.register_profile("dev", max_examples=100, deadline=None, derandomize=False, database=EXPLORE_DATABASE)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    derandomize=False,
    database=EXPLORE_DATABASE,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TABLES_ENV = "HUDI_RS_TABLES"
# where the tables are by default: beside the repository, as CI lays it out
DEFAULT_TABLES = Path(__file__).resolve().parents[1].parent / "shared" / "external" / "hudi-rs-tables"
SKIP_MESSAGE = (
    "the real Apache Hudi tables were not found beside the project (../shared/external/hudi-rs-tables): "
    "they are hudi-rs's test tables (crates/test/data in the hudi-rs repository, Apache-2.0); point "
    "HUDI_RS_TABLES or --hudi-rs-tables at a folder with their zips and MANIFEST.tsv"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--hudi-rs-tables",
        default=None,
        help="directory of the real Apache Hudi test tables (zips + MANIFEST.tsv); also HUDI_RS_TABLES; "
             "default ../shared/external/hudi-rs-tables beside the project; 'none' runs as a bare clone does",
    )


@dataclass(frozen=True)
class RealTable:
    """One real table written by Apache Hudi, extracted for the test session."""

    name: str  # e.g. "sample_table/cow/v6_nonpartitioned"
    path: Path  # the extracted table's base path
    manifest: dict[str, str]  # its MANIFEST.tsv row
    baseline: dict[str, Any]  # what hudi-rs 0.5.0 read from it

    @property
    def table_version(self) -> int:
        return int(self.manifest["table_version"])

    @property
    def table_type(self) -> str:
        return self.manifest["type"]

    def __str__(self) -> str:
        return self.name


def _tables_source(config: pytest.Config) -> Path | None:
    """The folder of the real tables: the option, else the variable, else beside the project (or None)."""
    value = config.getoption("--hudi-rs-tables") or os.environ.get(TABLES_ENV)
    if not value:
        return DEFAULT_TABLES if (DEFAULT_TABLES / "MANIFEST.tsv").is_file() else None
    if value == "none":
        return None
    path = Path(value).resolve()
    if not (path / "MANIFEST.tsv").is_file():
        raise pytest.UsageError(f"{TABLES_ENV} / --hudi-rs-tables points at {path}, which has no MANIFEST.tsv")
    return path


def _manifest_rows(source: Path) -> list[dict[str, str]]:
    lines = [ln for ln in (source / "MANIFEST.tsv").read_text().splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


@pytest.fixture(scope="session")
def real_tables_source(request: pytest.FixtureRequest) -> Path | None:
    """The folder the real tables come from, or None where there are none (tests that can use them)."""
    return _tables_source(request.config)


@pytest.fixture(scope="session")
def real_tables(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[RealTable]:
    """All real tables, extracted once per session into a temporary folder (read-only use)."""
    source = _tables_source(request.config)
    if source is None:
        pytest.skip(SKIP_MESSAGE)  # the one place every real-table test skips from
    baseline = json.loads((source / "BASELINE_hudi-py-0.5.0.json").read_text())
    root = tmp_path_factory.mktemp("hudi-rs-tables")
    tables = []
    for row in _manifest_rows(source):
        zip_rel = row["zip"]
        name = zip_rel.removesuffix(".zip")
        dest = root / name
        dest.mkdir(parents=True)
        with zipfile.ZipFile(source / zip_rel) as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
            zf.extractall(dest, members)
        # each zip holds ./<table dir>/...
        (inner,) = [p for p in dest.iterdir() if p.is_dir()]
        tables.append(RealTable(name=name, path=inner, manifest=row, baseline=baseline.get(zip_rel, {})))
    return tables


@pytest.fixture
def real_table_copy(tmp_path: Path) -> Iterator[Any]:
    """A function that copies a real table into a fresh folder, for tests that alter it."""

    def copy(table: RealTable) -> Path:
        dest = tmp_path / table.path.name
        shutil.copytree(table.path, dest)
        return dest

    yield copy


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one Spark session of the test run (local[2])."""
    pytest.importorskip("pyspark", reason="pyspark not installed: run `make test`, which installs it")
    from reference.spark import get_or_create_session

    session = get_or_create_session(master="local[2]", app_name="hudi-spec-tests")
    yield session
    session.stop()


_SKIP_LINE = next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                  if "pytest.skip(SKIP_MESSAGE)" in line)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Every skip for want of the real tables is reported at one place (this file), so the
    summary groups them into a single line instead of one line per test."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple) and report.longrepr[2].endswith(SKIP_MESSAGE):
        report.longrepr = (__file__, _SKIP_LINE, report.longrepr[2])
    return report


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize every test that takes ``real_table`` over all real tables (one test id each)."""
    if "real_table" not in metafunc.fixturenames:
        return
    source = _tables_source(metafunc.config)
    names = [row["zip"].removesuffix(".zip") for row in _manifest_rows(source)] if source else []
    # without the tables, one parameter whose fixture skips (from the real_tables fixture, so
    # every such skip has one location and the summary one line)
    metafunc.parametrize("real_table", names or [pytest.param(None, id="no-real-tables")], indirect=True)


@pytest.fixture
def real_table(request: pytest.FixtureRequest, real_tables: list[RealTable]) -> RealTable:
    """One real table (the test is parametrized over all of them)."""
    by_name = {t.name: t for t in real_tables}
    return by_name[request.param]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """A local S3-API server (moto, 127.0.0.1, a free port) for the session, reached as a user reaches
    S3: the standard AWS environment variables are set for the session (and restored after it)."""
    from tests.s3_server import S3Server

    server = S3Server()
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    try:
        yield server
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


@pytest.fixture
def s3_path(s3_server: Any) -> str:
    """A fresh table location on the S3 server: ``s3://<new bucket>/t``."""
    return f"s3://{s3_server.new_bucket()}/t"


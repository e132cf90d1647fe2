"""Shared test setup: hypothesis profiles, the real Apache Hudi tables, one Spark session.

Hypothesis runs derandomized under the ``ci`` profile (the default): the same commit draws the
same examples on every run, so CI passes or fails by the code, never by the dice. Random
exploration is the ``long`` profile (``make slow``), which keeps its example database.

The real tables (written by Apache Hudi, shipped as zips beside the project) are found without
configuration in ``../shared/external/hudi-rs-tables`` beside the repository; the
``--hudi-rs-tables DIR`` pytest option or the ``HUDI_RS_TABLES`` environment variable point
elsewhere. The table-version-9 tables (Apache Hudi 1.1) are found the same way in
``../shared/external/hudi-rs-tables-v9`` (``--hudi-rs-tables-v9``, ``HUDI_RS_TABLES_V9``). Where
there are none, every test that needs them skips from one place, so the summary reports them
once, in one line, with how to get them.

Apache Hudi itself (its Spark bundle, fetched by ``make apache-hudi`` into ``.cache/apache-hudi``, or
named by ``HUDI_SPARK_BUNDLE``) is put into the one Spark session of the run, beside the reference
writer; the ``apache_hudi`` fixture is that session. Without the bundle, every test that needs it skips
from the same one place, in one line with the reason.
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
from typing import Any, NoReturn

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
V9_TABLES_ENV = "HUDI_RS_TABLES_V9"
DEFAULT_V9_TABLES = DEFAULT_TABLES.with_name("hudi-rs-tables-v9")
# one message for both folders, so a bare clone reports every real-table test in one line
SKIP_MESSAGE = (
    "the real Apache Hudi tables were not found beside the project (../shared/external/hudi-rs-tables and "
    "hudi-rs-tables-v9): they are hudi-rs's test tables (crates/test/data in the hudi-rs repository, "
    "Apache-2.0); point HUDI_RS_TABLES / HUDI_RS_TABLES_V9 (or --hudi-rs-tables / --hudi-rs-tables-v9) at "
    "folders with their zips and MANIFEST.tsv"
)
V9_SKIP_MESSAGE = SKIP_MESSAGE
HUDI_SKIP_MESSAGE = (
    "Apache Hudi's Spark bundle was not found: `make apache-hudi` fetches it with Maven into .cache/apache-hudi "
    "(it needs Maven and a reachable Maven Central), or point HUDI_SPARK_BUNDLE at the hudi-spark bundle jar "
    "of the installed pyspark's Spark line"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--hudi-rs-tables",
        default=None,
        help="directory of the real Apache Hudi test tables (zips + MANIFEST.tsv); also HUDI_RS_TABLES; "
             "default ../shared/external/hudi-rs-tables beside the project; 'none' runs as a bare clone does",
    )
    parser.addoption(
        "--hudi-rs-tables-v9",
        default=None,
        help="directory of the real table-version-9 tables (zips + MANIFEST.tsv); also HUDI_RS_TABLES_V9; "
             "default ../shared/external/hudi-rs-tables-v9 beside the project; 'none' leaves them out",
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


def _tables_source(config: pytest.Config, v9: bool = False) -> Path | None:
    """The folder of the real tables (``v9``: of the version-9 tables): the option, else the variable, else
    beside the project (or None)."""
    option, env, default = (("--hudi-rs-tables-v9", V9_TABLES_ENV, DEFAULT_V9_TABLES) if v9
                            else ("--hudi-rs-tables", TABLES_ENV, DEFAULT_TABLES))
    value = config.getoption(option) or os.environ.get(env)
    if not value:
        return default if (default / "MANIFEST.tsv").is_file() else None
    if value == "none":
        return None
    path = Path(value).resolve()
    if not (path / "MANIFEST.tsv").is_file():
        raise pytest.UsageError(f"{env} / {option} points at {path}, which has no MANIFEST.tsv")
    return path


def _skip_without(message: str) -> NoReturn:
    pytest.skip(message)  # the one place every real-table test and every Apache Hudi test skips from


def _manifest_rows(source: Path) -> list[dict[str, str]]:
    lines = [ln for ln in (source / "MANIFEST.tsv").read_text().splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


# The terminal a run happens on is not part of a test: CI sets ``COLUMNS`` (and ``LINES``), a desk's shell
# may not, and text output is drawn to that width. Every test starts without them; a test of the width
# rule sets ``COLUMNS`` itself.
TERMINAL_ENV = ("COLUMNS", "LINES")


@pytest.fixture(autouse=True)
def _no_terminal_size_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TERMINAL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def real_tables_source(request: pytest.FixtureRequest) -> Path | None:
    """The folder the real tables come from, or None where there are none (tests that can use them)."""
    return _tables_source(request.config)


@pytest.fixture(scope="session")
def required_tables_source(request: pytest.FixtureRequest) -> Path:
    """The folder the real tables come from, for tests that need the folder itself (skips without it)."""
    source = _tables_source(request.config)
    if source is None:
        _skip_without(SKIP_MESSAGE)
    return source


@pytest.fixture(scope="session")
def real_tables(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[RealTable]:
    """All real tables, extracted once per session into a temporary folder (read-only use)."""
    source = _tables_source(request.config)
    if source is None:
        _skip_without(SKIP_MESSAGE)
    baseline = json.loads((source / "BASELINE_hudi-py-0.5.0.json").read_text())
    return _extract(source, tmp_path_factory.mktemp("hudi-rs-tables"), baseline)


@pytest.fixture(scope="session")
def real_tables_v9(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[RealTable]:
    """The table-version-9 tables (Apache Hudi 1.1), extracted once per session (read-only use)."""
    source = _tables_source(request.config, v9=True)
    if source is None:
        _skip_without(V9_SKIP_MESSAGE)
    return _extract(source, tmp_path_factory.mktemp("hudi-rs-tables-v9"), {})


def _extract(source: Path, root: Path, baseline: dict[str, Any]) -> list[RealTable]:
    """Every table of a MANIFEST.tsv, unzipped under ``root``."""
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
    """The one Spark session of the test run (local[2]), with Apache Hudi's bundle in it where there is one."""
    pytest.importorskip("pyspark", reason="pyspark not installed: run `make test`, which installs it")
    from conformance.adapters.hudi_spark import bundle, hudi_conf
    from reference.engines.spark_session import get_or_create_session

    jar = bundle()
    session = get_or_create_session(master="local[2]", app_name="hudi-spec-tests",
                                    conf=hudi_conf(jar) if jar else None)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def apache_hudi(request: pytest.FixtureRequest) -> Any:
    """The Spark session of the run, for tests that run Apache Hudi's datasource in it (skips without the
    bundle, before Spark starts)."""
    from conformance.adapters.hudi_spark import bundle, has_hudi

    if bundle() is None:
        _skip_without(HUDI_SKIP_MESSAGE)
    spark = request.getfixturevalue("spark")
    if not has_hudi(spark):  # started before the bundle was there
        _skip_without(HUDI_SKIP_MESSAGE)
    return spark


_SKIP_LINE = next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                  if "pytest.skip(message)" in line)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Every skip for want of the real tables (or of Apache Hudi's bundle) is reported at one place (this
    file), so the summary groups them into a single line instead of one line per test."""
    report = yield
    if (report.skipped and isinstance(report.longrepr, tuple)
            and report.longrepr[2].endswith((SKIP_MESSAGE, HUDI_SKIP_MESSAGE))):
        report.longrepr = (__file__, _SKIP_LINE, report.longrepr[2])
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """An exploration (marker ``explore``) is also slow, so ``make test`` (``-m "not slow"``) never runs one;
    refused at collection, before any selection by marker."""
    lone = [item.nodeid for item in items if item.get_closest_marker("explore") and not item.get_closest_marker("slow")]
    if lone:
        raise pytest.UsageError(f"marked explore but not slow (mark them slow too): {', '.join(lone[:5])}")


def _names(config: pytest.Config, v9: bool) -> list[str]:
    source = _tables_source(config, v9)
    return [row["zip"].removesuffix(".zip") for row in _manifest_rows(source)] if source else []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize every test that takes ``real_table`` over the 22 real tables of versions 6 and 8,
    ``v9_table`` over the version-9 tables, ``any_real_table`` over both (one test id each)."""
    for name, sets in (("real_table", (False,)), ("v9_table", (True,)), ("any_real_table", (False, True))):
        if name not in metafunc.fixturenames:
            continue
        params: list[Any] = [n for v9 in sets for n in _names(metafunc.config, v9)]
        # without the tables, one parameter whose fixture skips (from the real_tables fixture, so
        # every such skip has one location and the summary one line)
        metafunc.parametrize(name, params or [pytest.param(None, id="no-real-tables")], indirect=True)


@pytest.fixture
def real_table(request: pytest.FixtureRequest, real_tables: list[RealTable]) -> RealTable:
    """One real table of version 6 or 8 (the test is parametrized over all of them)."""
    by_name = {t.name: t for t in real_tables}
    return by_name[request.param]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """A local S3-API server (moto, 127.0.0.1, a free port) for the session, reached as a user reaches
    S3: the standard AWS environment variables are set for the session (and restored after it)."""
    from tests.s3_server import running_s3_server

    with running_s3_server() as server:
        yield server


@pytest.fixture
def s3_path(s3_server: Any) -> str:
    """A fresh table location on the S3 server: ``s3://<new bucket>/t``."""
    return f"s3://{s3_server.new_bucket()}/t"


@pytest.fixture
def v9_table(request: pytest.FixtureRequest, real_tables_v9: list[RealTable]) -> RealTable:
    """One real table of version 9 (the test is parametrized over all of them)."""
    by_name = {t.name: t for t in real_tables_v9}
    return by_name[request.param]


@pytest.fixture
def any_real_table(request: pytest.FixtureRequest) -> RealTable:
    """One real table of any version (the test is parametrized over the 22 and the version-9 tables)."""
    v9 = request.param is not None and request.param in _names(request.config, v9=True)
    tables: list[RealTable] = request.getfixturevalue("real_tables_v9" if v9 else "real_tables")
    return {t.name: t for t in tables}[request.param]

"""Shared test setup: hypothesis profiles, the real Apache Hudi tables, one Spark session.

The real tables (written by Apache Hudi, shipped as zips beside the project) are found
through one setting: the ``--hudi-rs-tables DIR`` pytest option or the ``HUDI_RS_TABLES``
environment variable (``.ci/run`` sets it). Without it, tests that need them skip and say
how to set it.
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

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TABLES_ENV = "HUDI_RS_TABLES"
SKIP_MESSAGE = (
    "real Apache Hudi tables not configured: set HUDI_RS_TABLES=<dir with MANIFEST.tsv and the zips> "
    "or pass --hudi-rs-tables DIR (.ci/run points it at ../shared/external/hudi-rs-tables)"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--hudi-rs-tables",
        default=None,
        help="directory of the real Apache Hudi test tables (zips + MANIFEST.tsv); also HUDI_RS_TABLES",
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
    value = config.getoption("--hudi-rs-tables") or os.environ.get(TABLES_ENV)
    if not value:
        return None
    path = Path(value).resolve()
    if not (path / "MANIFEST.tsv").is_file():
        raise pytest.UsageError(f"{TABLES_ENV} / --hudi-rs-tables points at {path}, which has no MANIFEST.tsv")
    return path


def _manifest_rows(source: Path) -> list[dict[str, str]]:
    lines = [ln for ln in (source / "MANIFEST.tsv").read_text().splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


@pytest.fixture(scope="session")
def real_tables(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[RealTable]:
    """All real tables, extracted once per session into a temporary folder (read-only use)."""
    source = _tables_source(request.config)
    if source is None:
        pytest.skip(SKIP_MESSAGE)
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize every test that takes ``real_table`` over all real tables (one test id each)."""
    if "real_table" not in metafunc.fixturenames:
        return
    source = _tables_source(metafunc.config)
    names = [row["zip"].removesuffix(".zip") for row in _manifest_rows(source)] if source else []
    if names:
        metafunc.parametrize("real_table", names, indirect=True)
    else:
        metafunc.parametrize("real_table", [pytest.param(None, marks=pytest.mark.skip(reason=SKIP_MESSAGE))],
                             indirect=True)


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


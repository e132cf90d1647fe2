"""The settings registry is the one home of Hudi's defaults: every consumer's default is the registry's."""

from __future__ import annotations

import importlib.util
import re
from dataclasses import fields, replace
from pathlib import Path

import pytest

from conformance.adapters.reference_spark import write_options
from conformance.interface.ops import CreateTable
from conformance.machine import MachineOptions
from reference.config.options import WriteConfig, parse_options
from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.actions.compaction import CompactionConfig
from spec.config.registry import (
    ALIASES,
    BY_KEY,
    BY_NAME,
    SETTINGS,
    WRITER_OPTIONS,
    Setting,
    default,
    resolve_settings,
)
from spec.errors import InvalidConfig
from spec.write.partitioner import PartitionerConfig
from spec.write.service_configs import archive_config, clean_config, compaction_config, partitioner_config

ROOT = Path(__file__).resolve().parent.parent

CASE_OWN_DEFAULTS = {"table_name": "t", "record_key_fields": ("id",), "ordering_field": "ts", "auto_clean": False,
                     "auto_archive": False, "index_type": None}
"""The case language's own defaults (a table to run on; services only when the case asks; the writer's index
unless the case names one)."""


def test_every_setting_is_well_formed() -> None:
    assert len(BY_KEY) == len(SETTINGS) and len(BY_NAME) == len(SETTINGS), "a key or a name is registered twice"
    assert not set(ALIASES) & set(BY_KEY), "an alias shadows a key"
    for s in SETTINGS:
        assert s.key.startswith("hoodie."), s.key
        assert re.fullmatch(r"[A-Z][A-Za-z]+\.[A-Z0-9_]+", s.declared_by), s.declared_by
        assert s.doc and s.name.isidentifier(), s.key
        if s.default is not None:
            if s.choices:
                assert s.default in s.choices, s.key
            assert s.value_of(s.option(s.value)) == s.value, f"{s.key}: the default does not round-trip"


def test_write_config_defaults_are_parse_options_of_nothing() -> None:
    assert WriteConfig() == parse_options({})


def test_write_config_defaults_are_the_registry_s() -> None:
    derived = {"record_key_fields": (), "keygen_type": "NON_PARTITION", "failed_writes_policy": "EAGER"}
    cfg = WriteConfig()
    for f in fields(WriteConfig):
        if f.name in BY_NAME:
            assert getattr(cfg, f.name) == derived.get(f.name, default(f.name)), f.name
    assert cfg.lock.wait_ms == 0 and cfg.lock.retry_wait_ms == default("lock_retry_wait_ms")
    assert cfg.lock.validity_seconds == default("lock_validity_seconds")
    assert cfg.lock.heartbeat_poll_seconds == default("lock_heartbeat_poll_seconds")


def test_create_table_defaults_are_the_registry_s() -> None:
    table = CreateTable()
    carried = [f.name for f in fields(CreateTable) if f.name in BY_NAME]
    assert len(carried) == 25
    for name in carried:
        assert getattr(table, name) == CASE_OWN_DEFAULTS.get(name, default(name)), name
    assert MachineOptions().small_file_limit == default("small_file_limit")


@pytest.mark.parametrize("settings", [object(), WriteConfig(), CreateTable()], ids=["nothing", "write", "case"])
def test_service_configs_of_defaults_are_the_configs_defaults(settings: object) -> None:
    assert clean_config(settings) == CleanConfig()
    assert archive_config(settings) == ArchiveConfig()
    assert compaction_config(settings) == CompactionConfig()
    assert partitioner_config(settings) == PartitionerConfig()


def test_service_configs_follow_the_settings() -> None:
    cfg = parse_options({"hoodie.cleaner.policy": "keep_latest_file_versions",
                         "hoodie.clean.fileversions.retained": "2", "hoodie.keep.min.commits": "4",
                         "hoodie.keep.max.commits": "6", "hoodie.compact.inline.max.delta.commits": "2",
                         "hoodie.copyonwrite.insert.auto.split": "false", "hoodie.parquet.small.file.limit": "0"})
    assert clean_config(cfg) == CleanConfig("KEEP_LATEST_FILE_VERSIONS", 10, 2, 24)
    assert archive_config(cfg) == ArchiveConfig(4, 6)
    assert compaction_config(cfg) == CompactionConfig(2)
    assert partitioner_config(cfg) == PartitionerConfig(small_file_limit=0, auto_split_inserts=False)
    case = CreateTable(clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3, small_file_limit=5)
    assert (clean_config(case).commits_retained, archive_config(case), partitioner_config(case).small_file_limit) == (
        1, ArchiveConfig(2, 3), 5)


def test_a_case_s_options_parse_back_to_the_case_s_settings() -> None:
    case = CreateTable(table_type="MERGE_ON_READ", table_version=8, partition_fields=("p", "q"), hive_style=True,
                       inline_compact=True, compact_max_delta_commits=2, auto_clean=True, clean_commits_retained=3)
    cfg = parse_options(write_options(case))
    for f in fields(CreateTable):
        if f.name in BY_NAME and getattr(case, f.name) is not None:  # None: the writer's own default
            assert getattr(cfg, f.name) == getattr(case, f.name), f.name
    assert cfg.keygen_type == case.resolved_key_generator == "COMPLEX"
    bucketed = replace(case, index_type="BUCKET", options=(("hoodie.bucket.index.num.buckets", "3"),))
    assert (parse_options(write_options(bucketed)).index_type, parse_options(write_options(case)).index_type) == (
        "BUCKET", default("index_type"))


def test_resolution_reports_unknown_keys_and_checks_across_keys() -> None:
    fixed = next(s for s in SETTINGS if not s.writer_option)
    values, unknown = resolve_settings({"hoodie.nope": "1", fixed.key: "2", "spark.other": "x",
                                        "hoodie.clean.policy": "KEEP_LATEST_BY_HOURS"})
    assert unknown == ("hoodie.nope", fixed.key) and values["clean_policy"] == "KEEP_LATEST_BY_HOURS"
    with pytest.raises(InvalidConfig, match=r"hoodie\.keep\.max\.commits"):
        resolve_settings({"hoodie.keep.min.commits": "30"})
    with pytest.raises(InvalidConfig, match=r"hoodie\.cleaner\.commits\.retained"):
        resolve_settings({"hoodie.cleaner.commits.retained": "20"})
    with pytest.raises(InvalidConfig, match="EAGER"):
        resolve_settings({"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                          "hoodie.cleaner.policy.failed.writes": "EAGER"})
    with pytest.raises(InvalidConfig, match="is not valid"):
        Setting("hoodie.x", None, "x", "HoodieWriteConfig.X", "x", choices=("A",)).value_of("b")


def test_the_settings_page_lists_every_setting() -> None:
    spec = importlib.util.spec_from_file_location("hudi_spec_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    assert hooks.SETTINGS_MARKER in (ROOT / "docs" / "spec" / "config_registry.md").read_text()
    rows = hooks.settings_table().splitlines()[2:]
    assert [r.split("|")[1].strip() for r in rows] == [f"`{s.key}`" for s in SETTINGS]
    assert len(hooks.options_table().splitlines()[2:]) == len(WRITER_OPTIONS)


def test_the_null_partition_is_declared_once() -> None:
    literal = "__HIVE_DEFAULT_" + "PARTITION__"
    declaring = [p.relative_to(ROOT).as_posix() for d in ("spec", "reference", "conformance", "bench")
                 for p in (ROOT / d).rglob("*.py") if re.search(rf"= \"{literal}\"", p.read_text())]
    assert declaring == ["spec/keygen/partition_path.py"]

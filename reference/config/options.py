"""The ``hoodie.*`` write options users know from Hudi on Spark, validated into one ``WriteConfig``.

The options, their defaults, aliases and checks are the registry's (``spec.config.registry``):
a Hudi option the writer does not implement and that changes safety or what is written raises
``UnsupportedOption`` (``spec.config.refused_options``); other unknown ``hoodie.*`` keys are warned
about (never silently dropped); other keys are ignored; a known key with a bad value raises
``InvalidConfig`` naming the key and what it takes.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final

from spec.actions.clustering_plan import ClusteringConfig
from spec.config.registry import OPTIMISTIC_CONCURRENCY_CONTROL, default, inferred_key_generator, resolve_settings
from spec.errors import UnsupportedOption
from spec.metadata.record_index import Sizing
from spec.storage.lock import StorageLockConfig


@dataclass(frozen=True)
class WriteConfig:
    """Validated write options; every default is the registry's (``WriteConfig() == parse_options({})``)."""

    table_name: str | None = default("table_name")
    table_type: str = default("table_type")
    operation: str = default("operation")
    record_key_fields: tuple[str, ...] = ()
    partition_fields: tuple[str, ...] = default("partition_fields")
    ordering_field: str | None = default("ordering_field")
    keygen_type: str = inferred_key_generator((), default("partition_fields"))
    hive_style: bool = default("hive_style")
    url_encode: bool = default("url_encode")
    table_version: int = default("table_version")
    merge_mode: str = default("merge_mode")
    metadata_enable: bool | None = default("metadata_enable")
    small_file_limit: int = default("small_file_limit")
    max_file_size: int = default("max_file_size")
    insert_split_size: int = default("insert_split_size")
    auto_split: bool = default("auto_split")
    record_size_estimate: int = default("record_size_estimate")
    index_type: str = default("index_type")
    bucket_index_engine: str = default("bucket_index_engine")
    bucket_index_num_buckets: int = default("bucket_index_num_buckets")
    bucket_index_hash_fields: tuple[str, ...] = default("bucket_index_hash_fields")
    bloom_index_update_partition_path: bool = default("bloom_index_update_partition_path")
    simple_index_update_partition_path: bool = default("simple_index_update_partition_path")
    record_index_update_partition_path: bool = default("record_index_update_partition_path")
    record_index_enable: bool = default("record_index_enable")
    record_level_index_enable: bool = default("record_level_index_enable")
    record_index_min_file_groups: int = default("record_index_min_file_groups")
    record_index_max_file_groups: int = default("record_index_max_file_groups")
    record_index_growth_factor: float = default("record_index_growth_factor")
    record_index_max_file_group_size: int = default("record_index_max_file_group_size")
    compression: str = default("compression")
    combine_before_upsert: bool = default("combine_before_upsert")
    combine_before_insert: bool = default("combine_before_insert")
    combine_before_delete: bool = default("combine_before_delete")
    allow_duplicate_on_inserts: bool = default("allow_duplicate_on_inserts")
    cdc_enabled: bool = default("cdc_enabled")
    cdc_logging_mode: str = default("cdc_logging_mode")
    bulk_insert_sort_mode: str = default("bulk_insert_sort_mode")
    partitions_to_delete: tuple[str, ...] = default("partitions_to_delete")
    log_block_size: int = default("log_block_size")
    log_file_size: int = default("log_file_size")
    inline_compact: bool = default("inline_compact")
    compact_max_delta_commits: int = default("compact_max_delta_commits")
    inline_cluster: bool = default("inline_cluster")
    cluster_max_commits: int = default("cluster_max_commits")
    schedule_inline_cluster: bool = default("schedule_inline_cluster")
    cluster_async_max_commits: int = default("cluster_async_max_commits")
    clustering_options: tuple[tuple[str, str], ...] = ()
    auto_clean: bool = default("auto_clean")
    clean_policy: str = default("clean_policy")
    clean_commits_retained: int = default("clean_commits_retained")
    clean_file_versions_retained: int = default("clean_file_versions_retained")
    clean_hours_retained: int = default("clean_hours_retained")
    auto_archive: bool = default("auto_archive")
    keep_min_commits: int = default("keep_min_commits")
    keep_max_commits: int = default("keep_max_commits")
    concurrency_mode: str = default("concurrency_mode")
    failed_writes_policy: str = "EAGER"  # unset: EAGER for a single writer (LAZY under optimistic control)
    lock: StorageLockConfig = field(default_factory=lambda: StorageLockConfig(wait_ms=0))
    heartbeat_interval_ms: int = default("heartbeat_interval_ms")
    heartbeat_tolerable_misses: int = default("heartbeat_tolerable_misses")

    @property
    def keeps_record_index(self) -> bool:
        """Whether the write keeps a record index: the global one or the partitioned one
        (``hoodie.metadata.record.level.index.enable``, ``spec.metadata.partitioned_record_index``)."""
        return self.record_index_enable or self.record_level_index_enable

    @property
    def optimistic(self) -> bool:
        """Whether several writers may write at once (optimistic concurrency control)."""
        return self.concurrency_mode == OPTIMISTIC_CONCURRENCY_CONTROL

    @property
    def record_index_sizing(self) -> Sizing:
        """The settings that size a new record index (``spec.metadata.record_index.Sizing``)."""
        return Sizing(self.record_index_min_file_groups, self.record_index_max_file_groups,
                      self.record_index_growth_factor, self.record_index_max_file_group_size)


CLUSTERING_PREFIXES: Final = ("hoodie.clustering.", "hoodie.layout.")
"""The keys of a clustering's plan and layout (``spec.actions.clustering_plan.ClusteringConfig``)."""

_FIELDS = frozenset(f.name for f in fields(WriteConfig))

TABLE_PROPERTIES_OF_WRITE_OPTIONS: Final = {"hoodie.record.merge.mode": "hoodie.write.record.merge.mode"}
"""Table properties a write may give, each with the write option that sets it on a new table: the writer takes no
setting from them (``spec.write.writer_utils`` compares them with an existing table's)."""


def parse_options(options: Mapping[str, Any] | None) -> WriteConfig:
    """Validate ``options`` (string values, as on Spark) into a WriteConfig (``resolve_settings``),
    warning about each unknown ``hoodie.*`` key. With inline clustering on (``hoodie.clustering.inline``, or
    ``hoodie.clustering.schedule.inline``), the
    clustering keys (``hoodie.clustering.*``, ``hoodie.layout.*``) are the inline clustering's: validated now
    (``ClusteringConfig.from_options``: an unsupported one refused before anything is written) and carried as
    ``clustering_options``."""
    values, unknown = resolve_settings(options)
    if values["inline_cluster"] or values["schedule_inline_cluster"]:
        taken = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in (options or {}).items()
                 if k in unknown and k.startswith(CLUSTERING_PREFIXES)}
        if values["index_type"] == "BUCKET":
            raise UnsupportedOption("inline clustering with hoodie.index.type=BUCKET is not supported: "
                                    "the size-based clustering writes new file ids, and a bucket's file group is its "
                                    "file id",
                                    hint="leave hoodie.clustering.inline and hoodie.clustering.schedule.inline unset")
        ClusteringConfig.from_options(taken)
        values["clustering_options"] = tuple(sorted(taken.items()))
        unknown = tuple(k for k in unknown if k not in taken)
    for key in unknown:
        if key in TABLE_PROPERTIES_OF_WRITE_OPTIONS:
            warnings.warn(f"{key!r} is a table property: a new table is not created from it, as Apache Hudi "
                          f"creates none (give {TABLE_PROPERTIES_OF_WRITE_OPTIONS[key]!r}); on an existing table "
                          "it is compared with the table's", stacklevel=3)
        else:
            warnings.warn(f"unknown Hudi option {key!r} is ignored by hudi-spec's writer", stacklevel=3)
    return WriteConfig(**{name: value for name, value in values.items() if name in _FIELDS})

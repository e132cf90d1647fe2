"""The config of each table service and of the partitioner, built from one object of settings.

Hudi builds its ``HoodieCleanConfig``, ``HoodieArchivalConfig``, ``HoodieCompactionConfig`` and the
partitioner's sizing from one ``HoodieWriteConfig``. Here the settings object is anything carrying
the registry's names (``spec.config.registry``): the writer's ``WriteConfig``, a case's
``CreateTable``, the model's table settings. A name the object does not carry takes the registry's
default (a case does not choose ``hoodie.copyonwrite.insert.auto.split``, for one).

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieWriteConfig``
(``getCleanerPolicy``, ``getCleanerCommitsRetained``, ``getMinCommitsToKeep``,
``getInlineCompactDeltaCommitMax``, ``getParquetSmallFileLimit``, ``getParquetMaxFileSize``,
``getCopyOnWriteInsertSplitSize``, ``shouldAutoTuneInsertSplits``), ``HoodieCleanConfig``,
``HoodieArchivalConfig``, ``HoodieCompactionConfig`` and ``HoodieStorageConfig``.
"""

from __future__ import annotations

from spec.actions.archive import ArchiveConfig
from spec.actions.clean import CleanConfig
from spec.actions.compaction import CompactionConfig
from spec.config.registry import setting_of
from spec.write.partitioner import PartitionerConfig


# --8<-- [start:builders]
def clean_config(settings: object) -> CleanConfig:
    """The cleaner's config: ``hoodie.cleaner.policy``, ``.commits.retained``, ``.fileversions.retained``
    and ``.hours.retained``."""
    return CleanConfig(setting_of(settings, "clean_policy"), setting_of(settings, "clean_commits_retained"),
                       setting_of(settings, "clean_file_versions_retained"),
                       setting_of(settings, "clean_hours_retained"))


def archive_config(settings: object) -> ArchiveConfig:
    """Archival's config: ``hoodie.keep.min.commits`` and ``hoodie.keep.max.commits``."""
    return ArchiveConfig(setting_of(settings, "keep_min_commits"), setting_of(settings, "keep_max_commits"))


def compaction_config(settings: object) -> CompactionConfig:
    """The compaction trigger's config: ``hoodie.compact.inline.max.delta.commits``."""
    return CompactionConfig(setting_of(settings, "compact_max_delta_commits"))


def partitioner_config(settings: object) -> PartitionerConfig:
    """Bucket assignment's config: the small file limit, the maximum file size, the insert split size
    and whether it is tuned from the record size, the record size estimate and its threshold, the
    small file group candidates and the log-to-parquet ratio."""
    return PartitionerConfig(
        small_file_limit=setting_of(settings, "small_file_limit"),
        max_file_size=setting_of(settings, "max_file_size"),
        insert_split_size=setting_of(settings, "insert_split_size"),
        auto_split_inserts=setting_of(settings, "auto_split"),
        record_size_estimate=setting_of(settings, "record_size_estimate"),
        record_size_estimation_threshold=setting_of(settings, "record_size_estimation_threshold"),
        small_file_group_candidates=setting_of(settings, "small_file_group_candidates"),
        log_to_parquet_ratio=setting_of(settings, "log_to_parquet_ratio"),
    )
# --8<-- [end:builders]

"""A write's options against an existing table: Hudi's config-conflict and table-version rules.

A table's identity lives in ``hoodie.properties``: its name, type, record key fields, ordering
field, partition fields, key generator, hive-style and URL-encoded partitioning, and
version. A later write may repeat them but not change them:

- **table type** — the write option ``hoodie.datasource.write.table.type`` names the type of a new table
  only: on an existing table it is not compared with the table's, and the write is taken with the
  table's type (Apache Hudi 1.2.0 measured: a ``MERGE_ON_READ`` write to a copy-on-write table of
  version 6 or 8 completes as a ``commit``, a ``COPY_ON_WRITE`` write to a merge-on-read table as a
  ``deltacommit``; case ``option-conflicts-cow-v6``). The table property ``hoodie.table.type`` given as
  a write option is compared (a difference is a config conflict), and does not create a table.
- **key generator type** — alike: ``hoodie.datasource.write.keygenerator.type`` names a new table's key
  generator; on an existing table it is not compared, and the table's key generator keys the write (Apache
  Hudi 1.2.0 measured on version 6: a ``COMPLEX`` write to a ``SIMPLE`` table is taken, its keys are the
  table's key generator's and ``hoodie.properties`` keeps ``SIMPLE``; ``HoodieWriterUtils.validateTableConfig``
  compares the key generator's class, not its type; case ``option-conflicts-cow-v6``).
- **merge mode** — alike: Hudi's write option ``hoodie.write.record.merge.mode``
  (``HoodieWriteConfig.RECORD_MERGE_MODE``) names a new table's merge mode; the table property
  ``hoodie.record.merge.mode`` (``HoodieTableConfig.RECORD_MERGE_MODE``) given as a write option creates
  no table and is compared with an existing table's. On a table of version 9 the write option is compared
  too; on version 8 it is not (the table's mode merges). Measured with Apache Hudi 1.2.0 (case
  ``commit-time-ordering-cow-v8``).

- **config conflict** — every identity option the write *gives* is compared with the table's value,
  case-insensitively (Spark's default resolver); any difference fails the write before anything is
  written, naming the option, the value given and the table's value. Options the write does not
  give take the table's values. This is ``HoodieWriterUtils.validateTableConfig``
  (hudi-spark-datasource/hudi-spark-common/src/main/scala/org/apache/hudi/HoodieWriterUtils.scala,
  0.15.x and 1.0.x: ``Config conflict(key  current value  existing value)``, a ``HoodieException``).
- **table version** — a writer writes one table version (``hoodie.write.table.version``, 1.0.x);
  a table of another version is refused (``CommonClientUtils.validateTableVersion``,
  hudi-client/hudi-client-common/src/main/java/org/apache/hudi/util/CommonClientUtils.java, 1.0.x:
  ``Table version (..) and Writer version (..) do not match``). Apache Hudi 1.0.x first upgrades an
  older table to the writer's version when ``hoodie.write.auto.upgrade`` is on (its default;
  ``UpgradeDowngrade``); this specification does not describe the upgrade, so a write naming a
  newer version than the table's is refused as well, with a hint to upgrade with Apache Hudi.

- **change data capture** — ``hoodie.table.cdc.enabled`` and ``hoodie.table.cdc.supplemental.logging.mode`` create
  a new table's properties; given to an existing table they are compared like the identity (Hudi keeps the table's
  values and ignores them). Merge handles and merge-on-read compactions write CDC logs (``spec.write.cdc_logger``).
- **table features this writer does not carry out** — a merge-on-read table of version 6 whose ``hoodie.properties``
  turns on change data capture (Apache Hudi 1.2.0 measured: its own CDC query fails on one after a compaction),
  base files of several formats, or Hudi 1.2's slash-separated date partitions, or whose schema has a Hudi 1.2
  logical type (``variant``, ``vector``, ``blob``: ``spec.schema.table_schema.hudi_logical_types``), is refused
  by every write and table service before anything is written (``UnsupportedTable``), instead of being left with
  files Hudi's readers would find missing or misnamed.

Source (Apache Hudi 0.15.x for table version 6, 1.0.x for 8, 1.1.x for 9): ``HoodieWriterUtils``
(``validateTableConfig``), ``CommonClientUtils`` (``validateTableVersion``), ``UpgradeDowngrade``,
``HoodieTableConfig`` (``CDC_ENABLED``, ``MULTIPLE_BASE_FILE_FORMATS_ENABLE``) and ``HoodieCDCLogger``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from spec.errors import ConfigConflict, UnsupportedTable

TABLE_NAME: Final = "hoodie.table.name"
TABLE_TYPE: Final = "hoodie.table.type"
"""The table type's table property, compared when a write gives it (the write option
``hoodie.datasource.write.table.type`` is not: the table's type applies)."""
RECORD_KEY: Final = "hoodie.datasource.write.recordkey.field"
ORDERING: Final = "hoodie.datasource.write.precombine.field"
PARTITION_PATH: Final = "hoodie.datasource.write.partitionpath.field"
KEY_GENERATOR: Final = "hoodie.datasource.write.keygenerator.type"
HIVE_STYLE: Final = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE: Final = "hoodie.datasource.write.partitionpath.urlencode"
WRITE_TABLE_VERSION: Final = "hoodie.write.table.version"
MERGE_MODE_PROPERTY: Final = "hoodie.record.merge.mode"
"""The merge mode's table property (versions 8 and 9), compared when a write gives it."""
MERGE_MODE: Final = "hoodie.write.record.merge.mode"
"""Hudi's merge mode write option, compared with the table's merge mode on version 9 only."""
AUTO_UPGRADE: Final = "hoodie.write.auto.upgrade"
CDC_ENABLED: Final = "hoodie.table.cdc.enabled"
CDC_MODE: Final = "hoodie.table.cdc.supplemental.logging.mode"
"""Change data capture's table properties: they create a new table's; given to an existing table they are compared
(Apache Hudi keeps the table's and ignores them; a difference is refused here, not ignored)."""

IDENTITY: Final = (TABLE_NAME, TABLE_TYPE, RECORD_KEY, ORDERING, PARTITION_PATH, HIVE_STYLE, URL_ENCODE,
                   MERGE_MODE_PROPERTY, CDC_ENABLED, CDC_MODE)
"""The write options that name a table property (``HoodieWriterUtils``'s
``sparkDatasourceConfigsToTableConfigsMap`` and the record key, ordering field and key generator
checks), by their write-option key."""


@dataclass(frozen=True)
class Conflict:
    """One option whose given value differs from the table's."""

    key: str
    given: str
    existing: str


def config_conflicts(existing: Mapping[str, str], given: Mapping[str, str]) -> list[Conflict]:
    """The identity options (``IDENTITY``) given with a value other than the table's; ``existing``
    and ``given`` map write-option keys to values (lists of fields comma-joined). Values compare
    case-insensitively; an option the table does not record, or the write does not give, is no
    conflict. On a table of version 9 the merge mode's write option (``MERGE_MODE``) is compared with the
    table's merge mode as well."""
    pairs = [(key, key) for key in IDENTITY]
    if int(existing.get(WRITE_TABLE_VERSION) or 0) >= 9:
        pairs.append((MERGE_MODE, MERGE_MODE_PROPERTY))
    out = []
    for key, table_key in pairs:
        new, old = given.get(key), existing.get(table_key)
        if new is not None and old is not None and new.strip().lower() != old.strip().lower():
            out.append(Conflict(key, new, old))
    return out


# --8<-- [start:validate]
def validate_table_config(existing: Mapping[str, str], given: Mapping[str, str]) -> None:
    """Raise ``ConfigConflict`` naming every conflicting option (``config_conflicts``) and the table
    version rule (``validate_table_version``), before anything is written."""
    conflicts = config_conflicts(existing, given)
    if conflicts:
        detail = "; ".join(f"{c.key}: given {c.given!r}, the table has {c.existing!r}" for c in conflicts)
        raise ConfigConflict(f"config conflict with the existing table: {detail}",
                             hint="drop these options (the table's values apply) or write a new table")
    validate_table_version(existing.get(WRITE_TABLE_VERSION), given.get(WRITE_TABLE_VERSION))
# --8<-- [end:validate]


def validate_table_version(table_version: str | None, write_version: str | None) -> None:
    """A write naming a table version other than the table's is refused (see the module rules)."""
    if table_version is None or write_version is None or int(table_version) == int(write_version):
        return
    if int(write_version) > int(table_version):
        hint = (f"Apache Hudi upgrades the table to version {write_version} first ({AUTO_UPGRADE}); upgrade it "
                f"there, or write with {WRITE_TABLE_VERSION}={table_version}")
    else:
        hint = (f"a table is never downgraded by a write: write with {WRITE_TABLE_VERSION}={table_version}, or "
                "downgrade the table with Apache Hudi's CLI")
    raise ConfigConflict(f"{WRITE_TABLE_VERSION}: given {write_version!r}, the table is version {table_version}",
                         hint=hint)


# --8<-- [start:features]
UNSUPPORTED_FEATURES: Final = (
    (CDC_ENABLED, "change data capture on a merge-on-read table of version 6 (Apache Hudi 1.2.0's own CDC query fails "
                  "on one after a compaction)"),
    ("hoodie.table.multiple.base.file.formats.enable", "base files of several formats in one table"),
    ("hoodie.datasource.write.slash.separated.date.partitioning", "slash-separated date partitions (Hudi 1.2)"),
)
"""Table properties that, when ``true``, ask every writer for work this writer does not do."""


def unsupported_features(props: Mapping[str, str], logical_types: tuple[str, ...] = ()) -> list[str]:
    """What of the table (its properties, and the Hudi logical types its schema uses) this writer cannot write."""
    mor_v6 = (str(props.get("hoodie.table.type", "")).upper() == "MERGE_ON_READ"
              and str(props.get("hoodie.table.version", "9")).strip() == "6")
    out = [f"{what} ({key}=true)" for key, what in UNSUPPORTED_FEATURES
           if str(props.get(key, "false")).strip().lower() == "true" and (key != CDC_ENABLED or mor_v6)]
    out += [f"a column of Hudi 1.2's logical type {t!r}" for t in logical_types]
    return out


def check_table_features(props: Mapping[str, str], logical_types: tuple[str, ...] = (), action: str = "write") -> None:
    """Raise ``UnsupportedTable`` naming everything ``unsupported_features`` finds, before anything is written."""
    found = unsupported_features(props, logical_types)
    if found:
        raise UnsupportedTable(f"cannot {action} this table: it has {'; '.join(found)}, which this writer does not "
                               "carry out; nothing was changed", hint=f"{action} it with Apache Hudi")
# --8<-- [end:features]

"""``spec.write.writer_utils``: a write's options against the table's (Hudi's config-conflict and table-version
rules)."""

from __future__ import annotations

import pytest

from spec.errors import ConfigConflict, InvalidConfig
from spec.write.writer_utils import (
    KEY_GENERATOR,
    ORDERING,
    RECORD_KEY,
    TABLE_TYPE,
    WRITE_TABLE_VERSION,
    config_conflicts,
    validate_table_config,
)

TABLE = {TABLE_TYPE: "COPY_ON_WRITE", RECORD_KEY: "id", ORDERING: "ts", KEY_GENERATOR: "SIMPLE",
         WRITE_TABLE_VERSION: "6"}


def test_given_values_equal_to_the_tables_in_any_case_are_no_conflict() -> None:
    assert config_conflicts(TABLE, {TABLE_TYPE: "copy_on_write", RECORD_KEY: "id", "hoodie.other": "x"}) == []
    validate_table_config(TABLE, {WRITE_TABLE_VERSION: "6", ORDERING: "ts"})


def test_every_differing_option_is_named_with_both_values() -> None:
    with pytest.raises(ConfigConflict) as err:
        validate_table_config(TABLE, {TABLE_TYPE: "MERGE_ON_READ", ORDERING: "v"})
    message = err.value.message
    assert "'MERGE_ON_READ'" in message and "'COPY_ON_WRITE'" in message
    assert "'v'" in message and "'ts'" in message
    assert isinstance(err.value, InvalidConfig) and err.value.kind == "config_conflict"


def test_an_option_the_table_does_not_record_is_no_conflict() -> None:
    assert config_conflicts({RECORD_KEY: "id"}, {ORDERING: "ts"}) == []


@pytest.mark.parametrize(("given", "hint"), [("8", "upgrade"), ("6", "downgrade")])
def test_another_table_version_is_refused_either_way(given: str, hint: str) -> None:
    table = {**TABLE, WRITE_TABLE_VERSION: "8" if given == "6" else "6"}
    with pytest.raises(ConfigConflict) as err:
        validate_table_config(table, {WRITE_TABLE_VERSION: given})
    assert hint in (err.value.hint or "")


def test_the_table_type_write_option_is_not_compared_and_takes_only_the_enum_s_name() -> None:
    """Apache Hudi 1.2.0 (option-conflicts-cow-v6): ``hoodie.datasource.write.table.type`` naming the other type
    is taken with the table's type; ``hoodie.table.type`` is compared; ``copy_on_write`` is no enum name."""
    from spec.config.registry import check_values

    write_option = "hoodie.datasource.write.table.type"
    assert config_conflicts(TABLE, {write_option: "MERGE_ON_READ"}) == []
    assert [c.key for c in config_conflicts(TABLE, {"hoodie.table.type": "MERGE_ON_READ"})] == ["hoodie.table.type"]
    check_values({write_option: "MERGE_ON_READ"})
    with pytest.raises(InvalidConfig, match="copy_on_write"):
        check_values({write_option: "copy_on_write"})

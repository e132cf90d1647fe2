"""Base and log file names: parse/format round trips and Hudi's regex groups."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidName
from spec.file_naming import (
    BaseFileName,
    LogFileName,
    is_base_file_name,
    is_log_file_name,
    log_file_sort_key,
    make_file_id,
    parse_base_file_name,
    parse_log_file_name,
    parse_write_token,
    validate_file_id,
)
from tests.strategies import file_ids, instant_times, write_tokens


@given(file_ids, write_tokens, instant_times())
def test_base_file_round_trip(file_id: str, token: str, instant: str) -> None:
    b = BaseFileName(file_id, token, instant)
    assert parse_base_file_name(b.format()) == b
    assert parse_base_file_name(b.format()).format() == b.format()


@given(file_ids, instant_times(), st.integers(1, 10**6), st.one_of(st.none(), write_tokens),
       st.sampled_from(["log", "archive"]), st.sampled_from(["", ".cdc", "-cdc"]))
def test_log_file_round_trip(file_id: str, instant: str, version: int, token: str | None, ext: str,
                             suffix: str) -> None:
    log = LogFileName(file_id, instant, version, token, ext, suffix if token else "")
    assert parse_log_file_name(log.format()) == log
    assert parse_log_file_name(log.format()).format() == log.format()


def test_real_log_name_groups() -> None:
    log = parse_log_file_name(".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1")
    assert (log.file_id, log.instant, log.version, log.write_token) == (
        "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0", "20250126040823628", 2, "1-0-1")
    assert parse_log_file_name(".commits_.archive.3_1-0-1").extension == "archive"


@given(st.text(max_size=40))
def test_garbage_is_rejected_with_typed_error(text: str) -> None:
    if not is_base_file_name(text) and parse_or_none(text) is None:
        with pytest.raises(InvalidName):
            parse_base_file_name(text)
    if not is_log_file_name(text):
        with pytest.raises(InvalidName):
            parse_log_file_name(text)


def parse_or_none(text: str) -> BaseFileName | None:
    try:
        return parse_base_file_name(text)
    except InvalidName:
        return None


@pytest.mark.parametrize("bad", ["abc_def", "a b", "", "x/y"])
def test_file_ids_reject_separators(bad: str) -> None:
    with pytest.raises(InvalidName):
        validate_file_id(bad)
    with pytest.raises(InvalidName):
        make_file_id(bad, 0)


def test_write_token_parse() -> None:
    assert parse_write_token("0-986-2792").format() == "0-986-2792"
    with pytest.raises(InvalidName):
        parse_write_token("0-986")


def test_log_comparator_orders_by_instant_version_token() -> None:
    names = [".f-0_002.log.1_0-1-1", ".f-0_001.log.2_0-1-1", ".f-0_001.log.1_1-0-1", ".f-0_001.log.1_0-9-9"]
    names = [n.replace("_00", "_2024010100000000") for n in names]
    ordered = sorted((parse_log_file_name(n) for n in names), key=log_file_sort_key)
    assert [(x.instant[-1], x.version, x.write_token) for x in ordered] == [
        ("1", 1, "0-9-9"), ("1", 1, "1-0-1"), ("1", 2, "0-1-1"), ("2", 1, "0-1-1")]

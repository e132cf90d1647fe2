"""Base and log file names: parse/format round trips and Hudi's regex groups."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spec.errors import InvalidName
from spec.file_group.file_naming import (
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


@given(st.text(alphabet="abc01-_.log", max_size=40) | st.text(max_size=40))
def test_any_text_is_rejected_or_round_trips(text: str) -> None:
    """Whatever parses re-formats to the very same name; everything else raises InvalidName."""
    for parse in (parse_base_file_name, parse_log_file_name):
        try:
            parsed = parse(text)
        except InvalidName:
            continue
        assert parsed.format() == text


def _break(name: str, how: str) -> str:
    """A valid base file name broken in one way the naming rule forbids."""
    file_id, token, rest = name.split("_")
    instant, ext = rest.split(".")
    return {
        "underscore in file id": f"{file_id[:8]}_{file_id[9:]}_{token}_{rest}",
        "short instant": f"{file_id}_{token}_{instant[:10]}.{ext}",
        "no extension": f"{file_id}_{token}_{instant}",
        "dot in file id": f"{file_id}.x_{token}_{rest}",
        "missing token": f"{file_id}_{rest}",
    }[how]


@given(file_ids, write_tokens, instant_times(),
       st.sampled_from(["underscore in file id", "short instant", "no extension", "dot in file id",
                        "missing token"]))
def test_broken_base_names_raise(file_id: str, token: str, instant: str, how: str) -> None:
    bad = _break(BaseFileName(file_id, token, instant).format(), how)
    assert not is_base_file_name(bad)
    with pytest.raises(InvalidName):
        parse_base_file_name(bad)


@given(file_ids, instant_times(), st.integers(1, 99), write_tokens,
       st.sampled_from(["no dot", "no version", "letters in version", "bad extension", "bad token"]))
def test_broken_log_names_raise(file_id: str, instant: str, version: int, token: str, how: str) -> None:
    good = LogFileName(file_id, instant, version, token).format()
    bad = {
        "no dot": good[1:],
        "no version": good.replace(f".log.{version}_", ".log._"),
        "letters in version": good.replace(f".log.{version}_", f".log.v{version}_"),
        "bad extension": good.replace(".log.", ".txt."),
        "bad token": good + "-",
    }[how]
    assert not is_log_file_name(bad)
    with pytest.raises(InvalidName):
        parse_log_file_name(bad)


def test_metadata_table_names() -> None:
    b = parse_base_file_name("files-0000-0_0-1078-3102_20251220210130942001.hfile")
    assert (b.file_id, b.instant, b.extension) == ("files-0000-0", "20251220210130942001", ".hfile")
    assert is_base_file_name(b.format())
    assert not is_base_file_name("f-0_0-1-2_20251220210130942.crc")  # parses, but no base format
    assert parse_base_file_name("f-0_0-1-2_20251220210130942.crc").extension == ".crc"


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

"""Object-store requests per operation (``bench.requests``): counted at a local S3 server, beside the
fewest a write of that shape needs, and recorded between the performance page's markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import requests
from bench.requests import REQUESTS_BEGIN, REQUESTS_END, fewest, markdown, record
from tests import processes

UPSERT_REQUEST_BUDGET = 80


@pytest.fixture(scope="module")
def counts() -> list[requests.RequestCount]:
    """Counted in a fresh process, as ``make bench`` counts them (a process makes one S3 client, for
    the endpoint it first reaches, so this test process, which may have reached another, cannot)."""
    done = processes.run(processes.python("-m", "bench.requests", "--json"), cwd=processes.ROOT)
    done.expect(0, "the object-store requests counted")
    return requests.from_dicts(json.loads(done.stdout.strip().splitlines()[-1]))


def test_every_representative_operation_is_counted_by_method(counts: list[requests.RequestCount]) -> None:
    assert [c.operation for c in counts] == ["cow_upsert", "cow_insert", "cow_delete", "cow_clean", "mor_upsert",
                                             "mor_compaction"]
    for c in counts:
        assert c.by_method.get("PUT", 0) >= 3, c  # at least the instant files it created
        assert c.total >= c.minimum, f"{c.operation}: {c.total} requests, fewer than the fewest {c.minimum}"
    by = {c.operation: c for c in counts}
    assert by["cow_clean"].by_method.get("DELETE", 0) >= 3  # the 3 older base files
    assert by["cow_upsert"].total <= UPSERT_REQUEST_BUDGET and by["mor_upsert"].total <= UPSERT_REQUEST_BUDGET


def test_the_fewest_add_up_from_their_parts() -> None:
    assert fewest("cow_upsert")[0] == 16  # 4 + 3 reads + 3 writes + 3 lock + 3 instants
    assert fewest("cow_upsert", groups=5)[0] == 20
    assert fewest("mor_compaction")[0] == 18
    assert fewest("cow_clean")[0] == 12
    with pytest.raises(ValueError, match="unknown operation"):
        fewest("bulk_insert")


def test_the_table_goes_between_the_markers_and_nowhere_else(counts: list[requests.RequestCount],
                                                             tmp_path: Path) -> None:
    page = tmp_path / "performance.md"
    page.write_text(f"# P\n\nbefore\n\n{REQUESTS_BEGIN}\nold\n{REQUESTS_END}\n\nafter\n")
    assert record(page, counts)
    text = page.read_text()
    assert "old" not in text and text.startswith("# P\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert markdown(counts).strip() in text
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    assert not record(bare, counts) and bare.read_text() == "no markers\n"


def test_the_performance_page_has_the_request_markers() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "performance.md").read_text()
    assert REQUESTS_BEGIN in page and REQUESTS_END in page

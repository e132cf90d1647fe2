"""``spec.read.time_travel``: the time-travel queries Apache Hudi refuses (``TimelineUtils.validateTimestampAsOf``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from spec.errors import InvalidOperation, TimeTravelRefused
from spec.read.time_travel import time_travel_refusal
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import Instant, State

T1, T2, T3, T4 = "20240101000001000", "20240101000002000", "20240101000003000", "20240101000004000"


def _timeline(*instants: tuple[str, str, State]) -> Timeline:
    return Timeline(tuple(Instant(t, a, s) for t, a, s in instants), 1)


def test_a_table_never_cleaned_answers_every_instant_before_a_pending_write() -> None:
    timeline = _timeline((T1, "commit", State.COMPLETED), (T3, "commit", State.INFLIGHT))
    assert time_travel_refusal(timeline, T1, None) is None
    assert time_travel_refusal(timeline, T2, None) is None
    assert time_travel_refusal(timeline, T3, None) is not None  # at or after the pending write
    assert time_travel_refusal(timeline, T4, None) is not None


def test_a_clean_refuses_instants_before_its_earliest_retained_commit() -> None:
    timeline = _timeline((T1, "commit", State.COMPLETED), (T2, "commit", State.COMPLETED),
                         (T3, "clean", State.COMPLETED), (T4, "commit", State.COMPLETED))
    assert time_travel_refusal(timeline, T1, T2) is not None
    assert time_travel_refusal(timeline, T2, T2) is None
    # a clean naming no earliest commit (KEEP_LATEST_FILE_VERSIONS): the active timeline's first write bounds it
    later = _timeline((T2, "commit", State.COMPLETED), (T3, "clean", State.COMPLETED))
    assert time_travel_refusal(later, T1, "") is not None and time_travel_refusal(later, T2, "") is None


def test_the_spec_reader_refuses_time_travel_the_cleaner_may_have_broken(tmp_path: Path) -> None:
    """A table written, cleaned to one retained commit, then queried as of its first write: Apache Hudi refuses
    it (the cleaner's earliest retained commit is later); the spec reader refuses it with a typed error."""
    from reference.api import HudiTable
    from spec.read.reader import read_table

    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "8",
            "hoodie.cleaner.commits.retained": "1", "hoodie.clean.automatic": "false"}
    table = HudiTable(str(tmp_path / "t"), engine="local")
    writes = [table.write(pa.Table.from_pylist([{"id": 1, "ts": i, "v": f"v{i}"}]), "upsert", opts).instant
              for i in range(3)]
    assert read_table(str(tmp_path / "t"), as_of=writes[0]).column("v").to_pylist() == ["v0"]  # never cleaned
    table.clean(opts)
    with pytest.raises(TimeTravelRefused) as info:
        read_table(str(tmp_path / "t"), as_of=writes[0])
    assert isinstance(info.value, InvalidOperation) and info.value.hint
    assert read_table(str(tmp_path / "t"), as_of=writes[2]).column("v").to_pylist() == ["v2"]

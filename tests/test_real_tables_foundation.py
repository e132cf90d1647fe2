"""Names, timelines and table configs of the 22 real tables written by Apache Hudi."""

from __future__ import annotations

import os
from pathlib import Path

from spec.config.properties_file import parse_properties
from spec.config.table_config import KEYS_BY_NAME, TableConfig, table_checksum
from spec.file_group.file_naming import (
    is_base_file_name,
    is_log_file_name,
    parse_base_file_name,
    parse_log_file_name,
)
from spec.file_group.partition_metadata import PARTITION_METADATA_FILE, parse_partition_metadata, partition_depth
from spec.storage.hoodie_storage import Storage
from spec.timeline.active_timeline import Timeline
from spec.timeline.instant import State
from spec.timeline.layout import (
    LAYOUT_V2,
    format_instant_file_name,
    instant_file_path,
    parse_instant_file_name,
    read_instant_content,
    timeline_dir,
)
from tests.conftest import RealTable

STATE_BY_SUFFIX = {"requested": "REQUESTED", "inflight": "INFLIGHT"}


def _tables_in(root: Path) -> list[Path]:
    """The data table and, if present, its metadata table (itself a Hudi table)."""
    found = [root]
    if (root / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file():
        found.append(root / ".hoodie" / "metadata")
    return found


def _data_files(table: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(table):
        dirnames[:] = [d for d in dirnames if d != ".hoodie"]
        out.extend(Path(dirpath) / f for f in filenames)
    return out


def test_every_data_file_name_round_trips(any_real_table: RealTable) -> None:
    seen_base = seen_log = 0
    for table in _tables_in(any_real_table.path):
        for f in _data_files(table):
            name = f.name
            if name.startswith(PARTITION_METADATA_FILE) or name == ".DS_Store" or name.endswith(".crc"):
                continue
            if name.startswith("."):
                assert is_log_file_name(name), name
                assert parse_log_file_name(name).format() == name
                seen_log += 1
            else:
                assert is_base_file_name(name), name
                assert parse_base_file_name(name).format() == name
                seen_base += 1
    m = any_real_table.manifest
    assert seen_base >= int(m.get("n_base_files", 1))  # (the version-9 manifest does not count files)
    assert seen_log >= int(m.get("n_log_files", 0))


def _independent_reading(names: list[str], layout: int) -> dict[str, tuple[str, str, str | None]]:
    """requested time -> (action of the highest-state file, state, completion) read by string splitting."""
    rank = {"REQUESTED": 0, "INFLIGHT": 1, "COMPLETED": 2}
    best: dict[str, tuple[str, str, str | None]] = {}
    for name in names:
        parts = name.split(".")
        times = parts[0]
        if not times.replace("_", "").isdigit():
            continue
        req, _, comp = times.partition("_")
        if len(parts) == 2 and parts[1] == "inflight":
            entry = ("commit", "INFLIGHT", None)
        elif len(parts) == 2:
            entry = (parts[1], "COMPLETED", comp or None)
        else:
            entry = (parts[1], STATE_BY_SUFFIX[parts[2]], None)
        if req not in best or rank[entry[1]] > rank[best[req][1]]:
            best[req] = entry
    return best


def test_every_instant_file_round_trips_and_timeline_matches_listing(any_real_table: RealTable) -> None:
    for table in _tables_in(any_real_table.path):
        cfg = TableConfig.load(str(table))
        layout = cfg.timeline_layout
        names = sorted(p.name for p in (table / timeline_dir(layout)).iterdir() if p.is_file())
        instant_names = [n for n in names if n[0].isdigit()]
        assert set(names) - set(instant_names) <= {"hoodie.properties"}  # nothing else is skipped
        for name in instant_names:
            assert format_instant_file_name(parse_instant_file_name(name, layout), layout) == name
        tl = Timeline.load(str(table))
        expected = _independent_reading(instant_names, layout)
        assert [i.requested for i in tl.instants] == sorted(expected)
        for inst in tl.instants:
            assert (inst.action, inst.state.value, inst.completed) == expected[inst.requested]
        if layout == LAYOUT_V2:
            assert all(i.completed for i in tl.completed().instants), "v8 completed instants carry _C"
    m = any_real_table.manifest
    data_tl = Timeline.load(str(any_real_table.path))
    counts: dict[str, int] = {}
    for inst in data_tl.completed().instants:
        action = data_tl.origin_action(inst.requested) if inst.action == "commit" else inst.action
        action = "commit" if action == "compaction" else action
        counts[action or inst.action] = counts.get(action or inst.action, 0) + 1
    if "completed_instants" in m:  # (the version-9 manifest does not count instants)
        want = dict(kv.split(":") for kv in m["completed_instants"].split()) if m["completed_instants"] else {}
        assert counts == {k: int(v) for k, v in want.items()}


def test_every_properties_file_parses_and_checksum_recomputes(any_real_table: RealTable) -> None:
    for table in _tables_in(any_real_table.path):
        raw = (table / ".hoodie" / "hoodie.properties").read_bytes()
        props = parse_properties(raw)
        cfg = TableConfig(props).validate()
        assert cfg.table_version == any_real_table.table_version
        assert cfg.is_metadata_table == (table != any_real_table.path)
        assert props["hoodie.table.checksum"] == str(table_checksum(props.get("hoodie.database.name"),
                                                                    props["hoodie.table.name"]))
        assert TableConfig.from_bytes(cfg.to_bytes()).props == props
    cfg = TableConfig.load(str(any_real_table.path))
    assert cfg.table_type == any_real_table.table_type.replace("COW", "COPY_ON_WRITE").replace("MOR", "MERGE_ON_READ")
    if "partition_fields" in any_real_table.manifest:  # (the version-9 manifest does not name them)
        parts = any_real_table.manifest["partition_fields"]
        assert cfg.partition_fields == (() if parts == "-" else tuple(parts.split(",")))
        assert cfg.record_key_fields == tuple(any_real_table.manifest["record_key"].split(","))


def test_every_partition_metadata_parses(any_real_table: RealTable) -> None:
    files = [f for f in _data_files(any_real_table.path) if f.name == PARTITION_METADATA_FILE]
    timeline = Timeline.load(str(any_real_table.path))
    for f in files:
        md = parse_partition_metadata(f.read_bytes())
        rel = f.parent.relative_to(any_real_table.path).as_posix()
        assert md.depth == partition_depth("" if rel == "." else rel)
        assert timeline.get(md.commit_time) is not None or md.commit_time < timeline.instants[0].requested
        assert parse_partition_metadata(md.format()) == md


AVRO_MAGIC = b"Obj\x01"


def test_every_instant_file_content_is_what_its_name_says(any_real_table: RealTable) -> None:
    """Requested commit/deltacommit files are empty (HoodieActiveTimeline); completed write instants hold
    commit metadata, JSON in v6 and an Avro container in v8; clean/rollback/compaction plans are Avro."""
    checked = 0
    for table in _tables_in(any_real_table.path):
        storage = Storage(str(table))
        tl = Timeline.load(storage)
        for inst in tl.instants:
            for name in tl.files_of(inst):
                file_inst = parse_instant_file_name(name, tl.layout)
                data = read_instant_content(storage, name, tl.layout)
                assert data == (table / timeline_dir(tl.layout) / name).read_bytes()
                if file_inst.state == State.COMPLETED:
                    assert read_instant_content(storage, file_inst, tl.layout) == data
                    assert instant_file_path(file_inst, tl.layout) == f"{timeline_dir(tl.layout)}/{name}"
                action, state = file_inst.action, file_inst.state
                if state == State.REQUESTED and action in ("commit", "deltacommit"):
                    assert data == b"", name
                elif state == State.COMPLETED and action in ("commit", "deltacommit", "replacecommit"):
                    assert data.startswith(AVRO_MAGIC if tl.layout == LAYOUT_V2 else b"{"), name
                elif state in (State.COMPLETED, State.REQUESTED):
                    assert data.startswith(AVRO_MAGIC), name
                checked += 1
    assert checked == sum(len(v) for t in _tables_in(any_real_table.path) for v in Timeline.load(str(t)).files.values())


def test_every_real_key_is_in_the_registry_within_its_version(any_real_table: RealTable) -> None:
    for table in _tables_in(any_real_table.path):
        props = parse_properties((table / ".hoodie" / "hoodie.properties").read_bytes())
        version = int(props["hoodie.table.version"])
        for key in props:
            assert key in KEYS_BY_NAME, f"{key} is not in TABLE_CONFIG_KEYS"
            since = KEYS_BY_NAME[key].since_version
            assert since <= version, f"{key} exists only since v{since}"
        for spec in KEYS_BY_NAME.values():
            if spec.required:
                assert spec.key in props

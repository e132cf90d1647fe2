"""The ledger (L4): each rule of ``spec.write.ledger`` on a file that keeps it and one that breaks it; the
model's predictions (``spec.model.ledger``); the observation catching violations made by hand on a
small table the reference's local engine wrote (no Spark); the mutation harness on one mutation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.diff import diff_l4
from conformance.interface.ops import Case, CreateTable
from conformance.mutants import MUTATIONS, Mutation, apply_mutation, run_one
from conformance.runner import FixtureCase, Verdict, run_case
from spec.actions.archive import hold_back_uncleaned_replaces
from spec.errors import InvalidOperation
from spec.model import TableModel
from spec.model.ledger import ledger as model_ledger
from spec.model.operations import Archive, Clean, Compact, Write
from spec.timeline.instant import Instant, State
from spec.write.ledger import (
    BlockRows,
    FileRows,
    StatCounts,
    base_stat,
    commit_time_violations,
    compaction_stat,
    ledger_violations,
    log_stat,
    older_files,
    orphan_violations,
    seqno_violations,
)

ROOT = Path(__file__).resolve().parents[1]
T1, T2, T3 = "20240101000000000", "20240101000001000", "20240101000002000"


def base(instant: str, *rows: tuple[str, str, str], fid: str = "g1", p: str = "a") -> FileRows:
    return FileRows(p, fid, f"{fid}_0-1-0_{instant}.parquet", instant, (BlockRows("base", instant, rows),))


def log(base_instant: str, *blocks: BlockRows, fid: str = "g1", p: str = "a", version: int = 1) -> FileRows:
    return FileRows(p, fid, f".{fid}_{base_instant}.log.{version}_0-1-0", base_instant, blocks)


def rules(violations: list[tuple[str, str, str, str]]) -> list[str]:
    return [v[0] for v in violations]


# --- sequence numbers -----------------------------------------------------------------------------

def test_seqno_unique_and_prefixed_by_the_commit_time_passes() -> None:
    f = base(T1, (T1, f"{T1}_0_1", "k1"), (T1, f"{T1}_0_0", "k2"))  # a base file's order is free
    assert seqno_violations(f) == []


def test_seqno_duplicate_in_a_file_fails() -> None:
    f = base(T1, (T1, f"{T1}_0_0", "k1"), (T1, f"{T1}_0_0", "k2"))
    assert rules(seqno_violations(f)) == ["sequence number appears twice"]


@pytest.mark.parametrize("seqno", [f"{T2}_0_0", f"{T1}-0-0", f"{T1}_0_x", ""])
def test_seqno_malformed_or_of_another_instant_fails(seqno: str) -> None:
    f = base(T1, (T1, seqno, "k1"))
    assert rules(seqno_violations(f)) == ["sequence number not prefixed by the commit time"]


def test_log_record_indexes_grow_per_task_in_file_order() -> None:
    ok = log(T1, BlockRows("data", T2, ((T2, f"{T2}_0_0", "k1"), (T2, f"{T2}_0_1", "k2"), (T2, f"{T2}_1_0", "k3"))))
    assert seqno_violations(ok) == []
    bad = log(T1, BlockRows("data", T2, ((T2, f"{T2}_0_1", "k1"), (T2, f"{T2}_0_0", "k2"))))
    assert rules(seqno_violations(bad)) == ["sequence number out of order"]
    # version 8 on: Hudi 1.x orders a block's records by their base-file position after numbering them
    assert seqno_violations(bad, ordered_logs=False) == []
    assert ledger_violations([bad], {T1, T2}, table_version=8) == []
    assert rules(ledger_violations([bad], {T1, T2}, table_version=6)) == ["sequence number out of order"]


# --- commit times ---------------------------------------------------------------------------------

def test_log_row_carries_its_blocks_instant() -> None:
    ok = log(T1, BlockRows("data", T2, ((T2, f"{T2}_0_0", "k1"),)))
    assert commit_time_violations(ok, []) == []
    bad = log(T1, BlockRows("data", T2, ((T1, f"{T1}_0_0", "k1"),)))
    assert rules(commit_time_violations(bad, [])) == ["log row's commit time is not its block's instant"]


def test_base_row_commit_time_after_the_files_instant_fails() -> None:
    bad = base(T1, (T2, f"{T2}_0_0", "k1"))
    assert rules(commit_time_violations(bad, [])) == ["commit time after the file's instant"]


def test_copied_row_keeps_commit_time_and_seqno_of_an_older_file() -> None:
    old = base(T1, (T1, f"{T1}_0_0", "k1"), (T1, f"{T1}_0_1", "k2"))
    new = base(T2, (T1, f"{T1}_0_0", "k1"), (T2, f"{T2}_0_0", "k2"))
    assert commit_time_violations(new, [old]) == []
    assert commit_time_violations(new, []) == []  # older file cleaned: nothing to compare with
    moved = base(T2, (T1, f"{T1}_0_5", "k1"), (T2, f"{T2}_0_0", "k2"))  # a copy that changed its seqno
    assert rules(commit_time_violations(moved, [old])) == [
        "copied row's commit time and sequence number held by no older file"]


def test_older_files_are_the_groups_files_before_it() -> None:
    b1, b2 = base(T1, fid="g1"), base(T2, fid="g1")
    other = base(T1, fid="g2")
    lg = log(T1, BlockRows("data", T1), BlockRows("command", T3, target=T2))  # command blocks do not date it
    assert older_files(b2, [b1, b2, other, lg]) == [b1, lg]
    assert older_files(b1, [b1, b2, other, lg]) == []


# --- files accounted for --------------------------------------------------------------------------

def test_base_file_of_a_known_instant_passes_an_unknown_one_fails() -> None:
    f = base(T2)
    assert orphan_violations(f, frozenset({T1, T2})) == []
    assert rules(orphan_violations(f, frozenset({T1}))) == ["base file of an instant the timeline does not hold"]


def test_log_block_of_an_unknown_instant_passes_only_behind_a_rollback_command_block() -> None:
    f = log(T1, BlockRows("data", T2, ((T2, f"{T2}_0_0", "k"),)), BlockRows("command", T3, target=T2))
    assert orphan_violations(f, frozenset({T1, T3}), frozenset({T2})) == []
    got = orphan_violations(f, frozenset({T1, T3}))
    assert rules(got) == ["data block of an instant neither on the timeline nor rolled back by a command block"]


def test_ledger_violations_takes_rolled_back_instants_from_any_log_of_the_group() -> None:
    b = base(T1, (T1, f"{T1}_0_0", "k"))
    written = log(T1, BlockRows("data", T2, ((T2, f"{T2}_0_0", "k"),)))
    rolled = log(T1, BlockRows("command", T3, target=T2), version=2)
    assert ledger_violations([b, written, rolled], {T1, T3}) == []
    assert rules(ledger_violations([b, written], {T1, T3})) == [
        "data block of an instant neither on the timeline nor rolled back by a command block"]
    bad = base(T2, (T2, f"{T2}_0_0", "k"), (T2, f"{T2}_0_0", "j"))
    found = ledger_violations([b, bad], {T1})
    assert found == sorted(found) and set(rules(found)) == {
        "base file of an instant the timeline does not hold", "sequence number appears twice"}


# --- write statistics -----------------------------------------------------------------------------

def test_base_stat_of_a_new_group_and_of_a_merge() -> None:
    first = base(T1, (T1, f"{T1}_0_0", "k1"), (T1, f"{T1}_0_1", "k2"), (T1, f"{T1}_0_2", "k3"))
    assert base_stat(first, None) == StatCounts("a", "g1", first.name, 3, 3, 0, 0)
    # k1 copied, k2 updated, k3 deleted, k4 inserted
    merged = base(T2, (T1, f"{T1}_0_0", "k1"), (T2, f"{T2}_0_0", "k2"), (T2, f"{T2}_0_1", "k4"))
    assert base_stat(merged, first) == StatCounts("a", "g1", merged.name, 3, 1, 1, 1)
    assert base_stat(merged, first) != StatCounts("a", "g1", merged.name, 3, 2, 0, 1)


def test_compaction_stat_counts_against_the_slices_base_file() -> None:
    b = base(T1, (T1, f"{T1}_0_0", "k1"), (T1, f"{T1}_0_1", "k2"), (T1, f"{T1}_0_2", "k3"))
    out = base(T3, (T1, f"{T1}_0_0", "k1"), (T2, f"{T2}_0_0", "k2"), (T2, f"{T2}_0_1", "k4"))
    # logs updated k2, deleted k3, inserted k4; k1 untouched
    assert compaction_stat(out, b, {"k2", "k3", "k4"}) == StatCounts("a", "g1", out.name, 3, 1, 1, 1)
    assert compaction_stat(out, None, {"k1", "k2", "k4"}) == StatCounts("a", "g1", out.name, 3, 3, 0, 0)
    # a log record of k1 that lost its merge to the base row is no update (Apache Hudi 1.2.0, versions 6, 8, 9)
    assert compaction_stat(out, b, {"k1", "k2", "k3", "k4"}).updates == 1


def test_log_stat_counts_only_the_instants_blocks() -> None:
    f = log(T1, BlockRows("data", T2, ((T2, f"{T2}_0_0", "k1"),)),
            BlockRows("data", T3, ((T3, f"{T3}_0_0", "k1"), (T3, f"{T3}_0_1", "k9"))),
            BlockRows("delete", T3, deletes=("k2", "k3")))
    assert log_stat(f, T3, {"k1", "k2", "k3"}) == StatCounts("a", "g1", f.name, 2, 1, 1, 2)
    assert log_stat(f, T2, set()) == StatCounts("a", "g1", f.name, 1, 1, 0, 0)


# --- archival of replacecommits ---------------------------------------------------------------------

def test_archival_holds_back_an_uncleaned_replacecommit_and_what_follows() -> None:
    def done(t: str, action: str) -> Instant:
        return Instant(t, action, State.COMPLETED)

    chosen = (done(T1, "commit"), done("20240101000001500", "clean"), done(T2, "replacecommit"), done(T3, "commit"))
    replaced = {T2: frozenset({("a", "g1")})}
    assert hold_back_uncleaned_replaces(chosen, replaced, frozenset()) == chosen  # cleaned: all go
    kept = hold_back_uncleaned_replaces(chosen, replaced, frozenset({("a", "g1")}))
    assert kept == (done(T1, "commit"),)  # the clean is not older than the newest write archived
    earlier_clean = (done("20231231000000000", "clean"), *chosen)
    assert hold_back_uncleaned_replaces(earlier_clean, replaced, frozenset({("a", "g1")})) == (
        done("20231231000000000", "clean"), done(T1, "commit"))


# --- the model's ledger ---------------------------------------------------------------------------

def rec(i: int, ts: int, p: str = "a") -> dict[str, Any]:
    return {"id": i, "ts": ts, "p": p, "v": f"v{i}@{ts}"}


def _model(table_type: str, **kw: Any) -> TableModel:
    return TableModel(CreateTable(table_type=table_type, table_version=6, partition_fields=("p",), **kw))


def test_model_ledger_predicts_write_stats_operations_and_no_violation() -> None:
    m = _model("COPY_ON_WRITE")
    m.apply(Write("insert", (rec(1, 1), rec(2, 1), rec(3, 1))))
    m.apply(Write("upsert", (rec(1, 2), rec(4, 1))))
    m.apply(Write("delete", (rec(2, 9),)))
    led = model_ledger(m.state)
    summaries = [led.commits[t] for t in sorted(led.commits)]
    assert [(c.operation, c.compacted) for c in summaries] == [("INSERT", False), ("UPSERT", False),
                                                               ("DELETE", False)]
    assert [[(s.writes, s.inserts, s.updates, s.deletes) for s in c.stats] for c in summaries] == [
        [(3, 3, 0, 0)], [(4, 1, 1, 0)], [(3, 0, 0, 1)]]
    assert ledger_violations(led.files, led.known) == []
    assert led.known == frozenset(i.requested for i in m.state.timeline)


def test_model_ledger_predicts_compaction_plans_and_the_compacted_commit() -> None:
    m = _model("MERGE_ON_READ", small_file_limit=0)
    m.apply(Write("insert", (rec(1, 1), rec(2, 1, "b"))))
    m.apply(Write("upsert", (rec(1, 2), rec(2, 2, "b"))))
    m.apply(Compact("schedule"))
    led = model_ledger(m.state)
    (t, ops), = led.compactions.items()
    assert sorted((o.partition_path, bool(o.base_file), len(o.log_files)) for o in ops) == [
        ("a", True, 1), ("b", True, 1)]
    assert t not in led.commits
    m.apply(Compact("run"))
    done = model_ledger(m.state).commits[t]
    assert (done.operation, done.compacted) == ("COMPACT", True)
    assert sorted((s.partition, s.writes, s.inserts, s.updates, s.deletes) for s in done.stats) == [
        ("a", 1, 0, 1, 0), ("b", 1, 0, 1, 0)]
    assert ledger_violations(model_ledger(m.state).files, model_ledger(m.state).known) == []


def test_model_names_replaced_groups_and_holds_back_their_archival() -> None:
    m = _model("COPY_ON_WRITE", clean_commits_retained=1, keep_min_commits=2, keep_max_commits=3)
    for op in (Write("insert", (rec(1, 1),)), Write("upsert", (rec(1, 2),)), Write("insert_overwrite", (rec(2, 1),)),
               Write("upsert", (rec(2, 2),)), Write("upsert", (rec(2, 3),)), Write("upsert", (rec(2, 4),))):
        m.apply(op)
    led = model_ledger(m.state)
    overwrite = sorted(led.commits)[2]
    assert led.commits[overwrite].operation == "INSERT_OVERWRITE" and len(led.commits[overwrite].replaced) == 1
    m.apply(Archive())
    active = {i.requested for i in m.state.timeline}
    assert overwrite in active  # its replaced group still has files: archival stops before it
    assert sorted(led.commits)[0] not in active


def test_model_ledger_predicts_the_files_a_clean_plan_deletes() -> None:
    m = _model("COPY_ON_WRITE", clean_commits_retained=1)
    for ts in (1, 2, 3):
        m.apply(Write("upsert", (rec(1, ts),)))
    first_base = next(f.name for f in model_ledger(m.state).files if f.instant == min(model_ledger(m.state).commits))
    m.apply(Clean())
    led = model_ledger(m.state)
    (t, doomed), = led.cleans.items()
    assert doomed == (("a", first_base),)
    assert all(f.name != first_base for f in led.files)
    m.apply(Clean())  # nothing left to clean: no clean instant, no plan
    assert list(model_ledger(m.state).cleans) == [t]


def test_model_refuses_compaction_on_copy_on_write_in_every_mode() -> None:
    m = _model("COPY_ON_WRITE")
    m.apply(Write("insert", (rec(1, 1),)))
    for mode in ("run", "schedule", "schedule_and_run"):
        with pytest.raises(InvalidOperation):
            m.apply(Compact(mode))


# --- the observation on a table the local engine wrote, spoiled by hand ---------------------------

def _tamper_case() -> FixtureCase:
    cfg = CreateTable(table_type="COPY_ON_WRITE", table_version=6, partition_fields=("p",))
    return FixtureCase(Case("ledger-tamper", "", (), "test", cfg,
                            (Write("insert", (rec(1, 1), rec(2, 1))), Write("upsert", (rec(1, 2), rec(3, 1))))))


def _latest_base(table: Path) -> Path:
    return max((table / "p=a" if (table / "p=a").is_dir() else table / "a").glob("*.parquet"),
               key=lambda p: p.name.split("_")[-1])


def _duplicate_seqno(table: Path) -> None:
    path = _latest_base(table)
    t = pq.read_table(path)
    i = t.schema.get_field_index("_hoodie_commit_seqno")
    seq = t.column(i).to_pylist()
    t = t.set_column(i, t.schema.field(i), pa.array([seq[-1]] * len(seq), t.schema.field(i).type))
    pq.write_table(t, path)


def _stat_off_by_one(table: Path) -> None:
    path = max((table / ".hoodie").glob("*.commit"))
    md = json.loads(path.read_text())
    stat = next(s for group in md["partitionToWriteStats"].values() for s in group)
    stat["numWrites"] += 1
    path.write_text(json.dumps(md))


def _orphan_base_file(table: Path) -> None:
    src = _latest_base(table)
    shutil.copy(src, src.with_name(src.name.rsplit("_", 1)[0] + "_20230101000000000.parquet"))


class _Tampering(ReferenceLocalAdapter):
    """The local engine; after the case's last write, ``spoil`` edits the table before L4 reads it."""

    spoil: Any = None
    writes = 0

    def apply(self, op: Any) -> None:
        super().apply(op)
        self.writes += 1

    def ledger(self) -> Any:
        if self.writes == 2 and self.spoil is not None:
            type(self).spoil(Path(self.path))
            self.writes = -1
        return super().ledger()


@pytest.mark.parametrize(("spoil", "seen"), [
    (_duplicate_seqno, "invariant violated: ['sequence number appears twice'"),
    (_stat_off_by_one, 'commits t2 stats: [["a", "g1", "g1_t2.parquet", 3, 1, 1, 0]] → '
                       '[["a", "g1", "g1_t2.parquet", 4, 1, 1, 0]]'),
    (_orphan_base_file, "invariant violated: ['base file of an instant the timeline does not hold'"),
])
def test_ledger_observation_catches_a_table_spoiled_by_hand(tmp_path: Path, spoil: Any, seen: str) -> None:
    clean = run_case(_tamper_case(), ReferenceLocalAdapter, workdir=tmp_path / "clean")
    assert clean.verdict == Verdict.PASS, clean.diff
    spoiled = type("Spoiled", (_Tampering,), {"spoil": staticmethod(spoil)})
    got = run_case(_tamper_case(), spoiled, workdir=tmp_path / "spoiled")
    assert got.verdict == Verdict.FAIL
    assert [r.layer for r in got.layers if r.verdict == Verdict.FAIL] == ["L4"]
    assert seen in got.diff


# --- the mutation harness -------------------------------------------------------------------------

def test_every_mutation_applies_to_the_reference_as_it_is(tmp_path: Path) -> None:
    assert len(MUTATIONS) >= 30 and len({m.id for m in MUTATIONS}) == len(MUTATIONS)
    for m in MUTATIONS:
        src = (ROOT / m.path).read_text()
        assert src.count(m.find) == 1, m.id
        assert m.find != m.replace and m.bug_class and m.description, m.id
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "x.py").write_text("a = 1\na = 1\n")
    with pytest.raises(ValueError, match="occurs 2 times"):
        apply_mutation(tmp_path, Mutation("twice", "reference/x.py", "a = 1", "a = 2", "c", "d"))


def _one_case_corpus(tmp_path: Path, suite: str, case_id: str) -> Path:
    shutil.copytree(ROOT / "fixtures" / "cases" / suite / case_id, tmp_path / "cases" / suite / case_id)
    return tmp_path


def test_harness_reports_the_case_and_layer_that_catch_a_mutation(tmp_path: Path) -> None:
    """A bug of the record-by-record log encoder: the local engine's column-wise encoder never runs it,
    the harness's second pass (fast paths off) does."""
    corpus = _one_case_corpus(tmp_path, "logs", "insert-upsert-delete-logs-mor-v6")
    m = next(m for m in MUTATIONS if m.id == "log-seqno-descending")
    got = run_one(m, corpus, machine=False, timeout=300)
    assert (got.caught_by, got.layer) == ("logs/insert-upsert-delete-logs-mor-v6 (record-by-record paths)", "L4")
    assert "sequence number out of order" in got.detail


def test_harness_reports_a_survivor(tmp_path: Path) -> None:
    corpus = _one_case_corpus(tmp_path, "writes", "insert-upsert-delete-cow-v6")
    harmless = Mutation("harmless", "reference/executors/archive.py", "        chosen = hold_back_uncleaned_replaces(",
                        "        chosen = chosen\n        chosen = hold_back_uncleaned_replaces(", "none",
                        "an assignment that changes nothing")
    got = run_one(harmless, corpus, machine=False, timeout=300)
    assert got.caught_by is None and got.detail == "the corpus passes"


def test_l4_diff_names_the_changed_plan_and_the_extra_violation() -> None:
    expected = {"commits": {}, "compactions": {}, "cleans": {"t4": [["a", "g1_t1.parquet"]]}, "invariants": []}
    observed = {"commits": {}, "compactions": {}, "cleans": {"t4": [["a", "g1_t2.parquet"]]},
                "invariants": [["sequence number appears twice", "g1_t2.parquet", "t2", "k"]]}
    d = diff_l4(expected, observed)
    assert d.changed == ('cleans t4: [["a", "g1_t1.parquet"]] → [["a", "g1_t2.parquet"]]',)
    assert d.extra == ("invariant violated: ['sequence number appears twice', 'g1_t2.parquet', 't2', 'k']",)
    assert diff_l4(expected, expected).changed == () and not diff_l4(expected, expected).extra

"""Mixed-writer trials on local disk: our writer (the local engine and the Spark engine) and Apache Hudi 1.2.0's
Spark writer upserting at once into one table, copy-on-write and merge-on-read, under optimistic concurrency
control with ``FileSystemBasedLockProvider`` (the helpers of ``tests/test_hudi_mixed_writers.py``).

Each trial is drawn from a seeded random schedule (``schedule``: the same trials on every run) and is one of:

- **two writes**: Hudi's and ours, each to a common file group (both update key ``a0``) or to file groups of
  their own (partitions ``a`` and ``b``), either committing first. Hudi's write held before its commit by a
  gate in a pre-commit validator (ours commits first), or run whole between our write's files and its commit
  (Hudi's commits first). On a common file group the later to commit loses, as Hudi's
  ``SimpleConcurrentFileWritesConflictResolutionStrategy`` decides: ours with ``WriteConflict`` naming Hudi's
  instant, Hudi's with ``HoodieWriteConflictException`` naming ours; on disjoint ones both commit;
- **a table service beside a write**: one side upserts while the other cleans (``run_clean``, our
  ``HudiTable.clean``) or, on merge-on-read, compacts (``run_compaction``, our ``HudiTable.compact``): both
  complete (``BaseHoodieTableServiceClient`` resolves no conflict at a service's commit, and from table version 8
  a compaction is no candidate of a write's conflict resolution).

Hudi's writer is given the metadata indexes ours keeps (``HUDI_METADATA``: the ``files`` partition alone), as
every writer of one table must be. A losing write is left inflight without a heartbeat and is rolled back by the
next trial's writers: ours before it writes, Hudi's (``hoodie.cleaner.policy.failed.writes=LAZY``) by the clean
after its commit (``CleanerUtils.rollbackFailedWrites``). After every trial Apache Hudi's reader, hudi-rs and the
spec reader read exactly the expected rows (each committed write's rows, in schedule order, no key twice), and the
write that lost the trial before is gone: its instant and its data files.

The counts (trials, conflicts, the winners of each side) are computed from the run and printed; the explore
test's 40 trials (20 per table type) must conflict on each side and the schedule decides how often.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from conformance.adapters.hudi_spark_refusals import java_causes
from reference.api import HudiTable
from reference.write.client import WriteClient
from spec.errors import WriteConflict
from spec.read.reader import read_table
from tests.hudi_rs import check_hudi_rs_snapshot
from tests.test_hudi_mixed_writers import (
    HUDI,
    OURS,
    Background,
    Gate,
    Row,
    hudi_write,
    our_write,
    timeline,
    wait_for,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SEED: Final = 0
SLOW_TRIALS: Final = 4
"""Trials per table type in the slow test (``make ci-slow``)."""
EXPLORE_TRIALS: Final = 20
"""Trials per table type in the exploration: 40 in all."""
START: Final[list[Row]] = [(f"{p}{i}", 1, p, f"{p}{i}@start") for p in "ab" for i in range(4)]
RETAIN_ONE: Final = {"hoodie.cleaner.commits.retained": "1"}
COMPACT_NOW: Final = {"hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
                      "hoodie.compact.inline.max.delta.commits": "1"}
HUDI_METADATA: Final = {"hoodie.metadata.index.column.stats.enable": "false",
                        "hoodie.metadata.index.partition.stats.enable": "false"}
"""Hudi's writer keeps the metadata partitions ours keeps (``files``), as every writer of one table must: a writer
with an index off deletes it (``HoodieTable.deleteMetadataIndexIfNecessary``, ours as Hudi's), and a Hudi write in
flight that started with it fails its commit ("Partition column_stats should be part of inflight metadata
partitions", Hudi's streaming metadata writer) — measured with Hudi 1.2.0's defaults (column and partition stats
on)."""


@dataclass(frozen=True)
class Trial:
    """One trial of the schedule: ``kind`` ``writes`` (``common`` file group or not, ``first`` the side that commits
    first) or ``service`` (``service`` run by the side ``first`` beside the other side's write); ``engine``: our
    writer's."""

    n: int
    kind: str
    engine: str
    first: str
    common: bool = False
    service: str = ""


def schedule(table_type: str, trials: int, seed: int = SEED) -> list[Trial]:
    """The trials of one table, drawn from ``seed``: two writes in three trials of four, half of them to a common
    file group; otherwise a clean or (merge-on-read) a compaction beside a write."""
    rng = random.Random(f"{seed}-{table_type}")
    services = ["clean", "compact"] if table_type == "MERGE_ON_READ" else ["clean"]
    out = []
    for n in range(trials):
        engine, first = rng.choice(["local", "spark"]), rng.choice(["hudi", "ours"])
        if rng.random() < 0.75:
            out.append(Trial(n, "writes", engine, first, common=rng.random() < 0.5))
        else:
            out.append(Trial(n, "service", engine, first, service=rng.choice(services)))
    return out


@dataclass
class Outcome:
    """What a trial ended with: the side that lost (if any) and its instant."""

    loser: str = ""
    lost_instant: str = ""


class MixedTable:
    """One table both sides write, and the rows it must hold."""

    def __init__(self, spark: Any, base: Path, table_type: str) -> None:
        self.spark, self.base, self.table_type = spark, base, table_type
        self.expected: dict[str, str] = {}
        self.gates = 0
        # merge-on-read: no small files, so an update appends to a log file, which a compaction merges (a small
        # file's updates and inserts would be merged into a new base file by either writer)
        self.extra = {"hoodie.parquet.small.file.limit": "0"} if table_type == "MERGE_ON_READ" else {}
        self.hudi_extra = {**self.extra, **HUDI_METADATA}
        hudi_write(spark, base, START, table_type, **self.hudi_extra)
        self.expected.update({k: v for k, _, _, v in START})
        self.name = f"mixed_trials_{table_type.lower()}_{abs(hash(str(base))) % 10**6}"
        spark.sql(f"CREATE TABLE IF NOT EXISTS {self.name} USING hudi LOCATION '{base}'")

    def gate(self) -> Gate:
        self.gates += 1
        return Gate(self.base.parent / f"gate-{self.gates}")

    def rows(self, n: int, side: str, common: bool) -> list[Row]:
        """A side's upsert of trial ``n``: key ``a0`` (the first file group of ``a``) when ``common``, an existing
        key of its partition otherwise, and a new key of its partition."""
        part = "a" if common or side == "hudi" else "b"
        old = "a0" if common else f"{part}{1 + n % 3}"
        return [(old, n + 2, part, f"{side}{n}"), (f"{part}-{side}{n}", n + 2, part, f"{side}{n}")]

    def hudi_service(self, service: str) -> None:
        """Hudi's clean or compaction, a procedure under the writers' optimistic concurrency options."""
        settings = {**HUDI, "hoodie.datasource.write.table.type": self.table_type, **self.hudi_extra, **RETAIN_ONE,
                    **COMPACT_NOW}
        for key, value in settings.items():
            self.spark.conf.set(key, value)
        try:
            sql = (f"CALL run_clean(table => '{self.name}', retain_commits => 1)" if service == "clean"
                   else f"CALL run_compaction(op => 'scheduleandexecute', table => '{self.name}')")
            self.spark.sql(sql).collect()
        finally:
            for key in settings:
                self.spark.conf.unset(key)

    def our_service(self, service: str, engine: str) -> None:
        table = HudiTable(str(self.base), engine=engine)
        options = {**OURS, "hoodie.datasource.write.table.type": self.table_type, **self.extra, **RETAIN_ONE}
        if service == "clean":
            table.clean(options)
        else:
            table.compact(options)

    def commit(self, rows: list[Row]) -> None:
        self.expected.update({k: v for k, _, _, v in rows})


def why(err: BaseException | None) -> str:
    """A Hudi write's error with its Java causes (pyspark's message leaves them out)."""
    return "" if err is None else " <- ".join([str(err), *(str(j.toString()) for j in java_causes(err))])


def run_trial(t: MixedTable, trial: Trial, monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """One trial (see the module's rules); asserts each side's outcome."""
    tt, out = t.table_type, Outcome()
    if trial.kind == "writes":
        hudis, ours = t.rows(trial.n, "hudi", trial.common), t.rows(trial.n, "ours", trial.common)
        if trial.first == "ours":  # Hudi's write held at its gate; ours commits; then Hudi's
            gate, before = t.gate(), timeline(t.base)
            hudi = Background(lambda: hudi_write(t.spark, t.base, hudis, tt, gate, **t.hudi_extra))
            wait_for(lambda: any(n.endswith(".inflight") for n in timeline(t.base) - before)
                     and not (t.base / ".hoodie/lock").exists())
            (hudi_instant,) = {n[:17] for n in timeline(t.base) - before if n.endswith(".inflight")}
            our_instant = our_write(t.base, ours, tt, trial.engine, **t.extra)
            t.commit(ours)
            gate.open()
            error = why(hudi.join().error)
            if trial.common:
                assert "HoodieWriteConflictException" in error, error
                assert hudi_instant in error and our_instant in error
                out = Outcome("hudi", hudi_instant)
            else:
                assert not error, error
                t.commit(hudis)
        else:  # ours writes its files; Hudi's write runs whole and commits; then ours commits
            original, seen = WriteClient._write, {}

            def write_then_hudi(self: WriteClient, *args: Any) -> Any:
                md = original(self, *args)
                before = timeline(t.base)
                hudi_write(t.spark, t.base, hudis, tt, **t.hudi_extra)
                seen["hudi"] = min(n[:17] for n in timeline(t.base) - before)
                return md

            monkeypatch.setattr(WriteClient, "_write", write_then_hudi)
            try:
                if trial.common:
                    with pytest.raises(WriteConflict, match="conflicts with") as err:
                        our_write(t.base, ours, tt, trial.engine, **t.extra)
                    assert seen["hudi"] in err.value.message and "rolled back" in err.value.message
                    lost = re.search(r"write (\d{17})", err.value.message)
                    assert lost is not None, err.value.message
                    out = Outcome("ours", lost.group(1))
                else:
                    our_write(t.base, ours, tt, trial.engine, **t.extra)
            finally:
                monkeypatch.undo()
            t.commit(hudis)
            if not trial.common:
                t.commit(ours)
    elif trial.first == "ours":  # our service beside Hudi's held write
        hudis = t.rows(trial.n, "hudi", False)
        gate, before = t.gate(), timeline(t.base)
        hudi = Background(lambda: hudi_write(t.spark, t.base, hudis, tt, gate, **t.hudi_extra))
        wait_for(lambda: any(n.endswith(".inflight") for n in timeline(t.base) - before)
                 and not (t.base / ".hoodie/lock").exists())
        t.our_service(trial.service, trial.engine)
        gate.open()
        assert hudi.join().error is None, why(hudi.error)
        t.commit(hudis)
    else:  # Hudi's service between our write's files and its commit
        ours, original = t.rows(trial.n, "ours", False), WriteClient._write

        def write_then_service(self: WriteClient, *args: Any) -> Any:
            md = original(self, *args)
            t.hudi_service(trial.service)
            return md

        monkeypatch.setattr(WriteClient, "_write", write_then_service)
        try:
            our_write(t.base, ours, tt, trial.engine, **t.extra)
        finally:
            monkeypatch.undo()
        t.commit(ours)
    return out


def check_rows(t: MixedTable, where: str) -> None:
    """Apache Hudi's reader, hudi-rs and the spec reader read the expected rows: none lost, no key twice."""
    spec_rows = read_table(str(t.base)).to_pylist()
    expected = sorted(t.expected.items())
    assert sorted((r["id"], r["v"]) for r in spec_rows) == expected, f"{where}: the spec reader"
    hudis = sorted((r.id, r.v) for r in t.spark.read.format("hudi").load(str(t.base)).select("id", "v").collect())
    assert hudis == expected, f"{where}: Apache Hudi's reader"
    check_hudi_rs_snapshot(str(t.base), spec_rows, project=lambda r: (r["id"], r["v"]))


def rolled_back(t: MixedTable, instant: str) -> bool:
    """The failed write at ``instant`` is gone: no instant file of it, none of its data files."""
    return (not any(n.startswith(instant) for n in timeline(t.base))
            and not [p for p in t.base.rglob(f"*{instant}*") if ".hoodie" not in p.parts])


def run_trials(spark: Any, base: Path, table_type: str, trials: int,
               monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The schedule's trials on one new table; the counts of what happened."""
    t = MixedTable(spark, base, table_type)
    counts: Counter[str] = Counter()
    pending = ""
    for trial in schedule(table_type, trials):
        where, before = f"{table_type} trial {trial}", timeline(base)
        out = run_trial(t, trial, monkeypatch)
        done = [n.rsplit(".", 1)[-1] for n in timeline(base) - before if n.count(".") == 1]
        counts["cleans"] += done.count("clean")  # by either side's service, or Hudi's clean after its commit
        if table_type == "MERGE_ON_READ":  # by either side's service, or Hudi's inline one after its write
            counts["compactions"] += done.count("commit")
        if pending:
            assert rolled_back(t, pending), f"{where}: the write that lost before is not rolled back"
        pending = out.lost_instant
        counts["trials"] += 1
        counts[f"{trial.kind}:{trial.service or ('common' if trial.common else 'disjoint')}"] += 1
        counts[f"engine:{trial.engine}"] += 1
        if out.loser:
            counts["conflicts"] += 1
            counts[f"won:{'ours' if out.loser == 'hudi' else 'hudi'}"] += 1
        check_rows(t, where)
    if pending:  # the last loser: our next write rolls it back
        last = [("b0", trials + 2, "b", "last")]
        our_write(base, last, table_type, **t.extra)
        t.commit(last)
        assert rolled_back(t, pending), f"{table_type}: the last trial's losing write is not rolled back"
        check_rows(t, f"{table_type} after the trials")
    return counts


def expected_counts(table_type: str, trials: int) -> dict[str, int]:
    """What the schedule implies: a conflict for each trial of two writes to a common file group, won by the side
    that commits first."""
    plan = [x for x in schedule(table_type, trials) if x.kind == "writes" and x.common]
    return {"conflicts": len(plan), "won:ours": sum(x.first == "ours" for x in plan),
            "won:hudi": sum(x.first == "hudi" for x in plan)}


@pytest.fixture
def trial_tables(apache_hudi: Any, tmp_path: Path) -> Iterator[Any]:
    yield lambda table_type: tmp_path / table_type.lower()
    for name in [r.tableName for r in apache_hudi.sql("SHOW TABLES").collect()
                 if r.tableName.startswith("mixed_trials_")]:
        apache_hudi.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_few_mixed_writer_trials(apache_hudi: Any, trial_tables: Any, table_type: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    counts = run_trials(apache_hudi, trial_tables(table_type), table_type, SLOW_TRIALS, monkeypatch)
    print(table_type, dict(counts))
    assert counts["trials"] == SLOW_TRIALS
    if table_type == "MERGE_ON_READ":
        assert counts["compactions"] > 0
    assert {k: counts[k] for k in ("conflicts", "won:ours", "won:hudi")} == expected_counts(table_type, SLOW_TRIALS)


@pytest.mark.explore
@pytest.mark.timeout(3600)  # 40 trials, each Hudi's writes and reads besides ours
def test_forty_mixed_writer_trials(apache_hudi: Any, trial_tables: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    total: Counter[str] = Counter()
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        counts = run_trials(apache_hudi, trial_tables(table_type), table_type, EXPLORE_TRIALS, monkeypatch)
        print(table_type, dict(counts))
        assert {k: counts[k] for k in ("conflicts", "won:ours", "won:hudi")} == expected_counts(table_type,
                                                                                                  EXPLORE_TRIALS)
        total += counts
    print("all", dict(total))
    assert total["trials"] == 2 * EXPLORE_TRIALS
    assert total["won:ours"] > 0 and total["won:hudi"] > 0  # conflicts lost by each side
    assert total["engine:local"] > 0 and total["engine:spark"] > 0
    assert total["compactions"] > 0 and total["cleans"] > 0

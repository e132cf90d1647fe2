"""Writing table version 9 (without a metadata table): hoodie.properties as Apache Hudi 1.1 writes a new
table, and the conformance cases at version 9 — COW and MOR, every operation, compaction, clean, archival,
rollback, savepoint/restore, crashes — by the reference writer (local engine), its observations equal to the
spec model's, and its tables read by hudi-rs as the model says.

The corpus has version 9 cases of its own (``conformance.generate.VERSION_9``, their expectations in the
fixtures); ``make test`` runs those whose version 8 case is in the CI subset. Under ``make slow`` every other
version 8 case is replayed at version 9 (the model's expectations computed live), so that each rule the
corpus checks at version 8 is checked at version 9 too."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest

from conformance.adapters.hudi_rs import HudiRsAdapter
from conformance.adapters.reference_spark import ReferenceLocalAdapter
from conformance.runner import FixtureCase, Verdict, load_cases, run_case
from reference.api import HudiTable
from spec.config.table_config import TableConfig
from spec.read.reader import read_table
from tests.conftest import RealTable
from tests.hudi_rs import as_multiset, hudi_rs_read
from tests.test_conformance_reference import CI_SUBSET

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = {fc.case.id: fc for fc in load_cases(FIXTURES)}


def _v9_cases(subset: bool = False) -> list[tuple[FixtureCase, FixtureCase]]:
    """(the version-8 case, the case at version 9). With ``subset``, the corpus's own version 9 cases whose
    version 8 case is in the CI subset (expected as the fixtures say); without, every other version 8 case
    but streams (which need Spark) and the option conflicts (whose writes name the other table version on
    purpose), replayed at version 9."""
    out = []
    for cid, c8 in CORPUS.items():
        if not cid.endswith("-v8") or c8.suite == "stream" or cid.startswith("option-conflicts"):
            continue
        own = CORPUS.get(cid.removesuffix("-v8") + "-v9")
        if subset and own is not None and cid in CI_SUBSET:
            out.append((c8, own))
        elif not subset and own is None:
            case = replace(c8.case, id=cid.removesuffix("-v8") + "-v9", config=replace(c8.case.config,
                                                                                     table_version=9))
            out.append((c8, FixtureCase(case, c8.suite)))
    return out


# the corpus's version 9 cases of the CI subset in `make test`; every other version 8 case replayed at version 9
# under `make slow` (the corpus's version 9 cases run there with the whole corpus)
SUBSETS = [pytest.param(True, id="ci-subset"), pytest.param(False, id="every-other-case", marks=pytest.mark.slow)]


VERSION_9_ONLY = frozenset({"concurrent-different-new-buckets"})
"""Rules the corpus has at version 9 alone: the control of ``concurrent-same-new-bucket`` (new buckets of their own
both commit), a rule that does not change with the version."""


def test_the_corpus_has_version_9_cases_of_its_own() -> None:
    """Every version 9 case of the corpus is an earlier version's case of its rule at version 9 (the same operations;
    the version 8 case, or the version 6 case of the same table type, or the version 8 case of the other table type),
    with its expectations in the fixtures; each suite has some."""
    own = {cid: fc for cid, fc in CORPUS.items() if cid.endswith("-v9")}
    assert 25 <= len(own) <= 55
    assert {fc.suite for fc in own.values()} == {fc.suite for fc in CORPUS.values()} - {"regressions"}
    for cid, fc in own.items():
        rule = cid.removesuffix("-v9").rsplit("-", 1)[0]
        if rule in VERSION_9_ONLY:
            continue
        same_type = cid.removesuffix("-v9")
        c8 = CORPUS.get(same_type + "-v8") or CORPUS.get(same_type + "-v6") or next(  # a rule of one type at 6 and 9
            c for c in CORPUS.values() if c.case.id in (f"{rule}-cow-v8", f"{rule}-mor-v8"))
        assert fc.case.config.table_version == 9 and fc.case.ops == c8.case.ops, cid
        assert fc.expected is not None and len(fc.expected) == len(fc.case.ops), cid


def test_a_new_version_9_table_has_the_keys_hudi_1_1_writes(real_tables_v9: list[RealTable], tmp_path: Path) -> None:
    v9_table = next(t for t in real_tables_v9 if t.name.endswith("v9_txns_simple_nometa"))
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "9",
               "hoodie.datasource.write.partitionpath.field": "p",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    HudiTable(str(path), engine="local").write(pa.table({"id": ["a"], "ts": [1], "p": ["x"]}), "insert", options)
    ours = TableConfig.load(str(path))
    theirs = TableConfig.load(str(v9_table.path))
    assert ours.table_version == 9 and ours.timeline_layout == 2 and ours.ordering_field == "ts"
    assert "hoodie.table.precombine.field" not in ours.props and ours.props["hoodie.table.format"] == "native"
    # what Hudi 1.1 leaves out of a new event-time table, we leave out too
    for key in ("hoodie.record.merge.strategy.id", "hoodie.compaction.payload.class", "hoodie.table.precombine.field"):
        assert key not in theirs.props and key not in ours.props
    # every key Hudi 1.1 wrote that is not about metadata indexes, we write (timezone and meta fields: we state
    # what Hudi leaves to its defaults)
    metadata_keys = {"hoodie.table.metadata.partitions", "hoodie.table.metadata.partitions.inflight",
                     "hoodie.table.index.defs.path"}
    assert set(theirs.props) - metadata_keys <= set(ours.props)
    assert as_multiset(hudi_rs_read(str(path))) == as_multiset(read_table(str(path)))


@pytest.mark.parametrize("subset", SUBSETS)
def test_every_version_8_case_passes_at_version_9_against_the_model(subset: bool) -> None:
    results = {c9.case.id: run_case(c9, ReferenceLocalAdapter) for _, c9 in _v9_cases(subset)}
    assert len(results) >= (6 if subset else 30)
    failed = {k: r.diff for k, r in results.items() if r.verdict not in (Verdict.PASS, Verdict.XFAIL)}
    assert failed == {}
    # version 8 has no known failure left, and neither has version 9
    assert {k for k, r in results.items() if r.verdict == Verdict.XFAIL} == set()


@pytest.mark.parametrize("subset", SUBSETS)
def test_hudi_rs_reads_our_version_9_tables_as_the_model_says(subset: bool) -> None:
    """hudi-rs fails at version 9 exactly where it fails at version 8; everywhere else its rows are the
    model's."""
    def factory() -> HudiRsAdapter:
        return HudiRsAdapter(ReferenceLocalAdapter)

    differs = []
    unlike: dict[str, str] = {}
    passed = 0
    for c8, c9 in _v9_cases(subset):
        r9 = run_case(c9, factory)
        if r9.verdict == Verdict.PASS:
            passed += 1
            continue
        r8 = run_case(c8, factory)
        if (r9.verdict, r9.diff.replace("-v9", "-v8")) != (r8.verdict, r8.diff):
            unlike[c9.case.id] = f"version 9: {r9.verdict} {r9.diff}\nversion 8: {r8.verdict} {r8.diff}"
        elif r9.verdict != Verdict.XFAIL and not ("incremental" in r9.diff and r9.first_divergence is not None):
            unlike[c9.case.id] = f"{r9.verdict} {r9.diff}"
        differs.append(c9.case.id)
    # each difference is version 8's too, with the same verdict (every case is run before this is asserted, so
    # that one failure names every case that differs); most cases agree
    assert unlike == {}
    assert passed > (4 if subset else 25) and len(differs) < passed, differs

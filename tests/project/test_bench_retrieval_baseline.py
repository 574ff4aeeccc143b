"""bench_retrieval's lean baseline (bm25s + numpy over a Navibot store's chunks and vectors) and its report rows."""

from __future__ import annotations

from pathlib import Path

from benchmarks import lean_baseline
from benchmarks.bench_retrieval import BaselineResult, LatencyResult, QualityResult, comparison, median_target_ms
from rag.search.embedding import WordLlamaEmbedder
from rag.search.sqlite_store import SQLiteKnowledgeStore


def test_the_baseline_indexes_the_stores_chunks_and_finds_by_words_and_vectors(demo_store: Path,
                                                                               tmp_path: Path) -> None:
    store = SQLiteKnowledgeStore(demo_store)
    try:
        ids, _ = store.section_vectors()
        assert lean_baseline.build(store, tmp_path / "lean") >= 0
    finally:
        store.close()
    assert lean_baseline.folder_bytes(tmp_path / "lean") > 0
    lean = lean_baseline.LeanBaseline.open(tmp_path / "lean", WordLlamaEmbedder())
    found = lean.search("Can college students get SNAP food benefits?", k=5)
    assert len(found) == 5 and set(found) <= set(ids)
    assert found[0].startswith("demo_kb/snap-students")
    assert lean.search("the of and", k=3)  # no BM25 word left: the vector ranking alone


def test_the_report_gives_both_systems_and_their_ratio() -> None:
    res = LatencyResult(10_000, 10_272, 22, 100_000_000, [], 60.0, False, 300.0, 1.0, [8.0, 10.0, 12.0],
                        {"q": [10.0]}, BaselineResult(2.0, 50_000_000, 100.0, [4.0, 5.0, 6.0]))
    lines = comparison([res], [QualityResult("doc2dial first turns, document R@3", 310, 0.8, 0.7)])
    row = next(line for line in lines if line.startswith("| 10,272 |"))
    assert "10.00 / 5.00 (2.0x)" in row and "100.0 / 50.0 (2.0x)" in row and "300.0 / 100.0 (3.0x)" in row
    assert "| doc2dial first turns, document R@3 | 310 | 0.800 | 0.700 |" in lines
    assert median_target_ms(10_272) == 10.0 and median_target_ms(100_000) == 25.0

"""Opening the store keeps numpy's BLAS to one thread: its products are small and cores are shared."""

from __future__ import annotations

from pathlib import Path

import pytest
from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-untyped]

from rag.search import blas
from rag.search.sqlite_store import SQLiteKnowledgeStore


def test_opening_the_store_limits_blas_to_one_thread(tmp_path: Path) -> None:
    with threadpool_limits(limits=2, user_api="blas"):  # as numpy starts on a 2-core machine, restored after
        blas.single_threaded_blas.cache_clear()
        SQLiteKnowledgeStore(tmp_path / "k.sqlite3").close()
        assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}


def test_a_blas_that_cannot_be_limited_is_one_warning(monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    def broken(**_: object) -> None:
        raise OSError("no such symbol")

    blas.single_threaded_blas.cache_clear()
    monkeypatch.setattr(blas, "threadpool_limits", broken)
    blas.single_threaded_blas()
    blas.single_threaded_blas()  # once per process
    assert [r.getMessage() for r in caplog.records] == [
        "could not limit BLAS to one thread (no such symbol); searches may be slower under load"]
    blas.single_threaded_blas.cache_clear()

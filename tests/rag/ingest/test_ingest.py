"""Ingestion: idempotent re-runs, replacement of changed documents, prune, failures that do not stop the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.wiring.runtime import Core
from rag.documents import Chunk, SourceDocument
from rag.search.embedding import EmbeddingUnavailable
from rag.search.store import Filters
from tests.conftest import write


def test_first_run_adds_everything(core: Core, kb: Path) -> None:
    summary = core.ingestor.ingest_paths([kb])
    assert (summary.added, summary.updated, summary.unchanged, summary.failed) == (4, 0, 0, 0)
    assert summary.chunks == core.store.counts()["chunks"] > 0
    assert {d.doc_id for d in core.store.documents()} == {
        "kb/snap/students", "kb/wic", "kb/internal/fraud-procedures", "kb/liheap"}


def test_second_run_is_a_no_op(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    before = core.store.counts()
    summary = core.ingestor.ingest_paths([kb])
    assert (summary.added, summary.updated, summary.unchanged, summary.chunks) == (0, 0, 4, 0)
    assert core.store.counts() == before


def test_changed_document_is_replaced(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    write(kb / "wic.md", "# WIC basics\n\nWIC now also offers breastfeeding peer counselors.\n")
    summary = core.ingestor.ingest_paths([kb])
    assert (summary.added, summary.updated, summary.unchanged) == (0, 1, 3)
    texts = [c.text for c in core.store.get_chunks([f"kb/wic::{i}" for i in range(3)])]
    assert texts == ["WIC now also offers breastfeeding peer counselors."]
    assert not core.store.lexical_search("poverty guidelines", 5, Filters())


def test_prune_removes_deleted_files_only_under_given_roots(core: Core, kb: Path, tmp_path: Path) -> None:
    other = write(tmp_path / "other" / "ssi.md", "# SSI\n\nSupplemental Security Income helps people over 65.\n")
    core.ingestor.ingest_paths([kb, other.parent])
    (kb / "liheap.md").unlink()
    without_prune = core.ingestor.ingest_paths([kb])
    assert without_prune.removed == 0 and "kb/liheap" in core.store.document_hashes()
    summary = core.ingestor.ingest_paths([kb], prune=True)
    assert summary.removed == 1
    assert set(core.store.document_hashes()) == {
        "kb/snap/students", "kb/wic", "kb/internal/fraud-procedures", "other/ssi"}


def test_prune_spares_files_that_exist_but_failed_to_load(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    (kb / "wic.md").write_bytes(b"")  # now empty: cannot be ingested, but it was not deleted
    summary = core.ingestor.ingest_paths([kb], prune=True)
    assert summary.failed == 1 and summary.removed == 0
    assert "kb/wic" in core.store.document_hashes()
    assert any("wic.md: empty file" in p for p in summary.problems)


def test_bad_files_are_reported_and_the_run_goes_on(core: Core, kb: Path) -> None:
    write(kb / "broken.pdf", "%PDF-1.4 not really a pdf")
    write(kb / "corpus.jsonl", '{"doc_id": "j1", "title": "T", "text": "Heating help."}\nnot json\n')
    summary = core.ingestor.ingest_paths([kb, kb / "missing-folder"])
    assert summary.added == 5  # four pages + one good JSONL line
    assert summary.failed == 2
    problems = "\n".join(summary.problems)
    assert "broken.pdf" in problems and "PDF" in problems
    assert "missing-folder: no such file or folder" in problems
    assert "corpus.jsonl: line 2: invalid JSON" in problems


def test_cli_tags_are_added_and_groups_set(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb / "liheap.md"], tags=["energy"], groups=["caseworkers"])
    chunk = core.store.get_chunks(["liheap::0"])[0]
    assert chunk.tags == ["energy", "liheap"]
    assert chunk.groups == ["caseworkers"]


def test_two_files_with_one_doc_id_are_not_merged(core: Core, tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", '{"doc_id": "same", "title": "A", "text": "First text."}\n')
    write(tmp_path / "b.jsonl", '{"doc_id": "same", "title": "B", "text": "Second text."}\n')
    summary = core.ingestor.ingest_paths([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
    assert summary.added == 1 and summary.failed == 1
    assert "already used by" in summary.problems[0]
    assert core.store.get_chunks(["same::0"])[0].text == "First text."


def test_same_file_named_from_another_folder_is_not_duplicated(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    summary = core.ingestor.ingest_paths([kb / "liheap.md"])  # id "liheap" instead of "kb/liheap"
    assert summary.added == 1
    ids = set(core.store.document_hashes())
    assert "liheap" in ids and "kb/liheap" not in ids and len(ids) == 4


def test_a_document_that_fails_to_store_is_reported_and_others_continue(core: Core, kb: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    original = core.store.replace_document

    def flaky(doc, chunks, vectors):  # type: ignore[no-untyped-def]
        if doc.doc_id == "kb/wic":
            raise OSError("disk full")
        return original(doc, chunks, vectors)

    monkeypatch.setattr(core.store, "replace_document", flaky)
    summary = core.ingestor.ingest_paths([kb])
    assert summary.added == 3 and summary.failed == 1
    assert any("wic.md: not stored (OSError: disk full)" in p for p in summary.problems)
    assert "kb/wic" not in core.store.document_hashes()


def test_a_document_the_chunker_fails_on_is_reported_and_the_others_are_stored(
        core: Core, kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunk = core.ingestor.chunker.chunk

    def fragile(doc: SourceDocument) -> list[Chunk]:
        if doc.doc_id.endswith("wic"):
            raise ValueError("unexpected structure")
        return chunk(doc)

    monkeypatch.setattr(core.ingestor.chunker, "chunk", fragile)
    summary = core.ingestor.ingest_paths([kb])
    assert summary.added == 3 and summary.failed == 1
    assert any("wic" in p and "ValueError: unexpected structure" in p for p in summary.problems)


def test_an_embedding_model_that_is_down_stops_the_run_at_the_first_failure_with_one_line(
        core: Core, kb: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[int] = []

    def down(texts: list[str]) -> None:
        calls.append(len(texts))
        raise EmbeddingUnavailable("HTTP 503 on every endpoint")

    monkeypatch.setattr(core.ingestor.embedder, "embed_documents", down)
    with pytest.raises(EmbeddingUnavailable, match=r"503.*stopped after storing 0 changed document.*run the same"):
        core.ingestor.ingest_paths([kb])
    assert len(calls) == 1  # not once per document: a hanging provider would cost one timeout each
    assert core.store.counts()["chunks"] == 0
    assert "Traceback" not in capsys.readouterr().err

"""The embedded SQLite store: atomic replacement, reopening, model identity, search and filters."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag.documents import Block, Chunk, SourceDocument
from rag.ingest.chunking import Chunker
from rag.search.embedding import WordLlamaEmbedder
from rag.search.sentences import chunk_sentences
from rag.search.sqlite_store import SQLiteKnowledgeStore, fts_query, joined_parts, text_parts
from rag.search.store import ChunkVectors, EmbeddingMismatch, Filters


def _doc(doc_id: str, text: str, tags: list[str] | None = None, groups: list[str] | None = None) -> SourceDocument:
    return SourceDocument(doc_id=doc_id, title=f"Title of {doc_id}", blocks=[Block("paragraph", text)],
                          tags=tags or [], groups=groups or ["all"])


def _vectors(chunks: list[Chunk], embedder: WordLlamaEmbedder) -> ChunkVectors:
    sentences = [s.index_text for c in chunks for s in chunk_sentences(c)]
    return ChunkVectors(embedder.embed_documents([c.index_text for c in chunks]), embedder.embed_documents(sentences))


def _store_doc(store: SQLiteKnowledgeStore, doc: SourceDocument, embedder: WordLlamaEmbedder) -> None:
    chunks = Chunker().chunk(doc)
    store.replace_document(doc, chunks, _vectors(chunks, embedder))


@pytest.fixture
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


def test_reopen_keeps_documents_and_searches(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    path = tmp_path / "k.sqlite3"
    store = SQLiteKnowledgeStore(path)
    _store_doc(store, _doc("a", "Heating assistance pays winter energy bills."), embedder)
    store.close()
    again = SQLiteKnowledgeStore(path)
    assert again.counts() == {"documents": 1, "chunks": 1, "subchunks": 1}
    hits = again.lexical_search("energy bills", 5, Filters())
    assert [cid for cid, _ in hits] == ["a::0"]
    assert again.vector_search(embedder.embed_query("energy bills"), 5, Filters())[0][0] == "a::0"
    again.close()


def test_replace_is_atomic_when_a_write_fails(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    _store_doc(store, _doc("a", "Original text about SNAP students."), embedder)
    new = _doc("a", "Changed text about SNAP students.")
    chunks = Chunker().chunk(new)
    chunks = [chunks[0], chunks[0]]  # the same chunk id twice: the second insert violates UNIQUE
    with pytest.raises(sqlite3.IntegrityError):
        store.replace_document(new, chunks, _vectors(chunks, embedder))
    # The failed replacement left the old version whole: no half-written document.
    assert store.get_chunks(["a::0"])[0].text == "Original text about SNAP students."
    assert store.counts() == {"documents": 1, "chunks": 1, "subchunks": 1}


def test_replace_removes_old_chunks(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    long = SourceDocument(doc_id="d", title="T", blocks=[Block("paragraph", "word " * 400)] * 3)
    _store_doc(store, long, embedder)
    assert store.counts()["chunks"] == 3
    _store_doc(store, _doc("d", "Now a single short paragraph."), embedder)
    assert store.counts() == {"documents": 1, "chunks": 1, "subchunks": 1}
    assert store.lexical_search("word", 10, Filters()) == []


def test_embedding_model_is_remembered(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    store.check_embedder("model-a", 256)
    _store_doc(store, _doc("a", "Some text."), embedder)
    store.check_embedder("model-a", 256)  # same model: fine
    with pytest.raises(EmbeddingMismatch, match="re-ingest"):
        store.check_embedder("model-b", 768)
    with pytest.raises(EmbeddingMismatch):
        store.vector_search(np.ones(768, dtype=np.float32), 3, Filters())


def test_filters_on_both_searches(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    _store_doc(store, _doc("snap", "Benefits rules for food help.", tags=["snap"]), embedder)
    _store_doc(store, _doc("wic", "Benefits rules for infants.", tags=["wic"]), embedder)
    _store_doc(store, _doc("secret", "Benefits rules for supervisors.", tags=["snap"], groups=["supervisors"]),
               embedder)
    vec = embedder.embed_query("benefits rules")

    def ids(filters: Filters) -> set[str]:
        lexical = {c.split("::")[0] for c, _ in store.lexical_search("benefits rules", 10, filters)}
        vector = {c.split("::")[0] for c, _ in store.vector_search(vec, 10, filters)}
        assert lexical == vector
        return lexical

    assert ids(Filters()) == {"snap", "wic", "secret"}
    assert ids(Filters.of(tags=["snap"])) == {"snap", "secret"}
    assert ids(Filters.of(groups=["navigators"])) == {"snap", "wic"}  # only documents for `all`
    assert ids(Filters.of(groups=["supervisors"])) == {"snap", "wic", "secret"}
    assert ids(Filters.of(tags=["wic"], groups=["supervisors"])) == {"wic"}


def test_sentence_rankings_order_candidates_by_their_best_sentence(tmp_path: Path,
                                                                   embedder: WordLlamaEmbedder) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    _store_doc(store, _doc("a", "Offices open at nine. Students in college may get food help."), embedder)
    _store_doc(store, _doc("b", "Offices open at nine. Heating bills can be paid in a crisis."), embedder)
    _store_doc(store, _doc("c", "Nothing about the question here."), embedder)
    question = "heating bills crisis"
    by_lexical, by_vector = store.sentence_rankings(question, embedder.embed_query(question), ["a::0", "b::0"])
    assert by_lexical == ["b::0"]  # only b has a sentence with the question's words
    assert by_vector[0] == "b::0" and set(by_vector) == {"a::0", "b::0"}  # candidates only, never c
    assert store.sentence_rankings(question, None, ["a::0", "b::0"])[1] == []  # no vector, no vector ranking
    assert store.sentence_rankings(question, None, []) == ([], [])


def test_sentence_statistics_follow_replacements(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    _store_doc(store, _doc("a", "Heating help. Heating bills."), embedder)
    _store_doc(store, _doc("b", "Heating again."), embedder)
    df = store.sentence_df()
    assert df["heat"] == 3 and df["bill"] == 1
    _store_doc(store, _doc("a", "Cooling only."), embedder)  # replacing a takes its sentences out of the counts
    df = store.sentence_df()
    assert df["heat"] == 1 and "bill" not in df and df["cool"] == 1
    store.delete_documents(["a", "b"])
    assert store.sentence_df() == {}


@pytest.mark.parametrize("question", ['"', "AND OR NOT", "NEAR(", "a*b:c^", "()", "   ", "é ü ß"])
def test_odd_questions_never_break_lexical_search(tmp_path: Path, question: str) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    assert store.lexical_search(question, 5, Filters()) == []


def test_fts_query_quotes_topic_words_and_drops_filler() -> None:
    assert fts_query("Hi, I need help: can college students get SNAP?") == '"college" OR "students" OR "snap"'
    assert fts_query("hello") == '"hello"'  # filler only: keep it rather than search for nothing
    assert fts_query("the and of") == ""


def test_unreadable_store_file_gives_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RuntimeError, match="cannot open the knowledge store"):
        SQLiteKnowledgeStore(bad)


def test_store_from_another_layout_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY)")
    old.commit()
    old.close()
    with pytest.raises(RuntimeError, match="ingest the documents again"):
        SQLiteKnowledgeStore(path)


def test_chunk_text_is_stored_once_and_read_back_whole(tmp_path: Path, embedder: WordLlamaEmbedder) -> None:
    doc = SourceDocument(doc_id="m", title="Manual", blocks=[
        Block("heading", "Income", 1), Block("paragraph", "Wages count."),
        Block("heading", "Earned", 2), Block("paragraph", "Tips count too.\n\nSo do bonuses."),
        Block("heading", "Unearned", 2), Block("paragraph", "Wages count.")])  # a repeated paragraph
    chunks = Chunker().chunk(doc)
    assert any(text_parts(c) for c in chunks) and all(joined_parts(text_parts(c) or [], c.subchunks) == c.text
                                                        for c in chunks)
    odd = Chunker().chunk(_doc("odd", "Some text."))[0]
    odd.text = "a summary that is not its paragraphs"
    assert text_parts(odd) is None  # kept as it is
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    store.replace_document(doc, chunks, _vectors(chunks, embedder))
    store.replace_document(_doc("odd", "Some text."), [odd], _vectors([odd], embedder))
    assert [c.text for c in store.get_chunks([c.chunk_id for c in chunks] + ["odd::0"])] == [
        *(c.text for c in chunks), odd.text]
    stored = store._db.execute("SELECT COUNT(*) FROM chunks WHERE text IS NULL").fetchone()[0]
    assert stored == len(chunks)  # only the odd one keeps its own copy

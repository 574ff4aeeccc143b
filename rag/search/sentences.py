"""Sentences: the finest retrieval unit. A question usually paraphrases one sentence of the page that answers
it, so sentence-level evidence re-ranks the candidate sections (quotes stay whole paragraphs)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.documents import Chunk

_BOUNDARY = re.compile(r"(?<=[.!?])\s+")
# A period that ends an abbreviation ("U.S.", "e.g.", "Oct.") ends no sentence; a lone capital does ("Part A.").
_ABBREVIATION = re.compile(r"(?:\b(?:[A-Za-z]\.){2,3}|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|approx|Inc|Co|Corp|"
                           r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.)$")


@dataclass(frozen=True, slots=True)
class Sentence:
    chunk_id: str
    sub_id: str
    head: str  # "Title > heading > sub-heading" of the paragraph the sentence is in
    text: str

    @property
    def index_text(self) -> str:
        return f"{self.head}\n{self.text}"


def split_sentences(text: str) -> list[str]:
    """Split after ., ! or ? followed by whitespace: the units that rank sections (indexed at ingest). Kept this
    simple on purpose: abbreviation-aware splitting measured slightly worse for retrieval on doc2dial
    (first-turn Recall@3 0.800 against 0.810) and would change every stored index."""
    return [part for part in (p.strip() for p in _BOUNDARY.split(text)) if part]


def reading_sentences(text: str) -> list[str]:
    """Sentences as a person reads them, for answers: no break after an abbreviation ("U.S. citizens")."""
    sentences: list[str] = []
    for part in split_sentences(text):
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {part}"
        else:
            sentences.append(part)
    return sentences


def chunk_sentences(chunk: Chunk) -> list[Sentence]:
    return [
        Sentence(chunk.chunk_id, sub.sub_id, " > ".join([chunk.title, *sub.heading_path]), sentence)
        for sub in chunk.subchunks
        for sentence in split_sentences(sub.text)
    ]


@dataclass(frozen=True, slots=True)
class SentenceEvidence:
    """What the candidate sections' sentences say about a question, best first: the chunks ranked by their best
    sentence (BM25, vector), and the paragraphs (sub-chunks) ranked by their best sentence's BM25 and by the
    similarity of their mean sentence vector. Read from the vectors stored at ingest: nothing is embedded again."""

    chunks_lexical: list[str]
    chunks_vector: list[str]
    paragraphs_lexical: list[str]
    paragraphs_vector: list[str]
    chunk_of: dict[str, str]  # sub_id -> chunk_id of every paragraph seen
    # sub_id -> its rag.search.paragraph_features.FEATURES, for the learned ranking (empty: a store without them)
    features: Mapping[str, Sequence[float]] = field(default_factory=dict)


class FeatureRows(Mapping[str, Sequence[float]]):
    """Each paragraph's row of a feature matrix, by sub_id, read on demand: the learned ranking reads the rows of
    its first 40 paragraphs only, so the hundreds of other candidates are never turned into Python tuples."""

    def __init__(self, subs: list[str], matrix: np.ndarray) -> None:
        self._row = dict(zip(subs, range(len(subs)), strict=True))
        self._matrix = matrix

    def __getitem__(self, sub: str) -> tuple[float, ...]:
        return tuple(self._matrix[self._row[sub]].tolist())

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)


def rank_sentences(rows: list[tuple[str, str]], scores: np.ndarray, matrix: np.ndarray | None,
                   vector: np.ndarray | None) -> SentenceEvidence:
    """`rows`: (chunk_id, sub_id) of each candidate sentence, in reading order; `scores`: their BM25; `matrix`:
    their stored vectors (one row each). A paragraph's vector is the mean of its sentences' (a long paragraph is
    judged on all it says, not on its one closest sentence: cfr273-dev first-turn paragraph hit@3 0.567 with the
    best sentence, 0.633 with the mean; benchmarks/RESULTS.md)."""
    chunks: dict[str, int] = {}
    subs: dict[str, int] = {}
    chunk_of_sentence = np.fromiter((chunks.setdefault(c, len(chunks)) for c, _ in rows), dtype=np.intp,
                                    count=len(rows))
    paragraph_of_sentence = np.fromiter((subs.setdefault(s, len(subs)) for _, s in rows), dtype=np.intp,
                                        count=len(rows))
    chunk_of_paragraph = np.zeros(len(subs), dtype=np.intp)
    chunk_of_paragraph[paragraph_of_sentence] = chunk_of_sentence
    sims = paragraph_sims = None
    if vector is not None and matrix is not None and len(matrix):
        query = np.asarray(vector, dtype=np.float32)
        sims = matrix @ query
        # A paragraph's sentences are stored together, so they rarely need sorting; reduceat sums each run.
        grouped = bool(np.all(paragraph_of_sentence[1:] >= paragraph_of_sentence[:-1]))
        order = np.arange(len(rows)) if grouped else np.argsort(paragraph_of_sentence, kind="stable")
        runs = paragraph_of_sentence[order]
        starts = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1]])
        sums = np.add.reduceat(matrix if grouped else matrix[order], starts, axis=0)  # one row per paragraph
        norms = np.linalg.norm(sums, axis=1)
        paragraph_sims = (sums @ query) / np.where(norms > 0, norms, 1.0)
    return rank_sentence_arrays(list(chunks), chunk_of_sentence, list(subs), paragraph_of_sentence,
                                chunk_of_paragraph, scores, sims, paragraph_sims)


def _first_seen(owners: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The distinct values of owners[order], in the order they first appear (dict.fromkeys, in numpy)."""
    seq = owners[order]
    values, first = np.unique(seq, return_index=True)
    return values[np.argsort(first, kind="stable")]


def rank_sentence_arrays(chunk_ids: list[str], chunk_of_sentence: np.ndarray, subs: list[str],
                         paragraph_of_sentence: np.ndarray, chunk_of_paragraph: np.ndarray, scores: np.ndarray,
                         sims: np.ndarray | None, paragraph_sims: np.ndarray | None,
                         features: np.ndarray | None = None) -> SentenceEvidence:
    """`rank_sentences` on integer arrays: sentences number their section (into `chunk_ids`) and paragraph (into
    `subs`, numbered in reading order); `sims`: each sentence's similarity to the question, `paragraph_sims` each
    paragraph's (None without a question vector); `features`: one row per paragraph. The same lists, without a
    Python step per sentence."""
    scores = np.asarray(scores, dtype=np.float64)
    chunk_of = {sub: chunk_ids[c] for sub, c in zip(subs, chunk_of_paragraph.tolist(), strict=True)}
    by_score = np.argsort(-scores, kind="stable")
    positive = by_score[scores[by_score] > 0]
    chunks_lexical = [chunk_ids[i] for i in _first_seen(chunk_of_sentence, positive)]
    best = np.full(len(subs), -np.inf)
    np.maximum.at(best, paragraph_of_sentence, scores)
    paragraphs_lexical = [subs[i] for i in np.argsort(-best, kind="stable") if best[i] > 0]
    chunks_vector: list[str] = []
    paragraphs_vector: list[str] = []
    if sims is not None and paragraph_sims is not None:
        chunks_vector = [chunk_ids[i] for i in _first_seen(chunk_of_sentence, np.argsort(-sims, kind="stable"))]
        paragraphs_vector = [subs[i] for i in np.argsort(-paragraph_sims, kind="stable")]
    rows: Mapping[str, Sequence[float]] = FeatureRows(subs, features) if features is not None else {}
    return SentenceEvidence(chunks_lexical, chunks_vector, paragraphs_lexical, paragraphs_vector, chunk_of, rows)

"""A section's sentences as one stored block: paragraph and lengths of each sentence, term ids, and vectors.

Sentence rows (one per sentence, stems as text, float32 vectors) were 61% of a store and were read ~1,300 rows at
a time per question. One block per section holds the same: its sentences' stems as integer ids of the store's
vocabulary, their vectors as float16 (half the bytes; cfr273-dev and doc2dial figures unchanged, see
benchmarks/RESULTS.md), and each paragraph's mean sentence direction, computed once at ingest. The candidate
sections' blocks are read in one query and joined into flat arrays (`Candidates`); BM25 and the rankings are then
a few numpy passes instead of a string count per sentence and term.

Layout 3 stores what a paragraph's sentences share once: their head's term ids (title and heading path) once per
paragraph, not once per sentence, and the paragraph ids as the sub-chunk number when they are the Chunker's
`<chunk id>.<n>`. Both are expanded back when read, so every array (and score) is what layout 2 gave.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag.search.bm25 import K1, B, idf

_META = np.uint16  # per sentence: paragraph (index in the block), head length, body length


@dataclass(frozen=True, slots=True)
class StoredBlock:
    """The columns of one section's row in `sentence_blocks`."""

    subs: str  # JSON list of the section's paragraphs that have sentences, in reading order: n for `<chunk>.<n>`
    meta: bytes  # uint16 triples (paragraph, head length, body length), one per sentence
    tokens: bytes  # term ids, uint16 when all fit, else int32 (the length tells): each sentence's head, then its body;
    # with `shared_heads`, a paragraph's head only before its first sentence
    vectors: bytes  # int8, one row per sentence: round(127 * v / max|v|)
    scales: bytes  # float32 per sentence: max|v| / 127, to read the int8 rows back
    paragraph_norms: bytes  # float32 per paragraph: the length of its sentences' (read back) vectors' sum
    shared_heads: int = 0  # 1: each paragraph's sentences have one head, stored once (always so at ingest)

    def row(self) -> tuple[str, bytes, bytes, bytes, bytes, bytes, int]:
        return self.subs, self.meta, self.tokens, self.vectors, self.scales, self.paragraph_norms, self.shared_heads


def build_block(sub_ids: Sequence[str], heads: Sequence[Sequence[int]], bodies: Sequence[Sequence[int]],
                vectors: np.ndarray, chunk_id: str | None = None) -> StoredBlock:
    """A block from each sentence's paragraph id, head and body term ids, and float32 vector (reading order);
    paragraph ids `<chunk_id>.<n>` are stored as n."""
    if any(len(h) > 0xFFFF or len(b) > 0xFFFF for h, b in zip(heads, bodies, strict=True)):
        raise ValueError("a sentence of more than 65,535 words cannot be indexed")
    subs = list(dict.fromkeys(sub_ids))
    index = {sub: i for i, sub in enumerate(subs)}
    owner = np.array([index[s] for s in sub_ids], dtype=np.intp)
    meta = np.column_stack([owner, [len(h) for h in heads], [len(b) for b in bodies]]).astype(_META)
    firsts = [i == 0 or owner[i] != owner[i - 1] for i in range(len(owner))]
    shared = bool(np.all(np.diff(owner) >= 0)) and all(  # paragraphs consecutive, one head each
        first or list(heads[i]) == list(heads[i - 1]) for i, first in enumerate(firsts))
    tokens = np.array([t for i, (head, body) in enumerate(zip(heads, bodies, strict=True))
                       for t in ((*head, *body) if firsts[i] or not shared else body)], dtype=np.int64)
    tokens = tokens.astype(np.uint16 if not len(tokens) or tokens.max() <= 0xFFFF else np.int32)
    quantized, scales = quantize(np.asarray(vectors, dtype=np.float32))
    sums = np.zeros((len(subs), quantized.shape[1]), dtype=np.float32)
    np.add.at(sums, owner, dequantize(quantized, scales))
    norms = np.linalg.norm(sums, axis=1).astype(np.float32)
    return StoredBlock(json.dumps([_short(sub, chunk_id) for sub in subs]), meta.tobytes(), tokens.tobytes(),
                       quantized.tobytes(), scales.tobytes(), norms.tobytes(), int(shared))


def _short(sub_id: str, chunk_id: str | None) -> str | int:
    """n for the Chunker's `<chunk_id>.<n>` (a fifth of the bytes), else the id itself."""
    if chunk_id is not None and sub_id.startswith(f"{chunk_id}."):
        n = sub_id[len(chunk_id) + 1:]
        if n.isdigit() and n.isascii() and str(int(n)) == n:
            return int(n)
    return sub_id


def quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and their float32 scales (a quarter of float32's bytes; each value within 0.4% of the row's
    largest)."""
    peaks = np.abs(matrix).max(axis=1) if matrix.size else np.zeros(len(matrix), dtype=np.float32)
    scales = (np.where(peaks > 0, peaks, 1.0) / 127.0).astype(np.float32)
    return np.round(matrix / scales[:, None]).astype(np.int8), scales


def dequantize(quantized: np.ndarray, scales: np.ndarray) -> np.ndarray:
    matrix: np.ndarray = quantized.astype(np.float32)
    matrix *= scales[:, None]  # in place: the same values as a product into a new array, one pass fewer
    return matrix


@dataclass(frozen=True, slots=True)
class Candidates:
    """The sentences of several sections, in the order given, as flat arrays."""

    chunk_of_sentence: np.ndarray  # index of each sentence's section
    paragraph_of_sentence: np.ndarray  # global index of each sentence's paragraph (into `subs`)
    subs: list[str]  # every paragraph, section after section, in reading order
    chunk_of_paragraph: np.ndarray  # index of each paragraph's section
    tokens: np.ndarray
    head_lens: np.ndarray  # int64 per sentence
    body_lens: np.ndarray
    vectors: np.ndarray  # float32, one row per sentence
    paragraph_norms: np.ndarray  # float32 per paragraph

    @classmethod
    def join(cls, blocks: Sequence[StoredBlock], dim: int | None,
             chunk_ids: Sequence[str] | None = None) -> Candidates:
        """One numpy buffer per column for all the blocks (a few calls, whatever their number); each block's chunk
        id names its paragraphs stored as numbers (without it, they are named by number alone); without `dim`,
        the vectors are not read."""
        meta = np.frombuffer(b"".join(b.meta for b in blocks), dtype=_META).reshape(-1, 3).astype(np.int64)
        stored = json.loads(f"[{','.join(b.subs for b in blocks)}]")  # one parse for all blocks (one each: 1/5 of this)
        subs_of = [[s if isinstance(s, str) else f"{cid}.{s}" for s in subs]
                   for subs, cid in zip(stored, chunk_ids or [""] * len(blocks), strict=True)]
        counts = np.array([len(b.meta) // 6 for b in blocks], dtype=np.intp)
        paragraphs = np.array([len(s) for s in subs_of], dtype=np.intp)
        first_paragraph = np.cumsum(paragraphs) - paragraphs
        return cls(
            chunk_of_sentence=np.repeat(np.arange(len(blocks)), counts),
            paragraph_of_sentence=meta[:, 0] + np.repeat(first_paragraph, counts),
            subs=[sub for subs in subs_of for sub in subs],
            chunk_of_paragraph=np.repeat(np.arange(len(blocks)), paragraphs),
            tokens=_tokens(blocks, meta, counts),
            head_lens=meta[:, 1], body_lens=meta[:, 2],
            vectors=_matrix(blocks, dim),
            paragraph_norms=np.frombuffer(b"".join(b.paragraph_norms for b in blocks), dtype=np.float32))

    def __len__(self) -> int:
        return len(self.head_lens)

    def paragraph_sims(self, sentence_sims: np.ndarray) -> np.ndarray:
        """Each paragraph's similarity to the question: of its sentences' mean vector, as rank_sentences computes
        it, from the sentences' own similarities (sum·q = Σ s·q; a paragraph's sentences are consecutive) and the
        length of their sum stored at ingest (summing the vectors here was a quarter of this step)."""
        starts = np.flatnonzero(np.r_[True, self.paragraph_of_sentence[1:] != self.paragraph_of_sentence[:-1]])
        dots = np.add.reduceat(np.asarray(sentence_sims, dtype=np.float32), starts)
        sims: np.ndarray = dots / np.where(self.paragraph_norms > 0, self.paragraph_norms, 1.0)
        return sims

    def sentence_terms(self) -> list[set[int]]:
        """Each sentence's distinct term ids (to take a removed section's sentences out of the frequencies)."""
        ends = np.cumsum(self.head_lens + self.body_lens)
        return [set(part.tolist()) for part in np.split(self.tokens, ends[:-1])] if len(self) else []


def _tokens(blocks: Sequence[StoredBlock], meta: np.ndarray, sentences: np.ndarray) -> np.ndarray:
    """All blocks' term ids as int32, each sentence's head then its body: a block's ids are 2 or 4 bytes each, as
    its byte length over its count says; a head stored once per paragraph is repeated for each of its sentences."""
    if not len(meta):
        return np.zeros(0, dtype=np.int32)
    block_of = np.repeat(np.arange(len(blocks)), sentences)
    first = np.r_[True, (meta[1:, 0] != meta[:-1, 0]) | (block_of[1:] != block_of[:-1])]
    own_head = first | ~np.array([bool(b.shared_heads) for b in blocks], dtype=bool)[block_of]
    heads, bodies = meta[:, 1], meta[:, 2]
    stored = bodies + np.where(own_head, heads, 0)  # ids stored per sentence
    counts = np.add.reduceat(stored, np.cumsum(sentences) - sentences)
    if all(len(b.tokens) == 2 * int(n) for b, n in zip(blocks, counts, strict=True)):
        flat = np.frombuffer(b"".join(b.tokens for b in blocks), dtype=np.uint16)
    else:
        flat = np.concatenate([np.frombuffer(b.tokens, dtype=np.uint16 if len(b.tokens) == 2 * int(n) else np.int32)
                               .astype(np.int32) for b, n in zip(blocks, counts, strict=True)])
    if bool(own_head.all()):
        return flat.astype(np.int32)
    start = np.cumsum(stored) - stored  # where each sentence's stored ids begin
    head_from = start[np.maximum.accumulate(np.where(own_head, np.arange(len(meta)), 0))]
    body_from = start + np.where(own_head, heads, 0)
    lengths = np.column_stack([heads, bodies]).ravel()  # head, body, head, body, ...
    sources = np.column_stack([head_from, body_from]).ravel()
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    expanded: np.ndarray = flat[np.repeat(sources, lengths) + offsets].astype(np.int32)
    return expanded


def _matrix(blocks: Sequence[StoredBlock], dim: int | None) -> np.ndarray:
    if not dim:
        return np.zeros((0, 0), dtype=np.float32)
    return dequantize(np.frombuffer(b"".join(b.vectors for b in blocks), dtype=np.int8).reshape(-1, dim),
                      np.frombuffer(b"".join(b.scales for b in blocks), dtype=np.float32))


def bm25_block_scores(term_ids: Sequence[int], sentences: Candidates, df: dict[int, int], n_docs: int,
                      avg_len: float, weights: tuple[float, float] = (2.0, 1.0)) -> np.ndarray:
    """`rag.search.bm25.bm25_scores_joined` over the candidates' sentences (one score each, in order), bit for bit:
    the same terms in the same order, the same float64 arithmetic, all sentences at once instead of one by one."""
    n = len(sentences)
    scores = np.zeros(n)
    if not term_ids or n == 0 or n_docs == 0:
        return scores
    idfs = {t: idf(n_docs, df.get(t, 0)) for t in term_ids if df.get(t, 0) > 0}
    if not idfs:
        return scores
    avg_len = avg_len or 1.0
    per_sentence = sentences.head_lens + sentences.body_lens
    tokens = sentences.tokens
    wanted = np.flatnonzero(np.isin(tokens, np.fromiter(idfs, dtype=np.int32, count=len(idfs))))
    ends = np.cumsum(per_sentence)
    sentence_of = np.searchsorted(ends, wanted, side="right")  # the sentence each wanted token is in
    in_head = wanted - (ends - per_sentence)[sentence_of] < sentences.head_lens[sentence_of]
    found = tokens[wanted]
    norm = K1 * (1 - B + B * per_sentence.astype(np.float64) / avg_len)
    for term, term_idf in idfs.items():
        is_term = found == term
        head = np.bincount(sentence_of[is_term & in_head], minlength=n)
        body = np.bincount(sentence_of[is_term & ~in_head], minlength=n)
        freq = weights[0] * head + weights[1] * body
        scores += term_idf * freq * (K1 + 1) / (freq + norm)
    return scores

"""Hybrid retrieval in two steps, fused by reciprocal rank fusion.

1. Candidate sections: by vector similarity of the question to the whole section (title + heading path + text)
   and by BM25 over sections, with words of the title and headings weighted 8x those of the body.
2. Sentence evidence: the candidates ranked again by their best-matching sentence, by BM25 and by vector.
   A question usually paraphrases one sentence of the page that answers it; looking only inside the candidates
   keeps this step to a few hundred sentences, whatever the size of the store.
The four rankings are fused. On doc2dial each added ranking raised recall (see benchmarks/RESULTS.md).
3. Paragraphs: every candidate's paragraphs ranked by their sentences (best BM25, mean stored vector) and their
   chunk's fused rank. The chunks of the best three are put among the first five hits: a long regulation section
   is split into many chunks, and the one holding the answering paragraph is often not among the best by its whole
   text. Each hit carries its paragraphs' ranks, which rag/search/paragraphs.py uses without embedding them again.
   A follow-up searched with its thread's words has its paragraphs ranked by its own words too (FOLLOW_UP_WEIGHT).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from rag.documents import Chunk, SearchHit
from rag.search.embedding import Embedder
from rag.search.glossary import Expansion, Glossary
from rag.search.legal_location import location
from rag.search.paragraph_ranker import learned_order
from rag.search.sentences import SentenceEvidence
from rag.search.spelling import Speller
from rag.search.store import EmbeddingMismatch, Filters, KnowledgeStore
from rag.search.word_links import QuestionLinks, WordLinks

log = logging.getLogger(__name__)

# The glossary's policy terms move the query vector by the share of the question they translate, at most half as
# much as the question itself: "emergency food stamps?" leans well toward "expedited service", a long question
# with one synonym in it barely moves. The question is what the navigator asked; the terms are a guess at how
# policy words it. (cfr273-dev first turns, section R@3: 0.744 without, 0.889 with; a fixed weight of 0.5 gave
# 0.900 but cost doc2dial first turns 0.803 -> 0.790, where the pages use the navigators' own words; one text of
# question and terms, where a long list of terms outweighs a short question, 0.856. benchmarks/RESULTS.md.)
EXPANSION_VECTOR_WEIGHT = 0.5

# Smaller than the customary 60: with four rankings, agreement at the very top should dominate
# (k = 5 gave the best first-turn recall on doc2dial).
RRF_K = 5
# Paragraphs: their three rankings agree less than the chunks' four, so a flatter fusion (cfr273-dev first turns,
# paragraph hit@3: k = 5 0.622, 10 0.633, 20 0.622, 40 0.589).
PARAGRAPH_RRF_K = 10
PULLED = 3  # the chunks of the best 3 paragraphs are put among the first PULL_WITHIN hits
PULL_WITHIN = 5  # the hits an answer is written from (NAVIBOT_TOP_K's default)
# A follow-up is searched with the thread's words ("client wants to appeal … will she keep getting the same amount
# while she waits"), which pick the right sections but rank first the paragraphs the thread was about. Its own words
# rank the same candidates' paragraphs a second time, and the two orders are fused with equal weight: the thread
# finds where, the follow-up what; a tie goes to the follow-up's own order. Session 19, follow-ups citing a gold
# paragraph: the read regulation sets 106 -> 110 of 211, the twelve unread sets 49 -> 51 of 112, probe34/38/40/41
# 27 -> 30 of 65 (weight 2 and 0.5 were no better); doc2dial's answers holding a gold span 0.612 -> 0.636. It costs a
# second sentence ranking over the same candidates, whose sentences the SQLite store has just read: ~4 ms at 10k
# chunks (benchmarks/bench_turn_search.py). First turns are not touched.
FOLLOW_UP_WEIGHT = 1.0
DIVERSE = 3  # the first hits: not all from one section when a runner-up section is among the first PULL_WITHIN


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None, k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(id) = Σ weight / (k + rank), rank starting at 1. Ties keep first-seen order."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


class Retriever:
    """Finds the section chunks that best match a question, with optional tag and group filters."""

    def __init__(self, store: KnowledgeStore, embedder: Embedder, candidates: int = 50, rrf_k: int = RRF_K,
                 glossary: Glossary | None = None, spelling: bool = True, word_links: WordLinks | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.candidates = candidates
        self.rrf_k = rrf_k
        self.glossary = glossary
        self.word_links = word_links  # learned, for the learned paragraph ranking (rag/search/word_links.py)
        # typos read as the closest words the store holds (rag/search/spelling.py); None: searched as typed
        self.speller = Speller.of(store, glossary.entries if glossary is not None else None) if spelling else None
        if getattr(store, "candidate_sentences", None) is None:  # rag/search/paragraph_ranker.py needs its features
            log.info("paragraph ranking: %s computes no paragraph features: candidate paragraphs keep the fused order",
                     type(store).__name__)

    def spelled(self, text: str) -> str:
        """`text` as it is searched: words the store has never seen corrected to the closest ones it holds."""
        if self.speller is None:
            return text
        correction = self.speller.correct(text)
        if correction:
            log.debug("spelling: %s", ", ".join(f"{typed} -> {fixed}" for typed, fixed in correction.changes))
        return correction.text

    def warm_up(self) -> None:
        """Build now what the first question would otherwise build: the spelling lexicon and its English word
        list (~0.15 s; the lexicon is rebuilt later only when the store changes)."""
        if self.speller is not None:
            self.speller.warm_up()

    def _embed(self, texts: list[str]) -> np.ndarray | None:
        """Query vectors for `texts` in one embedder call, or None when the embedder fails (lexical only)."""
        try:
            return self.embedder.embed_queries(texts)
        except EmbeddingMismatch:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing embedder must not leave the navigator with nothing
            log.warning("query embedding failed (%s); using lexical search only", exc)
            return None

    def _query_vector(self, query: str, expansion: Expansion) -> np.ndarray | None:
        """The question's vector, moved toward the glossary's policy terms when it has any (a weighted average,
        back to unit length). Both texts are embedded in one call."""
        if not expansion or expansion.coverage <= 0:
            vectors = self._embed([query])
            return None if vectors is None else vectors[0]
        vectors = self._embed([query, expansion.text])
        if vectors is None:
            return None
        vector, terms = np.asarray(vectors[0], dtype=np.float32), np.asarray(vectors[1], dtype=np.float32)
        blended = vector + min(EXPANSION_VECTOR_WEIGHT, expansion.coverage) * terms
        norm = float(np.linalg.norm(blended))
        return blended / norm if norm > 0 else vector

    def _searched(self, text: str) -> tuple[str, np.ndarray | None]:
        """What the lexical search reads (the question on one line, the glossary's policy terms on the next) and the
        query vector, for a question already spell-corrected."""
        expansion = self.glossary.expand(text) if self.glossary is not None else Expansion()
        vector = self._query_vector(text, expansion)
        text = " ".join(text.split())  # one line: the store reads the question's own words from the first
        if expansion:
            log.debug("glossary: %s -> %s", ", ".join(expansion.matched), expansion.text)
            text = f"{text}\n{expansion.text}"  # lexical: the question's words first, then the policy terms
        return text, vector

    def _links(self, searched: str) -> QuestionLinks | None:
        """The learned word links of the question's own words (the first line of what `_searched` returns)."""
        return self.word_links.for_question(searched.partition("\n")[0]) if self.word_links else None

    def search(self, query: str, k: int = 5, tags: list[str] | None = None,
               groups: list[str] | None = None, follow_up: str = "") -> list[SearchHit]:
        """The best k chunks for `query`. `follow_up`: the navigator's own words when `query` is a follow-up read
        with its thread; they rank the candidates' paragraphs a second time (FOLLOW_UP_WEIGHT)."""
        query = self.spelled(query.strip())  # before both paths: the lexical and the vector search see the fix
        if not query:
            return []
        filters = Filters.of(tags, groups)
        n = max(self.candidates, k)
        query, vector = self._searched(query)
        rankings_of = getattr(self.store, "candidate_rankings", None)
        if rankings_of is not None:  # a store that gets both in one round trip (MongoDB's $rankFusion)
            by_vector, by_lexical = rankings_of(query, vector, n, filters)
        else:
            by_vector = [cid for cid, _ in self.store.vector_search(vector, n, filters)] if vector is not None else []
            by_lexical = [cid for cid, _ in self.store.lexical_search(query, n, filters)]
        candidates = list(dict.fromkeys(by_vector + by_lexical))  # already filtered by tags and groups
        evidence_of = getattr(self.store, "sentence_evidence", None)
        if evidence_of is not None:
            evidence = evidence_of(query, vector, candidates, self._links(query))
        else:  # a store with chunk rankings only: no paragraph evidence
            evidence = SentenceEvidence(*self.store.sentence_rankings(query, vector, candidates), [], [], {})
        rankings = [by_vector, by_lexical, evidence.chunks_lexical, evidence.chunks_vector]
        scores = dict(reciprocal_rank_fusion(rankings, k=self.rrf_k))
        fused = list(scores)  # best first
        # The fused paragraph order picks the sections that hold the best paragraphs; the learned one orders
        # the paragraphs the answer quotes (re-picking sections by it cost doc2dial a later turn's page).
        fused_paragraphs, paragraphs = rank_candidate_paragraphs(evidence, fused)
        own = self.spelled(follow_up.strip()) if follow_up.strip() else ""
        if own and evidence_of is not None and FOLLOW_UP_WEIGHT > 0:
            own_text, own_vector = self._searched(own)
            _, by_own_words = rank_candidate_paragraphs(
                evidence_of(own_text, own_vector, candidates, self._links(own_text)), fused)
            # its own order first: a tie goes to what the navigator asks now
            paragraphs = [sub for sub, _ in reciprocal_rank_fusion(
                [by_own_words, paragraphs], [FOLLOW_UP_WEIGHT, 1.0], k=PARAGRAPH_RRF_K)]
        top = with_best_paragraphs(fused, fused_paragraphs, evidence.chunk_of, k)
        vrank = {cid: i for i, cid in enumerate(by_vector, start=1)}
        lrank = {cid: i for i, cid in enumerate(by_lexical, start=1)}
        chunks = {c.chunk_id: c for c in self.store.get_chunks(top)}
        top = with_another_section([chunks[cid] for cid in top if cid in chunks])
        ranks = {sub: i for i, sub in enumerate(paragraphs)}
        return [SearchHit(chunks[cid], scores[cid], vrank.get(cid), lrank.get(cid),
                          paragraph_ranks={s.sub_id: ranks[s.sub_id] for s in chunks[cid].subchunks
                                           if s.sub_id in ranks})
                for cid in top]


def rank_candidate_paragraphs(evidence: SentenceEvidence, fused: list[str]) -> tuple[list[str], list[str]]:
    """Every candidate paragraph, best first, twice: by its best sentence's BM25, its mean sentence vector, and
    its chunk's fused rank (a paragraph of a strong section beats a lone strong sentence elsewhere), fused by
    RRF; and that order with its head re-ordered by the learned model over the paragraphs' features when the
    store computes them (rag/search/paragraph_ranker.py; the embedded store does, MongoDB's does not)."""
    chunk_rank = {cid: i for i, cid in enumerate(fused)}
    by_chunk = sorted(evidence.chunk_of, key=lambda sub: chunk_rank.get(evidence.chunk_of[sub], len(fused)))
    rankings = [evidence.paragraphs_lexical, evidence.paragraphs_vector, by_chunk]
    fused_order = [sub for sub, _ in reciprocal_rank_fusion(rankings, k=PARAGRAPH_RRF_K)] if evidence.chunk_of else []
    return fused_order, learned_order(fused_order, evidence.features)


def with_best_paragraphs(fused: list[str], paragraphs: list[str], chunk_of: dict[str, str], k: int) -> list[str]:
    """The top k chunks, where the chunks holding the PULLED best paragraphs are among the first PULL_WITHIN,
    in place of the lowest of those (the best fused chunks stay, at least the first): a long section is split into
    many chunks, and the one holding the answering paragraph is often not among the best few by its whole text."""
    within = min(PULL_WITHIN, k)
    kept = max(within - PULLED, 1)
    wanted = list(dict.fromkeys(chunk_of[sub] for sub in paragraphs[:PULLED]))
    missing = [cid for cid in wanted if cid not in fused[:within]][:within - kept]
    head = [cid for cid in fused[:within] if cid not in missing][:within - len(missing)] + missing
    return (head + [cid for cid in fused if cid not in head])[:k]


def section_of(chunk: Chunk) -> tuple[str, str]:
    """The section a chunk belongs to: its regulation section ("273.7") when its heading path names one, else its
    document's first heading. A long section is split into many chunks that all share it."""
    section, _ = location(chunk.heading_path)
    return chunk.doc_id, section or (chunk.heading_path[0] if chunk.heading_path else "")


def with_another_section(chunks: list[Chunk]) -> list[str]:
    """The chunks' ids in order, except that when the first DIVERSE ones all come from one section, the best of the
    next ones (up to PULL_WITHIN) from another section takes the last of those places: three chunks of one
    section rarely answer better than two of it and the runner-up section (cfr273-dev first turns, section R@3
    0.889 -> 0.911, on both qid halves; it only reorders the first five, so R@5 and the paragraphs read are the
    same)."""
    ids = [c.chunk_id for c in chunks]
    if len(chunks) <= DIVERSE:
        return ids
    first = {section_of(c) for c in chunks[:DIVERSE]}
    if len(first) > 1:
        return ids
    other = next((i for i in range(DIVERSE, min(PULL_WITHIN, len(chunks))) if section_of(chunks[i]) not in first),
                 None)
    if other is None:
        return ids
    return [*ids[:DIVERSE - 1], ids[other],
            *(cid for i, cid in enumerate(ids[DIVERSE - 1:], DIVERSE - 1) if i != other)]

"""The offline answerer: the few source sentences that best answer the question, each marked with its citation.

No language model and no download. It cannot reword, so it never claims to: the answer is the sources' own
sentences (trimmed to the mood's length), and a mood it cannot honour adds an honest note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np

from rag.answer.answerer import AnswerRequest
from rag.answer.table_rows import table_pieces
from rag.cite.rail import Draft
from rag.documents import SubChunk
from rag.search.bm25 import query_stems, stemmed
from rag.search.embedding import Embedder
from rag.search.glossary import Expansion, Glossary
from rag.search.paragraphs import rank_paragraphs
from rag.search.sentences import reading_sentences
from rag.search.terms import STOPWORDS, tokens

_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
CHUNKS_READ = 3  # answers come from the best few sections; lower ones rarely hold the answer
# A preference for the best-ranked section (doc2dial: 0.15/0.07 and 0.5/0.2 put fewer gold answers in citations).
RANK_PRIOR = (0.3, 0.1, 0.0)
# A preference for the best-matching paragraphs (rag/search/paragraphs.py): weight / (1 + rank). Session 23, with
# the paragraph ranking refitted (rag/search/paragraph_ranker.py), 0.3 -> 0.45: answers citing a gold paragraph on
# the 42 unread regulation sets 1,421 -> 1,439 of 2,345 (+38 / -20), on the read sets 1,616 -> 1,635 of 2,616,
# citations per answer unchanged (2.02); cfr273-dev 75 -> 73 of 105, doc2dial's citations holding a gold span
# 0.637 -> 0.630. At 0.6: +28 unread, +27 read, but cfr273-dev 71 and doc2dial 0.623; at 1.0 no better than 0.6.
PARAGRAPH_PRIOR = 0.45
# Otherwise the best of the retrieval's RANKED_SECOND first paragraphs that the answer does not open with joins
# (after it, with its own citation), when its best sentence scores at least RANKED_FLOOR of the opening one and
# shares the question's words (and glossary terms) at least RANKED_OVERLAP as well. The answerer follows the
# retrieval's first paragraph when it is right (cfr273-dev: cited for 31 of the 35 questions whose gold paragraph
# ranks first) but rarely takes the second or third (5 of 22), and its own scores tell those apart no better than
# the ranking. cfr273-dev, all answerable: cite a gold paragraph 0.429 -> 0.495 (odd qids 0.453 -> 0.547, even
# 0.404 -> 0.442), citation precision 0.420 -> 0.412; without the overlap test 0.514 but precision 0.374, and a
# loosely related paragraph joined demo answers. Only in an answer of at least RANKED_ROOM words: a shorter one
# keeps its room for the opening paragraph.
# Or, sharing fewer of the words, when it is as close to the question in meaning as RANKED_MEANING of the opening
# (vector similarity of the two sentences to the question): "If a State agency has not already provided that a
# telephone interview will be used ..." for "can they do the interview by phone", "send the household a letter
# confirming the voluntary withdrawal" for "she asked to close her case, do they still have to send a notice".
# Not after an opening item that needs its lead-in (the lead-in keeps its room). Session 10, cfr273-dev, all
# answerable: cite a gold paragraph 0.581 -> 0.600 (odd qids 0.604 -> 0.623, even 0.558 -> 0.577), citation
# precision 0.430 -> 0.429, answers citing three paragraphs or more 16% -> 16%, median answer 62 words (the mood's
# budget) either way. Measured against it: dropping the overlap test (0.610, precision 0.427, and a paragraph that
# merely shares "apply" joined "How do I apply for Medicaid?"), opening with the retrieval's first paragraph
# always (0.590; doc2dial 0.612 -> 0.596), one sentence of each of the first three paragraphs (0.686 at precision
# 0.340: three 20-word fragments, too loose to read out on a call). Session 11, on that session's code: 0.619 ->
# 0.638, and on a probe written after it and never tuned on (benchmarks/probes/cfr273_probe4.jsonl) 0.400 -> 0.450.
# Session 17: 2 -> 3, so that when one of the first two cannot be quoted alone (a list item, a lead-in ending on
# ":") the third may join instead; answers citing gold 351 -> 353 of 642 on the unread regulation sets, 514 -> 515
# of 964 on the read ones, citations per answer and their precision unchanged (2.03, 0.36), doc2dial unchanged.
RANKED_SECOND = 3
RANKED_FLOOR = 0.5
RANKED_ROOM = 40
RANKED_OVERLAP = 0.8
RANKED_MEANING = 0.7
# A follow-up asks for what the previous answer did not say: a sentence of a paragraph it quoted (AnswerRequest.
# already_read) scores this much less, so the answer moves on unless nothing else matches nearly as well. Session 17,
# follow-ups citing a gold paragraph with the paragraphs moved down the ranking (rag/search/paragraphs.py read_later)
# and without / with this: the read regulation sets' 141, 70 / 75 (first measured at 0.3 / 0.5 / 1.0: 70 / 71 / 67);
# the twelve unread sets' and probe34-39's 197, 78 / 77 (65 and 74 on the session's first code).
READ_PENALTY = 0.5
SECOND_PASSAGE = 0.9  # share of the best score another paragraph needs to join the answer
PHRASE_WEIGHT = 0.5
OVERLAP_WEIGHT = 1.0
MAX_SENTENCES = 3  # an answer is read out on a call: two or three sentences
ITEMS_SHOWN = 2  # items of a regulation's lead-in shown after it
MIN_ITEM_WORDS = 6  # an item trimmed shorter than this says nothing
# What a sentence that states a rule carries: an obligation or a bar, an amount or a time, a condition, who
# qualifies. Inside the paragraph chosen by relevance, each kind found adds RULE_WEIGHT, so the answer opens with
# the sentence that states the rule rather than one that merely repeats the question's words. It does not
# choose the paragraph: on cfr273-dev, adding it to the paragraph choice cost 2 of 105 gold citations.
RULE_WEIGHT = 0.15
_AMOUNT_OR_TIME = re.compile(  # "$35", "20 hours", "30 days", "10 percent", "six months"
    r"(?:\$\s?\d|\b\d+(?:[.,]\d+)?\s*(?:percent|%|days?|months?|weeks?|years?|hours?|calendar|business|times?)\b"
    r"|\b(?:one|two|three|four|five|six|seven|ten|twelve|thirty|sixty|ninety)\s+"
    r"(?:days?|months?|weeks?|years?|hours?)\b)",
    re.IGNORECASE)
_RULE_FEATURES = (
    re.compile(r"\b(?:must|shall|may not|cannot|can't|will not|is required|are required|required to|"
               r"is prohibited|prohibited)\b", re.IGNORECASE),
    _AMOUNT_OR_TIME,
    re.compile(r"\b(?:if|unless|except|provided that|only when|as long as|until|within|no later than|before|"
               r"after)\b", re.IGNORECASE),
    re.compile(r"\b(?:eligible|ineligible|eligibility|exempt|exemption|qualif\w*|disqualif\w*|entitled|"
               r"excluded|counted|not count)\b", re.IGNORECASE),
)
# A question asking for a quantity ("how many days", "what age", "the minimum benefit", "the asset limit") is
# answered by a sentence stating an amount or a time, not by one that names the topic ("inform all ABAWDs of the
# work requirement" for "how many hours a week"): such a sentence gets QUANTITY_WEIGHT, in the paragraph choice too.
# On cfr273-dev 0.2-0.4 all gain (odd and even qids); 0.6 starts to lose.
QUANTITY_WEIGHT = 0.3
_HOW_MUCH = re.compile(r"\b(?:how (?:many|much|long|often|soon|old|fast|high)|what (?:ages?|amount|percent))", re.I)
_LIMIT = re.compile(r"\b(?:minimum|maximum|max|min|limit|cap|deadline)\b", re.IGNORECASE)
# "does the 3 month limit still apply to him?" asks whether a rule applies, not for its figure: the exemption
# answers it, not a sentence with "18 years of age" in it.
_WHETHER_IT_APPLIES = re.compile(r"\b(?:does|do|did|will|would|is|are)\b(?:\s+\S+){0,8}?\s+(?:still\s+)?"
                                 r"(?:apply|applies|count|counts)\b", re.IGNORECASE)


def asks_quantity(text: str) -> bool:
    """The question asks for an amount, a limit, an age or a time."""
    if _HOW_MUCH.search(text):
        return True
    return bool(_LIMIT.search(text)) and not _WHETHER_IT_APPLIES.search(text)
# A lead-in that does not end on ":" ("The following individuals ... must be included in the same household, unless
# otherwise specified."), whose items are the paragraphs under it. Not "the following month".
_INTRODUCES = re.compile(r"\bthe following\s+(?!(?:months?|years?|days?|weeks?|calendar|business|day's)\b)\w+|"
                         r"\bas follows\b", re.IGNORECASE)
# A sentence that only points elsewhere ("as provided in paragraph (b) of this section") states no rule itself.
_REFERENCE_ONLY = re.compile(r"^(?:[^.]{0,80})\b(?:in accordance with|as (?:specified|provided|described) in|"
                             r"set forth in)\b[^.]{0,60}\bparagraph\b", re.IGNORECASE)


def rule_features(text: str) -> int:
    """How many kinds of rule-bearing words the sentence has (0 to 4)."""
    return sum(1 for pattern in _RULE_FEATURES if pattern.search(text))
_WH = frozenset({"who", "what", "when", "where", "why", "how", "which"})


@dataclass(slots=True)
class _Piece:
    text: str  # a sentence, or a list item with its lead-in
    sub: SubChunk
    chunk_rank: int
    order: int  # position in reading order, to keep the answer's sentences in the source's order
    score: float = 0.0  # relevance to the question: picks the paragraph
    rule: int = 0  # kinds of rule-bearing words (rule_features): picks the sentences inside that paragraph
    overlap: float = 0.0  # share of the question's words in the sentence and its headings (_overlap)
    similarity: float = 0.0  # of the sentence's vector to the question's

    @property
    def within(self) -> float:
        return self.score + RULE_WEIGHT * self.rule


# A navigator's phrase the glossary knows (its stems) with the stems of each policy term it maps to.
_PolicyPhrase = tuple[frozenset[str], list[frozenset[str]]]


def _policy_phrases(expansions: Sequence[Expansion]) -> list[_PolicyPhrase]:
    return [(frozenset(stemmed(phrase)), [stems for stems in map(frozenset, map(stemmed, terms)) if stems])
            for expansion in expansions for phrase, terms in expansion.entries]


def _pieces(sub: SubChunk) -> list[str]:
    """Sentences of a paragraph; for a list, its lead-in and each item (an item alone is rarely readable). A
    table's rows are read with its header (_section_pieces)."""
    if sub.kind == "table":
        return []
    if sub.kind == "list":
        lines = [line.strip() for line in sub.text.splitlines() if line.strip()]
        lead = [ln for ln in lines if not _LIST_ITEM.match(ln)]
        items = [_LIST_ITEM.sub("", ln) for ln in lines if _LIST_ITEM.match(ln)]
        return [*lead, *(f"- {item}" for item in items)]
    return reading_sentences(sub.text)


def _section_pieces(subs: Sequence[SubChunk]) -> list[tuple[SubChunk, str]]:
    """The pieces of a section's paragraphs in reading order, a table's rows read with its header
    (rag/answer/table_rows.py)."""
    rows: dict[str, list[str]] = {}
    for sub, text in table_pieces(subs):
        rows.setdefault(sub.sub_id, []).append(text)
    return [(sub, text) for sub in subs for text in (rows.get(sub.sub_id, []) if sub.kind == "table" else _pieces(sub))]


def _cues(text: str) -> set[tuple[str, str]]:
    """Question-word pairs ("who can", "how much", "how often"): they say what is asked, which topic words cannot
    (every sentence of the WIC page shares "WIC" with "Who can get WIC?"), and headings often answer them."""
    words = tokens(text)
    return {(a, b) for a, b in pairwise(words) if a in _WH}


def _phrase_match(question: str, heading_path: list[str]) -> float:
    """1.0 when the paragraph's own heading has a question-word pair of the question ("Who can get WIC") or all
    of its topic words, at least two ("What WIC provides" for "What does WIC provide?"): a page section titled by
    the question."""
    if not heading_path:
        return 0.0
    cues, named = _question_cues(question)
    if cues & _cues(heading_path[-1]):
        return 1.0
    return 1.0 if len(named) >= 2 and named <= set(stemmed(heading_path[-1])) else 0.0


@lru_cache(maxsize=64)
def _question_cues(question: str) -> tuple[frozenset[tuple[str, str]], frozenset[str]]:
    """The question's word pairs and its words' stems, function words aside ("provide" counts here): read once per
    question, not once per sentence scored."""
    return frozenset(_cues(question)), frozenset(stemmed(" ".join(w for w in tokens(question) if w not in STOPWORDS)))


def _overlap(terms: set[str], words: set[str], heading: set[str]) -> float:
    """Share of the terms in the sentence, with diminishing returns (each further shared word adds less: a
    sentence that repeats the question's words is not thereby an answer); a term only in the paragraph's
    headings counts half."""
    share = (len(terms & words) + 0.5 * len(terms & heading)) / max(len(terms), 1)
    return float(np.sqrt(share))


def _trim(text: str, max_words: int) -> str:
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]).rstrip(",;:") + "…"


def _lead_in(pieces: list[_Piece], item: _Piece) -> _Piece | None:
    """The sentence that introduces a list item: inside its list, or (as the chunker stores a lead-in paragraph
    and its list as two sub-chunks) the last sentence of the paragraph just before the list, same section."""
    inside = next((p for p in pieces if p.sub is item.sub and not p.text.startswith("- ")), None)
    if inside is not None:
        return inside
    first = min(p.order for p in pieces if p.sub is item.sub)
    before = next((p for p in pieces if p.order == first - 1), None)
    if (before is not None and before.sub.kind == "paragraph" and before.sub.chunk_id == item.sub.chunk_id
            and before.sub.heading_path == item.sub.heading_path):
        return before
    return None


def _items_after(pieces: list[_Piece], lead: _Piece) -> list[_Piece]:
    """The items, in order, of the list that follows a lead-in sentence (in its own list or the next sub-chunk)."""
    after = [p for p in pieces if p.order > lead.order]
    if not after or not after[0].text.startswith("- ") or after[0].sub.chunk_id != lead.sub.chunk_id:
        return []
    items: list[_Piece] = []
    for piece in after:
        if piece.sub is not after[0].sub or not piece.text.startswith("- "):
            break
        items.append(piece)
    return items


def _sub_items(pieces: list[_Piece], lead: _Piece) -> list[_Piece]:
    """The paragraphs one level under a lead-in's paragraph ((b)(1) → (b)(1)(i), (ii) …, stored as sub-chunks of
    their own), most relevant first (by their best sentence), at most ITEMS_SHOWN; each as its first sentence,
    which is the one that continues the lead-in."""
    path = lead.sub.heading_path
    first: dict[str, _Piece] = {}
    score: dict[str, float] = {}
    for piece in pieces:
        sub = piece.sub
        if (sub.chunk_id != lead.sub.chunk_id or len(sub.heading_path) != len(path) + 1
                or sub.heading_path[:len(path)] != path):
            continue
        if sub.sub_id not in first or piece.order < first[sub.sub_id].order:
            first[sub.sub_id] = piece
        score[sub.sub_id] = max(score.get(sub.sub_id, piece.score), piece.score)
    ranked = sorted(first, key=lambda sub_id: -score[sub_id])[:ITEMS_SHOWN]
    shown = []
    for sub_id in ranked:
        piece = first[sub_id]
        if _is_heading(piece):  # a titled subparagraph ("(i) Included households."): its best sentence
            rest = [p for p in pieces if p.sub is piece.sub and p is not piece]
            piece = max(rest, key=lambda p: p.within) if rest else piece
        shown.append(piece)
    return shown


def _ranked_second(others: list[_Piece], ranks: dict[str, int], best: _Piece, needs_lead: bool) -> _Piece | None:
    """The best sentence of the best-ranked paragraph among the retrieval's first RANKED_SECOND (rag/search/
    paragraphs.py) other than the one the answer opens with, when it scores at least RANKED_FLOOR of that one and
    shares the question's words (RANKED_OVERLAP) or, unless the opening needs its lead-in, its meaning
    (RANKED_MEANING) nearly as well."""
    ranked = [p for p in others if ranks.get(p.sub.sub_id, RANKED_SECOND) < RANKED_SECOND]
    if not ranked:
        return None
    top = min(ranks[p.sub.sub_id] for p in ranked)
    second = max((p for p in ranked if ranks[p.sub.sub_id] == top), key=lambda p: p.score)
    if second.score < RANKED_FLOOR * best.score:
        return None
    if second.overlap >= RANKED_OVERLAP * best.overlap:
        return second
    close_in_meaning = best.similarity > 0 and second.similarity >= RANKED_MEANING * best.similarity
    return second if close_in_meaning and not needs_lead else None


def _introducing_parent(pieces: list[_Piece], item: _Piece) -> _Piece | None:
    """The sentence of the paragraph just above `item` (same section) that introduces the items, if any."""
    path = item.sub.heading_path
    above = [p for p in pieces if p.order < item.order and p.sub.chunk_id == item.sub.chunk_id
             and len(path) > 1 and p.sub.heading_path == path[:-1] and _introduces(p)]
    return max(above, key=lambda p: p.order) if above else None


def _introduces(piece: _Piece) -> bool:
    """The sentence introduces a list: it ends on ":" or announces "the following …" items."""
    return piece.text.rstrip().endswith(":") or bool(_INTRODUCES.search(piece.text))


def _is_heading(piece: _Piece) -> bool:
    """The sentence is only its paragraph's title, as the heading path shows it."""
    return bool(piece.sub.heading_path) and piece.text.strip().rstrip(".") == piece.sub.heading_path[-1].strip()


class ExtractiveAnswerer:
    def __init__(self, embedder: Embedder, min_coverage: float = 0.30, glossary: Glossary | None = None) -> None:
        self.embedder = embedder
        self.glossary = glossary  # navigators' words -> the policy terms the paragraphs use (rag/search/glossary.py)
        self.min_coverage = min_coverage  # NAVIBOT_MIN_COVERAGE, calibrated in benchmarks/RESULTS.md

    def answer(self, request: AnswerRequest) -> Draft:
        if request.coverage < self.min_coverage:
            return Draft("", [])  # it would quote something loosely related: the engine says it could not find it
        mood = request.mood
        texts = [(text, sub, rank) for rank, hit in enumerate(request.hits[:CHUNKS_READ])
                 for sub, text in _section_pieces(hit.chunk.subchunks) if text.strip()]
        pieces = [_Piece(text, sub, rank, order) for order, (text, sub, rank) in enumerate(texts)]
        if not pieces:
            return Draft("", [])
        expansions = self._expansions(request)
        ranked = rank_paragraphs(request.standalone, request.hits, self.embedder, sections=CHUNKS_READ,
                                 expansion=expansions[0].text if expansions else "")
        ranks = {p.sub.sub_id: rank for rank, p in enumerate(ranked)}
        self._score(request.question, request.standalone, pieces, ranks, _policy_phrases(expansions))
        for piece in pieces:
            if piece.sub.sub_id in request.already_read:
                piece.score -= READ_PENALTY
        chosen = self._choose(pieces, mood.max_words, ranks)
        cited: list[str] = []
        parts: list[str] = []
        for i, piece in enumerate(chosen):
            if piece.sub.sub_id not in cited:
                cited.append(piece.sub.sub_id)
            following = chosen[i + 1] if i + 1 < len(chosen) else None
            # One marker after a run of sentences from the same paragraph, not one per sentence.
            if following is not None and following.sub is piece.sub:
                parts.append(piece.text)
            else:
                parts.append(f"{piece.text} [{cited.index(piece.sub.sub_id) + 1}]")
        # A trimmed sentence ends in "…", which the rail (rag/cite/rail.py) reads as no sentence end: the next one
        # starts on a new line, so that each is checked against the paragraph it cites.
        seps = ["", *("\n" if p.rstrip(" []0123456789").endswith("…") else " " for p in parts[:-1])]
        text = "".join(f"{sep}{part}" for sep, part in zip(seps, parts, strict=True))
        return Draft(text, cited, prefix=mood.prefix, note=mood.offline_note)

    def _expansions(self, request: AnswerRequest) -> list[Expansion]:
        """What the glossary finds in the standalone question (first: the paragraph ranking searches its terms)
        and, when it differs, in the question as asked."""
        if self.glossary is None:
            return []
        texts = dict.fromkeys((request.standalone, request.question))
        return [self.glossary.expand(text) for text in texts]

    def _score(self, question: str, standalone: str, pieces: list[_Piece], paragraph_rank: dict[str, int],
               policy: Sequence[_PolicyPhrase] = ()) -> None:
        """Word overlap and vector similarity with the question as asked ("what about part-time?" must pick the
        sentence on part-time), plus a smaller share for the standalone question (the topic it continues), a
        preference for the best sections and paragraphs, and for sentences that state a rule. A sentence that holds
        a policy term of one of the question's glossary phrases (`policy`) holds that phrase's words: "green card"
        is asked, "lawful permanent resident" is written."""
        asked, topic = set(query_stems(question)), set(query_stems(standalone))
        quantity = asks_quantity(question) or asks_quantity(standalone)
        vectors = self.embedder.embed_documents([p.text for p in pieces])
        similarity = vectors @ np.asarray(self.embedder.embed_query(standalone), dtype=np.float32)
        for piece, sim in zip(pieces, similarity, strict=True):
            words = set(stemmed(piece.text))
            heading = set(stemmed(" ".join(piece.sub.heading_path)))
            # A sentence in the policy's words says what the navigator's phrase says; one under a heading in them
            # ("(1) Allotment reduction" over a table row) says it as its headings do, at half weight (_overlap).
            # Session 17, answers citing gold: unread sets 346 -> 349 of 642, read 506 -> 511 of 964.
            for phrase, terms in policy:
                if any(t <= words for t in terms):
                    words |= phrase
                elif any(t <= heading for t in terms):
                    heading |= phrase
            heading -= words
            rank = paragraph_rank.get(piece.sub.sub_id)
            piece.rule = 0 if _REFERENCE_ONLY.search(piece.text) else rule_features(piece.text)
            piece.overlap = _overlap(asked | topic, words, heading)
            piece.similarity = float(sim)
            piece.score = (OVERLAP_WEIGHT * _overlap(asked, words, heading)
                           + (QUANTITY_WEIGHT if quantity and _AMOUNT_OR_TIME.search(piece.text) else 0.0)
                           + (0.5 * OVERLAP_WEIGHT * _overlap(topic, words, heading) if topic != asked else 0.0)
                           + float(sim) + RANK_PRIOR[min(piece.chunk_rank, len(RANK_PRIOR) - 1)]
                           + (PARAGRAPH_PRIOR / (1 + rank) if rank is not None else 0.0)
                           + PHRASE_WEIGHT * _phrase_match(question, piece.sub.heading_path))

    @staticmethod
    def _choose(pieces: list[_Piece], max_words: int, ranks: dict[str, int] | None = None) -> list[_Piece]:
        """The best piece, then neighbours from the same paragraph or list while they fit: an answer reads best
        as a passage, not as sentences picked from all over the page."""
        # The paragraph that answers best, then its sentence that states the rule best.
        paragraph = max(pieces, key=lambda p: p.score).sub
        best = max((p for p in pieces if p.sub is paragraph), key=lambda p: p.within)
        # When another paragraph matches nearly as well, its best sentence joins (with its own citation): the
        # evidence is often split between two paragraphs, and the two best are often a rule and its neighbour.
        # Only a sentence that reads alone (not a list item or lead-in). Room is kept for it: regulation sentences
        # are long, and the first one alone would fill the answer. On doc2dial this raised "a citation holds the
        # gold answer" from 0.518 to 0.545 (0.552 at 0.8, which let loosely related sentences into the demo answers).
        others = [p for p in pieces if p.sub is not paragraph and not p.text.startswith("- ")
                  and not p.text.rstrip().endswith(":")]
        second = max(others, key=lambda p: p.score) if others else None
        if second is not None and second.score < SECOND_PASSAGE * best.score:
            second = None
        # A list item needs its list's lead-in; a paragraph item, the paragraph above that introduces it.
        lead_needed = best.text.startswith("- ")
        parent = None if lead_needed else _introducing_parent(pieces, best)
        ranked_second = False
        if second is None and ranks and max_words >= RANKED_ROOM:
            second = _ranked_second(others, ranks, best, lead_needed or parent is not None)
            ranked_second = second is not None
        if second is not None:
            max_words, room = max_words - min(len(second.text.split()), max_words // 2), max_words
        best_text = _trim(best.text, max_words)
        chosen = [_Piece(best_text, best.sub, best.chunk_rank, best.order, best.score, best.rule)]
        used = len(best_text.split())
        if parent is not None and max_words - used >= MIN_ITEM_WORDS:
            # An item that is a paragraph of its own ("(ii) A person under 22 years of age …; and") needs the
            # lead-in above it as much as a list item does.
            text = _trim(parent.text, max_words - used)
            chosen.append(_Piece(text, parent.sub, parent.chunk_rank, parent.order, parent.score, parent.rule))
            used += len(text.split())
        if lead_needed:  # a list item needs the list's lead-in to make sense
            lead = _lead_in(pieces, best)
            if lead and used + len(lead.text.split()) <= max_words:
                chosen.append(lead)
                used += len(lead.text.split())
        elif _introduces(best) and not _items_after(pieces, best):
            # A regulation's lead-in ("The following persons are exempt:") whose items are paragraphs of their own
            # ((i), (ii) …): the items that answer best, each citing its own paragraph.
            for item in _sub_items(pieces, best):
                size = len(item.text.split())
                if len(chosen) >= MAX_SENTENCES or max_words - used < MIN_ITEM_WORDS:
                    break
                text = _trim(item.text, max_words - used)
                chosen.append(_Piece(text, item.sub, item.chunk_rank, item.order, item.score, item.rule))
                used += len(text.split())
        elif best.text.rstrip().endswith(":"):  # and a lead-in ("WIC participants receive:") needs its items
            for n, item in enumerate(_items_after(pieces, best)):
                size = len(item.text.split())
                if used + size > max_words:
                    if n == 0 and max_words - used >= 3:  # at least the start of the first item
                        chosen.append(_Piece(_trim(item.text, max_words - used), item.sub, item.chunk_rank,
                                             item.order))
                        used = max_words
                    break
                chosen.append(item)
                used += size
        neighbours = sorted((p for p in pieces if p.sub is best.sub and p not in chosen and p.order != best.order),
                            key=lambda p: -p.within)
        for piece in neighbours:
            size = len(piece.text.split())
            if len(chosen) >= MAX_SENTENCES:
                break
            if used + size > max_words or piece.score < 0.6 * best.score:
                continue
            if piece.text.rstrip().endswith(":"):  # a lead-in whose items are not shown would end the answer on ":"
                continue
            chosen.append(piece)
            used += size
        items = _sub_items(pieces, second) if second is not None and _introduces(second) else []
        if (second is not None and items and len(chosen) + 2 <= MAX_SENTENCES and room - used >= 2 * MIN_ITEM_WORDS
                and all(p.sub is not second.sub and p.sub is not items[0].sub for p in chosen)):
            # A lead-in says nothing alone ("The following individuals ... must be included in the same household"):
            # it joins with the item under it that answers best, each citing its own paragraph.
            lead_text = _trim(second.text, (room - used) // 2)
            item = items[0]
            chosen.append(_Piece(lead_text, second.sub, second.chunk_rank, second.order, second.score, second.rule))
            chosen.append(_Piece(_trim(item.text, room - used - len(lead_text.split())), item.sub, item.chunk_rank,
                                 item.order, item.score, item.rule))
            return sorted(chosen[:-2], key=lambda p: p.order) + chosen[-2:]
        if (second is not None and not items and len(chosen) < MAX_SENTENCES and room - used >= MIN_ITEM_WORDS
                and all(p.sub is not second.sub for p in chosen)):
            chosen.append(_Piece(_trim(second.text, room - used), second.sub, second.chunk_rank, second.order,
                                 second.score, second.rule))
            if ranked_second or second.sub.chunk_id != best.sub.chunk_id:  # after the answer's own paragraph
                return sorted(chosen[:-1], key=lambda p: p.order) + chosen[-1:]
        return sorted(chosen, key=lambda p: p.order)  # in the source's order

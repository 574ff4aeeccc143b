"""Learning to rank the candidate paragraphs: features, labels, cross-validated training (research, reproducible).

    .venv/bin/python benchmarks/paragraph_ltr.py collect                       # cfr273-dev -> /tmp/ltr.pkl
    .venv/bin/python benchmarks/paragraph_ltr.py collect --corpus ../shared/eval/doc2dial/corpus.jsonl \
        --questions ../shared/eval/doc2dial/questions.jsonl --out /tmp/ltr_d2d.pkl
    .venv/bin/python benchmarks/paragraph_ltr.py train [--extra /tmp/ltr_d2d.pkl [--extra-only]] [--sets ablate]
    .venv/bin/python benchmarks/paragraph_ltr.py train --extra /tmp/ltr_d2d.pkl --strict [--nested]
    .venv/bin/python benchmarks/paragraph_ltr.py final --data <read sets + doc2dial> --strict \
        --add one_sentence glossary --l2 0.3 [--half odd|even]   # the shipped weights, or one half's

The word links (rag/search/word_links.py, session 25) and the weights that read them, fitted without leaking
a question's own links into its features (each half's questions collected with the links learned on the other):

    .venv/bin/python benchmarks/paragraph_ltr.py collect --questions <read probes> --out /tmp/probes.pkl
    .venv/bin/python benchmarks/paragraph_ltr.py links --data /tmp/probes.pkl --links-out rag/data/word_links.tsv.gz
    .venv/bin/python benchmarks/paragraph_ltr.py links --data /tmp/probes.pkl --half odd --links-out /tmp/odd.tsv.gz
    .venv/bin/python benchmarks/paragraph_ltr.py links --data /tmp/probes.pkl --half even --links-out /tmp/even.tsv.gz
    NAVIBOT_WORD_LINKS_FILE=/tmp/odd.tsv.gz .venv/bin/python benchmarks/paragraph_ltr.py collect \
        --questions <read probes> --half even --out /tmp/even.pkl         # and the reverse, into /tmp/odd.pkl
    .venv/bin/python benchmarks/paragraph_ltr.py final --data /tmp/odd.pkl,/tmp/even.pkl --extra /tmp/ltr_d2d.pkl \
        --strict --add one_sentence glossary links --l2 0.1

<read probes>: the answerable first turns of the probe sets read so far (benchmarks/probes/README.md), without
cfr273-dev, whose questions are the maintainers' and stay out of anything shipped.

Before session 25, the shipped weights (rag/search/paragraph_ranker.py, session 23) were fitted on the
answerable first turns of the regulation sets read so far (benchmarks/probes/README.md; `collect --questions`
of one JSONL holding them) and doc2dial's, the two collected pickles (lists of rows) joined into one.

`collect` runs every answerable first turn through the Retriever (the embedded store and default glossary, as
`navibot eval` does) and records, for every candidate paragraph, cheap features of its sentences (FEATURES below:
read from the arrays SQLiteKnowledgeStore.sentence_evidence already holds), its section chunk's fused rank,
today's fused (RRF) paragraph rank, a few features read from its text (depth, ordinal among siblings, numbers)
and its label: on cfr273-dev, 1 when the evaluator's paragraph hit@3 counts it (the gold paragraph, its parent
or one under it), 3 when a citation of it counts (the gold or under it); on doc2dial, the paragraph holding the
gold span. `train` re-orders today's best HEAD paragraphs with a linear model (features turned into
1 / (RANK_K + rank) within the head and standardised; listwise softmax loss, L2 toward today's order), trained on
the odd qids and tested on the even ones and the reverse (with --extra: doc2dial added to the training questions,
or alone), against today's order: held-out hit@3, rank-1 share, rank-1 share counting citable paragraphs only.
With --strict the positives are the citable paragraphs only (label 3: the gold or one under it): trained on
what hit@3 counts, the model promoted short parent lead-ins, which a citation does not count and which answer
nothing. TEXT_FEATURES add, for research, whether the text ends with ":" (a lead-in) and whether it is one
sentence as the store splits it (`one_sentence`, also computed by rag/search/paragraph_features.py from the
stored sentences, so the shipped ranker reads it), how generic its words are among the question's candidates
(`generic`, mean local idf), the share of the question's glossary policy terms it holds (`glossary`; shipped since
session 23, computed by rag/search/paragraph_features.py and read from there when collected so), and how
often it is among the 3 best paragraphs when each other paragraph's first 12 words are the query (`hub`: counted
apart, one Retriever.search per paragraph, into JSON files {"count": {sub_id: n}} named in NAVIBOT_LTR_HUBS).
Findings (2026-11-23/24) are in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import pickle
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # measure this checkout

import rag.search.retrieve as retrieve
from rag.evaluation.evaluate import SectionGold
from rag.search.bm25 import idf, query_stems, stemmed
from rag.search.glossary import Glossary
from rag.search.legal_location import inside, location, near
from rag.search.paragraph_features import FEATURES as SHIPPED_FEATURES
from rag.search.paragraph_features import paragraph_features, policy_term_ids
from rag.search.paragraph_ranker import HEAD, normalised
from rag.search.sentence_blocks import bm25_block_scores
from rag.search.sentences import SentenceEvidence, split_sentences
from rag.search.terms import STOPWORDS
from rag.search.word_links import QuestionLinks

_DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "snap" / "7-cfr-273.md"
_DEFAULT_QUESTIONS = REPO.parent / "shared" / "eval" / "cfr273-dev" / "questions.jsonl"
_QUANTITY = re.compile(r"\b(how (long|much|many|often|soon|old)|limit|deadline|maximum|minimum|amount|within)\b",
                       re.IGNORECASE)
_NUMBER = re.compile(r"\$|\d|percent|\b(one|two|three|four|five|six|ten|twelve|thirty|sixty)\b", re.IGNORECASE)
TEXT_FEATURES = ("depth", "sibling", "number", "colon", "one_sentence", "generic", "glossary", "hub", "links")
# `hub`: how often the paragraph is among the 3 best for the other paragraphs' opening words used as queries (a
# corpus-only count, computed apart and read from the JSON files named in NAVIBOT_LTR_HUBS, comma-separated).
_HUBS: dict[str, int] = {sub: n for f in filter(None, os.environ.get("NAVIBOT_LTR_HUBS", "").split(","))
                         for sub, n in json.loads(Path(f).read_text())["count"].items()}
_GLOSSARY = Glossary()  # the bundled glossary, as `navibot eval` uses it
SPAN_PREFIX = 40  # doc2dial: a paragraph holding the span's first 40 characters (spans may run on past it)


def _squash(text: str) -> str:
    return " ".join(re.sub(r"\s+([,.;:!?'])", r"\1", text).split()).lower()


# The shipped features and their normalisation (rag/search/paragraph_features.py, paragraph_ranker.py): the first
# seven columns are the research's FEATURES; the shipped eighth, `one_sentence`, is a TEXT_FEATURE here, so that
# runs with and without it (`--add one_sentence`) can be compared.
FEATURES = SHIPPED_FEATURES[:SHIPPED_FEATURES.index("one_sentence")]
COLUMNS = ("fused_rank", *FEATURES)


def _features(store: Any, query: str, vector: np.ndarray | None, chunk_ids: list[str],
              links: QuestionLinks | None = None) -> dict[str, Any] | None:
    """Each candidate paragraph's FEATURES, from the sentences SQLiteKnowledgeStore.sentence_evidence reads
    (`candidate_sentences`), the question's own words (first line; the glossary's terms follow) counted apart."""
    first, _, expansion = query.partition("\n")
    terms, own = query_stems(query), query_stems(first)
    found = store.candidate_sentences(list(dict.fromkeys(terms + own)), chunk_ids)
    if found is None:
        return None
    sentences, ids, df, n_docs = found.sentences, found.term_ids, found.df, found.n_docs
    scores = bm25_block_scores([ids[t] for t in terms if t in ids], sentences, df, n_docs, found.avg_len)
    sims = sentences.vectors @ np.asarray(vector, dtype=np.float32) if vector is not None else None
    idfs = {i: idf(n_docs, df[i]) for i in ids.values() if df.get(i, 0) > 0}
    link_ids, linked = store._link_arrays(links, found.chunk_ids, sentences.chunk_of_paragraph)
    features = paragraph_features(sentences, scores, sentences.paragraph_sims(sims) if sims is not None else None,
                                  [ids[t] for t in own if t in ids], idfs, policy_term_ids(expansion, ids),
                                  link_ids, linked)
    return dict(zip(sentences.subs, features, strict=True))  # every shipped column; `table` splits them


def collect(corpus: Path, questions_path: Path, out: Path, half: str = "") -> None:
    from bot.config.settings import Settings  # benchmarks may build the bot's core; rag/ never imports bot/
    from bot.wiring.runtime import build_core

    questions = [json.loads(line) for line in questions_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [q for q in questions if not q.get("history") and q.get("answerable", True)
                 and (not half or _half_of(q["qid"]) == half)]
    spans = "gold_answers" in questions[0]  # doc2dial: the paragraph holding the gold answer span is the positive
    with tempfile.TemporaryDirectory(prefix="navibot-ltr-") as tmp:
        os.environ["NAVIBOT_DATA_DIR"] = tmp
        core = build_core(Settings(), Path(tmp) / "ltr.sqlite3")
        try:
            core.ingestor.ingest_paths([corpus])
            store = core.store
            seen: dict[str, Any] = {}
            original_evidence, original_rank = store.sentence_evidence, retrieve.rank_candidate_paragraphs

            def evidence_of(query: str, vector: np.ndarray | None, chunk_ids: list[str],
                            links: QuestionLinks | None = None) -> SentenceEvidence:
                seen["features"] = _features(store, query, vector, chunk_ids, links)
                return original_evidence(query, vector, chunk_ids, links)

            def rank(evidence: SentenceEvidence, fused: list[str]) -> tuple[list[str], list[str]]:
                orders = original_rank(evidence, fused)
                seen["evidence"], seen["fused"], seen["order"] = evidence, list(fused), orders[0]  # the model's input
                return orders

            vars(store)["sentence_evidence"] = evidence_of
            vars(retrieve)["rank_candidate_paragraphs"] = rank
            rows = []
            for q in questions:
                seen.clear()
                core.retriever.search(q["question"], k=10)
                evidence, features = seen.get("evidence"), seen.get("features")
                if evidence is None or not features:
                    continue
                arrays = {"subs": list(features), "chunk_of": evidence.chunk_of,
                          "features": np.array(list(features.values()))}
                chunks = {c.chunk_id: c for c in store.get_chunks(list(dict.fromkeys(evidence.chunk_of.values())))}
                subs = {s.sub_id: s for c in chunks.values() for s in c.subchunks}
                doc_of = {s.sub_id: c.doc_id for c in chunks.values() for s in c.subchunks}
                labels, strict, text = [], [], []
                for sub_id in arrays["subs"]:
                    sub = subs.get(sub_id)
                    section, path = location(sub.heading_path) if sub else ("", ())
                    if spans:
                        span = _squash(q["gold_answers"][0])[:SPAN_PREFIX]
                        found = int(doc_of.get(sub_id) == q["gold_doc_id"] and bool(span)
                                    and span in _squash(sub.text if sub else ""))
                        labels.append(found)
                        strict.append(found)
                    else:
                        gold = SectionGold.of(q)
                        labels.append(int(section == gold.section and any(near(path, g) for g in gold.paths)))
                        strict.append(int(section == gold.section and any(inside(path, g) for g in gold.paths)))
                    text.append((section, path, sub.text if sub else ""))
                rows.append({"qid": q["qid"], "question": q["question"], "fused": seen["fused"],
                             "order": seen["order"], "labels": np.array(labels),
                             "strict": np.array(strict), "text": text, **arrays})
        finally:
            core.close()
    out.write_bytes(pickle.dumps(rows))
    print(f"{len(rows)} questions, {sum(len(r['subs']) for r in rows)} candidate paragraphs -> {out}")


def _text_features(row: dict[str, Any]) -> np.ndarray:
    """Depth of the paragraph's label path, its ordinal among siblings (same parent path), and whether it holds a
    number when the question asks how long / much / many."""
    quantity = bool(_QUANTITY.search(row["question"]))
    siblings: dict[tuple[str, tuple[str, ...]], int] = {}
    out = np.zeros((len(row["subs"]), len(TEXT_FEATURES)))
    words = [set(stemmed(text)) for _, _, text in row["text"]]
    df: dict[str, int] = {}
    for ws in words:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    n = len(words)
    policy = [set(stemmed(term)) for _, terms in _GLOSSARY.expand(row["question"]).entries for term in terms]
    shipped = row["features"].shape[1] > len(FEATURES)  # collected with every shipped column: its own `glossary`
    for i, ws in enumerate(words):
        # how generic the paragraph's vocabulary is among its rivals (mean local idf: low for a paragraph made of
        # words every candidate uses, which then matches any question), and the glossary's policy terms it holds
        out[i, 5] = float(np.mean([np.log(n / df[w]) for w in ws])) if ws else 0.0
        out[i, 6] = (row["features"][i, SHIPPED_FEATURES.index("glossary")] if shipped else
                     sum(1 for t in policy if t and t <= ws) / len(policy) if policy else 0.0)
    links = SHIPPED_FEATURES.index("links")
    if row["features"].shape[1] > links:  # collected with the word links column (rag/search/word_links.py)
        out[:, 8] = row["features"][:, links]
    for i, sub in enumerate(row["subs"]):
        out[i, 7] = np.log1p(_HUBS.get(sub, 0))
    for i, (section, path, text) in enumerate(row["text"]):
        key = (section, tuple(path[:-1]))
        out[i, 0] = len(path)
        out[i, 1] = np.log1p(siblings.get(key, 0))
        siblings[key] = siblings.get(key, 0) + 1
        out[i, 2] = float(quantity and bool(_NUMBER.search(text)))
        out[i, 3] = float(text.rstrip().endswith(":"))  # a lead-in to the sub-paragraphs that hold the rule
        out[i, 4] = float(len(split_sentences(text)) <= 1)  # as the store splits
    return out


def table(row: dict[str, Any]) -> tuple[np.ndarray, list[str]]:
    """All features of one question's candidates, and their names."""
    rank_of_chunk = {cid: i for i, cid in enumerate(row["fused"])}
    chunk_rank = np.array([rank_of_chunk.get(row["chunk_of"][sub], len(row["fused"])) for sub in row["subs"]],
                          dtype=np.float64)
    position = {sub: i for i, sub in enumerate(row["order"])}
    rrf_rank = np.array([position.get(s, len(position)) for s in row["subs"]], dtype=np.float64)
    extra = np.column_stack([-np.log1p(chunk_rank), -np.log1p(rrf_rank)])
    return (np.hstack([row["features"][:, :len(FEATURES)], extra, _text_features(row)]),
            [*FEATURES, "chunk_rank", "rrf_rank", *TEXT_FEATURES])


@dataclass
class Options:
    """The research knobs (command-line flags); the defaults are the best measured setting."""

    normalise: str = "rank"
    objective: str = "list"
    l2: float = 0.1
    prior: float = 1.0  # start from (and shrink toward) today's ranking, this weight on the rrf_rank column (first)
    strict: bool = False  # train on the gold paragraph or those under it only (not its parent, which hit@3 counts)
    nested: bool = False
    only: list[str] = field(default_factory=list)
    head: int = HEAD


OPT = Options()


def normalise(x: np.ndarray) -> np.ndarray:
    """Within the question's candidates: "rank" (`normalised`:
    1 / (RANK_K + rank), standardised); "z" a plain z-score (a constant column becomes 0)."""
    if OPT.normalise == "z":
        sd = x.std(axis=0)
        return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return normalised(x)


def normalise_head(x: np.ndarray, today: np.ndarray) -> np.ndarray:
    """`normalise` over today's head (other rows stay 0: they are never re-ranked)."""
    out = np.zeros_like(x, dtype=np.float64)
    head = head_of(today)
    out[head] = normalise(x[head])
    return out


Part = list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # (features, labels, today's score) per question


def head_of(today: np.ndarray) -> np.ndarray:
    """Today's best HEAD paragraphs: the model re-orders them and is trained on them alone (positives and
    negatives from the same head, else it learns that a high rank today means a negative)."""
    return np.argsort(-today, kind="stable")[:OPT.head]




def fit(data: Part) -> np.ndarray:
    return fit_list(data, OPT.l2) if OPT.objective == "list" else fit_pairs(data, OPT.l2)


def fit_list(data: Part, l2: float = 1e-2, steps: int = 500) -> np.ndarray:
    """Listwise: per question, the softmax probability of its positives among today's head (any positive on top
    is what hit@3 and the citation need), every question weighted alike; gradient descent, L2."""
    lists = []
    for x, y, today in data:
        head = head_of(today)
        positive = y[head] >= (3 if OPT.strict else 1)
        if positive.any():
            lists.append((x[head], positive))
    prior = np.zeros(data[0][0].shape[1])
    prior[0] = OPT.prior
    w = prior.copy()
    for _ in range(steps):
        grad = l2 * (w - prior)
        for x, pos in lists:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            q = np.where(pos, p, 0.0)
            q /= q.sum()
            grad += (p - q) @ x / len(lists)
        w -= 0.5 * grad
    return w


def fit_pairs(data: Part, l2: float = 1e-2, steps: int = 300) -> np.ndarray:
    """Pairwise logistic regression over today's head: every positive against every negative; gradient descent,
    L2."""
    diffs = []
    for x, y, today in data:
        head = head_of(today)
        pos, neg = head[y[head] >= (3 if OPT.strict else 1)], head[y[head] < (3 if OPT.strict else 1)]
        if not len(pos) or not len(neg):
            continue
        diffs.append((x[pos][:, None, :] - x[neg][None, :, :]).reshape(-1, x.shape[1]))
    d = np.vstack(diffs)
    w = np.zeros(d.shape[1])
    for _ in range(steps):
        margin = d @ w
        grad = -(d * (1 / (1 + np.exp(margin)))[:, None]).mean(axis=0) + l2 * w
        w -= 0.5 * grad
    return w


def _linear(w: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def rank(x: np.ndarray) -> np.ndarray:
        scores: np.ndarray = x @ w
        return scores
    return rank


def _first_column(x: np.ndarray) -> np.ndarray:
    column: np.ndarray = x[:, 0]
    return column


def score(data: Part, rank: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float, float]:
    """(hit@3, rank-1 share, rank-1 share counting the gold paragraph or one under it only: what a citation
    must be) over the questions."""
    hit3 = first = strict = 0
    for x, y, today in data:
        head = head_of(today)
        order = head[np.argsort(-rank(x[head]), kind="stable")]
        hit3 += int((y[order[:3]] >= 1).any())
        first += int(y[order[0]] >= 1)
        strict += int(y[order[0]] == 3)
    return hit3 / len(data), first / len(data), strict / len(data)


GRID = [(l2, prior) for l2 in (0.01, 0.03, 0.1, 0.3, 1.0) for prior in (0.5, 1.0, 2.0, 4.0)]


def nested_fit(data: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> np.ndarray:
    """Choose L2 and PRIOR on the training questions alone (two inner folds by qid, mean held-out hit@3 plus
    rank-1 share), then fit on all of them: the test half plays no part in any choice."""
    best, chosen = -1.0, GRID[0]
    for l2, prior in GRID:
        OPT.l2, OPT.prior = l2, prior
        total = 0.0
        for fold in (0, 1):
            w = fit([(x, y, t) for x, y, t, f in data if f != fold])
            hit3, first, _ = score([(x, y, t) for x, y, t, f in data if f == fold], _linear(w))
            total += hit3 + first
        if total > best + 1e-9:
            best, chosen = total, (l2, prior)
    OPT.l2, OPT.prior = chosen
    print(f"  nested choice: l2={OPT.l2} prior={OPT.prior}")
    return fit([(x, y, t) for x, y, t, _ in data])


def _tables(path: Path) -> tuple[list[tuple[np.ndarray, np.ndarray, int]], list[str]]:
    """Every collected question's features and labels; `path` may name several pickles, joined by commas."""
    names: list[str] = []
    tables = []
    rows = [row for part in str(path).split(",") for row in pickle.loads(Path(part).read_bytes())]
    for row in rows:
        x, names = table(row)
        y = row["labels"] + 2 * row["strict"]  # 1: the gold's parent (counted by hit@3), 3: the gold or under it
        number = row["qid"].split("-")[-1]
        tables.append((x, y, int(number) if number.isdigit() else -1))
    return tables, names


def train(path: Path, sets: list[str], extra: Path | None = None, extra_only: bool = False) -> None:
    """Held-out figures per feature set: trained on the odd qids, tested on the even ones and the reverse (with
    `extra`, e.g. doc2dial's, added to the training questions, or alone with `extra_only`); then, with `extra`,
    trained on all of `path` and tested on `extra`."""
    tables, names = _tables(path)
    others, _ = _tables(extra) if extra else ([], names)
    baseline_column = names.index("rrf_rank")
    feature_sets = {
        "today (rrf)": ["rrf_rank"],
        "today's three": ["rrf_rank", "bm25_best", "vector_mean", "chunk_rank"],
        "S1": ["rrf_rank", *FEATURES],
        "S2": ["rrf_rank", "bm25_best", "bm25_sum", "proximity", "ordinal", "length"],
        "S3": ["rrf_rank", "bm25_sum", "ordinal", "length"],
        "S1+chunk_rank": ["rrf_rank", *FEATURES, "chunk_rank"],
        "S1+depth": ["rrf_rank", *FEATURES, "depth"],
        "S1+colon": ["rrf_rank", *FEATURES, "colon"],
        "S1+one_sentence": ["rrf_rank", *FEATURES, "one_sentence"],
        "S1+number": ["rrf_rank", *FEATURES, "number"],
        "S1+colon+number": ["rrf_rank", *FEATURES, "colon", "number"],
        "all": ["rrf_rank", *[n for n in names if n != "rrf_rank"]],
    }
    for name in sets:
        if name == "ablate":
            for n in names:
                if n != "rrf_rank":
                    feature_sets[f"all - {n}"] = [m for m in feature_sets["all"] if m != n]
        elif name == "single":
            for n in names:
                if n != "rrf_rank":
                    feature_sets[f"rrf + {n}"] = ["rrf_rank", n]
        elif name not in feature_sets:
            feature_sets[name] = name.split(",")
    print("| features | odd->even hit@3 / rank-1 / rank-1 strict | even->odd | today even | today odd |"
          + (" all->extra | today extra |" if extra else ""))
    print("|---|---|---|---|---|" + ("---|---|" if extra else ""))

    def prepared(rows: list[tuple[np.ndarray, np.ndarray, int]], columns: list[int]) -> Part:
        return [(normalise_head(x[:, columns], x[:, baseline_column]), y, x[:, baseline_column]) for x, y, _ in rows]

    for label, wanted in feature_sets.items():
        if OPT.only and not any(label.startswith(o) for o in OPT.only):
            continue
        columns = [names.index(n) for n in wanted]
        cells = []
        for train_half, test_half in ((1, 0), (0, 1)):
            own = [] if extra_only else [r for r in tables if r[2] % 2 == train_half]
            if OPT.nested:
                w = nested_fit([(*p, r[2] // 2 % 2) for p, r in zip(prepared(own, columns), own, strict=True)]
                               + [(*p, 2) for p in prepared(others, columns)])
            else:
                w = fit(prepared(own + others, columns))
            cells.append(score(prepared([r for r in tables if r[2] % 2 == test_half], columns),
                               _linear(w)))
        today = [score(prepared([r for r in tables if r[2] % 2 == half], [baseline_column]), _first_column)
                 for half in (0, 1)]
        if extra:
            w = fit(prepared(tables, columns))
            cells_extra = [score(prepared(others, columns), _linear(w)),
                           score(prepared(others, [baseline_column]), _first_column)]
        else:
            cells_extra = []
        print(f"| {label} | " + " | ".join(f"{a:.3f} / {b:.3f} / {c:.3f}"
                                           for a, b, c in [*cells, *today, *cells_extra]) + " |")
    ordered = ["rrf_rank", *[n for n in names if n != "rrf_rank"]]
    columns = [names.index(n) for n in ordered]
    w = fit(prepared(tables + others, columns))
    print("weights (all questions): " + ", ".join(f"{n}={v:+.3f}" for n, v in zip(ordered, w, strict=True)))


def final(path: Path, extra: Path | None, half: str = "", drop: Sequence[str] = (), add: Sequence[str] = ()) -> None:
    """Fit the S1 feature set on all questions of `path` (or its odd or even qids: to measure the other half end to
    end with `navibot eval`) and `extra`, and print the weights as the constants a wired ranker would use."""
    tables, names = _tables(path)
    if half:
        tables = [r for r in tables if r[2] % 2 == (1 if half == "odd" else 0)]
    others, _ = _tables(extra) if extra else ([], names)
    baseline_column = names.index("rrf_rank")
    kept = [n for n in FEATURES if n not in drop] + list(add)
    columns = [baseline_column, *(names.index(n) for n in kept)]
    fitted = dict(zip(["fused_rank", *kept], fit([(normalise_head(x[:, columns], x[:, baseline_column]), y,
                                                   x[:, baseline_column]) for x, y, _ in tables + others]),
                      strict=True))
    w = [fitted.get(name, 0.0) for name in (*COLUMNS, *add)]
    print(f"# {len(tables) + len(others)} questions, L2 {OPT.l2}, prior {OPT.prior}, head {OPT.head}")
    print("WEIGHTS: Mapping[str, float] = {")
    for name, weight in zip((*COLUMNS, *add), w, strict=True):
        print(f'    "{name}": {weight:.3f},')
    print("}")


LINK_MIN = 5  # a (question word, paragraph word) pair is kept when the word is in this many answering paragraphs
LINK_PRIOR = (0.1, 1.0)  # added to a pair's count and to a question word's total, among answers and among rivals
LINK_SCOPE = r"^§\s*273\.\d"  # the links apply to the sections of 7 CFR 273, the text they are learned on


def _half_of(qid: str) -> str:
    number = qid.split("-")[-1]
    return ("odd" if int(number) % 2 else "even") if number.isdigit() else ""


def _link_stems(text: str) -> frozenset[str]:
    return frozenset(t for t in stemmed(text) if t not in STOPWORDS and len(t) > 1 and not t.isdigit())


def learn_links(path: Path, out: Path, half: str = "") -> None:
    """Word links (rag/search/word_links.py) from collected questions (`collect`): for each question word q and
    paragraph word p, how much more often p stands in the question's answering paragraphs (the gold or one under
    it) than in the rivals among today's first HEAD paragraphs (neither gold, nor above or under it), as the
    log of the ratio of the two shares, smoothed by LINK_PRIOR; kept when positive and p is in LINK_MIN answers
    of questions holding q. `half`: learn on the odd or the even qids only (to fit the ranking's weight on
    links learned without the question, `collect --links` of the other half)."""
    rows = [r for r in pickle.loads(path.read_bytes()) if not half or _half_of(r["qid"]) == half]
    in_answers: dict[str, Counter[str]] = defaultdict(Counter)
    in_rivals: dict[str, Counter[str]] = defaultdict(Counter)
    answers: Counter[str] = Counter()
    rivals: Counter[str] = Counter()
    used = 0
    for row in rows:
        index = {sub: i for i, sub in enumerate(row["subs"])}
        head = [index[sub] for sub in row["order"][:HEAD] if sub in index]
        positives = [i for i in head if row["strict"][i]]
        if not positives:
            continue
        used += 1
        negatives = [i for i in head if not row["labels"][i]]
        held = frozenset().union(*(_link_stems(row["text"][i][2]) for i in positives))
        around = Counter(p for i in negatives for p in _link_stems(row["text"][i][2]))
        for q in set(query_stems(row["question"])):
            answers[q] += 1
            rivals[q] += len(negatives)
            in_answers[q].update(held)
            in_rivals[q].update(around)
    bonus, total = LINK_PRIOR
    lines = []
    for q in sorted(in_answers):
        kept = []
        for p, n in in_answers[q].items():
            weight = math.log(((n + bonus) / (answers[q] + total)) / ((in_rivals[q][p] + bonus) / (rivals[q] + total)))
            if n >= LINK_MIN and round(weight, 3) > 0:  # as written
                kept.append((p, weight))
        lines += [f"{q}\t{p}\t{w:.3f}" for p, w in sorted(kept, key=lambda kv: (-kv[1], kv[0]))]
    header = [f"# navibot word links, learned by benchmarks/paragraph_ltr.py links from {used} questions "
              f"({path.name}{', ' + half + ' qids' if half else ''}); LINK_MIN {LINK_MIN}, LINK_PRIOR {LINK_PRIOR}",
              "# question stem, paragraph stem, weight (rag/search/word_links.py)", f"#scope\t{LINK_SCOPE}"]
    data = "\n".join(header + lines).encode("utf-8") + b"\n"
    out.write_bytes(gzip.compress(data, mtime=0) if out.suffix == ".gz" else data)
    print(f"{len(lines)} links of {len(in_answers)} question words from {used} questions -> {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["collect", "train", "final", "links"])
    parser.add_argument("--corpus", type=Path, default=_DEFAULT_CORPUS)
    parser.add_argument("--questions", type=Path, default=_DEFAULT_QUESTIONS)
    parser.add_argument("--out", "--data", dest="data", type=Path, default=Path("/tmp/ltr.pkl"))
    parser.add_argument("--objective", choices=["list", "pairs"], default="list")
    parser.add_argument("--strict", action="store_true", help="train on the gold or below only")
    parser.add_argument("--extra", type=Path, help="more training questions (collected), e.g. doc2dial's")
    parser.add_argument("--extra-only", action="store_true", help="train on --extra alone")
    parser.add_argument("--drop", nargs="*", default=[], help="final: features left out (weight 0)")
    parser.add_argument("--add", nargs="*", default=[], help="final: text features added (TEXT_FEATURES)")
    parser.add_argument("--half", choices=["odd", "even"], help="collect, final, links: these qids only")
    parser.add_argument("--links-out", type=Path, default=Path("/tmp/word_links.tsv.gz"), help="links: the file")
    parser.add_argument("--only", nargs="*", default=[], help="the feature sets whose name starts so")
    parser.add_argument("--head", type=int, default=40)
    parser.add_argument("--nested", action="store_true", help="choose --l2 and --prior by inner cross-validation")
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument("--prior", type=float, default=1.0)
    parser.add_argument("--normalise", choices=["z", "rank"], default="rank")
    parser.add_argument("--sets", nargs="*", default=[], help="extra feature sets: comma-separated names")
    args = parser.parse_args()
    OPT.normalise, OPT.objective, OPT.l2, OPT.prior, OPT.strict = (args.normalise, args.objective, args.l2,
                                                                    args.prior, args.strict)
    OPT.nested, OPT.only, OPT.head = args.nested, args.only, args.head
    if args.step == "collect":
        collect(args.corpus, args.questions, args.data, args.half or "")
    elif args.step == "links":
        learn_links(args.data, args.links_out, args.half or "")
    elif args.step == "final":
        final(args.data, args.extra, args.half, args.drop, args.add)
    else:
        train(args.data, args.sets, args.extra, args.extra_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

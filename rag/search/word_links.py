"""Word links: the words of a regulation's paragraphs that go with a navigator's word, learned from questions.

The glossary (rag/search/glossary.py) maps phrases a person wrote down; it cannot list every way a navigator puts
a rule ("she got cut off again, how long this time" is asked of the paragraph on a second violation's period).
Word links are learned instead: from navigator-style questions whose answering paragraph is known, each question
word is linked to the words that set the answering paragraph apart from the rivals the search put beside it
(question "loan" -> paragraph "private", "institution", "deferred": the paragraphs on loans from private persons
and on deferred educational loans), weighted by how much more often they stand in the answer than in its rivals
(a log-odds ratio). The learned paragraph ranking
(rag/search/paragraph_ranker.py) reads, per candidate paragraph, the sum over the question's words of the
strongest link its text holds (rag/search/paragraph_features.py `links`).

Links are learned on one body of text and only apply to it: a paragraph counts only when a heading of its
section matches the file's scope (the bundled file: 7 CFR Part 273's "§ 273.n" sections). Elsewhere (doc2dial's
pages) the same links ranked paragraphs worse (first place 0.39 -> 0.23 of the pages' first turns).

The bundled file (rag/data/word_links.tsv.gz) is built by `benchmarks/paragraph_ltr.py links` from the project's
own probe questions about 7 CFR 273 (benchmarks/probes/, the sets already read; not cfr273-dev, nor the sets kept
unread for measuring); NAVIBOT_WORD_LINKS_FILE names another file of the same form, e.g. links learned from more
questions, or none ("#scope" and no link) to switch them off. The learner labels answers by legal paragraph paths
(rag/evaluation/evaluate.py SectionGold), so as it stands it learns links for regulations written that way.
File: gzip or plain UTF-8 text; `#` comment lines, one `#scope<TAB><regular expression>` line, then one link per
line: question stem, paragraph stem, weight (Snowball stems, as rag/search/bm25.py makes them).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from rag.search.bm25 import query_stems

MAX_LINKS_PER_WORD = 400  # a question word's strongest links; a common word ("get") has thousands of weak ones


class WordLinksError(RuntimeError):
    """The word links file cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class WordLinks:
    """Question stem -> {paragraph stem: weight}, for the paragraphs whose section heading matches `scope`."""

    links: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    scope: re.Pattern[str] | None = None  # None: no links at all (an empty file)

    def __bool__(self) -> bool:
        return bool(self.links) and self.scope is not None

    def for_question(self, text: str) -> QuestionLinks | None:
        """The question's own words that have links, in the question's order; None without."""
        stems = tuple(s for s in query_stems(text) if s in self.links) if self else ()
        return QuestionLinks(stems, self) if stems else None

    def covers(self, heading_path: Sequence[str]) -> bool:
        """Whether a paragraph under this heading path is in the text the links were learned on."""
        return self.scope is not None and any(self.scope.search(h) for h in heading_path)


@dataclass(frozen=True)
class QuestionLinks:
    """What a store needs to score a question's links: its words that have links, and the links themselves."""

    stems: tuple[str, ...]
    source: WordLinks

    @property
    def words(self) -> list[Mapping[str, float]]:
        """Each word's links, in the question's order."""
        return [self.source.links[s] for s in self.stems]


def bundled_path() -> Path:
    return Path(str(resources.files("rag") / "data" / "word_links.tsv.gz"))


def load_word_links(path: Path | None = None) -> WordLinks:
    """The links of `path`, or the bundled ones; a file that cannot be used raises WordLinksError. A file is parsed
    once while it is unchanged (~130 ms for the bundled one, at every `build_core`: each CLI command, each test's
    bot); the links are read-only, so every caller may share them."""
    path = path or bundled_path()
    try:
        state = path.stat()
    except OSError as exc:
        raise WordLinksError(f"cannot read the word links file {path}: {exc}") from exc
    return _parsed(str(path), state.st_mtime_ns, state.st_size)


@lru_cache(maxsize=8)
def _parsed(path: str, mtime_ns: int, size: int) -> WordLinks:  # the file's state is the cache key
    try:
        raw = Path(path).read_bytes()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise WordLinksError(f"cannot read the word links file {path}: {exc}") from exc
    return parse_word_links(text, path)


def parse_word_links(text: str, source: str = "word links") -> WordLinks:
    scope: re.Pattern[str] | None = None
    links: dict[str, dict[str, float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("#scope\t"):
            try:
                scope = re.compile(line.split("\t", 1)[1].strip())
            except re.error as exc:
                raise WordLinksError(f"{source} line {number}: the scope is not a regular expression ({exc})") from exc
            continue
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        try:
            question, paragraph, weight = parts[0].strip(), parts[1].strip(), float(parts[2])
        except (IndexError, ValueError):
            raise WordLinksError(f"{source} line {number}: expected question stem, paragraph stem and weight "
                                 f"separated by tabs, got {line[:80]!r}") from None
        if not question or not paragraph or not 0 < weight < 100:
            raise WordLinksError(f"{source} line {number}: empty stem or a weight outside (0, 100): {line[:80]!r}")
        links.setdefault(question, {})[paragraph] = weight
    if links and scope is None:
        raise WordLinksError(f"{source}: no '#scope<TAB><pattern>' line: links must name the text they apply to")
    strongest = {q: dict(sorted(ps.items(), key=lambda kv: -kv[1])[:MAX_LINKS_PER_WORD]) for q, ps in links.items()}
    return WordLinks(strongest, scope)

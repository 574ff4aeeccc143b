"""Navigators' words → the words policy documents use, from a data file an admin can edit or extend.

A navigator types "emergency food stamps", "recert", "green card", "E&T penalty"; the regulation says "expedited
service", "recertification", "lawful permanent resident", "failure to comply with the work requirements". The
glossary (rag/data/glossary.toml, plus NAVIBOT_GLOSSARY_FILE for an agency's own acronyms and program names)
lists such words; retrieval searches the question *plus* the policy terms its words map to, so that a page
written in the regulation's words is found while the navigator's own words still count.

Matching is case-insensitive, on word boundaries, for whole phrases; punctuation and spacing inside a phrase
are loose ("E&T" = "E & T" = "E and T", "re-cert" = "re cert"), a trailing plural s is allowed, and articles and
possessives do not count ("living in a car" = "living in her car" = "living in car"), nor a common verb's form
("church gave" = "church gives", VERB_FORMS), nor shorthand inside a phrase ("lives w parents", SHORTHAND). A
phrase of three words or more also matches with one filler word inside it ("deduction just for working" =
"deduction for working"; see SKIPPABLE): navigators' phrasing varies more than a list can (cfr273 probes, the
gap alone: answers citing a gold paragraph 0.638 -> 0.648 on cfr273-dev, 0.280 -> 0.320 on probe3; doc2dial and
every refusal figure unchanged).
A two-word phrase also matches with one word of content inside it, the object or a qualifier a navigator puts
there ("signed her car over" = "signed over", "own snap case" = "own case", "paying him weeks late" = "paying
late"), unless that word turns the meaning (TURNING). Session 20, against the glossary's phrases as they were,
on the regulation sets nobody wrote phrases from (20 sets, 1,091 answerable): answers citing a gold paragraph
12 gained, 3 lost; paragraph hit@3 12 gained, 2 lost; no unanswerable question answered. A longer phrase takes
such a word too, unless it makes a phrase of its own with a neighbour ("standard medical deduction amount" is not
"standard deduction amount": "medical deduction" is an entry): 4 gained, none lost; hit@3 6 and none.
A client's age ("single mom w a 4 yr old", "her 16-year-old", "client is 52") is searched as the regulation's age
thresholds it falls under (AGE_TERMS: "under age 6", "under age 18", ...). Session 22, on the 20 held-out
regulation sets: answers citing a gold paragraph 5 gained, 1 lost; on the 12 sets written later and not read
(probe50/51, 68-71, 74-79) 5 gained, 2 lost; no unanswerable question answered; doc2dial unchanged. Not 60 and
over (below).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rag.search.terms import STOPWORDS

MAX_TERMS_PER_ENTRY = 12
MAX_CHARS = 200  # a phrase or policy term longer than this is a slip in the file, not a glossary entry
GAP_MIN_WORDS = 3  # a phrase matched with a SKIPPABLE word inside it has at least this many words (articles aside)
PAIR_WORDS = 2  # a phrase of this many words or more matches with one word of content inside it, bar TURNING
# Words that may stand inside a phrase without changing it: pronouns, articles, auxiliaries, fillers, plain
# prepositions, and the program's own names ("count that as income", "deduction just for working", "the 3 month
# ABAWD limit", "ask for a fair hearing"). Not words that turn the meaning ("paid every other week" is not "paid
# every week", "not count" is not "count", "medical" in "standard medical deduction").
SKIPPABLE = frozenset(
    "a an the her his their my your our its him them me us it that this these those some any she he they i we you "
    "is are was were be been being do does did has have had am just also really even still actually ever "
    "of for to in on at as with from by snap abawd abawds ebt fair".split())

# Words that, put inside a phrase, make it mean something else: "paid bi weekly" is not "paid weekly", "own half
# share" not "own share", "benefits dont stop" not "benefits stop".
TURNING = frozenset("not no never nor other every bi half non un without only once twice per each dont doesnt didnt "
                    "wont cant isnt arent wasnt werent".split())
_WORD = re.compile(r"[a-z0-9]+")
# Words a phrase matches with or without, whichever one is typed: "living in a car" is also "living in her car",
# "living in their car" and "living in car"; "lost her job" is also "lost his job"; "pay them back" "pay him back".
DETERMINERS = frozenset("a an the her his their my your our its him them me us".split())
# Words a phrase matches in any of their forms: who does it ("how much can she have" is also "… can they have",
# "… can I have") and the verb's agreement with it ("how much does she owe" is also "how much do they owe").
_SAME = {**dict.fromkeys(("she", "he", "they", "i", "we", "you"), "they"), "does": "do", "has": "have",
         "is": "are", "was": "were"}
# Words a phrase matches in any of their forms, for the verbs navigators' phrases turn on: "church gives" is also
# "church gave", "county paid her too little" also "county pays her too little". The file listed such forms by hand
# (44 groups, each one meaning). Not "lose": "will she lose benefits" is not "lost benefits"; not "stop": "stop her
# snap" is her asking to leave, "stopped her snap" the agency ending it. Nor "apply": an SSA page's "the month you
# apply", read back in a doc2dial thread, became the SNAP phrase "month she applied" (that set's later turns lost
# one page, R@3 0.920 -> 0.919). Session 20, on the regulation sets nobody wrote phrases
# from (20 sets, 1,091 answerable): answers citing a gold paragraph 11 gained, 1 lost; paragraph hit@3 11 and 2;
# the read sets 6 and 6; no unanswerable question answered; doc2dial unchanged.
VERB_FORMS = {
    "give": "gave given gives giving", "get": "got gotten gets getting", "pay": "paid pays paying",
    "take": "took taken takes taking", "sell": "sold sells selling", "quit": "quits quitting",
    "cut": "cuts cutting", "go": "went gone goes going", "come": "came comes coming", "make": "made makes making",
    "tell": "told tells telling", "send": "sent sends sending", "keep": "kept keeps keeping",
    "move": "moved moves moving", "close": "closed closes closing", "sign": "signed signs signing",
    "start": "started starts starting", "end": "ended ends ending", "live": "lived lives living",
    "work": "worked works working",
    "report": "reported reports reporting", "miss": "missed misses missing", "drop": "dropped drops dropping",
    "deny": "denied denies denying", "owe": "owed owes owing", "count": "counted counts counting",
}
_BASE_FORM = {form: base for base, forms in VERB_FORMS.items() for form in forms.split()}
# Navigators' shorthand, read inside a phrase of two words or more as the word it stands for: "lives w her parents"
# is "lives with her parents", "do the snap app for her" is "do the snap application for her". A one-word entry
# ("app" = ["application"]) is still matched as typed. The file listed some such forms by hand ("lives w parents").
# Session 20, on the regulation sets nobody wrote phrases from (20 sets, 1,091 answerable): answers citing a gold
# paragraph 7 gained, none lost; the read sets 3 and none; no unanswerable question answered. Session 24: "fs" (food
# stamps) is "snap" inside a phrase, so every SNAP phrase also matches it typed that way ("her fs is getting cut",
# "emergency fs"); with that session's last glossary batch, on the 34 unread sets 10 gained, none lost. Likewise
# "recert", "cert", "apt", "admin", "cuz", "pmt", "bday": the file listed some phrases both ways ("out of her apt",
# "out of her apartment"); of the 19,519 eval and probe questions, 2 expansions change (a phrase found, no new term).
SHORTHAND = {
    "w": "with", "bc": "because", "b4": "before", "thru": "through", "yr": "year", "yrs": "years", "wk": "week",
    "wks": "weeks", "hr": "hour", "hrs": "hours", "mo": "month", "mos": "months", "bf": "boyfriend",
    "gf": "girlfriend", "hh": "household", "app": "application", "apps": "applications", "info": "information",
    "ppl": "people", "govt": "government", "dept": "department", "amt": "amount", "amts": "amounts",
    "appt": "appointment", "appts": "appointments", "diff": "different", "til": "until", "till": "until",
    "biz": "business", "fs": "snap", "recert": "recertification", "recerts": "recertifications",
    "cert": "certification", "certs": "certifications", "apt": "apartment", "admin": "administrative",
    "cuz": "because", "pmt": "payment", "bday": "birthday",
}
_WORD_ANY_CASE = re.compile(r"[A-Za-z0-9]+")
_HEADER = re.compile(r"^\s*\[\s*(?:\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_-]+))\s*\]")
_TOML_PLACE = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
_KEY = re.compile(r"^\s*(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|([A-Za-z0-9_-]+))\s*=")


class GlossaryFileError(RuntimeError):
    """The glossary file cannot be read or is malformed; the message names the file and the line."""


@dataclass(frozen=True, slots=True)
class Expansion:
    """What the glossary found in a question: the navigator's phrases and the policy terms they map to."""

    matched: tuple[str, ...] = ()  # as typed in the question, in order
    terms: tuple[str, ...] = ()  # policy terms to search as well, distinct, none already in the question
    coverage: float = 0.0  # share of the question's words (function words aside) inside the matched phrases
    # Each matched phrase with all its policy terms (also those the question already says): the no-answer gate
    # counts a phrase as found in a section that holds one of its terms.
    entries: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.terms)

    @property
    def text(self) -> str:
        """The policy terms as one phrase list ("expedited service; recertification")."""
        return "; ".join(self.terms)


def _phrase_key(phrase: str) -> str:
    """The canonical form of a navigator's phrase: its lowercase words joined by single spaces."""
    return " ".join(_WORD.findall(phrase.lower()))


def _and_variant(phrase: str) -> str | None:
    """ "E&T" is also typed "E and T": the phrase with each "&" between words read as "and"."""
    return _phrase_key(phrase.replace("&", " and ")) if "&" in phrase else None


def _line_numbers(text: str) -> dict[tuple[str, str], int]:
    """(table, key) → the line it is written on, to name the line of an entry that parses but is wrong."""
    lines: dict[tuple[str, str], int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _HEADER.match(line):
            table = next(g for g in header.groups() if g is not None)
            lines.setdefault((table, ""), number)
        elif key := _KEY.match(line):
            raw = next(g for g in key.groups() if g is not None)
            lines.setdefault((table, raw.replace('\\"', '"')), number)
    return lines


def _parse(text: str, where: str) -> tuple[dict[str, tuple[str, ...]], bool]:
    """The entries of one file, phrase key → policy terms (an empty tuple removes a phrase of the default), and
    whether the bundled glossary is kept under them (top-level `bundled = false` drops it)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.12's tomllib puts the place in the message only: "Invalid value (at line 3, column 9)".
        place = _TOML_PLACE.search(str(exc))
        if place:
            line, message = place.group(1), f"{str(exc)[:place.start()].rstrip()}, column {place.group(2)}"
        else:
            line = str(len(text.splitlines()) or 1) if "end of document" in str(exc) else ""
            message = str(exc)
        raise GlossaryFileError(f"{where}{f':{line}' if line else ''}: not valid TOML ({message})") from exc
    lines = _line_numbers(text)
    entries: dict[str, tuple[str, ...]] = {}
    keep_bundled = data.pop("bundled", True)
    if not isinstance(keep_bundled, bool):
        line = lines.get(("", "bundled"))
        raise GlossaryFileError(f"{where}{f':{line}' if line else ''}: bundled must be true or false")
    for table, group in data.items():
        if not isinstance(group, dict):
            line = lines.get(("", table))
            raise GlossaryFileError(f"{where}{f':{line}' if line else ''}: {table!r} must be inside a [group] "
                                    "table, e.g. [snap]")
        for phrase, value in group.items():
            line = lines.get((table, phrase)) or lines.get((table, ""))
            at = f"{where}{f':{line}' if line else ''}"
            key = _phrase_key(phrase)
            if not key or len(phrase) > MAX_CHARS:
                raise GlossaryFileError(f"{at}: {phrase!r} needs at least one letter or digit "
                                        f"(and at most {MAX_CHARS} characters)")
            terms = [value] if isinstance(value, str) else value
            if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
                raise GlossaryFileError(f"{at}: {phrase!r} must map to a policy term or a list of them, "
                                        'e.g. ["expedited service"]')
            cleaned = [" ".join(t.split()) for t in terms]
            if any(not _WORD.search(t.lower()) or len(t) > MAX_CHARS for t in cleaned):
                raise GlossaryFileError(f"{at}: {phrase!r}: every policy term needs a word "
                                        f"(and at most {MAX_CHARS} characters)")
            if len(cleaned) > MAX_TERMS_PER_ENTRY:
                raise GlossaryFileError(f"{at}: {phrase!r}: at most {MAX_TERMS_PER_ENTRY} policy terms")
            # The same phrase under two groups of one file: both lists count.
            for variant in filter(None, (key, _and_variant(phrase))):
                entries[variant] = tuple(dict.fromkeys([*entries.get(variant, ()), *cleaned]))
    return entries, keep_bundled


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GlossaryFileError(f"{path}: cannot read the glossary file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise GlossaryFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def bundled_path() -> Path:
    return Path(str(resources.files("rag") / "data" / "glossary.toml"))


def _form(word: str) -> str:
    """A word as matched: a subject pronoun or its verb in one form (_SAME), a verb of VERB_FORMS in its base form."""
    word = _SAME.get(word, word)
    return _BASE_FORM.get(word, word)


def _content(words: list[str]) -> tuple[str, ...]:
    """A phrase's words as matched: without articles, possessives and object pronouns (all of them when that is
    all it has), each in the form _form gives, and in a phrase of two words or more shorthand spelt out."""
    content = tuple(_form(w) for w in words if w not in DETERMINERS) or tuple(words)
    return tuple(SHORTHAND.get(w, w) for w in content) if len(content) > 1 else content


def match_key(phrase: str) -> tuple[str, ...]:
    """The words a phrase is matched on: two phrases with the same key are one entry to the matcher ("withdraw the
    application" = "withdraw application", "lent her" = "lent him"), their policy terms merged."""
    return _content(_phrase_key(phrase).split())


# A client's age as navigators type it ("4 yo", "9 yr old", "a 16-year-old", "age 62") and the regulation's age
# thresholds it falls under: rules are written "under age 6", "under 18 years of age", "60 years of age or older".
_AGE = re.compile(r"\b(\d{1,3})\s*(?:-\s*)?(?:(?:yrs?|years?)[\s-]*old|yo|y/o|y\.o\.)(?![a-z])"
                  r"|\b(?:age|aged)\s+(\d{1,3})\b"
                  # "shes 62", "he turned 50", "cl, 34,": two digits not followed by a unit ("is 30 days late")
                  r"|(?:\b(?:is|shes|she's|hes|he's|theyre|they're|im|i'm|turned|turns|turning)\s+|,\s*)(\d{2})\b"
                  r"(?!\s*(?:%|\$|percent|dollars|bucks|hrs?\b|hours?|days?|weeks?|wks?|months?|mos?\b|min|"
                  r"minutes|k\b|/|\.\d|,\d|(?:an?|per)\s+(?:hour|hr|week|wk|month|mo|day|year|yr)))", re.IGNORECASE)
AGE_TERMS: tuple[tuple[int, int, tuple[str, ...]], ...] = (
    (0, 5, ("under age 6",)),
    (6, 11, ("under age 12", "under age 18")),
    (12, 15, ("under age 18",)),
    (16, 17, ("under age 18", "age 16 or 17")),
    (18, 21, ("under 22 years of age",)),
    (50, 59, ("55 years of age or older",)),
)
# Not 60 and over: "elderly" and "60 years of age" drew questions on Social Security retirement ("I am 62, when
# should I start?") away from their page on doc2dial; "senior", "over 60" and the like are glossary phrases.


def age_terms(question: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each age the question states, as typed, with the thresholds it falls under (AGE_TERMS)."""
    found = []
    for m in _AGE.finditer(question):
        age = int(m.group(1) or m.group(2) or m.group(3))
        for low, high, terms in AGE_TERMS:
            if low <= age <= high:
                found.append((m.group(), terms))
    return found


def _add_new(policy: tuple[str, ...], terms: list[str], said: set[str]) -> None:
    """Append to `terms` each policy term that says something the question (and the terms so far) did not; a later
    term adding nothing new is left out too."""
    for term in policy:
        term_words = set(_WORD.findall(term.lower()))
        if not term_words <= said and term not in terms:
            terms.append(term)
            said |= term_words


class Glossary:
    """The bundled glossary with an admin's file merged over it: the same phrase replaces its policy terms, an
    empty list removes it, a new phrase adds. Indexed once by word tuples: `expand` is a few dict look-ups per
    word of the question (tens of µs), where one regex of every phrase took over a millisecond."""

    def __init__(self, extra_file: Path | None = None) -> None:
        extra: dict[str, tuple[str, ...]] = {}
        keep_bundled = True
        if extra_file is not None:
            extra, keep_bundled = _parse(_read(extra_file), str(extra_file))
        entries: dict[str, tuple[str, ...]] = {}
        if keep_bundled:
            path = bundled_path()
            entries = _parse(_read(path), str(path))[0]
        entries.update(extra)
        self.entries = {k: v for k, v in entries.items() if v}
        # Word tuple (articles and possessives left out) -> phrase, with a plural "s"/"es" on the last word (an
        # entry of its own keeps its terms). Phrases that differ only in those words are one: their terms merge.
        self._index: dict[tuple[str, ...], str] = {}
        for key in sorted(self.entries, key=lambda k: (len(k.split()), k)):  # the plainest phrase names the entry
            words = match_key(key)
            if words in self._index:
                first = self._index[words]
                self.entries[first] = tuple(dict.fromkeys([*self.entries[first], *self.entries[key]]))
                continue
            self._index[words] = key
        for words, key in list(self._index.items()):
            if words[-1][-1].isalpha():
                for suffix in ("s", "es"):
                    self._index.setdefault((*words[:-1], words[-1] + suffix), key)
        self._longest = max((len(w) for w in self._index), default=0)
        # First word -> the longest phrase of PAIR_WORDS or more starting with it: where a gap can be tried.
        self._gap_from: dict[str, int] = {}
        for words in self._index:
            if len(words) >= PAIR_WORDS:
                self._gap_from[words[0]] = max(self._gap_from.get(words[0], 0), len(words))

    def __len__(self) -> int:
        return len(self.entries)

    def expand(self, question: str) -> Expansion:
        """The policy terms the question's words map to, leaving out any the question already says.

        At each word the longest phrase starting there wins ("emergency food stamps" over "emergency"); a phrase
        starting at a later word counts too ("food stamps" inside "emergency food stamps")."""
        spans = [(m.group().lower(), m.start(), m.end()) for m in _WORD_ANY_CASE.finditer(question)]
        words = [w for w, _, _ in spans]
        said = set(words)
        at = [i for i, w in enumerate(words) if w not in DETERMINERS]  # the words phrases are matched on
        typed = [_form(words[i]) for i in at]  # a one-word entry is looked up as typed
        kept = [SHORTHAND.get(w, w) for w in typed]
        matched: list[str] = []
        entries: list[tuple[str, tuple[str, ...]]] = []
        terms: list[str] = []
        covered: set[int] = set()
        for i in range(len(kept)):
            found = self._phrase_at(kept, typed, i) or self._phrase_with_gap_at(kept, i)
            if found is None:
                continue
            key, end = found
            first, last = at[i], at[end]
            matched.append(question[spans[first][1]:spans[last][2]])
            entries.append((matched[-1], self.entries[key]))
            covered.update(range(first, last + 1))
            _add_new(self.entries[key], terms, said)
        for typed_age, age_policy in age_terms(question):
            entries.append((typed_age, age_policy))
            _add_new(age_policy, terms, said)
        content = [i for i, w in enumerate(words) if w not in STOPWORDS]
        coverage = len(covered.intersection(content)) / len(content) if content else 0.0
        return Expansion(tuple(dict.fromkeys(matched)), tuple(terms), coverage, tuple(entries))

    def _phrase_at(self, kept: list[str], typed: list[str], i: int) -> tuple[str, int] | None:
        """The longest phrase starting at kept[i] (a one-word one as typed), and the index of its last word."""
        for n in range(min(self._longest, len(kept) - i), 0, -1):
            key = self._index.get(tuple(kept[i:i + n]) if n > 1 else (typed[i],))
            if key is not None:
                return key, i + n - 1
        return None

    def _phrase_with_gap_at(self, kept: list[str], i: int) -> tuple[str, int] | None:
        """The longest phrase starting at kept[i] that the question says with one word inside it (_may_stand_inside:
        "is there any deduction just for working" is "deduction for working", "ask for a fair hearing" is "ask for
        a hearing", "signed her car over" is "signed over"), and the index of its last word."""
        for n in range(min(self._gap_from.get(kept[i], 0), len(kept) - i - 1), PAIR_WORDS - 1, -1):
            for j in range(i + 1, i + n):
                if self._may_stand_inside(kept, j, n) and (
                        key := self._index.get((*kept[i:j], *kept[j + 1:i + n + 1]))):
                    return key, i + n
        return None

    def _may_stand_inside(self, kept: list[str], j: int, phrase_words: int) -> bool:
        """Whether kept[j] may stand inside a phrase of `phrase_words` words without changing it: a filler, or a word
        of content that does not turn the meaning ("t" of "can't", "w" aside); inside a longer phrase, not one that
        makes a phrase of its own with a neighbour ("the standard medical deduction amount" is not the "standard
        deduction amount": "medical deduction" is a phrase)."""
        word = kept[j]
        if phrase_words >= GAP_MIN_WORDS and word in SKIPPABLE:
            return True
        if word in TURNING or word in STOPWORDS or len(word) < 2:
            return False
        return phrase_words < GAP_MIN_WORDS or not (
            (kept[j - 1], word) in self._index or (word, kept[j + 1]) in self._index)

"""No topic mixing: in one long thread (a DM, a Teams personal chat, `navibot chat`) a complete question on
another subject is searched alone, and an elliptical follow-up is still read with the thread."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.cli.main import main
from rag.answer.rewrite import Exchange, HeuristicRewriter, Rewrite, stands_alone
from rag.search.bm25 import query_stems
from tests.conftest import write

MEDICAID = "How do I apply for Medicaid?"
ABAWD = "Does the ABAWD time limit apply to a 52 year old client who works 15 hours a week?"


def test_a_complete_question_naming_another_subject_is_taken_alone() -> None:
    rewriter = HeuristicRewriter()  # one document (a regulation): no title tells topics apart
    history = [Exchange(MEDICAID, "Households applying for Medicaid may file a SNAP application with it. [1]")]
    assert rewriter.rewrite(ABAWD, history) == Rewrite(ABAWD)  # nothing of Medicaid searched, no answer context
    # The navigator says so: "new question", "diff question", "different client". The words saying so are not
    # searched: they are no topic, and the no-answer gate would look for them in the sections.
    for q, alone in (("diff question - client just had a baby, no SSN yet. can the baby still be added?",
                      "client just had a baby, no SSN yet. can the baby still be added?"),
                     ("ok different client - hes on strike. can his family still get food stamps?",
                      "hes on strike. can his family still get food stamps?")):
        assert rewriter.rewrite(q, history) == Rewrite(alone)


@pytest.mark.parametrize(("asked", "searched"), [
    ("totally diff question - client sold her car for $1. is that a problem?",
     "client sold her car for $1. is that a problem?"),
    ("new question, client is in a drug rehab that gives her meals. can she get snap?",
     "client is in a drug rehab that gives her meals. can she get snap?"),
    ("Unrelated, but how do I apply for WIC?", "how do I apply for WIC?"),
    ("new q: is SSI counted as income", "is SSI counted as income"),
    ("Changing the subject: does LIHEAP count as income?", "does LIHEAP count as income?"),
    ("another client: her neighbor wants to shop with her ebt card, is that allowed",
     "her neighbor wants to shop with her ebt card, is that allowed"),
    ("switching gears, does a tax refund count as income for snap", "does a tax refund count as income for snap"),
    ("ok on a different note - can she apply online?", "can she apply online?"),
])
def test_the_words_that_announce_a_new_topic_are_not_searched(asked: str, searched: str) -> None:
    history = [Exchange(MEDICAID, "Households applying for Medicaid may file a SNAP application with it. [1]")]
    assert HeuristicRewriter().rewrite(asked, history) == Rewrite(searched)
    assert HeuristicRewriter().rewrite(asked, []) == Rewrite(searched)  # also as a thread's first question


@pytest.mark.parametrize("question", [
    "can they be a separate household?",  # a rule, not a marker
    "separate case for her boyfriend?",
    "new case for a 19 yr old, does she need an interview?",  # "new case" without a dash: the question itself
    "new client applying for snap, what docs does she need",
    "new question",  # nothing would be left
    "a different question",
    "another client of mine has the same problem, what can she do",  # "another client" without a dash
])
def test_words_that_only_look_like_a_topic_marker_are_searched(question: str) -> None:
    assert HeuristicRewriter().rewrite(question, []) == Rewrite(question)


@pytest.mark.parametrize("follow_up", ["what if they're 50?", "and for a second offense?",
                                       "Now, what if she is pregnant?", "how long does she have?",
                                       "is that the same for ABAWDs over 50 who work 15 hours a week?",
                                       "what if she moves to another household?",
                                       "another client of mine has the same problem, what can she do?"])
def test_a_follow_up_that_cannot_stand_alone_is_read_with_the_thread(follow_up: str) -> None:
    history = [Exchange(ABAWD, "")]
    assert HeuristicRewriter().rewrite(follow_up, history).standalone == f"{ABAWD} {follow_up}"


def test_a_question_on_the_threads_subject_continues_it() -> None:
    said = set(query_stems(MEDICAID))
    assert not stands_alone("Does Medicaid pay for nursing home care for an elderly parent?", said)
    assert not stands_alone("renewal process for families with children under six", said)  # names no subject
    assert stands_alone("Are WIC vouchers counted as income for a family with three children?", said)


REGULATION = """# PART 999—TEST RULES

### § 999.2 Applications.

(a) Joint applications. Households applying for Medicaid may file a SNAP application at the same office.

### § 999.24 Time limit for able-bodied adults without dependents (ABAWD).

(a) General rule. An able-bodied adult without dependents (ABAWD) aged 18 through 54 is eligible for only 3
months in 36 unless the individual works at least 20 hours a week.

(b) Exceptions. The time limit does not apply to an individual who is pregnant or who is 55 years of age or older.
"""


def test_in_one_long_chat_the_abawd_question_is_not_about_medicaid(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "k.sqlite3"
    assert main(["ingest", str(write(tmp_path / "reg.md", REGULATION)), "--store", str(store)]) == 0
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{MEDICAID}\n{ABAWD}\nwhat if she's pregnant?\n"))
    assert main(["chat", "--store", str(store)]) == 0
    replies = capsys.readouterr().out.split("bot> ")[1:]
    assert len(replies) == 3
    abawd = replies[1]
    assert "understood as" not in abawd  # searched as asked
    assert "§ 999.24" in abawd and "Medicaid" not in abawd
    # The follow-up is read with the ABAWD question (not the Medicaid one), and the line says what was searched.
    assert f"(understood as: {ABAWD} what if she's pregnant?)" in " ".join(replies[2].split())


def test_a_hostile_question_is_read_in_bounded_time() -> None:
    """Long runs of the words the new-topic and quantity patterns look for (far beyond NAVIBOT_MAX_QUESTION_CHARS)
    cost one pass, not a backtracking blow-up."""
    import time

    from rag.answer.extractive import asks_quantity
    from rag.answer.rewrite import without_topic_marker
    for text in ["ok " * 30_000 + "new question", "new question " * 20_000, "limit does " * 20_000 + "apply"]:
        started = time.perf_counter()
        without_topic_marker(text)
        asks_quantity(text)
        assert time.perf_counter() - started < 5.0

"""The offline rewriter: follow-ups become standalone questions, new topics stay as asked."""

from __future__ import annotations

import re
from collections import Counter

from bot.cli.main import demo_kb_path
from rag.answer.rewrite import (
    MAX_EARLIER_QUESTIONS,
    CachedTitles,
    Exchange,
    HeuristicRewriter,
    Rewrite,
    TitleIndex,
    exchanges_from_messages,
    with_standalones,
)

STUDENTS_Q = "Can college students get SNAP?"
STUDENTS_A = ("Most college students who attend school at least half-time cannot get SNAP unless they meet one of "
              "a short list of exemptions. [1]")
WORK_Q = "what if they work 20 hours a week?"
WORK_A = "A student who works for pay at least 20 hours a week meets the work exemption. [1]"


def demo_titles() -> list[str]:
    """The titles of the bundled demo pages, read from their front matter (16 documents, one about LIHEAP)."""
    titles = []
    for page in sorted(demo_kb_path().glob("*.md")):
        match = re.search(r"^title:\s*(.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
        assert match, page
        titles.append(match.group(1).strip())
    return titles


def demo_rewriter() -> HeuristicRewriter:
    return HeuristicRewriter(CachedTitles(demo_titles))


def test_no_history_leaves_the_question_unchanged() -> None:
    rewrite = demo_rewriter().rewrite("  what if they work 20 hours a week?  ", [])
    assert rewrite == Rewrite(WORK_Q)
    assert rewrite.context == "" and rewrite.search_text == WORK_Q
    # Earlier turns with no question text count as no history.
    assert demo_rewriter().rewrite(WORK_Q, [Exchange("  ", "an answer")]) == Rewrite(WORK_Q)


def test_follow_up_is_made_standalone_with_the_previous_answer_as_context() -> None:
    rewrite = demo_rewriter().rewrite(WORK_Q, [Exchange(STUDENTS_Q, STUDENTS_A)])
    assert STUDENTS_Q in rewrite.standalone and WORK_Q in rewrite.standalone
    assert rewrite.standalone.index(STUDENTS_Q) < rewrite.standalone.index(WORK_Q)
    assert rewrite.context == STUDENTS_A
    assert STUDENTS_A in rewrite.search_text and rewrite.standalone in rewrite.search_text


def test_the_bots_own_answer_is_not_searched_again() -> None:
    # An answer that cites paragraphs is the bot's own: the navigator has read those quotes, and searched again
    # they pull the follow-up back to the same paragraph. Someone else's reply (doc2dial's agent) stays context.
    history = [Exchange(STUDENTS_Q, STUDENTS_A, cited=("students::0.1",))]
    rewrite = demo_rewriter().rewrite(WORK_Q, history)
    assert rewrite.standalone == f"{STUDENTS_Q} {WORK_Q}"
    assert rewrite.context == "" and rewrite.search_text == rewrite.standalone
    quoted_then_not = [Exchange(STUDENTS_Q, STUDENTS_A, cited=("students::0.1",)), Exchange(WORK_Q, WORK_A)]
    assert demo_rewriter().rewrite("Does unpaid volunteering count?", quoted_then_not).context == WORK_A


def test_only_the_last_answer_is_context() -> None:
    history = [Exchange(STUDENTS_Q, STUDENTS_A), Exchange(WORK_Q, WORK_A)]
    rewrite = demo_rewriter().rewrite("Does unpaid volunteering count?", history)
    assert rewrite.context == WORK_A
    assert STUDENTS_A not in rewrite.search_text
    assert rewrite.standalone == f"{STUDENTS_Q} {WORK_Q} Does unpaid volunteering count?"


def test_new_topic_named_by_a_rare_title_word_is_not_combined() -> None:
    history = [Exchange(STUDENTS_Q, STUDENTS_A), Exchange(WORK_Q, WORK_A)]
    titles = demo_titles()
    assert sum("liheap" in t.lower() for t in titles) == 1  # the premise: LIHEAP is a rare title word
    assert demo_rewriter().rewrite("How do I apply for LIHEAP?", history) == Rewrite("How do I apply for LIHEAP?")
    # Short, but it names the program (an acronym that does not start the question): still a new topic.
    assert demo_rewriter().rewrite("Apply for LIHEAP?", history) == Rewrite("Apply for LIHEAP?")


def test_new_topic_needs_a_rare_title_name_not_said_before() -> None:
    history = [Exchange(STUDENTS_Q, STUDENTS_A)]
    question = "How do I apply for LIHEAP?"
    # Without titles the rewriter cannot tell a new topic: it combines.
    assert HeuristicRewriter().rewrite(question, history).standalone == f"{STUDENTS_Q} {question}"
    # A name found in no title is not a topic of this knowledge base: combined.
    other = HeuristicRewriter(CachedTitles(lambda: ["WIC basics", "Medicaid renewals"]))
    assert other.rewrite(question, history).standalone == f"{STUDENTS_Q} {question}"
    # However many titles contain it: SNAP after LIHEAP questions is a new topic too.
    liheap_first = [Exchange(question, "People apply for LIHEAP through their local LIHEAP office. [1]")]
    assert demo_rewriter().rewrite(STUDENTS_Q, liheap_first) == Rewrite(STUDENTS_Q)
    # Once LIHEAP has been talked about, a further LIHEAP question continues that conversation.
    liheap = [Exchange(question, "People apply for LIHEAP through their local LIHEAP office. [1]")]
    follow_up = "Does LIHEAP pay cooling bills in summer?"
    assert demo_rewriter().rewrite(follow_up, liheap).standalone == f"{question} {follow_up}"
    # A title word that is not a name ("renewals") does not start a new topic: doc2dial showed it costs recall.
    renewal = "How does the yearly renewal process work for families?"
    assert demo_rewriter().rewrite(renewal, history).standalone == f"{STUDENTS_Q} {renewal}"
    # Titles spell LIHEAP as an acronym, so it is a name even typed in lower case.
    assert demo_rewriter().rewrite("how do i apply for liheap?", history) == Rewrite("how do i apply for liheap?")


def test_follow_up_naming_another_program_asks_the_previous_question_about_it() -> None:
    history = [Exchange(STUDENTS_Q, STUDENTS_A)]
    for follow_up in ("and WIC?", "WIC?", "What about WIC?", "and for wic too?"):
        rewrite = demo_rewriter().rewrite(follow_up, history)
        assert rewrite == Rewrite("Can college students get WIC?"), follow_up
        assert "SNAP" not in rewrite.search_text  # the previous (SNAP) answer is not searched with it
    assert demo_rewriter().rewrite("Can they get LIHEAP too?", history) == Rewrite("Can college students get LIHEAP?")
    # A question that only mentions the program is its own question, not "the same about WIC".
    assert demo_rewriter().rewrite("Who can get WIC?", history) == Rewrite("Who can get WIC?")
    # Nothing to swap (the previous question named no program): combined as usual.
    plain = [Exchange("Can college students get help with food?", "Yes, sometimes. [1]")]
    assert demo_rewriter().rewrite("and WIC?", plain).standalone == "Can college students get help with food? and WIC?"


def test_follow_ups_chain_on_how_the_previous_question_was_understood() -> None:
    rewriter = demo_rewriter()
    thread = with_standalones(rewriter, [Exchange(STUDENTS_Q, STUDENTS_A), Exchange("and WIC?", "WIC serves ...")])
    assert [e.standalone for e in thread] == [STUDENTS_Q, "Can college students get WIC?"]
    rewrite = rewriter.rewrite("what if they work 20 hours a week?", thread)
    assert rewrite.standalone == f"Can college students get WIC? {WORK_Q}"  # about WIC now, not SNAP
    # After a new topic the thread's earlier topic is left behind.
    thread = with_standalones(rewriter, [Exchange(STUDENTS_Q, STUDENTS_A),
                                         Exchange("How do I apply for LIHEAP?", "Through the local office. [1]")])
    assert rewriter.rewrite("what if they work 20 hours a week?", thread).standalone == (
        f"How do I apply for LIHEAP? {WORK_Q}")
    # A long thread carries at most MAX_TOPIC_WORDS of earlier questions, whole questions only.
    long = "Is this question number one about SNAP rules for people who work many hours?"
    chained = Exchange("q", "a", " ".join([long] * 12))
    standalone = rewriter.rewrite("what about them?", [chained]).standalone
    assert standalone.endswith(f"{long} what about them?")
    assert len(standalone.split()) - 3 <= 80 and standalone.startswith("Is this question")


def test_at_most_six_earlier_questions_are_used() -> None:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    history = [Exchange(f"question {w}?", f"answer {w}") for w in words]
    rewrite = HeuristicRewriter().rewrite("and then?", history)
    kept = words[-MAX_EARLIER_QUESTIONS:]
    assert MAX_EARLIER_QUESTIONS == 6
    assert rewrite.standalone == " ".join(f"question {w}?" for w in kept) + " and then?"
    assert "alpha" not in rewrite.search_text and "bravo" not in rewrite.search_text
    assert rewrite.context == "answer hotel"


def test_exchanges_from_messages_pairs_each_question_with_the_replies_after_it() -> None:
    messages = [
        {"role": "agent", "text": "Welcome! How can I help?"},  # before any question: no exchange to attach to
        {"role": "user", "text": "Can students get SNAP?"},
        {"role": "agent", "text": "Only with an exemption."},
        {"role": "agent", "text": "Work study is one."},
        {"role": "user", "text": "What about 20 hours of work?"},
        {"role": "user", "text": "And in summer?"},
        {"role": "agent", "text": "Breaks do not end student status."},
    ]
    assert exchanges_from_messages(messages) == [
        Exchange("Can students get SNAP?", "Only with an exemption. Work study is one."),
        Exchange("What about 20 hours of work?", ""),
        Exchange("And in summer?", "Breaks do not end student status."),
    ]
    assert exchanges_from_messages([]) == []
    assert exchanges_from_messages([{"role": "user"}]) == [Exchange("")]


def test_title_index_counts_titles_and_is_cached() -> None:
    calls = []

    def titles() -> list[str]:
        calls.append(1)
        return ["SNAP for students", "SNAP, SNAP and SNAP income limits", "WIC basics", "Medicaid renewals"]

    cached = CachedTitles(titles)
    index = cached()
    assert index.n_docs == 4
    assert index.counts["snap"] == 2  # titles containing the word, not occurrences
    assert index.counts["wic"] == 1 and isinstance(index.counts, Counter)
    assert index.acronyms == {"snap", "wic"}  # "Medicaid" starts its title: not known to be a name
    cached()
    assert len(calls) == 1  # cached within the time-to-live
    fresh = CachedTitles(titles, ttl_seconds=-1)
    fresh()
    fresh()
    assert len(calls) == 3  # expired: read again each time
    assert TitleIndex.of([]) == TitleIndex()

"""PII redaction: what is replaced, what policy text keeps, and that the stores only ever see redacted text."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from bot.config.settings import Settings
from bot.conversations.redacting import RedactingConversationStore, redact
from bot.conversations.store import AnswerRecord, HistoryTurn
from bot.wiring.open_stores import open_conversation_store
from bot.wiring.runtime import build_core
from rag.cite.rail import Citation
from rag.redaction import use_case_patterns


@pytest.mark.parametrize(("text", "expected"), [
    ("SSN 123-45-6789.", "SSN [ssn]."),
    ("her social is 123 45 6789", "her social is [ssn]"),
    ("ssn:123456789", "ssn:[ssn]"),
    ("call (555) 123-4567 today", "call [phone] today"),
    ("555-123-4567 or 555.123.4567", "[phone] or [phone]"),
    ("+1 555 123 4567", "[phone]"),
    ("1-800-221-5689", "[phone]"),
    ("cell 5551234567", "cell [phone]"),
    ("London +44 20 7946 0958", "London [phone]"),
    ("write to jane.doe+snap@example.org.", "write to [email]."),
    ("DOB: 01/02/1980", "DOB: [dob]"),
    ("born on March 3, 1975 in Ohio", "born on [dob] in Ohio"),
    ("date of birth is 1980-02-01", "date of birth is [dob]"),
    ("my birthday is 01/02/1980", "my birthday is [dob]"),
    ("Maria, 123-45-6789, maria@example.com, (555) 123-4567", "Maria, [ssn], [email], [phone]"),
])
def test_personal_data_is_replaced(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "Under 7 CFR 273.5 a student may qualify.",
    "The gross limit is $1,234 a month, or $2,345.67 for two.",
    "works at least 20 hours a week",
    "from January 1, 2025 to 01/15/2026 (FY 2024-2025)",
    "130 percent of the poverty line; section 1902(a)(10)(A)",
    "refer to the ZX-42 desk within 10 days",
    "a household of 3 with $123,456,789 in assets",
    "the amount $123456789",
    "version 1.2.3.4 of form 12-3456-789",
    "effective 2024-10-01",
    "",
])
def test_policy_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_what_an_answer_repeats_from_its_sources_is_public() -> None:
    quotes = "To apply, call Social Security at 1-800-772-1213 (TTY 1-800-325-0778) or write to help@ssa.gov."
    answer = "Call 1-800-772-1213 or help@ssa.gov; Maria (555-123-4567, maria@example.com) can also apply."
    assert redact(answer, quotes) == ("Call 1-800-772-1213 or help@ssa.gov; Maria ([phone], [email]) can also "
                                      "apply.")
    assert redact(answer) == "Call [phone] or [email]; Maria ([phone], [email]) can also apply."
    assert redact("born on March 3, 1975", "people born on March 3, 1975 or later") == "born on March 3, 1975"


def test_the_stores_get_redacted_turns_answers_and_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_conversation_store(Settings())  # SQLite, redaction on by default
    assert isinstance(store, RedactingConversationStore)
    try:
        question = "client 123-45-6789 at maria@example.com asks if students get SNAP"
        store.append_turn("k", HistoryTurn(question, question, "Yes, call 555-123-4567.", ["s.0"]), keep=5)
        quote = Citation(1, "d", "d::0", "d::0.0", "T", [], "https://x", None, "Call 1-800-221-5689 for help.")
        said = "Yes; the hotline is 1-800-221-5689, not 555-123-4567."
        store.save_answer(AnswerRecord("a1", "k", "slack", "U1", question, question, said, "answer", "concise",
                                       [quote]))
        store.record_feedback("a1", "U1", False, "wrong for DOB 01/02/1980, reach me at 555-123-4567")
        [turn] = store.history("k", 5)
        assert turn.question == "client [ssn] at [email] asks if students get SNAP"
        assert turn.answer == "Yes, call [phone]." and turn.cited_ids == ["s.0"]
        answer = store.get_answer("a1")
        assert answer is not None and answer.question == turn.question
        assert answer.citations[0].quote == "Call 1-800-221-5689 for help."  # public source text, kept verbatim
        assert answer.answer == "Yes; the hotline is 1-800-221-5689, not [phone]."  # what it repeats from it too
        [rating] = store.feedback("a1")
        assert rating.reason == "wrong for DOB [dob], reach me at [phone]"
    finally:
        store.close()
    monkeypatch.setenv("NAVIBOT_REDACT_PII", "false")
    plain = open_conversation_store(Settings())
    try:
        assert not isinstance(plain, RedactingConversationStore)
        assert plain.history("k", 5)[0].question.startswith("client [ssn]")  # what was stored stays redacted
    finally:
        plain.close()


@pytest.mark.parametrize("text", ["trace 123456789abc", "answer 5551234567ffe0", "id 123-45-6789Z"])
def test_ids_that_start_with_digits_are_not_personal_data(text: str) -> None:
    """Hex trace and answer ids begin with nine or ten digits now and then; a letter right after the digits
    shows the run is part of a longer token."""
    assert redact(text) == text


def test_a_unix_timestamp_is_not_a_phone_number() -> None:
    """A US area code never starts with 0 or 1, so a bare ten-digit run starting with 1 (a Unix time in a library's
    log line) is not a phone number."""
    assert redact("timestamp: 1795319003") == "timestamp: 1795319003"
    assert redact("call 5558675309 or 15558675309") == "call [phone] or [phone]"


# --- more shapes (after Microsoft Presidio's pattern recognizers), and an agency's own case numbers --------------

@pytest.mark.parametrize(("text", "expected"), [
    ("SSN 123.45.6789", "SSN [ssn]"),  # dotted
    ("SSN 123\u201345\u20136789", "SSN [ssn]"),  # en dashes (a word processor's autocorrect)
    ("SSN 123\u201445\u20146789 and 123\u221245\u22126789", "SSN [ssn] and [ssn]"),  # em dashes, minus signs
    ("SSN 123-\u200b45-67\u200c89", "SSN [ssn]"),  # zero-width characters pasted inside
    ("SSN 1\u200b2\u200b3\u200b4\u200b5\u200b6\u200b7\u200b8\u200b9", "SSN [ssn]"),
    ("call her at 555-0100", "call her at [phone]"),  # a seven-digit local number
    ("or 867.5309 after six", "or [phone] after six"),
    ("call 555\u2013867\u20135309", "call [phone]"),
    ("card 4111 1111 1111 1111 expires", "card [card] expires"),  # Luhn-valid, in groups of four
    ("card 4111-1111-1111-1111", "card [card]"),
    ("paid with 4012888888881881.", "paid with [card]."),
    ("amex 3782 822463 10005", "amex [card]"),  # 4-6-5
    ("A-number A123456789", "A-number [a-number]"),
    ("alien number A-12345678, USCIS", "alien number [a-number], USCIS"),
    ("green card A 123 456 789, or a12345678", "green card [a-number], or [a-number]"),
])
def test_more_shapes_of_personal_data_are_replaced(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "card 4111 1111 1111 1112",  # fails the Luhn check: not a card number
    "order 1234567890123",
    "at 1795430140750 ms (Luhn-valid, but a Unix time in milliseconds)",
    "Public Law 113-79, FY 2024-2025, Part A 2024",
    "Medicare Part A and Part B; Form I-130; form 12-3456-789",
    "between 9 a.m. and 5 p.m., 24/7, 1-2 weeks",
    "a 10000000 dollar fund",
])
def test_shapes_that_are_not_personal_data_are_kept(text: str) -> None:
    assert redact(text) == text


def test_an_agencys_case_numbers_are_replaced_after_start_up(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path,  # type: ignore[call-arg]
                        redact_patterns=[r"CASE-\d{6}", r"\b[A-Z]{2}\d{7}\b"])
    try:
        assert redact("case CASE-204518 / NY1234567") == "case CASE-204518 / NY1234567"
        build_core(settings, tmp_path / "k.sqlite3").close()  # start-up applies NAVIBOT_REDACT_PATTERNS everywhere
        assert redact("case CASE-204518 / NY1234567 under 7 CFR 273") == "case [case] / [case] under 7 CFR 273"
    finally:
        use_case_patterns([])


@pytest.mark.parametrize(("value", "parsed"), [
    (r"CASE-\d{6}", [r"CASE-\d{6}"]),
    (r"CASE-\d{6}  [A-Z]{2}\d{7,8}", [r"CASE-\d{6}", r"[A-Z]{2}\d{7,8}"]),  # commas belong to the regexes
    (r'["CASE \\d{6}"]', [r"CASE \d{6}"]),  # a JSON array for a pattern with a space
])
def test_case_patterns_are_read_from_the_environment(value: str, parsed: list[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_REDACT_PATTERNS", value)
    assert Settings(_env_file=None).redact_patterns == parsed  # type: ignore[call-arg]


@pytest.mark.parametrize(("value", "message"), [
    ("CASE-( ok", "NAVIBOT_REDACT_PATTERNS: pattern 1 'CASE-(' is not a valid regular expression (missing ), "
                  "unterminated subpattern at position 5)"),
    (r"CASE-\d+ \d*", "NAVIBOT_REDACT_PATTERNS: pattern 2 '\\\\d*' matches empty text"),
])
def test_a_bad_case_pattern_is_a_one_line_setting_error(value: str, message: str, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_REDACT_PATTERNS", value)
    assert main(["ask", "Can students get SNAP?"]) == 2
    assert capsys.readouterr().err == f"navibot: invalid setting: {message}\n"

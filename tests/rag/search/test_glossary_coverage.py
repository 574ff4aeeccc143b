"""The bundled glossary's breadth and hygiene: the file parses, no phrase is listed twice or only maps to itself,
and navigators' everyday words across 7 CFR 273 (and the other programs the bot ships words for) reach the terms
the regulation uses. A removed or mistyped entry fails here."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from rag.search.glossary import Glossary, bundled_path, match_key

REGULATION = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "snap" / "7-cfr-273.md"
# SNAP words whose rules live outside 7 CFR 273: disaster SNAP is 7 CFR 280, the FAFSA is federal student aid.
OUTSIDE_273 = {"D-SNAP", "disaster food stamps", "FAFSA"}
# One group per part of 7 CFR 273 and per program the bot ships words for.
GROUPS = ("snap", "snap-application", "snap-certification", "snap-household", "snap-students", "snap-work",
          "snap-income", "snap-deductions", "snap-resources", "snap-eligibility", "snap-special", "snap-immigrants",
          "snap-reporting", "snap-hearings", "snap-claims", "snap-alternatives", "snap-agency", "medicaid", "wic",
          "tanf", "ssi", "liheap", "tax-credits", "unemployment", "spelling")


def _key(phrase: str) -> str:
    """A phrase as the glossary matches it: lowercase words, punctuation and spacing ignored."""
    return " ".join("".join(c if c.isalnum() else " " for c in phrase.lower()).split())


@pytest.fixture(scope="module")
def bundled() -> dict[str, dict[str, list[str]]]:
    """Group -> phrase -> policy terms, as written in the file (a single term as a list of one)."""
    data = tomllib.loads(bundled_path().read_text(encoding="utf-8"))
    return {group: {phrase: [terms] if isinstance(terms, str) else list(terms) for phrase, terms in entries.items()}
            for group, entries in data.items() if isinstance(entries, dict)}


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    return Glossary()


def test_the_bundled_file_parses_into_many_phrases_in_its_groups(bundled: dict[str, dict[str, list[str]]],
                                                                 glossary: Glossary) -> None:
    phrases = sum(len(entries) for entries in bundled.values())
    assert phrases >= 900 and len(glossary) >= phrases  # an "&" phrase is also indexed with "and"
    for group in GROUPS:
        assert bundled.get(group), f"group [{group}] is missing or empty"


def test_no_phrase_is_listed_twice(bundled: dict[str, dict[str, list[str]]]) -> None:
    # Two entries the matcher reads as one phrase silently merge their terms: the same words spelt differently
    # ("re-cert", "re cert"), or differing only in an article, a possessive, an object pronoun, a verb's form or
    # shorthand ("withdraw the application" = "withdraw application", "lent her" = "lent him", "app date" =
    # "application date"). List the phrase once, with all its terms.
    phrases: dict[tuple[str, ...], list[str]] = {}
    for entries in bundled.values():
        for phrase in entries:
            phrases.setdefault(match_key(phrase), []).append(phrase)
    assert [same for same in phrases.values() if len(same) > 1] == []


def test_no_phrase_maps_only_to_itself(bundled: dict[str, dict[str, list[str]]]) -> None:
    def same(term: str, phrase: str) -> bool:
        return _key(term) in {_key(phrase), _key(phrase).removesuffix("s")} or _key(term).removesuffix("s") == \
            _key(phrase)

    idle = [phrase for entries in bundled.values() for phrase, terms in entries.items()
            if all(same(term, phrase) for term in terms)]
    assert idle == []


def test_no_policy_term_repeats_within_an_entry(bundled: dict[str, dict[str, list[str]]]) -> None:
    repeated = [phrase for entries in bundled.values() for phrase, terms in entries.items()
                if len({_key(t) for t in terms}) != len(terms)]
    assert repeated == []


# Navigators' words added for issue 16's breadth, one or two per part of 7 CFR 273 and per program.
@pytest.mark.parametrize(("question", "expected"), [
    # 273.1 household concept
    ("she has a live-in caregiver", ["live-in attendant"]),
    ("he's been couch surfing for a month", ["homeless individual"]),
    ("client is in detox", ["drug addiction or alcoholic treatment and rehabilitation program"]),
    ("can't cook for herself", ["unable to purchase and prepare meals"]),
    # 273.2 application processing
    ("can she sign over the phone", ["telephonic signature"]),
    ("she wants to cancel the application", ["withdrawing application"]),
    ("what counts as proof of address", ["residency", "verification"]),
    ("migrant farmworker family", ["migrant or seasonal farmworker"]),
    ("can her neighbor be an alternate shopper", ["authorized representative"]),
    ("she was a no show, can she reschedule the interview", ["missed interview", "rescheduling"]),
    ("what's the 30 day rule for processing", ["normal processing standard"]),
    ("he needs an interpreter for the office interview", ["bilingual", "face-to-face interview"]),
    # 273.4 citizenship and alien status
    ("she is a trafficking victim with a T visa", ["severe form of trafficking in persons"]),
    ("sponsor signed an affidavit of support", ["sponsored alien", "deeming"]),
    ("he overstayed, she's had her green card 2 yrs - 5 year rule?", ["ineligible alien", "five years"]),
    # 273.5 students, 273.7 work provisions, 273.24 time limit
    ("she goes to community college part time", ["institution of higher education"]),
    ("he's too sick to work, has a doctor's note", ["physically or mentally unfit for employment",
                                                    "statement from a physician"]),
    ("client turned down a job, what now", ["offer of employment", "suitable employment"]),
    ("how do they lift the sanction", ["ending disqualification"]),
    ("does E&T give a bus pass", ["participant reimbursements"]),
    ("he used his 3 months in 3 years", ["countable months", "three-year period"]),
    ("does looking for work count", ["job search"]),
    ("is a disabled vet exempt", ["veteran", "disability"]),
    ("aged out of foster care last year", ["24 years of age or younger"]),
    # 273.8 resources, 273.9 income and deductions, 273.10 benefit levels, 273.11 special circumstances
    ("she owns a home and a joint account with her son", ["home and surrounding property",
                                                          "jointly owned resources"]),
    ("he gave away his truck last month", ["transfer of resources"]),
    ("does a prepaid funeral plan count", ["funeral agreement"]),
    ("paid every other week, W2 job", ["biweekly", "wages"]),
    ("does her teen's job or birthday money count", ["earned income of an elementary or secondary school student",
                                                     "infrequently or irregularly"]),
    ("help from church and a loan from a friend", ["cash donations based on need", "loans"]),
    ("she gets workers comp and a VA check", ["workers' compensation", "veteran's"]),
    ("her mom pays the landlord directly", ["vendor payment"]),
    ("can he deduct copays, glasses and rides to the doctor",
     ["cost-sharing", "eye glasses", "transportation and lodging to obtain medical treatment"]),
    ("is the wifi or cell phone bill a utility", ["basic internet connection", "telephone"]),
    ("her meds and hospital bills", ["prescription drugs", "hospitalization"]),
    ("he does gig deliveries for Grubhub", ["self-employment"]),
    ("she picked up a side job", ["earned income", "wages"]),
    ("does a Pell grant count as income or is it not counted", ["income exclusions", "excluded"]),
    ("they're over income now", ["income eligibility standards"]),
    ("client just got out of prison", ["prerelease applicants"]),
    ("he's behind on child support", ["child support arrears"]),
    ("is the TANF sanction counted", ["comparable disqualifications"]),
    # 273.12 reporting, 273.13 notices, 273.14 recertification, 273.15 hearings
    ("does the 10 day rule apply to a new address", ["within 10 days", "changes in residence"]),
    ("she got an overpayment letter", ["demand letter", "claim"]),  # a longer phrase keeps the shorter's terms
    ("client got kicked off, no 10 day notice", ["termination", "notice of adverse action", "advance notice"]),
    ("she missed recert, is it too late", ["timely application for recertification"]),
    ("where does she send the renewal form", ["application for recertification"]),
    ("can he get aid paid pending and reschedule the hearing", ["continuation of benefits", "postponement"]),
    ("what's the appeal deadline", ["time period for requesting hearing"]),
    # 273.16 disqualification, 273.18 claims, subparts G and H
    ("second offense for selling food stamps", ["second occasion", "trafficking"]),
    ("lifetime ban or can she sign a DCA", ["permanently", "disqualification consent agreement"]),
    ("they'll garnish wages for the overpayed amount?", ["wage garnishment", "overissuance"]),
    ("family left TANF in March", ["transitional benefits"]),
    # the other programs, by the names states and navigators give them
    ("she gets CalFresh and MassHealth", ["SNAP", "Medicaid"]),
    ("on CalWORKs and SSD", ["Title IV-A", "social security disability insurance"]),
    ("got HEAP this winter", ["low income home energy assistance"]),
    ("the ACTC and her EIP", ["additional child tax credit", "economic impact payment"]),
    ("she was on PUA", ["pandemic unemployment assistance"]),
    # working for oneself, the deduction for working, selling benefits
    ("she works for herself cleaning houses", ["self-employment"]),
    ("he sells plates out of his house on weekends", ["self-employment"]),
    ("is there a deduction for people who work", ["earned income deduction"]),
    ("she sells her food stamps for cash", ["trafficking"]),
    # who is in the household
    ("a guy eats dinner with the family, is he on her case?", ["customarily purchase food and prepare meals together",
                                                             "household member"]),
    ("he pays for his meals and his room", ["boarder"]),
    ("can the baby be added to her case", ["household composition"]),
    ("her son is in high school and has a part time job", ["elementary or secondary school"]),
    ("her mom gives her $50 here and there", ["infrequently or irregularly"]),
    ("does she have to tell snap she moved", ["reporting requirements"]),
    ("how long can they be certified for", ["certification period"]),
])
def test_navigators_words_reach_the_regulations_terms(glossary: Glossary, question: str,
                                                       expected: list[str]) -> None:
    terms = glossary.expand(question).terms
    assert all(term in terms for term in expected), (question, terms)


@pytest.mark.skipif(not REGULATION.exists(), reason="7 CFR 273 is not next to the repository")
def test_the_snap_groups_use_the_regulations_own_words(bundled: dict[str, dict[str, list[str]]]) -> None:
    # A policy term the regulation never says only adds noise to the lexical search: every SNAP group's entry
    # has at least one term that 7 CFR 273 uses (a plural "s" allowed).
    text = " " + _key(REGULATION.read_text(encoding="utf-8")) + " "
    unused = [phrase for group, entries in bundled.items() if group.startswith("snap")
              for phrase, terms in entries.items() if phrase not in OUTSIDE_273
              and not any(f" {_key(t)} " in text or f" {_key(t)}s " in text for t in terms)]
    assert unused == []


# Navigators' own words for the rule a PARAGRAPH states (its run-in heading: "(d) Regaining eligibility.",
# "(n) Treasury's Offset Programs"), so that the paragraph, not only its section, ranks first.
@pytest.mark.parametrize(("question", "expected"), [
    ("she used up her 3 months, can she get back on snap", ["countable months", "regain eligibility"]),
    ("can he get an extra 3 months?", ["additional three-month eligibility"]),
    ("will the state take his tax refund", ["Treasury's Offset Program"]),
    ("does she have to pay it back if it was the worker's mistake", ["claim", "repayment"]),
    ("can they take it out of her benefits", ["allotment reduction"]),
    ("she missed a payment on the claim", ["determining delinquency"]),
    ("he wants to work off the overpayment", ["public service"]),
    ("how much savings can a family of 3 have", ["maximum allowable financial resources"]),
    ("the gift card money was mixed with savings", ["commingled"]),
    ("she turned in the application friday", ["filing an application", "filing date"]),
    ("the pay stub and the employer letter don't match", ["discrepancies"]),
    ("21 year old living with her parents", ["required household combinations", "under 22 years of age"]),
    ("her neighbor wants to shop for her", ["authorized representative"]),
    ("does she qualify for expedited", ["entitlement to expedited service"]),
    ("he missed E&T twice, is this his second sanction", ["failure to comply", "second occurrence"]),
    ("client won't name the father", ["cooperation with the State Child Support Agency"]),
    ("benefits stopped without notice", ["termination", "exemptions from notice"]),
    ("how do they file an appeal and can she see the case file", ["request for hearing", "examine the case file"]),
    ("she missed the hearing", ["denial or dismissal of request for hearing"]),
    ("he took a plea deal", ["deferred adjudication"]),
    ("what do they have to report", ["household responsibility to report"]),
    ("can she dispute the overpayment", ["fair hearings and claims"]),
    ("who has to pay the claim, her ex too?", ["responsible for paying a claim"]),
    ("she is caring for her disabled mother", ["responsible for the care"]),
    ("he lost his job last week, does he report it", ["change in the source of income"]),
    ("a plumber's work tools", ["tools of a tradesman"]),
    ("when is the recert deadline", ["timely application for recertification"]),
    ("she's no longer eligible, can she appeal", ["ineligible"]),
    ("he's paid weekly", ["convert the income to a monthly amount"]),
    ("she hid income from the worker", ["concealed or withheld facts"]),
    ("will the claim be deducted from her benefits", ["allotment reduction"]),
    ("what's the verification deadline", ["at least 10 days to provide required verification"]),
    ("she has an old OI from 2022", ["overissuance"]),
    ("she didn't turn in the six month report", ["fails to file a complete report"]),
    ("he won the lottery last week", ["substantial lottery or gambling winnings"]),
    ("can she bring a friend to the hearing", ["attendance at hearing"]),
    ("can she pay over time", ["installment payments"]),
    ("he is no longer exempt from the ABAWD rule", ["loss of an exception"]),
    ("can the sisters apply separately", ["separate household"]),
    ("how much can they have in the bank", ["maximum allowable financial resources"]),
    ("how far back can the overpayment go", ["six years"]),
])
def test_navigators_words_reach_the_paragraph_rule(glossary: Glossary, question: str, expected: list[str]) -> None:
    terms = glossary.expand(question).terms
    assert all(term in terms for term in expected), (question, terms)


# Session 10: the regulation's defined terms and paragraph titles (normal processing standard, delays in processing,
# same-day filing, authorized representative, durational residency, continuation of benefits, time period for
# requesting a hearing, transitional benefits) as a navigator says them on a call.
@pytest.mark.parametrize(("question", "expected"), [
    ("how long does the office have to process her application", ["normal processing standard"]),
    ("it's been five weeks and they still havent decided", ["delays in processing"]),
    ("can he apply today and bring the proofs later", ["same-day filing"]),
    ("can her son apply for her while she's in rehab", ["authorized representative"]),
    ("she moved from another state, is there a waiting period", ["durational residency requirements"]),
    ("will her benefits stay the same until the hearing", ["continuation of benefits"]),
    ("how many days to appeal a reduction", ["time period for requesting hearing"]),
    ("her TANF case closed last month", ["transitional benefits"]),
    ("what's the asset limit for a couple over 60", ["maximum allowable financial resources"]),
    ("she gets child support from the kids' dad", ["support or alimony payments"]),
    ("the group home provides meals", ["residents of an institution"]),
])
def test_navigators_words_reach_the_regulations_defined_terms(glossary: Glossary, question: str,
                                                              expected: list[str]) -> None:
    terms = glossary.expand(question).terms
    assert all(term in terms for term in expected), (question, terms)


def test_asking_whether_something_counts_is_not_asking_for_the_limit(glossary: Glossary) -> None:
    # "count toward the asset limit" is an exclusions question (273.8(e)), not the limit itself (273.8(b)).
    terms = glossary.expand("does her car count toward the asset limit").terms
    assert "resources" in terms and "maximum allowable financial resources" not in terms


def test_a_longer_phrase_keeps_a_shorter_ones_meaning_out(glossary: Glossary) -> None:
    # "over 60" means elderly; "over 60 days" is a processing delay (the longest phrase at a word wins).
    terms = glossary.expand("the application has been pending over 60 days").terms
    assert "delays beyond 60 days" in terms and "elderly" not in terms


def test_a_client_using_her_own_card_is_no_authorized_representative(glossary: Glossary) -> None:
    # "use her card" is someone else shopping for her OR her buying something: two meanings, so no entry.
    assert "authorized representative" not in glossary.expand("can he use his card at the farmers market").terms


def test_acronyms_other_programs_use_otherwise_are_left_out(glossary: Glossary) -> None:
    # SAR is also the FAFSA's Student Aid Report: not mapped to SNAP's semiannual report.
    assert "semiannual reporting" not in glossary.expand("how do I get my SAR after the FAFSA").terms


@pytest.mark.parametrize(("question", "unwanted"), [
    ("does community service count toward his work hours", "public service"),  # a claim paid by public service
    ("she is taking care of the paperwork today", "responsible for the care"),
    ("he stopped paying rent in May", "delinquent"),
    ("she reported it 7 days late", "seventh calendar day"),
])
def test_everyday_phrases_with_a_second_meaning_are_left_out(glossary: Glossary, question: str,
                                                            unwanted: str) -> None:
    assert unwanted not in glossary.expand(question).terms


def test_every_phrase_with_an_apostrophe_also_matches_without_it(glossary: Glossary) -> None:
    # Navigators type "cant", "doesnt", "wont", "clients fault": the matcher reads "can't" as "can t", so each
    # such phrase needs its apostrophe-less twin.
    data = tomllib.loads(bundled_path().read_text(encoding="utf-8"))
    phrases = [phrase for entries in data.values() if isinstance(entries, dict) for phrase in entries]
    missing = [phrase for phrase in phrases if "'" in phrase
               and _key(phrase.replace("'", "")) not in glossary.entries]
    assert missing == []
    assert "unable to purchase and prepare meals" in glossary.expand("she cant cook for herself").terms

"""Slack hardening (issue 15): requests nobody signed are refused before their body is parsed, never with a 500;
the 👎 reason form is accepted only for an answer of the chat it names; document and user text cannot add links,
mentions or markup to what the bot posts.

The real slack-bolt app behind aiohttp against the fake Slack Web API (as tests/adapters/slack/test_slack.py), and one
test against a real `navibot serve` subprocess (benchmarks/serve_harness.py), the way an attacker would reach it."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from adapters.slack.blocks import (
    ACTION_FEEDBACK,
    ACTION_SHOW_QUOTES,
    MAX_BLOCKS,
    REASON_BLOCK,
    REASON_INPUT,
    VIEW_REASON,
    AnswerView,
    answer_message,
    feedback_confirmation,
    link_url,
    mrkdwn_link,
    plain_message,
    reason_modal,
)
from benchmarks.serve_harness import SECRET as SERVE_SECRET
from benchmarks.serve_harness import ServeHarness
from bot.config.settings import Settings
from bot.observability.metrics import Metrics
from bot.wiring.runtime import build_bot
from rag.cite.rail import Citation
from tests.adapters.slack.test_slack import SECRET as SLACK_SECRET
from tests.adapters.slack.test_slack import Harness, answer_id_of, blocks_of
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, serve_http

SECRET = SLACK_SECRET  # what the Harness of tests/adapters/slack/test_slack.py signs with
DEPTH = 50_000
DEEP_ARRAY = "[" * DEPTH + "]" * DEPTH
DEEP_OBJECT = '{"a":' * DEPTH + "1" + "}" * DEPTH
DEEP_FORM = urlencode({"payload": DEEP_ARRAY})  # 300 kB: under the 1 MB body limit
EVIL_TITLE = "<!here> Reset your password <https://evil.example|benefits.gov>"
EVIL_DOC = f"""---
title: "{EVIL_TITLE}"
url: "https://x|<!channel>"
---
# Zebrafinch allowance

The zebrafinch allowance pays households 40 dollars a month for bird seed. Apply at the county office.
"""
SCRIPT_DOC = """---
title: Zebrafinch allowance forms
url: "javascript:alert(document.cookie)"
---
# Zebrafinch allowance forms

Zebrafinch allowance forms are kept at the county office; the zebrafinch allowance needs form ZF-1.
"""


# --- the app on a bot whose knowledge base holds two malicious documents -------------------------------------------

@pytest.fixture(scope="module")
def hardened(demo_store: Path) -> Iterator[tuple[Harness, Metrics]]:
    folder = demo_store.parent
    kb = folder / "evil_kb"
    kb.mkdir(exist_ok=True)
    (kb / "evil.md").write_text(EVIL_DOC, encoding="utf-8")
    (kb / "script.md").write_text(SCRIPT_DOC, encoding="utf-8")
    settings = Settings(_env_file=None, data_dir=folder)  # type: ignore[call-arg]
    bot = build_bot(settings, demo_store, folder / "conversations.sqlite3")
    assert bot.core.ingestor.ingest_paths([kb]).ingested == 2
    metrics = Metrics()
    bot.observers.add(metrics)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    served = asyncio.run_coroutine_threadsafe(serve_http(bot, SECRET), loop).result(30)
    harness = Harness(loop, served.fake, served.slack, bot, served.url, served.session)
    yield harness, metrics
    harness.run(served.stop())
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    bot.close()


def bad_requests(metrics: Metrics) -> float:
    return metrics.errors.values.get((("kind", "bad_request"), ("platform", "slack")), 0.0)


def raw_post(harness: Harness, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    async def send() -> tuple[int, str]:
        async with harness.session.post(harness.url, data=body, headers=headers) as response:
            return response.status, await response.text()
    return harness.run(send())


def signed(body: str, secret: str = SECRET, content_type: str = "application/json") -> dict[str, str]:
    ts = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": content_type}


def refused_once(caplog: pytest.LogCaptureFixture, status: int) -> None:
    """Exactly one short WARNING line for the refusal; no traceback, no ERROR anywhere."""
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    lines = [r.getMessage() for r in caplog.records if r.name == "adapters.slack.app"]
    assert len(lines) == 1 and f"({status})" in lines[0] and len(lines[0]) < 200 and "\n" not in lines[0], lines


MENTION = json.dumps({"type": "event_callback", "team_id": TEAM_ID, "event_id": "EvHardening", "event": {
    "type": "app_mention", "user": "U0EVE", "text": f"<@{BOT_USER_ID}> hi", "ts": "1.000001", "channel": "C0EVE"}})


@pytest.mark.parametrize("headers", [
    {"X-Slack-Request-Timestamp": "abc", "X-Slack-Signature": "v0=" + "0" * 64},  # int() in is_valid: ValueError
    {"X-Slack-Request-Timestamp": "9" * 5000, "X-Slack-Signature": "v0=00"},  # beyond int()'s 4,300 digits
    {"X-Slack-Request-Timestamp": "NOW", "X-Slack-Signature": "v0=\u00e9" * 8},  # compare_digest: TypeError
    {"X-Slack-Request-Timestamp": "NOW"},  # no signature at all
    {"X-Slack-Request-Timestamp": "NOW", "X-Slack-Signature": "v0=" + "0" * 64},  # a plain forgery
], ids=["word-timestamp", "huge-timestamp", "non-ascii-signature", "no-signature", "wrong-signature"])
def test_unsigned_requests_with_odd_headers_get_401_a_count_and_one_line(
        hardened: tuple[Harness, Metrics], headers: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    harness, metrics = hardened
    headers = {k: str(int(time.time())) if v == "NOW" else v for k, v in headers.items()}
    before = bad_requests(metrics)
    with caplog.at_level(logging.INFO):
        status, _ = raw_post(harness, MENTION.encode(), {**headers, "Content-Type": "application/json"})
    assert status == 401
    assert bad_requests(metrics) == before + 1
    refused_once(caplog, 401)
    assert not harness.fake.of("chat.postMessage", "C0EVE") and not harness.fake.of("reactions.add", "C0EVE")


@pytest.mark.parametrize(("body", "content_type"), [
    (DEEP_ARRAY, "application/json"), (DEEP_OBJECT, "application/json"),
    (DEEP_FORM, "application/x-www-form-urlencoded"),
], ids=["array", "object", "form-payload"])
def test_json_nested_50000_deep_is_refused_unsigned_401_and_signed_400(
        hardened: tuple[Harness, Metrics], body: str, content_type: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """Unsigned: refused before Bolt parses it (401). Even signed (only Slack could sign it), Bolt's json.loads hits
    the recursion limit: a 400, never a RecursionError escaping as a 500."""
    harness, metrics = hardened
    before = bad_requests(metrics)
    with caplog.at_level(logging.INFO):
        status, _ = raw_post(harness, body.encode(), {"X-Slack-Request-Timestamp": "abc",
                                                      "X-Slack-Signature": "v0=00", "Content-Type": content_type})
    assert status == 401
    refused_once(caplog, 401)
    caplog.clear()
    with caplog.at_level(logging.INFO):
        status, _ = raw_post(harness, body.encode(), signed(body, content_type=content_type))
    assert status == 400
    refused_once(caplog, 400)
    assert bad_requests(metrics) == before + 2


def test_other_bodies_that_broke_the_parser_are_refused_without_a_500(
        hardened: tuple[Harness, Metrics], caplog: pytest.LogCaptureFixture) -> None:
    harness, metrics = hardened
    before = bad_requests(metrics)
    with caplog.at_level(logging.INFO):
        # A charset Python does not know (LookupError in aiohttp's request.text()), signed.
        headers = {**signed(MENTION), "Content-Type": "application/json; charset=no-such-codec"}
        assert raw_post(harness, MENTION.encode(), headers)[0] == 400
        # Not UTF-8, with a fresh timestamp (is_valid decodes the body: UnicodeDecodeError).
        assert raw_post(harness, b'{"a": "\xff"}', signed("x"))[0] == 401
        # Over aiohttp's 1 MB body limit.
        assert raw_post(harness, b"{" + b" " * 1_100_000 + b"}", signed("x"))[0] == 413
    assert bad_requests(metrics) == before + 3
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    assert len([r for r in caplog.records if r.name == "adapters.slack.app"]) == 3


def test_signed_requests_still_work(hardened: tuple[Harness, Metrics]) -> None:
    harness, metrics = hardened
    before = bad_requests(metrics)
    body = json.dumps({"type": "url_verification", "challenge": "c-9", "token": "t"})
    assert raw_post(harness, body.encode(), signed(body)) == (200, '{"challenge": "c-9"}')
    assert bad_requests(metrics) == before


# --- the 👎 reason form --------------------------------------------------------------------------------------------

def submit_reason(harness: Harness, user: str, metadata: Any, reason: str) -> tuple[int, str]:
    status, body, _ = harness.interact({
        "type": "view_submission", "user": {"id": user, "team_id": TEAM_ID},
        "view": {"id": "V0REASON", "type": "modal", "callback_id": VIEW_REASON,
                 "private_metadata": metadata if isinstance(metadata, str) else json.dumps(metadata),
                 "state": {"values": {REASON_BLOCK: {REASON_INPUT: {"type": "plain_text_input", "value": reason}}}}}})
    return status, body


def test_a_reason_form_naming_another_chats_answer_is_refused_and_records_nothing(
        hardened: tuple[Harness, Metrics]) -> None:
    harness, _ = hardened
    home, other = "C" + uuid.uuid4().hex[:9].upper(), "C" + uuid.uuid4().hex[:9].upper()
    _, reply = harness.mention(home, "Can college students get SNAP?")
    answer_id = answer_id_of(reply)
    harness.click(reply, home, "U0BOB", ACTION_FEEDBACK, f"not_helpful:{answer_id}", "feedback_buttons")
    harness.run(harness.fake.wait_for("chat.postEphemeral", 1, home))

    # Edited forms: the answer of `home`, but another chat; no chat at all; metadata that is not an object.
    for user, metadata in [("U0BOB", {"answer_id": answer_id, "channel": other}),
                           ("U0MALLORY", {"answer_id": answer_id, "channel": other}),
                           ("U0MALLORY", {"answer_id": answer_id}),
                           ("U0MALLORY", [answer_id, home])]:
        status, body = submit_reason(harness, user, metadata, "forged reason")
        assert status == 200
        refusal = json.loads(body)
        assert refusal["response_action"] == "errors" and refusal["errors"][REASON_BLOCK], body
    harness.settle()
    feedback = harness.bot.conversations.feedback(answer_id)
    assert [(f.user, f.helpful, f.reason) for f in feedback] == [("U0BOB", False, None)], "nothing was recorded"
    assert not harness.fake.of("chat.postEphemeral", other), "no confirmation in the other chat"

    status, body = submit_reason(harness, "U0BOB", {"answer_id": answer_id, "channel": home}, "wrong program")
    assert (status, body) == (200, "")
    [saved] = harness.bot.conversations.feedback(answer_id)
    assert (saved.user, saved.reason) == ("U0BOB", "wrong program")


# --- markup from documents and from users -------------------------------------------------------------------------

LINK = re.compile(r"<([^<>|]*)\|([^<>]*)>")
SAFE_LINK = re.compile(r"https?://[^\s<>|]+")


def mrkdwn_texts(node: Any) -> list[str]:
    """Every mrkdwn string in a block tree (what Slack parses for links and mentions)."""
    if isinstance(node, dict):
        found = [node["text"]] if node.get("type") == "mrkdwn" else []
        return found + [t for v in node.values() for t in mrkdwn_texts(v)]
    if isinstance(node, list):
        return [t for v in node for t in mrkdwn_texts(v)]
    return []


def link_urls(node: Any) -> list[str]:
    """Every URL a rich_text link element opens."""
    if isinstance(node, dict):
        found = [node["url"]] if node.get("type") == "link" else []
        return found + [u for v in node.values() for u in link_urls(v)]
    if isinstance(node, list):
        return [u for v in node for u in link_urls(v)]
    return []


def assert_inert(blocks: list[dict[str, Any]], text: str) -> None:
    """No mention, no link but to a clean http(s) URL, in any mrkdwn (blocks and the fallback text); mrkdwn is
    verbatim (Slack adds no links or mentions of its own); rich-text links only to clean http(s) URLs."""
    for mrkdwn in [*mrkdwn_texts(blocks), text]:
        without_links = LINK.sub("", mrkdwn)
        assert "<" not in without_links and ">" not in without_links, mrkdwn
        for url, label in LINK.findall(mrkdwn):
            assert SAFE_LINK.fullmatch(url), url
            assert "|" not in label
    for node in blocks:
        for obj in [node.get("text"), *(node.get("elements") or [])]:
            if isinstance(obj, dict) and obj.get("type") == "mrkdwn":
                assert obj.get("verbatim") is True, obj
    for url in link_urls(blocks):
        assert SAFE_LINK.fullmatch(url), url


def evil_citation(n: int, url: str | None, title: str = EVIL_TITLE) -> Citation:
    return Citation(number=n, doc_id=f"kb/evil{n}", chunk_id=f"kb/evil{n}::0", sub_id=f"kb/evil{n}::0.0",
                    title=title, heading_path=["<!channel>", "<#C0GENERAL>"], url=url, page=None,
                    quote="Zebrafinch <!everyone> allowance " * 5)


TABLE_ROW_CITATION = Citation(
    number=2, doc_id="7-cfr-273", chunk_id="7-cfr-273::397", sub_id="7-cfr-273::397.20", title="7 CFR Part 273",
    heading_path=["§ 273.18 Claims against households.", "(g) Collection methods", "(iii)"], url=None, page=None,
    quote="| Amount in excess of the resource limit | Period of disqualification (months) |\n|---|---|\n"
          "| (iii) For an IHE or AE claim, limit the amount reduced to <!here> $10 | the household agrees. |")


def test_a_quoted_table_row_renders_inert() -> None:
    view = AnswerView("a1", "As a State agency, you must (iii) limit it [1].", "concise", [TABLE_ROW_CITATION], "q",
                      "q")
    for expanded in (False, True):
        message = answer_message(view, expanded=expanded)
        assert_inert(message.blocks, message.text)


EVIL_URLS = ["https://x|<!channel>", "javascript:alert(1)", "https://ok.example/a b", "https://ok.example/>",
             "https://ok.example/\u202eexe.fdp", "data:text/html,<b>x</b>", "https://", "//evil.example/",
             "https://ok.example/?a=1&b=2"]


@pytest.mark.parametrize(("url", "linked"), [
    ("https://benefits.example.gov/snap#:~:text=Students", True), ("HTTP://benefits.example.gov/", True),
    ("https://ok.example/?a=1&b=2", True), ("https://x|<!channel>", False), ("javascript:alert(1)", False),
    ("https://ok.example/a b", False), ("https://ok.example/>", False), ("https://ok.example/\u202eexe.fdp", False),
    ("https://ok.example/\nx", False), ("data:text/html,x", False), ("https://", False), ("//evil.example/", False),
    ("https://[::1", False), ("https://ok.example/" + "a" * 1000, False), (None, False), ("", False),
])
def test_only_clean_web_urls_are_linked(url: str | None, linked: bool) -> None:
    assert link_url(url) == (url if linked else None)
    shown = mrkdwn_link(url, "[1] <!here> a|b\nc")
    assert shown.endswith("[1] &lt;!here&gt; a¦b c>" if linked else "[1] &lt;!here&gt; a¦b c")
    if linked:
        assert shown.startswith("<" + (url or "").replace("&", "&amp;") + "|")


def test_malicious_citations_render_inert_collapsed_and_expanded_with_more_sources() -> None:
    """Sixty citations, so the last ones go into the "+N more sources" mrkdwn line, with every kind of bad URL."""
    citations = [evil_citation(i + 1, EVIL_URLS[i % len(EVIL_URLS)]) for i in range(60)]
    answer = "The allowance is paid <!here> monthly [1]. See <https://evil.example|the form> &amp; call #general."
    view = AnswerView("a1", answer, "<!channel>", citations, "q <!here>", "standalone <!everyone>")
    for expanded in (False, True):
        message = answer_message(view, expanded=expanded)
        assert len(message.blocks) <= MAX_BLOCKS
        assert_inert(message.blocks, message.text)
    expanded_blocks = answer_message(view, expanded=True).blocks
    [more] = [t for t in mrkdwn_texts(expanded_blocks) if t.startswith("+")]
    assert "more sources" in more and "&lt;!here&gt;" in more
    assert "https://ok.example/?a=1&amp;b=2|" in more, "a clean URL with & is linked, & escaped as Slack asks"
    assert "javascript:" not in json.dumps(expanded_blocks)
    assert not [u for u in link_urls(expanded_blocks) if "|" in u or not u.startswith("http")]


def test_a_malicious_document_and_a_malicious_command_post_no_mention_and_no_disguised_link(
        hardened: tuple[Harness, Metrics]) -> None:
    """End to end: the documents above in the knowledge base, asked about, quotes shown; `/navibot mood` echoing a
    link and a broadcast mention back."""
    harness, _ = hardened
    ch = "C" + uuid.uuid4().hex[:9].upper()
    cited: set[str] = set()
    for n, question in enumerate(["how much does the zebrafinch allowance pay households a month for bird seed?",
                                  "which form does the zebrafinch allowance need?"]):
        _, reply = harness.mention(ch, question)
        answer_id = answer_id_of(reply)
        record = harness.bot.conversations.get_answer(answer_id)
        assert record is not None
        cited |= {c.doc_id.rsplit("/", 1)[-1] for c in record.citations}
        assert_inert(reply.args["blocks"], reply.args["text"])
        harness.click(reply, ch, "U0BOB", ACTION_SHOW_QUOTES, answer_id)
        update = harness.run(harness.fake.wait_for("chat.update", n + 1, ch))[n]
        assert blocks_of(update, "rich_text"), "the quotes are shown"
        assert_inert(update.args["blocks"], update.args["text"])
        assert "javascript:" not in json.dumps(update.args["blocks"])
    assert {"evil", "script"} <= cited, cited  # both malicious pages were quoted

    # Slack sends a link and @here the user wrote as markup; literal brackets the user typed arrive escaped.
    for text in ["mood <https://evil.example/reset|Reset-password>", "mood <!here>", "mood &lt;!channel&gt;",
                 "mood &lt;https://evil.example|x&gt;"]:
        response_id = harness.command(ch, "U0EVE", text)
        response = harness.run(harness.fake.wait_for_response(response_id))
        assert_inert(response.get("blocks") or [], response["text"])
        assert "<!" not in response["text"] and "<https://evil" not in response["text"]
    response = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0EVE", "mood &lt;!channel&gt;")))
    assert "&lt;!channel&gt;" in response["text"], "shown as the user typed it, as text"


def test_slash_ask_mentions_only_a_real_user_id(hardened: tuple[Harness, Metrics]) -> None:
    """`/navibot ask` posts "<@user> asked: ..." in the channel: a user id that is not one (Slack never sends such,
    but the field is echoed into mrkdwn) is not written into the markup."""
    harness, _ = hardened
    for user, expected in [("U0FRAN", "<@U0FRAN> asked: "), ("U0X>|<!channel", "Someone asked: "),
                           ("<!here>", "Someone asked: ")]:
        ch = "C" + uuid.uuid4().hex[:9].upper()
        harness.command(ch, user, "ask Can college students get SNAP?")
        question = harness.run(harness.fake.wait_for("chat.postMessage", 1, ch))[0]
        assert question.args["text"].startswith(expected) and "<!" not in question.args["text"]
        harness.run(harness.fake.wait_for("chat.postMessage", 2, ch))  # the answer, before the next one


def test_plain_replies_are_escaped_and_verbatim() -> None:
    message = plain_message("I don't know the mood '<!here>' or <https://evil.example|this>.")
    assert_inert(message.blocks, message.text)


# --- the same attacks against a real `navibot serve` ---------------------------------------------------------------

def test_navibot_serve_refuses_the_attacks_without_a_traceback(demo_store: Path, tmp_path: Path) -> None:
    """The attack requests the benchmark replays, against the real server process: the status each gets, the
    count in /metrics, one log line each and not one traceback."""
    harness = ServeHarness(tmp_path / "serve", store=demo_store, providers=False).start()
    attacks: list[tuple[str, bytes, dict[str, str], int]] = [
        ("word timestamp", MENTION.encode(), {"X-Slack-Request-Timestamp": "abc", "X-Slack-Signature": "v0=00",
                                              "Content-Type": "application/json"}, 401),
        ("deep JSON, unsigned", DEEP_ARRAY.encode(), {"X-Slack-Request-Timestamp": str(int(time.time())),
                                                      "X-Slack-Signature": "v0=00",
                                                      "Content-Type": "application/json"}, 401),
        ("deep form payload, unsigned", DEEP_FORM.encode(), {"X-Slack-Request-Timestamp": "abc",
                                                             "Content-Type": "application/x-www-form-urlencoded"},
         401),
        ("deep JSON, signed", DEEP_OBJECT.encode(), signed(DEEP_OBJECT, SERVE_SECRET), 400),
        ("deep form payload, signed", DEEP_FORM.encode(),
         signed(DEEP_FORM, SERVE_SECRET, "application/x-www-form-urlencoded"), 400),
    ]
    try:
        async def post(body: bytes, headers: dict[str, str]) -> int:
            assert harness.session is not None
            async with harness.session.post(f"{harness.url}/slack/events", data=body, headers=headers) as response:
                return response.status
        statuses = [harness.loop.run(post(body, headers)) for _, body, headers, _ in attacks]
        _, metrics, _ = harness.get("/metrics")
    finally:
        assert harness.stop() == 0
    assert statuses == [expected for *_, expected in attacks]
    assert f'navibot_errors_total{{kind="bad_request",platform="slack"}} {len(attacks)}' in metrics
    log = harness.log_path.read_text()
    assert "Traceback" not in log and "RecursionError" not in log.replace("(RecursionError)", "")
    assert log.count("slack: refused a request to /slack/events") == len(attacks)


# --- the official Block Kit types ---------------------------------------------------------------------------------

# .ci/run installs typescript and @slack/types into tests/node (npm ci --prefix tests/node); another folder with
# both installed can be named with NAVIBOT_SLACK_TYPES_DIR.
SLACK_TYPES_DIR = os.environ.get("NAVIBOT_SLACK_TYPES_DIR") or str(Path(__file__).parents[2] / "node")


@pytest.mark.skipif(not (Path(SLACK_TYPES_DIR) / "node_modules" / "@slack" / "types").is_dir(),
                    reason="run `npm ci --prefix tests/node` (as .ci/run does) for the official @slack/types check")
def test_generated_block_kit_type_checks_against_the_official_slack_types(tmp_path: Path) -> None:
    """Every kind of message and the modal, malicious citations included, as TypeScript literals typed with
    @slack/types (KnownBlock[], ModalView): `tsc --strict --noEmit` refuses an unknown block, field or value."""
    citations = [evil_citation(i + 1, EVIL_URLS[i % len(EVIL_URLS)]) for i in range(60)]
    citations[1] = TABLE_ROW_CITATION  # an extractive answer quotes a table's row as stored, pipes and all
    view = AnswerView("a1", "The allowance is paid <!here> monthly [1].", "concise", citations, "q", "other q")
    messages = [answer_message(view), answer_message(view, expanded=True), plain_message("Hello <!here>"),
                feedback_confirmation(False, "a1"), feedback_confirmation(True, "a1")]
    lines = ['import type { KnownBlock, ModalView } from "@slack/types";']
    lines += [f"export const message{i}: KnownBlock[] = {json.dumps(m.blocks)};" for i, m in enumerate(messages)]
    lines.append(f"export const modal: ModalView = {json.dumps(reason_modal(json.dumps({'answer_id': 'a1'}), 2000))};")
    source = Path(SLACK_TYPES_DIR) / f"navibot_blocks_{uuid.uuid4().hex[:8]}.ts"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        tsc = Path(SLACK_TYPES_DIR) / "node_modules" / ".bin" / "tsc"
        done = subprocess.run([str(tsc), "--strict", "--noEmit", "--target", "es2022", "--module", "nodenext",
                               str(source)], cwd=SLACK_TYPES_DIR, capture_output=True, text=True, timeout=300,
                              check=False)
    finally:
        source.unlink()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]

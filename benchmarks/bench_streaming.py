"""Streamed answers in Slack's assistant pane: how soon a navigator sees work, each verified sentence, the whole answer.

    python benchmarks/bench_streaming.py            # about a minute; updates benchmarks/RESULTS.md
    python benchmarks/bench_streaming.py --quick    # fewer questions; does not update RESULTS.md unless --write

How (benchmarks/serve_harness.py): this virtualenv's `navibot serve` runs as a subprocess on the demo knowledge base
(local embedder) in Slack HTTP mode against the fake Slack Web API (tests/fakes/fake_slack.py), with
NAVIBOT_LLM=gemini against the fake Gemini of this process, which streams its answer through the real google-genai
client (tests/fakes/fake_gemini_stream.py) at a realistic pace: the first token after 400 ms, then 60 tokens a
second (about four characters each). Events are signed as Slack signs them. One clock (time.monotonic, in this
process) stamps the fake model's tokens as it sends them and the fake Slack's calls as they arrive.

1. First sign of work: 50 questions at once, each in its own assistant thread (assistant_thread_started first).
   Time from the POST of the message event to the fake Slack receiving that thread's first
   assistant.threads.setStatus. (A mention outside the pane gets the :eyes: reaction instead; bench_server.py
   measures the acknowledgement and the answer there.)
2. Teams: 50 questions at once, each in its own personal chat, through the real Agents SDK in this process against
   the fake Bot Connector (tests/fakes/fake_connector.py): the activity POST to the typing indicator, and to the
   streaming response's informative update.
3. Sentence by sentence: questions one at a time whose fake answer has three sentences, each citing a retrieved
   paragraph. For each sentence: the time the model sent the token ending it (its full stop) to the time the fake
   Slack received the chat.startStream/appendStream call carrying it. Whole answer: the model's last token to the
   chat.stopStream (the quotes and buttons).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from aiohttp import web
from pydantic import SecretStr

from benchmarks.results_file import machine_load, publish
from benchmarks.serve_harness import ServeHarness
from tests.fakes.fake_connector import FakeConnector
from tests.fakes.fake_gemini_stream import FakeStreamingGemini
from tests.fakes.fake_models import PARAGRAPH, FakeGemini
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID

QUESTIONS = ["Can college students get SNAP?", "Who can get WIC?", "How do I apply for Medicaid?",
             "What counts as income for SNAP?", "Can a student who works 20 hours get SNAP?"]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def three_sentences(body: dict[str, Any]) -> str:
    found = [(sub_id, text.strip().split(". ")[0].rstrip(".:")) for sub_id, text in
             PARAGRAPH.findall(FakeGemini.text_of(body)) if "&" not in text and "[" not in text][::-1]
    picked = (found * 3)[:3]
    return " ".join(f"{sentence} [{sub_id}]." for sub_id, sentence in picked)


def sentence_ends(sent: list[tuple[float, str]]) -> list[float]:
    """When the model sent the full stop of each sentence: every sentence of the fake answer ends "[id]."."""
    text, times = "", []
    for at, token in sent:
        text += token
        times.extend([at] * len(token))
    return [times[i + 1] for i in range(len(text) - 1) if text[i:i + 2] == "]."]


class Bench:
    def __init__(self, harness: ServeHarness, gemini: FakeStreamingGemini) -> None:
        self.harness = harness
        self.fake = harness.slack
        self.gemini = gemini

    async def event(self, event: dict[str, Any]) -> float:
        envelope = {"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                    "event": event, "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
                    "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]}
        status, sent, _ = await self.harness._post(json.dumps(envelope), "application/json")
        assert status == 200, status
        return sent

    async def open_thread(self) -> tuple[str, str]:
        channel, thread_ts = "D" + uuid.uuid4().hex[:9].upper(), f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        await self.event({"type": "assistant_thread_started", "event_ts": thread_ts, "assistant_thread": {
            "user_id": "U0NAV", "channel_id": channel, "thread_ts": thread_ts, "context": {}}})
        return channel, thread_ts

    async def ask(self, channel: str, thread_ts: str, text: str) -> float:
        ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        return await self.event({"type": "message", "channel": channel, "channel_type": "im", "user": "U0NAV",
                                 "text": text, "ts": ts, "thread_ts": thread_ts, "event_ts": ts, "team": TEAM_ID})

    async def until_answered(self, channels: list[str], timeout: float = 120.0) -> None:
        """Until each channel has its answer (a stopStream, or a posted message after the greeting)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = {c.args.get("channel") for c in self.fake.calls if c.method == "chat.stopStream"}
            posted = [c.args.get("channel") for c in self.fake.calls if c.method == "chat.postMessage"]
            if all(ch in done or posted.count(ch) >= 2 for ch in channels):
                break
            await asyncio.sleep(0.05)

    def first(self, method: str, channel: str) -> float | None:
        return next((c.at for c in self.fake.calls if c.method == method and channel in (
            c.args.get("channel"), c.args.get("channel_id"))), None)

    async def first_sign(self, n: int) -> list[float]:
        threads = [await self.open_thread() for _ in range(n)]
        await self.fake.wait_for("assistant.threads.setSuggestedPrompts", n, timeout=60)
        sent = await asyncio.gather(*(self.ask(c, t, QUESTIONS[i % len(QUESTIONS)])
                                      for i, (c, t) in enumerate(threads)))
        await self.until_answered([c for c, _ in threads])
        delays = []
        for (channel, _), at in zip(threads, sent, strict=True):
            status = self.first("assistant.threads.setStatus", channel)
            assert status is not None, f"no status in {channel}"
            delays.append((status - at) * 1000)
        return delays

    async def sentences(self, n: int) -> tuple[list[float], list[float], int]:
        self.gemini.first_token_delay, self.gemini.tokens_per_second = 0.4, 60.0
        self.gemini.stream_reply = three_sentences
        per_sentence: list[float] = []
        whole: list[float] = []
        streams = 0
        for i in range(n):
            channel, thread_ts = await self.open_thread()
            await self.fake.wait_for("assistant.threads.setSuggestedPrompts", 1, timeout=30)
            self.gemini.sent.clear()
            await self.ask(channel, thread_ts, QUESTIONS[i % len(QUESTIONS)])
            await self.until_answered([channel])
            calls = [c for c in self.fake.calls if c.args.get("channel") == channel and c.method in (
                "chat.startStream", "chat.appendStream", "chat.stopStream")]
            if not calls:
                continue
            streams += 1
            ends = sentence_ends(self.gemini.sent)
            received: list[tuple[float, int]] = []  # (arrival, sentences shown so far)
            shown = 0
            for call in calls:
                text = "".join(str(c.get("text", "")) for c in call.args.get("chunks") or [])
                shown += text.count("].")
                received.append((call.at, shown))
            for k, end in enumerate(ends, start=1):
                arrival = next((at for at, count in received if count >= k), None)
                if arrival is not None and calls[0].method == "chat.startStream":
                    per_sentence.append((arrival - end) * 1000)
            last_token = self.gemini.sent[-1][0]
            whole.append((calls[-1].at - last_token) * 1000)
        return per_sentence, whole, streams


class StampedConnector(FakeConnector):
    """The fake Bot Connector, noting when each activity arrived (and its streaminfo type)."""

    def __init__(self) -> None:
        super().__init__()
        self.stamps: list[tuple[float, str, str]] = []  # (arrival, conversation, "typing" / "informative" / ...)

    async def _post(self, request: web.Request) -> web.Response:
        arrived = time.monotonic()
        response = await super()._post(request)
        call = self.calls[-1] if self.calls else None
        if call is not None:
            info: dict[str, Any] = next(
                (e for e in call.body.get("entities") or [] if e.get("type") == "streaminfo"), {})
            self.stamps.append((arrived, call.conversation_id, str(info.get("streamType") or call.type)))
        return response


def teams_first_sign(folder: Path, store: Path, gemini: FakeStreamingGemini,
                     n: int) -> tuple[list[float], list[float]]:
    """n questions at once, each in its own Teams personal chat (the real Agents SDK in this process, the fake
    Bot Connector): the POST to the typing indicator, and to the informative update of the SDK's stream."""
    from adapters.teams.settings import TeamsSettings
    from bot.config.settings import Settings
    from bot.wiring.runtime import build_bot
    from tests.adapters.teams.test_teams import message, running

    settings = Settings(_env_file=None, data_dir=folder, llm="gemini",  # type: ignore[call-arg]
                        gemini_api_keys=[SecretStr("bench-key")], gemini_base_urls=[gemini.url])
    bot = build_bot(settings, store, folder / "teams-conversations.sqlite3")

    async def scenario() -> tuple[list[float], list[float]]:
        connector = StampedConnector()
        async with running(bot, TeamsSettings(_env_file=None), connector) as h:  # type: ignore[call-arg]
            chats = [f"a:1bench{i:03d}" for i in range(n)]
            started = time.monotonic()
            await asyncio.gather(*(h.post(message(h.connector, QUESTIONS[i % len(QUESTIONS)], activity_id=f"b{i}",
                                                  conversation=c, conversation_type="personal", mention=False))
                                   for i, c in enumerate(chats)))
            await h.connector.wait_messages(n, timeout=300)
        typing = [min(at for at, conv, _ in connector.stamps if conv == c) - started for c in chats]
        informative = [min(at for at, conv, kind in connector.stamps if conv == c and kind == "informative")
                       - started for c in chats]
        return [t * 1000 for t in typing], [t * 1000 for t in informative]

    try:
        return asyncio.run(scenario())
    finally:
        bot.close()


def run(quick: bool) -> str:
    folder = Path(tempfile.mkdtemp(prefix="navibot-bench-streaming-"))
    gemini = FakeStreamingGemini()
    gemini.start()
    harness = ServeHarness(folder, providers=False, extra_env={
        "NAVIBOT_LLM": "gemini", "NAVIBOT_GEMINI_API_KEYS": "bench-key", "NAVIBOT_GEMINI_BASE_URLS": gemini.url})
    try:
        harness.start()
        bench = Bench(harness, gemini)
        signs = harness.loop.run(bench.first_sign(20 if quick else 50), timeout=600)
        per_sentence, whole, streams = harness.loop.run(bench.sentences(3 if quick else 10), timeout=600)
    finally:
        harness.stop()
    try:
        gemini.reset()  # Teams: the model at full speed (only the first sign of work is timed)
        assert harness.store is not None
        typing, informative = teams_first_sign(folder, harness.store, gemini, 20 if quick else 50)
    finally:
        gemini.stop()
    lines = [
        "## Streamed answers in Slack's assistant pane (`bench_streaming.py`)",
        "",
        f"{machine_load()}. `navibot serve` (subprocess, Slack HTTP mode) against the fake Slack Web API, the demo "
        "knowledge base, NAVIBOT_LLM=gemini against the fake streaming Gemini (real google-genai client; first token "
        "after 400 ms, then 60 tokens/s). One clock for the fakes' tokens and calls.",
        "",
        "| What | n | median | p95 | max | target |",
        "|---|---|---|---|---|---|",
        f"| Slack assistant pane, {len(signs)} questions at once: event POST → assistant.threads.setStatus | "
        f"{len(signs)} | {statistics.median(signs):.0f} ms | {p95(signs):.0f} ms | {max(signs):.0f} ms | "
        "p95 < 1000 ms |",
    ]
    lines += [
        f"| Teams personal chats, {len(typing)} questions at once: activity POST → typing indicator | {len(typing)} | "
        f"{statistics.median(typing):.0f} ms | {p95(typing):.0f} ms | {max(typing):.0f} ms | p95 < 1000 ms |",
        f"| … → the stream's informative update (\"Searching the SNAP rules…\") | "
        f"{len(informative)} | {statistics.median(informative):.0f} ms | {p95(informative):.0f} ms | "
        f"{max(informative):.0f} ms | < 1000 ms |",
    ]
    if per_sentence:
        lines.append(f"| Verified sentence visible after the model wrote its full stop (start/appendStream received) | "
                     f"{len(per_sentence)} | {statistics.median(per_sentence):.0f} ms | {p95(per_sentence):.0f} ms | "
                     f"{max(per_sentence):.0f} ms | < 150 ms |")
    if whole:
        lines.append(f"| Whole answer (model's last token → chat.stopStream with quotes and buttons) | {len(whole)} | "
                     f"{statistics.median(whole):.0f} ms | {p95(whole):.0f} ms | {max(whole):.0f} ms | < 200 ms |")
    lines += ["", f"{streams} of the sequential answers were streamed (three sentences each, every one checked by the "
              "sentence rail before it was sent)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true", help="update RESULTS.md even with --quick")
    args = parser.parse_args()
    section = run(args.quick)
    publish("streaming", section, args.quick, args.write)


if __name__ == "__main__":
    main()

"""`navibot serve` as a subprocess, driven the way Slack drives it, for the server benchmarks.

Everything the server talks to runs in this (the benchmark's) process, on 127.0.0.1: the fake Slack Web API
(tests/fakes/fake_slack.py), and the fake Gemini and Cohere APIs (tests/fakes/fake_models.py) that answer after a
fixed delay.
The server is this virtualenv's `navibot` executable, started with `--host 127.0.0.1 --port <free port>` in a
fresh data folder (its working directory too, so no `.env` of the checkout is read), configured only through
the environment as an admin would: Slack HTTP mode (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL) and
NAVIBOT_LLM=gemini, NAVIBOT_EMBEDDER=gemini, NAVIBOT_RERANK=cohere pointed at the fakes.

Requests are signed with SLACK_SIGNING_SECRET exactly as Slack signs them (v0 HMAC-SHA256 of
`v0:<timestamp>:<body>`). Times come from one clock (`time.monotonic`): the fake Slack stamps each Web API call
it receives with it, so "event sent" to "chat.postMessage received" is measured without clock skew.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import aiohttp
from aiohttp import web

from bot.server.app import LISTEN_BACKLOG
from tests.fakes.fake_models import FakeCohere, FakeGemini
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, BackgroundLoop, Call, FakeSlack

SECRET = "bench-signing-secret-8f742231b10e"
BOT_TOKEN = "xoxb-bench"
NAVIBOT = Path(sys.executable).parent / "navibot"
logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # the fakes' access lines would drown the output
# Fixed delays of the fake providers, per call (seconds), as in bench_providers.py.
GENERATE_S, EMBED_S, RERANK_S = 0.200, 0.030, 0.050
FEEDBACK_ACTION = "navibot_feedback"  # adapters/slack/blocks.py ACTION_FEEDBACK


class StormGemini(FakeGemini):
    """FakeGemini whose generation calls can all be answered with one HTTP error (a "503 storm") while its
    embeddings keep working, as when only the generation model is overloaded."""

    def __init__(self) -> None:
        super().__init__()
        self.generate_status: int | None = None

    async def generate(self, request: web.Request) -> web.Response:
        if self.generate_status is None:
            return await super().generate(request)
        await self._begin(request)  # recorded and delayed like any call
        return self.error(self.generate_status, "The model is overloaded. Please try again later.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def answer_id_of(call: Call) -> str | None:
    """The answer id carried by the feedback buttons of a posted answer (None for a message without them)."""
    for block in call.args.get("blocks") or []:
        for element in block.get("elements", []) if block.get("type") in ("actions", "context_actions") else []:
            if element.get("type") == "feedback_buttons":
                return str(element["positive_button"]["value"]).partition(":")[2]
    return None


def text_of(call: Call) -> str:
    return json.dumps(call.args.get("blocks") or [], ensure_ascii=False) + str(call.args.get("text"))


@dataclass
class Sent:
    """One event sent: where, when (monotonic), and the HTTP acknowledgement."""

    channel: str
    ts: str
    sent_at: float
    status: int
    ack_ms: float


class ServeHarness:
    """Starts the fakes and `navibot <command>`; sends signed events and clicks; reads the server's memory."""

    def __init__(self, workdir: Path, store: Path | None = None, command: str = "serve", providers: bool = True,
                 extra_env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.store = store
        self.command = command
        self.providers = providers
        self.extra_env = extra_env or {}
        self.loop = BackgroundLoop()
        self.slack = FakeSlack()
        self.gemini = StormGemini()
        self.cohere = FakeCohere()
        self.session: aiohttp.ClientSession | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log_path = workdir / "serve.log"
        self.generator_cpu_ms = 0.0  # the load generator's CPU time over the latest burst (load_burst.py)

    # --- life cycle -----------------------------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NAVIBOT_", "SLACK_", "MICROSOFT_"))}
        env.update({"NAVIBOT_DATA_DIR": str(self.workdir / "data"), "SLACK_BOT_TOKEN": BOT_TOKEN,
                    "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": self.slack.api_url})
        if self.providers:
            env.update({"NAVIBOT_LLM": "gemini", "NAVIBOT_EMBEDDER": "gemini", "NAVIBOT_RERANK": "cohere",
                        "NAVIBOT_GEMINI_API_KEYS": "bench-key-1,bench-key-2",
                        "NAVIBOT_GEMINI_BASE_URLS": self.gemini.url,
                        "NAVIBOT_COHERE_API_KEYS": "bench-key-1", "NAVIBOT_COHERE_BASE_URLS": self.cohere.url})
        env.update(self.extra_env)
        return env

    def start(self, timeout: float = 120.0) -> Self:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.loop.run(self.slack.start())
        self.session = self.loop.run(self._session())
        if self.providers:
            self.gemini.start()
            self.cohere.start()
        if self.store is None:  # the demo knowledge base, embedded by the configured (fake) embedder
            self.store = self.workdir / "demo.sqlite3"
            done = subprocess.run([str(NAVIBOT), "ingest", "--demo", "--store", str(self.store)], cwd=self.workdir,
                                  env=self.environment(), capture_output=True, text=True, timeout=300,
                                  check=False)
            if done.returncode != 0:
                raise RuntimeError(f"navibot ingest --demo failed: {done.stderr[-2000:]}")
        self.set_delays()
        self.port = free_port()
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(NAVIBOT), self.command, "--host", "127.0.0.1", "--port", str(self.port), "--store",
                 str(self.store)], cwd=self.workdir, env=self.environment(), stdout=log, stderr=subprocess.STDOUT)
        self._wait_listening(timeout)
        return self

    async def _session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    def set_delays(self) -> None:
        self.gemini.delays = {":generateContent": GENERATE_S, ":batchEmbedContents": EMBED_S}
        self.cohere.delays = {"/v2/rerank": RERANK_S}

    def _wait_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"navibot {self.command} exited with {self.proc.returncode}: "
                                   + self.log_path.read_text(errors="replace")[-3000:])
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"navibot {self.command} did not listen on port {self.port} within {timeout:.0f} s")

    def stop(self) -> int | None:
        """SIGTERM (a container stop), as the server expects; returns its exit code."""
        code = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait(10)
        elif self.proc is not None:
            code = self.proc.returncode
        if self.session is not None:
            self.loop.run(self.session.close())
        self.loop.run(self.slack.stop())
        self.loop.close()
        if self.providers:
            self.gemini.stop()
            self.cohere.stop()
        return code

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- what the server holds ------------------------------------------------------------------------------------

    def memory_kb(self) -> dict[str, int]:
        """VmRSS (now) and VmHWM (peak resident set) of the server process, in kB, from /proc/<pid>/status."""
        assert self.proc is not None
        found: dict[str, int] = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
        return found

    def server_cpu_ms(self) -> float:
        """The server process's CPU time so far (user + system, all its threads), from /proc/<pid>/stat."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    @property
    def conversations_path(self) -> Path:
        return self.workdir / "data" / "conversations.sqlite3"

    # --- requests as Slack sends them -----------------------------------------------------------------------------

    def _signed(self, body: str, content_type: str) -> dict[str, str]:
        ts = str(int(time.time()))
        digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": content_type}

    async def _post(self, body: str, content_type: str) -> tuple[int, float, float]:
        assert self.session is not None
        started, clock = time.perf_counter(), time.monotonic()
        async with self.session.post(f"{self.url}/slack/events", data=body.encode(),
                                     headers=self._signed(body, content_type)) as response:
            await response.read()
            return response.status, clock, (time.perf_counter() - started) * 1000

    async def mention_async(self, channel: str, text: str, thread_ts: str | None = None,
                            user: str = "U0NAVIGATOR") -> Sent:
        ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        event: dict[str, Any] = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
                                 "channel": channel, "event_ts": ts, "team": TEAM_ID}
        if thread_ts:
            event["thread_ts"] = thread_ts
        envelope = {"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                    "event": event, "event_id": f"Ev{uuid.uuid4().hex[:12]}", "event_time": int(time.time()),
                    "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]}
        status, sent_at, ack_ms = await self._post(json.dumps(envelope), "application/json")
        return Sent(channel, thread_ts or ts, sent_at, status, ack_ms)

    async def click_feedback_async(self, reply: Call, user: str, helpful: bool) -> tuple[int, float]:
        """The navigator clicks 👍 or 👎 under an answer (a block_actions payload, as Slack posts it)."""
        answer_id = answer_id_of(reply)
        channel = str(reply.args.get("channel"))
        ts = reply.result.get("ts")
        payload = {
            "type": "block_actions", "team": {"id": TEAM_ID, "domain": "navi"}, "api_app_id": "A0NAVI",
            "token": "legacy", "trigger_id": f"{uuid.uuid4().int % 10**9}.1.abc",
            "user": {"id": user, "team_id": TEAM_ID},
            "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": False,
                          "thread_ts": reply.args.get("thread_ts")},
            "channel": {"id": channel, "name": "benefits"},
            "message": {"type": "message", "ts": ts, "thread_ts": reply.args.get("thread_ts"),
                        "blocks": reply.args.get("blocks")},
            "response_url": self.slack.response_url(uuid.uuid4().hex),
            "actions": [{"action_id": FEEDBACK_ACTION, "block_id": "b1", "type": "feedback_buttons",
                         "value": f"{'helpful' if helpful else 'not_helpful'}:{answer_id}",
                         "action_ts": str(time.time())}]}
        status, _, ack_ms = await self._post(urlencode({"payload": json.dumps(payload)}),
                                             "application/x-www-form-urlencoded")
        return status, ack_ms

    def raw_mention(self, channel: str, text: str) -> tuple[str, str]:
        """(thread ts, a whole signed HTTP request as Slack would POST it) for a new question in `channel`: built
        and signed beforehand, so that sending it costs the load generator nothing but the socket writes."""
        ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        event = {"type": "app_mention", "user": "U0NAVIGATOR", "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
                 "channel": channel, "event_ts": ts, "team": TEAM_ID}
        envelope = {"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                    "event": event, "event_id": f"Ev{uuid.uuid4().hex[:12]}", "event_time": int(time.time()),
                    "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]}
        body = json.dumps(envelope)
        headers = self._signed(body, "application/json")
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        raw = (f"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{head}"
               f"Content-Length: {len(body.encode())}\r\nConnection: close\r\n\r\n{body}")
        return ts, raw

    def burst(self, channels: list[str], texts: list[str], preconnected: bool = False, port: int | None = None,
              timeout: float = 120.0) -> list[Sent]:
        """One question per channel, all at once, sent by benchmarks/load_burst.py in a process of its own (this
        process runs the fakes, whose work would otherwise delay the sending and the reading of the acks);
        `preconnected`: on connections opened beforehand; `port`: to another server (the bare baseline)."""
        built = [self.raw_mention(ch, text) for ch, text in zip(channels, texts, strict=True)]
        done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "load_burst.py"), "127.0.0.1",
                               str(port or self.port), *(["--preconnected"] if preconnected else [])],
                              input=json.dumps([raw for _, raw in built]), capture_output=True,
                              text=True, timeout=timeout, check=True)
        result = json.loads(done.stdout)
        self.generator_cpu_ms = float(result["cpu_ms"])
        return [Sent(ch, ts, sent_at, status, ack_ms) for ch, (ts, _), (status, sent_at, ack_ms)
                in zip(channels, built, result["acks"], strict=True)]

    def mention(self, channel: str, text: str, thread_ts: str | None = None) -> Sent:
        return self.loop.run(self.mention_async(channel, text, thread_ts))

    def posts(self, channel: str, thread_ts: str | None = None) -> list[Call]:
        return [c for c in self.slack.of("chat.postMessage", channel)
                if thread_ts is None or c.args.get("thread_ts") == thread_ts]

    def wait_posts(self, channel: str, count: int, timeout: float = 60.0) -> list[Call]:
        return self.loop.run(self.slack.wait_for("chat.postMessage", count, channel, timeout), timeout + 5)

    def get(self, path: str, timeout: float = 10.0) -> tuple[int, str, float]:
        async def fetch() -> tuple[int, str, float]:
            assert self.session is not None
            started = time.perf_counter()
            async with self.session.get(f"{self.url}{path}", timeout=aiohttp.ClientTimeout(total=timeout)) as r:
                return r.status, await r.text(), (time.perf_counter() - started) * 1000
        return self.loop.run(fetch(), timeout + 5)

    def provider_delay(self, since_gemini: int, since_cohere: int) -> tuple[float, dict[str, int]]:
        """The fakes' fixed delays (seconds) summed over the calls received since the given counts, and the calls."""
        gemini = self.gemini.calls[since_gemini:]
        cohere = self.cohere.calls[since_cohere:]
        counts = {"generate": sum(c.path.endswith(":generateContent") for c in gemini),
                  "embed": sum(c.path.endswith(":batchEmbedContents") for c in gemini),
                  "rerank": sum(c.path == "/v2/rerank" for c in cohere)}
        delay = counts["generate"] * GENERATE_S + counts["embed"] * EMBED_S + counts["rerank"] * RERANK_S
        return delay, counts


class BareServer:
    """An aiohttp server that only reads each POST and answers 200, on the harness's loop: what the same burst
    costs without Navibot (the load generator, the TCP set-up, aiohttp), on the machine as loaded at the time."""

    def __init__(self, harness: ServeHarness) -> None:
        self.harness = harness
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def _start(self) -> None:
        async def ok(request: web.Request) -> web.Response:
            await request.read()
            return web.Response()
        app = web.Application()
        app.router.add_post("/slack/events", ok)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0, backlog=LISTEN_BACKLOG)  # as navibot serve listens
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def __enter__(self) -> Self:
        self.harness.loop.run(self._start())
        return self

    def __exit__(self, *_: object) -> None:
        if self.runner is not None:
            self.harness.loop.run(self.runner.cleanup())


def channel_id() -> str:
    return "C" + uuid.uuid4().hex[:9].upper()


def run_all(harness: ServeHarness, coros: list[Any], timeout: float = 120.0) -> list[Any]:
    """Runs coroutines at once on the harness's loop."""
    async def together() -> list[Any]:
        return list(await asyncio.gather(*coros))
    return harness.loop.run(together(), timeout)

"""Attack: `kill -9` on `navibot serve` while questions are being answered, then a restart and Slack's redelivery.

N questions (one per channel) are sent as signed Slack events; the fake Gemini takes `generate_delay` seconds per
call, so none is answered when the server is killed with SIGKILL. The server is started again on the same data
folder, every event is redelivered twice at once (X-Slack-Retry-Num 1 and 2, the same envelope and event id), and
once more (3) after the answers are out and the server was killed and started again. Then the fake Slack's
chat.postMessage calls are counted per question:
each must be answered exactly once: not lost to its saved event id, and not twice for two deliveries at once.

    .venv/bin/python benchmarks/attack_kill9.py            # one line: PASS/FAIL and the counts
`run_kill9(workdir, store)` is what tests/bot/chat/test_no_question_lost.py and an attack runner call.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.serve_harness import NAVIBOT, ServeHarness, free_port
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID


@dataclass
class Kill9Result:
    questions: int
    answered_before_kill: int  # posted before the SIGKILL (0 when the delay holds them all in flight)
    claimed_at_kill: int  # event ids the killed server had saved as being answered
    answered_once: int
    answered_twice: int  # twice or more
    lost: int
    seconds: float
    eyes_left: int = 0  # questions whose :eyes: reaction (added by the killed server) was never taken off

    @property
    def ok(self) -> bool:
        return self.answered_once == self.questions and not self.answered_twice and not self.lost

    def line(self) -> str:
        return (f"kill -9 mid-answer: {self.questions} questions in flight ({self.claimed_at_kill} event ids saved, "
                f"{self.answered_before_kill} answered) at the kill; after restart and redelivery: "
                f"{self.answered_once} answered exactly once, {self.answered_twice} twice, {self.lost} lost; "
                f":eyes: left on {self.eyes_left} ({self.seconds:.1f} s) {'PASS' if self.ok else 'FAIL'}")


class RestartableHarness(ServeHarness):
    """The serve harness, with a SIGKILL and a second start of the server on the same data folder."""

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def relaunch(self, timeout: float = 60.0) -> None:
        self.port = free_port()
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(NAVIBOT), self.command, "--host", "127.0.0.1", "--port", str(self.port), "--store",
                 str(self.store)], cwd=self.workdir, env=self.environment(), stdout=log, stderr=subprocess.STDOUT)
        self._wait_listening(timeout)

    async def deliver(self, envelope: dict[str, Any], retry: int = 0) -> int:
        """Posts one event envelope, signed; a redelivery carries Slack's X-Slack-Retry-Num and -Reason."""
        assert self.session is not None
        body = json.dumps(envelope)
        headers = self._signed(body, "application/json")
        if retry:
            headers.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
        async with self.session.post(f"{self.url}/slack/events", data=body.encode(), headers=headers) as response:
            await response.read()
            return response.status


def envelope(channel: str, text: str) -> dict[str, Any]:
    ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
    event = {"type": "app_mention", "user": "U0NAVIGATOR", "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
             "channel": channel, "event_ts": ts, "team": TEAM_ID}
    return {"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback", "event": event,
            "event_id": f"Ev{uuid.uuid4().hex[:12].upper()}", "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]}


def claimed_events(conversations: Path) -> int:
    with closing(sqlite3.connect(f"file:{conversations}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT COUNT(*) FROM events").fetchone()[0])


def run_kill9(workdir: Path, store: Path | None = None, questions: int = 20, generate_delay: float = 3.0,
              settle: float = 1.0) -> Kill9Result:
    """The attack against a fresh `navibot serve` in `workdir` (on the demo knowledge store, or `store`: one built
    with the default local embedder); the answerer is a fake Gemini slowed to `generate_delay` s per call."""
    started = time.monotonic()
    harness = RestartableHarness(workdir, store=store, providers=False)
    harness.gemini.start()  # only the answer model is hosted (and slow); the embedder stays the local one
    harness.extra_env = {"NAVIBOT_LLM": "gemini", "NAVIBOT_GEMINI_API_KEYS": "attack-key",
                         "NAVIBOT_GEMINI_BASE_URLS": harness.gemini.url}
    try:
        harness.start()
        harness.gemini.delays = {":generateContent": generate_delay}
        channels = [f"CKILL{n:04d}" for n in range(questions)]
        envelopes = [envelope(c, f"Can college students get SNAP? (question {n})") for n, c in enumerate(channels)]

        async def send_all(retries: tuple[int, ...]) -> list[int]:
            return list(await asyncio.gather(*(harness.deliver(e, r) for e in envelopes for r in retries)))

        assert set(harness.loop.run(send_all((0,)))) == {200}, "the first deliveries were not acknowledged"
        time.sleep(min(1.0, generate_delay / 3))  # the answers are under way (claimed, waiting on the model)
        harness.kill9()
        answered_before = len(harness.slack.of("chat.postMessage"))
        claimed = claimed_events(harness.conversations_path)
        harness.gemini.delays = {":generateContent": 0.05}
        harness.relaunch()
        harness.loop.run(send_all((1, 2)))  # Slack's retries; two deliveries of each event at once
        deadline = time.monotonic() + 30
        while (len({c.args.get("channel") for c in harness.slack.of("chat.postMessage")}) < questions
               and time.monotonic() < deadline):
            time.sleep(0.05)
        time.sleep(settle)  # room for a duplicate to show
        harness.kill9()  # killed again, after answering: the answered events must stay answered
        harness.relaunch()
        harness.loop.run(send_all((3,)))  # Slack's last retry: dropped, whichever process claimed it before
        time.sleep(settle)
        counts = [len(harness.posts(c)) for c in channels]
        eyes = [len(harness.slack.of("reactions.add", c)) - len(harness.slack.of("reactions.remove", c))
                for c in channels]
        return Kill9Result(questions=questions, answered_before_kill=answered_before, claimed_at_kill=claimed,
                           answered_once=sum(n == 1 for n in counts), answered_twice=sum(n > 1 for n in counts),
                           lost=sum(n == 0 for n in counts), seconds=time.monotonic() - started,
                           eyes_left=sum(n > 0 for n in eyes))
    finally:
        harness.stop()
        harness.gemini.stop()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="navibot-kill9-") as folder:
        result = run_kill9(Path(folder))
    print(result.line())
    sys.exit(0 if result.ok else 1)

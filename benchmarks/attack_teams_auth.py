"""Attack: make a real `navibot serve` post (and hand its own token) to a host of the attacker's choosing, or crash
its token check. One line per attack, with the HTTP status and how many requests reached the attacker's host.

With credentials, tokens are signed with a test key: the server is started with benchmarks/teams_test_keys on its
PYTHONPATH, so the Agents SDK reads that key's JWKS from 127.0.0.1 (the validation stays the SDK's). Hosts the bot
could post to are recorders on 127.0.0.1 (the connector the token vouches for) and 127.0.0.2 (the attacker's).

    .venv/bin/python benchmarks/attack_teams_auth.py      # one line per attack, PASS/FAIL; exit 1 on any FAIL
`run_teams_auth(workdir)` is what an attack runner calls.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.serve_harness import ServeHarness
from tests.fakes.fake_teams_auth import (
    CLIENT_ID,
    OUTGOING_TOKEN,
    TENANT,
    Recorder,
    TestKeys,
    activity,
    feedback_click,
    installed,
)

KEYS_PATH = Path(__file__).resolve().parent / "teams_test_keys"
VERB = "feedback.helpful"  # adapters/teams/cards.py VERB_HELPFUL


@dataclass
class AttackResult:
    name: str
    got: str  # "HTTP 401", "exit 2", "warned"
    expected: str
    to_attacker: int | None = None  # requests the attacker's host received (None: not a host we can watch)
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.got == self.expected and not self.to_attacker

    def line(self) -> str:
        sent = "" if self.to_attacker is None else f", {self.to_attacker} request(s) to the attacker's host"
        return (f"teams {self.name}: {self.got} (expected {self.expected}){sent}"
                f"{'; ' + self.note if self.note else ''} {'PASS' if self.ok else 'FAIL'}")


class TeamsHarness(ServeHarness):
    async def teams(self, body: dict[str, Any], token: str | None = None) -> tuple[int, str]:
        assert self.session is not None
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with self.session.post(f"{self.url}/api/messages", data=json.dumps(body), headers=headers) as response:
            return response.status, await response.text()


def _bad_requests(metrics: str) -> int:
    found = re.search(r'navibot_errors_total\{kind="bad_request",platform="teams"\} (\S+)', metrics)
    return int(float(found.group(1))) if found else -1


def _wait(predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


def run_teams_auth(workdir: Path) -> list[AttackResult]:
    results: list[AttackResult] = []
    keys = TestKeys()
    try:
        results += _with_credentials(workdir / "credentials", keys)
        results += _anonymous(workdir / "anonymous")
        results.append(_forbidden_allow_list(workdir / "start-up"))
    finally:
        keys.close()
    return results


def _with_credentials(workdir: Path, keys: TestKeys) -> list[AttackResult]:
    harness = TeamsHarness(workdir, extra_env={
        "NAVIBOT_TEAMS_CLIENT_ID": CLIENT_ID, "NAVIBOT_TEAMS_CLIENT_SECRET": "bench", "NAVIBOT_TEAMS_TENANT_ID": TENANT,
        "PYTHONPATH": f"{KEYS_PATH}:{REPO}", "NAVIBOT_BENCH_JWKS_URL": keys.jwks_url})
    genuine, attacker = Recorder("127.0.0.1"), Recorder("127.0.0.2")
    results = []
    try:
        harness.start()
        harness.loop.run(genuine.start())
        harness.loop.run(attacker.start())
        vouched = keys.token(genuine.url)
        attacks: list[tuple[str, dict[str, Any], str]] = [
            ("token for the real connector, message naming another host", activity(attacker.url, activity_id="m1"),
             vouched),
            ("token for the real connector, card click naming another host", feedback_click(attacker.url, VERB),
             vouched),
            ("token for the real connector, install naming another host", installed(attacker.url), vouched),
            ("token naming no serviceUrl, message to a host neither Microsoft's nor listed",
             activity(attacker.url, activity_id="m2"), keys.token(None)),
        ]
        attacks += [(f"token header {name}", activity(attacker.url, activity_id=f"h{n}"), token)
                    for n, (name, token) in enumerate(keys.forged_tokens(attacker.url).items())]
        for name, body, token in attacks:
            status, _ = harness.loop.run(harness.teams(body, token))
            results.append(AttackResult(name, f"HTTP {status}", "HTTP 401", 0))
        time.sleep(1.0)  # a turn started by mistake would have posted by now
        for result in results:
            result.to_attacker = len(attacker.seen)
        # The control: the same token, on the host it vouches for, is answered there with the bot's own token.
        status, _ = harness.loop.run(harness.teams(activity(genuine.url, activity_id="ok1"), vouched))
        answered = _wait(lambda: bool(genuine.messages()))
        good = answered and all(s.authorization == f"Bearer {OUTGOING_TOKEN}" for s in genuine.seen)
        results.append(AttackResult("control: token and activity naming the same host",
                                    f"HTTP {status}, {'answered there with the bot token' if good else 'NOT answered'}",
                                    "HTTP 202, answered there with the bot token", len(attacker.seen)))
        _code, metrics, _ = harness.get("/metrics")
        refused = sum(1 for r in results if r.got == "HTTP 401")
        log = harness.log_path.read_text(errors="replace")
        results.append(AttackResult("refusals in /metrics (bad_request) and tracebacks in the log",
                                    f"{_bad_requests(metrics)} counted, {log.count('Traceback')} tracebacks",
                                    f"{refused} counted, 0 tracebacks"))
    finally:
        harness.loop.run(attacker.stop())
        harness.loop.run(genuine.stop())
        harness.stop()
    return results


def _anonymous(workdir: Path) -> list[AttackResult]:
    harness = TeamsHarness(workdir, extra_env={
        "NAVIBOT_TEAMS_ALLOW_ANONYMOUS": "true",
        "NAVIBOT_ACCESS_GROUPS": json.dumps({"teams:19:staff@thread.tacv2": ["supervisors"]})})
    local = Recorder("127.0.0.2")
    results = []
    try:
        harness.start()
        harness.loop.run(local.start())
        for n, url in enumerate(["http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/",
                                 "http://[fd00:ec2::254]/", "http://[fe80::1]/", "http://2852039166/",
                                 "https://attacker.example/"]):
            status, _ = harness.loop.run(harness.teams(activity(url, activity_id=f"a{n}")))
            results.append(AttackResult(f"anonymous, serviceUrl {url}", f"HTTP {status}", "HTTP 401"))
        status, _ = harness.loop.run(harness.teams(activity(local.url, activity_id="ok2")))
        answered = _wait(lambda: bool(local.messages()))
        results.append(AttackResult("anonymous control: loopback serviceUrl",
                                    f"HTTP {status}, {'answered' if answered else 'NOT answered'}",
                                    "HTTP 202, answered"))
        warned = "access groups protect nothing" in harness.log_path.read_text(errors="replace")
        results.append(AttackResult("anonymous mode with teams: access groups, at start",
                                    "warned" if warned else "silent", "warned"))
    finally:
        harness.loop.run(local.stop())
        harness.stop()
    return results


def _forbidden_allow_list(workdir: Path) -> AttackResult:
    harness = TeamsHarness(workdir, extra_env={"NAVIBOT_TEAMS_ALLOW_ANONYMOUS": "true",
                                               "NAVIBOT_TEAMS_SERVICE_URLS": "http://169.254.169.254/"})
    try:
        harness.start(timeout=60)
        return AttackResult("NAVIBOT_TEAMS_SERVICE_URLS naming a metadata address", "serve started", "exit 2")
    except RuntimeError as exc:
        code = re.search(r"exited with (-?\d+)", str(exc))
        said = [line for line in str(exc).splitlines() if "NAVIBOT_TEAMS_SERVICE_URLS" in line]
        return AttackResult("NAVIBOT_TEAMS_SERVICE_URLS naming a metadata address",
                            f"exit {code.group(1) if code else '?'}, {len(said)} line(s) naming it",
                            "exit 2, 1 line(s) naming it")
    finally:
        harness.stop()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="navibot-teams-auth-") as folder:
        outcome = run_teams_auth(Path(folder))
    for result in outcome:
        print(result.line())
    sys.exit(0 if all(r.ok for r in outcome) else 1)

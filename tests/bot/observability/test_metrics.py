"""The Prometheus metrics: counts per platform and kind, cumulative histograms, escaping, thread safety, the
exposition text parsed back line by line, and the Slack and Teams adapters reporting their failures."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from adapters.teams import agent
from bot.config.settings import Settings
from bot.observability.metrics import CONTENT_TYPE, STAGE_BUCKETS, Metrics, escape_label
from bot.observability.observers import Observers, TurnEvent
from bot.wiring.runtime import build_bot
from tests.adapters.teams.test_teams import STUDENTS, message, running
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, BackgroundLoop, serve_http

# name{labels} value  -- label values may hold escaped quotes, backslashes and newlines
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_]\w*="(?:[^"\\]|\\.)*",?)*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], value)


def _family(name: str, types: dict[str, str]) -> str:
    """The family a sample belongs to: a histogram's _bucket/_sum/_count samples are under its base name."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = name.removesuffix(suffix)
        if base != name and types.get(base) == "histogram":
            return base
    return name


def parse(text: str) -> tuple[dict[tuple[str, frozenset[tuple[str, str]]], float], dict[str, str]]:
    """Samples keyed by (name, labels) and the declared TYPE of each family, checked as strictly as Prometheus
    does: well-formed lines, HELP and TYPE once per family and before its samples, a family's samples together,
    no duplicate series, and for every histogram series cumulative buckets ending in +Inf with _count == +Inf."""
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    types: dict[str, str] = {}
    helped: set[str] = set()
    finished: set[str] = set()  # families whose samples are over: seeing one again means they were split
    current: str | None = None
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# "):
            word, name, rest = [*line[2:].split(" ", 2), ""][:3]
            assert word in ("HELP", "TYPE") and rest, f"malformed comment: {line!r}"
            seen = helped if word == "HELP" else types
            assert name not in seen and name not in finished, f"second {word} for {name}"
            if word == "HELP":
                helped.add(name)
            else:
                assert rest in ("counter", "gauge", "histogram", "summary", "untyped"), line
                assert not any(_family(n, types) == name for n, _ in samples), f"TYPE after samples: {line!r}"
                types[name] = rest
            continue
        match = _SAMPLE.match(line)
        assert match, f"malformed line: {line!r}"
        family = _family(match[1], types)
        assert family in types, f"sample without a TYPE: {line!r}"
        if family != current:
            if current is not None:
                finished.add(current)
            assert family not in finished, f"samples of {family} are split: {line!r}"
            current = family
        labels = frozenset((k, _unescape(v)) for k, v in _LABEL.findall(match[2] or ""))
        key = (match[1], labels)
        assert key not in samples, f"duplicate series: {line!r}"
        samples[key] = float(match[3])
    for family in (f for f, kind in types.items() if kind == "histogram"):
        series: dict[frozenset[tuple[str, str]], list[tuple[float, float]]] = {}
        for (name, labels), count in samples.items():
            if name == family + "_bucket":
                le = dict(labels)["le"]
                series.setdefault(labels - {("le", le)}, []).append((float(le), count))
        for labels, buckets in series.items():
            counts = [count for _, count in buckets]
            assert [b for b, _ in buckets] == sorted(b for b, _ in buckets), f"{family} buckets out of order"
            assert buckets[-1][0] == float("inf"), f"{family}{dict(labels)} does not end in +Inf"
            assert counts == sorted(counts), f"{family}{dict(labels)} buckets are not cumulative"
            assert samples[(family + "_count", labels)] == counts[-1], f"{family}_count != +Inf bucket"
            assert (family + "_sum", labels) in samples
    return samples, types


def value(samples: dict, name: str, **labels: str) -> float:  # type: ignore[type-arg]
    return samples[(name, frozenset(labels.items()))]


def event(kind: str, platform: str = "slack", error: str | None = None, fallbacks: list[str] | None = None,
          total: float = 120.0) -> TurnEvent:
    timings = {"rewrite": 3.0, "retrieve": 7.0, "generate": 80.0, "total": total}
    return TurnEvent("abc123abc123", platform, kind, "question?", timings, fallbacks or [], error=error)


def test_an_idle_server_shows_zeros() -> None:
    samples, types = parse(Metrics().render())
    assert types["navibot_questions_total"] == "counter"
    assert types["navibot_stage_seconds"] == "histogram"
    assert value(samples, "navibot_questions_total", platform="slack") == 0
    assert value(samples, "navibot_feedback_total", platform="teams", rating="down") == 0
    assert value(samples, "navibot_stage_seconds_count", stage="generate") == 0
    assert value(samples, "navibot_stage_seconds_bucket", stage="total", le="+Inf") == 0
    # Errors and fallbacks start at zero too: increase() and rate() miss the first error of a series that is new.
    assert value(samples, "navibot_errors_total", kind="store", platform="slack") == 0
    assert value(samples, "navibot_errors_total", kind="slack_api", platform="slack") == 0
    assert value(samples, "navibot_errors_total", kind="teams_send", platform="teams") == 0
    assert ("navibot_errors_total", frozenset({("kind", "slack_api"), ("platform", "teams")})) not in samples
    assert value(samples, "navibot_fallbacks_total", stage="embed") == 0
    assert CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"


def test_counts_after_some_turns() -> None:
    metrics = Metrics()
    observers = Observers([metrics])
    observers.turn(event("answer", fallbacks=["generate: gemini 503", "rerank: timeout"]))
    observers.turn(event("answer", "teams"))
    observers.turn(event("no_answer"))
    observers.turn(event("error", error="store"))
    observers.turn(event("error", error="too_long"))  # not a question
    observers.turn(event("command"))
    observers.turn(event("duplicate"))
    observers.feedback("slack", True)
    observers.feedback("slack", False)
    observers.feedback("slack", False)
    observers.error("slack_api", "slack")
    samples, _ = parse(metrics.render())
    assert value(samples, "navibot_questions_total", platform="slack") == 3
    assert value(samples, "navibot_questions_total", platform="teams") == 1
    assert value(samples, "navibot_answers_total", platform="slack") == 1
    assert value(samples, "navibot_answers_total", platform="teams") == 1
    assert value(samples, "navibot_no_answers_total", platform="slack") == 1
    assert value(samples, "navibot_feedback_total", platform="slack", rating="up") == 1
    assert value(samples, "navibot_feedback_total", platform="slack", rating="down") == 2
    assert value(samples, "navibot_errors_total", kind="store", platform="slack") == 1
    assert value(samples, "navibot_errors_total", kind="too_long", platform="slack") == 1
    assert value(samples, "navibot_errors_total", kind="slack_api", platform="slack") == 1
    assert value(samples, "navibot_fallbacks_total", stage="generate") == 1
    assert value(samples, "navibot_fallbacks_total", stage="rerank") == 1
    # Stage timings only for the 4 questions; 0.12 s each in "total".
    assert value(samples, "navibot_stage_seconds_count", stage="total") == 4
    assert abs(value(samples, "navibot_stage_seconds_sum", stage="total") - 0.48) < 1e-9
    assert value(samples, "navibot_stage_seconds_count", stage="rerank") == 0


def test_histogram_buckets_are_cumulative_and_monotonic() -> None:
    metrics = Metrics()
    for total_ms in (1.0, 4.0, 5.0, 30.0, 700.0, 2_000.0, 45_000.0):
        metrics.turn(event("answer", total=total_ms))
    samples, _ = parse(metrics.render())
    bounds = [*(repr(b) if not float(b).is_integer() else str(int(b)) for b in STAGE_BUCKETS), "+Inf"]
    counts = [value(samples, "navibot_stage_seconds_bucket", stage="total", le=b) for b in bounds]
    assert counts == sorted(counts)
    assert value(samples, "navibot_stage_seconds_bucket", stage="total", le="0.005") == 3  # le: 5 ms is in
    assert value(samples, "navibot_stage_seconds_bucket", stage="total", le="0.05") == 4
    assert value(samples, "navibot_stage_seconds_bucket", stage="total", le="1") == 5
    assert value(samples, "navibot_stage_seconds_bucket", stage="total", le="30") == 6  # 45 s is past every bound
    assert counts[-1] == 7 == value(samples, "navibot_stage_seconds_count", stage="total")


def test_label_values_are_escaped() -> None:
    odd = 'we"ird\\kind\nline'
    assert escape_label(odd) == 'we\\"ird\\\\kind\\nline'
    metrics = Metrics()
    metrics.error(odd, "slack")
    text = metrics.render()
    assert 'kind="we\\"ird\\\\kind\\nline"' in text
    samples, _ = parse(text)
    assert value(samples, "navibot_errors_total", kind=odd, platform="slack") == 1


def test_threads_adding_at_once_lose_nothing() -> None:
    metrics = Metrics()
    start = threading.Barrier(16)

    def work() -> None:
        start.wait()
        for _ in range(250):
            metrics.turn(event("answer"))
            metrics.feedback("teams", True)

    threads = [threading.Thread(target=work) for _ in range(16)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch all the time: without the lock, counts are lost
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    samples, _ = parse(metrics.render())
    assert value(samples, "navibot_answers_total", platform="slack") == 4000
    assert value(samples, "navibot_feedback_total", platform="teams", rating="up") == 4000
    assert value(samples, "navibot_stage_seconds_count", stage="generate") == 4000


def test_process_memory_is_reported() -> None:
    samples, types = parse(Metrics().render())
    assert types["process_resident_memory_bytes"] == "gauge"
    assert value(samples, "process_resident_memory_bytes") > 1_000_000


SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


def test_slack_reports_a_refused_post_and_bad_requests(demo_store: Path, tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """The real Bolt app against the fake Slack Web API: chat.postMessage refused -> navibot_errors_total rises,
    and the error line carries the apology's trace id as a field (`trace_id` in JSON logs)."""
    bot = build_bot(Settings(_env_file=None, data_dir=tmp_path), demo_store,  # type: ignore[call-arg]
                    tmp_path / "conversations.sqlite3")
    metrics = Metrics()
    bot.observers.add(metrics)
    background = BackgroundLoop()
    served = background.run(serve_http(bot, SECRET))
    try:
        def post(body: str, secret: str = SECRET) -> int:
            ts = str(int(time.time()))
            digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}",
                       "Content-Type": "application/json"}

            async def send() -> int:
                async with served.session.post(served.url, data=body.encode(), headers=headers) as response:
                    return response.status
            return background.run(send())

        def mention(channel: str, ts: str) -> str:
            return json.dumps({
                "token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                "event_id": f"Ev{ts.replace('.', '')}", "event_time": int(time.time()),
                "event": {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}",
                          "ts": ts, "channel": channel, "event_ts": ts, "team": TEAM_ID},
                "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]})

        assert post(mention("C0FINE", "1700000001.000100")) == 200
        background.run(served.fake.wait_for("chat.postMessage", 1, "C0FINE"))
        served.fake.fail_next("chat.postMessage", "fatal_error")
        assert post(mention("C0BROKEN", "1700000002.000100")) == 200
        background.run(served.fake.wait_for("chat.postMessage", 2, "C0BROKEN"))  # the refused answer, the apology
        background.run(served.slack.drain(10))
        apology = served.fake.of("chat.postMessage", "C0BROKEN")[-1].args["text"]
        assert post(mention("C0FORGED", "1700000003.000100"), secret="not-the-secret") == 401
        assert post("not json") == 400
        samples, _ = parse(metrics.render())
    finally:
        background.run(served.stop())
        background.close()
        bot.close()
    assert value(samples, "navibot_errors_total", kind="slack_api", platform="slack") == 1
    assert value(samples, "navibot_errors_total", kind="bad_request", platform="slack") == 2
    [failed] = [r for r in caplog.records if r.name == "adapters.slack.app" and r.levelname == "ERROR"]
    assert f"trace id {failed.__dict__['trace_id']}" in apology  # an extra={...} field
    assert value(samples, "navibot_questions_total", platform="slack") == 2
    assert value(samples, "navibot_answers_total", platform="slack") == 2


def test_teams_reports_a_reply_it_could_not_send_and_bad_requests(demo_store: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent, "RETRY_WAITS", (0.01, 0.01))
    bot = build_bot(Settings(_env_file=None, data_dir=tmp_path), demo_store,  # type: ignore[call-arg]
                    tmp_path / "conversations.sqlite3")
    metrics = Metrics()
    bot.observers.add(metrics)

    async def scenario() -> None:
        async with running(bot) as h:
            h.connector.fail_next = [503, 503, 503, 503]  # the typing indicator, then the answer three times
            assert (await h.post(message(h.connector, STUDENTS))).status == 202
            await h.connector.wait_messages(1)  # the apology
            assert (await h.post("{not json")).status == 400
            assert (await h.post({**message(h.connector, STUDENTS, activity_id="r2"), "recipient": None})).status \
                == 400

    try:
        asyncio.run(scenario())
        samples, _ = parse(metrics.render())
    finally:
        bot.close()
    assert value(samples, "navibot_errors_total", kind="teams_send", platform="teams") == 1
    assert value(samples, "navibot_errors_total", kind="bad_request", platform="teams") == 2
    assert value(samples, "navibot_answers_total", platform="teams") == 1


@pytest.mark.parametrize("broken", [
    "# TYPE a counter\na 1\n# TYPE a counter\n",  # TYPE twice
    "# HELP a x\n# HELP a y\n# TYPE a counter\na 1\n",  # HELP twice
    "a 1\n",  # no TYPE
    '# TYPE a counter\na{k="1"} 1\n# TYPE b counter\nb 1\na{k="2"} 1\n',  # a family split
    '# TYPE a counter\na{k="1"} 1\na{k="1"} 2\n',  # duplicate series
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',  # not cumulative
    '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',  # no +Inf
    '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n',  # count != +Inf
    '# TYPE a counter\na{k="unterminated} 1\n',
], ids=["type-twice", "help-twice", "no-type", "split", "duplicate", "not-cumulative", "no-inf", "count", "quote"])
def test_the_parser_rejects_what_prometheus_rejects(broken: str) -> None:
    with pytest.raises(AssertionError):
        parse(broken)

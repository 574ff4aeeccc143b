"""`navibot serve` under load: Slack events to acknowledgement and to the posted answer, 50 questions at once,
a 503 storm from the LLM, the conversation store locked, and the /metrics counts.

    python benchmarks/bench_server.py            # full run, about 2 minutes; updates benchmarks/RESULTS.md
    python benchmarks/bench_server.py --quick    # smoke check, < 60 s (fewer events; does not update RESULTS.md)

How (benchmarks/serve_harness.py): this virtualenv's `navibot serve --host 127.0.0.1 --port <free>` runs as a
subprocess in a fresh data folder, on the demo knowledge base (`navibot ingest --demo --store ...` first), in
Slack HTTP mode against the fake Slack Web API (tests/fakes/fake_slack.py) and with NAVIBOT_LLM=gemini,
NAVIBOT_EMBEDDER=gemini, NAVIBOT_RERANK=cohere on the fake Gemini and Cohere APIs (tests/fakes/fake_models.py), which
reply after a fixed delay: generation 200 ms, embedding 30 ms, rerank 50 ms (as in bench_providers.py). Events and
button clicks are signed with SLACK_SIGNING_SECRET as Slack signs them. One clock (time.monotonic) times both ends.

1. Sequential: two-turn conversations (a question, then a follow-up in its thread), one event at a time.
   Ack = the HTTP POST to /slack/events until its 200. Answer = the POST until the fake Slack receives the
   chat.postMessage in the thread. The bot's overhead = answer time minus the fakes' fixed delays of the model
   calls that turn made (counted on the fakes: embedding, rerank, generation, and the rewrite on a follow-up).
2. 50 questions at once, each in its own channel; then 50 feedback clicks at once (block_actions with the
   feedback buttons of each answer). Checked: every ack is 200, every question is answered in its own thread,
   every click is confirmed, and the conversation store (SQLite, read with sqlite3) holds the 50 answers, 50
   history turns and 50 feedback rows. Overhead per question = its answer time minus the fakes' delays of one
   first question (embedding + rerank + generation; the call counts are checked), so it includes the wait for one
   of the server's turn threads.
3. 503 storm: the fake Gemini answers every generation call with 503 (embeddings still work); 2 API keys give
   2 endpoints for the failover. Every question must still get an answer posted with the notice "The AI model is
   unavailable right now…" (the extractive fallback): two-turn conversations one at a time, then 50 questions at
   once. Reported: the time of such a turn. Then Gemini hangs (no reply for 30 s) on 5 questions at once: the
   default per-call timeout (6 s) and turn deadline (12 s) must bound each turn, which ends with the fallback.
4. Store unavailable: this process holds `BEGIN EXCLUSIVE` on the conversations SQLite file (the server's writes
   then wait for SQLite's busy timeout and fail). Questions must get the apology with a trace id, /healthz is read,
   the process must stay up; after ROLLBACK the next question must be answered again and /healthz say 200.
5. /metrics is scraped at the end and its counters compared with what was sent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.results_file import machine_load, publish
from benchmarks.serve_harness import (
    EMBED_S,
    GENERATE_S,
    RERANK_S,
    BareServer,
    Sent,
    ServeHarness,
    answer_id_of,
    channel_id,
    run_all,
    text_of,
)
from tests.fakes.fake_slack import TEAM_ID, Call

ACK_P95_TARGET_MS = 100.0
OVERHEAD_MEDIAN_TARGET_MS = 50.0
UNAVAILABLE = "The AI model is unavailable right now"
HANG_S = 30.0  # longer than the turn's deadline
TRACE = re.compile(r"trace id ([0-9a-f]{12})")
QUESTIONS = ["Can college students get SNAP?", "What is the SNAP gross income limit?", "Who qualifies for Medicaid?",
             "How often do I renew Medicaid?", "Who can get WIC?", "How much is the Child Tax Credit?",
             "Can I get the EITC without children?", "How do I apply for LIHEAP?", "How much is SSI a month?",
             "How long does unemployment last?", "Does CHIP cover pregnant teens?", "Can a green card holder get SNAP?"]
FOLLOW_UPS = ["what if they work 20 hours a week?", "how do I apply?", "and for a family of four?"]


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Tally:
    """What was sent, to check /metrics against."""

    questions: int = 0
    store_errors: int = 0
    clicks_up: int = 0
    clicks_down: int = 0
    notes: list[str] = field(default_factory=list)


# --- 1. sequential events -------------------------------------------------------------------------------------------

@dataclass
class Sequential:
    ack_ms: list[float] = field(default_factory=list)
    answer_ms: list[float] = field(default_factory=list)
    overhead_ms: list[float] = field(default_factory=list)
    first_overhead_ms: list[float] = field(default_factory=list)
    follow_overhead_ms: list[float] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    delay_ms: list[float] = field(default_factory=list)
    generate_calls: list[int] = field(default_factory=list)
    engine_overhead_ms: list[float] = field(default_factory=list)  # engine total − fakes' delays
    outside_engine_ms: list[float] = field(default_factory=list)  # answer time − engine total
    stage_overhead_ms: dict[str, list[float]] = field(default_factory=dict)


def one_turn(h: ServeHarness, channel: str, text: str, thread_ts: str | None, count: int
             ) -> tuple[Sent, Call, float, dict[str, int]]:
    g0, c0 = len(h.gemini.calls), len(h.cohere.calls)
    sent = h.mention(channel, text, thread_ts)
    post = h.wait_posts(channel, count)[count - 1]
    delay, calls = h.provider_delay(g0, c0)
    return sent, post, delay, calls


def bench_sequential(h: ServeHarness, conversations: int, tally: Tally) -> Sequential:
    result = Sequential()
    for warm in range(2):  # first requests pay for lazy imports and connection set-up: not counted
        one_turn(h, channel_id(), QUESTIONS[warm], None, 1)
        tally.questions += 1
    for i in range(conversations):
        channel = channel_id()
        thread: str | None = None
        for n, text in enumerate((QUESTIONS[i % len(QUESTIONS)], FOLLOW_UPS[i % len(FOLLOW_UPS)]), start=1):
            sent, post, delay, calls = one_turn(h, channel, text, thread, n)
            tally.questions += 1
            thread = sent.ts
            if sent.status != 200 or post.args.get("thread_ts") != sent.ts or answer_id_of(post) is None:
                result.errors += 1
            answer = (post.at - sent.sent_at) * 1000
            overhead = answer - delay * 1000
            result.ack_ms.append(sent.ack_ms)
            result.delay_ms.append(delay * 1000)
            result.generate_calls.append(calls["generate"])
            result.answer_ms.append(answer)
            result.overhead_ms.append(overhead)
            (result.first_overhead_ms if n == 1 else result.follow_overhead_ms).append(overhead)
            for name, value in calls.items():
                result.calls[name] = result.calls.get(name, 0) + value
    breakdown(h, result)
    return result


def turn_lines(h: ServeHarness) -> list[dict[str, Any]]:
    """The server's own per-turn log lines (JSON, `"event": "turn"`), in the order the turns ended."""
    found = []
    for line in h.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("event") == "turn":
                found.append(record)
    return found


def breakdown(h: ServeHarness, result: Sequential) -> None:
    """Where the overhead goes, from the engine's stage timings in the server's log: the sequential turns are the
    last ones logged, in order (one at a time, each answered before the next is sent)."""
    generations = result.generate_calls
    lines = turn_lines(h)[-len(result.answer_ms):]
    if len(lines) != len(result.answer_ms):
        return  # no JSON turn log (e.g. `navibot slack`, text logs): no breakdown
    for i, record in enumerate(lines):
        t = record.get("timings_ms", {})
        follow_up = i % 2 == 1
        delays = {"rewrite": GENERATE_S if follow_up else 0.0, "retrieve": EMBED_S, "rerank": RERANK_S,
                  "generate": GENERATE_S if generations[i] - (1 if follow_up else 0) > 0 else 0.0}
        for stage, delay in delays.items():
            if stage in t and (stage != "rewrite" or follow_up):
                result.stage_overhead_ms.setdefault(stage, []).append(t[stage] - delay * 1000)
        total = float(t.get("total", 0.0))
        result.engine_overhead_ms.append(total - result.delay_ms[i])
        result.outside_engine_ms.append(result.answer_ms[i] - total)


# --- 2. concurrent questions and feedback ---------------------------------------------------------------------------

@dataclass
class Concurrent:
    n: int
    ack_ms: list[float]
    overhead_ms: list[float]
    wall_s: float
    answered_in_thread: int
    apologies: int
    calls: dict[str, int]
    click_ack_ms: list[float]
    clicks_confirmed: int
    click_wall_s: float
    stored_answers: int
    stored_history: int
    stored_feedback: int
    bad_acks: int


def conversation_key(channel: str, thread: str) -> str:
    return f"slack|{TEAM_ID}|{channel}|{thread}"


def stored_rows(path: Path, keys: list[str], answer_ids: list[str]) -> tuple[int, int, int]:
    """Counted straight from the server's SQLite file (read-only), not through the server."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        marks_k, marks_a = ",".join("?" * len(keys)), ",".join("?" * len(answer_ids))
        answers = db.execute(f"SELECT COUNT(*) FROM answers WHERE answer_id IN ({marks_a})", answer_ids).fetchone()[0]
        history = db.execute(f"SELECT COUNT(*) FROM history WHERE conversation_key IN ({marks_k})", keys).fetchone()[0]
        feedback = db.execute(f"SELECT COUNT(*) FROM feedback WHERE answer_id IN ({marks_a})",
                              answer_ids).fetchone()[0]
    finally:
        db.close()
    return int(answers), int(history), int(feedback)


def bench_concurrent(h: ServeHarness, n: int, tally: Tally) -> Concurrent:
    channels = [channel_id() for _ in range(n)]
    g0, c0 = len(h.gemini.calls), len(h.cohere.calls)
    sent: list[Sent] = run_all(h, [h.mention_async(ch, QUESTIONS[i % len(QUESTIONS)])
                                   for i, ch in enumerate(channels)])
    tally.questions += n
    posts = [h.wait_posts(ch, 1, timeout=120)[0] for ch in channels]
    _, calls = h.provider_delay(g0, c0)
    per_turn = EMBED_S + RERANK_S + GENERATE_S  # a first question: one call of each
    overhead = [((p.at - s.sent_at) - per_turn) * 1000 for s, p in zip(sent, posts, strict=True)]
    wall = max(p.at for p in posts) - min(s.sent_at for s in sent)
    in_thread = sum(1 for s, p in zip(sent, posts, strict=True)
                    if p.args.get("thread_ts") == s.ts and answer_id_of(p) is not None)
    apologies = sum(1 for p in posts if TRACE.search(text_of(p)))

    answered = [p for p in posts if answer_id_of(p) is not None]
    started = time.monotonic()
    clicks: list[tuple[int, float]] = run_all(h, [h.click_feedback_async(p, f"U0NAV{i:04d}", i % 2 == 0)
                                                  for i, p in enumerate(answered)])
    tally.clicks_up += sum(1 for i in range(len(answered)) if i % 2 == 0)
    tally.clicks_down += sum(1 for i in range(len(answered)) if i % 2 == 1)
    confirmed = 0
    for p in answered:
        notes = h.loop.run(h.slack.wait_for("chat.postEphemeral", 1, str(p.args["channel"]), 60), 70)
        confirmed += any("saved" in str(c.args.get("text")) for c in notes)
    click_wall = max(c.at for c in h.slack.of("chat.postEphemeral") if c.args.get("channel") in channels) - started
    keys = [conversation_key(s.channel, s.ts) for s in sent]
    ids = [str(answer_id_of(p)) for p in answered]
    stored = stored_rows(h.conversations_path, keys, ids)
    return Concurrent(n, [s.ack_ms for s in sent], overhead, wall, in_thread, apologies, calls,
                      [ms for _, ms in clicks], confirmed, click_wall, *stored,
                      bad_acks=sum(1 for s in sent if s.status != 200) + sum(1 for st, _ in clicks if st != 200))


# --- 2b. a burst of questions at once: the acks, and every question answered exactly once ------------------------

@dataclass
class Burst:
    n: int
    load: float  # 1-minute load average just before the burst
    ack_ms: list[float]
    bad_acks: int
    lost: int  # no answer posted in the question's thread
    duplicated: int  # more than one answer posted in the thread
    apologies: int
    wall_s: float
    bare_ack_ms: list[float]  # the same burst to a bare aiohttp server that only answers 200, just before
    generator_cpu_ms: float = 0.0  # the load generator's own CPU time over the burst (load_burst.py)
    bare_generator_cpu_ms: float = 0.0  # ... over the burst to the bare server
    server_cpu_ms: float = 0.0  # the server's CPU time over the burst: from the generator's start to its exit
    unavailable: int = 0  # answers with the "AI model unavailable" notice (the turn's deadline spent waiting)


def bench_burst(h: ServeHarness, n: int, preconnected: bool = False, settle_s: float = 3.0,
                timeout: float = 240.0) -> Burst:
    """`n` questions, each in its own channel, sent at once by benchmarks/load_burst.py (pre-signed, a process of
    its own); then every thread is read on the fake Slack: exactly one answer each, none lost, none twice. Just
    before, the same burst goes to a bare aiohttp server: the floor of this generator on this machine now."""
    texts = [QUESTIONS[i % len(QUESTIONS)] for i in range(n)]
    with BareServer(h) as bare:
        bare_ack = [s.ack_ms for s in h.burst([channel_id() for _ in range(n)], texts, preconnected, bare.port)]
    bare_cpu = h.generator_cpu_ms
    time.sleep(1.0)
    channels = [channel_id() for _ in range(n)]
    load = os.getloadavg()[0]
    cpu_before = h.server_cpu_ms()
    sent = h.burst(channels, texts, preconnected)
    # From the generator's start (~0.1 s of Python start-up, the server idle) to its exit, a few ms after the last
    # ack (the work the questions start may begin meanwhile): /proc's clock ticks, 10 ms each.
    server_cpu = h.server_cpu_ms() - cpu_before
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(not h.posts(s.channel, s.ts) for s in sent):
        time.sleep(0.2)
    time.sleep(settle_s)  # a second answer to the same question would come right after the first
    replies = [h.posts(s.channel, s.ts) for s in sent]
    answered = [r[0] for r in replies if r]
    wall = (max(p.at for p in answered) - min(s.sent_at for s in sent)) if answered else float("nan")
    return Burst(n, load, [s.ack_ms for s in sent], sum(1 for s in sent if s.status != 200),
                 sum(1 for r in replies if not r), sum(1 for r in replies if len(r) > 1),
                 sum(1 for r in answered if TRACE.search(text_of(r))), wall, bare_ack, h.generator_cpu_ms, bare_cpu,
                 server_cpu, sum(1 for r in answered if UNAVAILABLE in text_of(r)))


@dataclass
class TwoBursts:
    """A burst that arrives while an earlier burst's answers are still being worked out: the acks of the second."""

    n: int
    after_s: float  # the second burst's start, seconds after the first's
    load: float  # 1-minute load average just before the first burst
    ack_ms: list[float]  # the second burst's
    first_ack_ms: list[float]
    bad_acks: int  # over both bursts
    lost: int
    duplicated: int
    second_wall_s: float  # the second burst's first event sent -> its last answer posted
    wall_s: float  # the first burst's first event sent -> the last answer of either
    unavailable: int = 0  # answers with the "AI model unavailable" notice (the turn's deadline spent waiting)


def bench_two_bursts(h: ServeHarness, n: int, after_s: float, settle_s: float = 3.0,
                     timeout: float = 300.0) -> TwoBursts:
    """`n` questions at once, then `n` more `after_s` seconds later, while the first burst's answers are still being
    computed (the turn threads busy with CPU work); each burst from its own load_burst.py process. Every thread of
    both bursts must get exactly one answer."""
    texts = [QUESTIONS[i % len(QUESTIONS)] for i in range(n)]
    first_channels, second_channels = [channel_id() for _ in range(n)], [channel_id() for _ in range(n)]
    load = os.getloadavg()[0]
    first: list[Sent] = []
    sender = threading.Thread(target=lambda: first.extend(h.burst(first_channels, texts)))
    started = time.monotonic()
    sender.start()
    time.sleep(max(0.0, started + after_s - time.monotonic()))
    second = h.burst(second_channels, texts)
    sender.join()
    sent = first + second
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(not h.posts(s.channel, s.ts) for s in sent):
        time.sleep(0.2)
    time.sleep(settle_s)  # a second answer to the same question would come right after the first
    replies = [h.posts(s.channel, s.ts) for s in sent]
    answered = [r[0] for r in replies if r]
    second_answered = [r[0] for r in replies[n:] if r]
    nan = float("nan")
    return TwoBursts(n, after_s, load, [s.ack_ms for s in second], [s.ack_ms for s in first],
                     sum(1 for s in sent if s.status != 200), sum(1 for r in replies if not r),
                     sum(1 for r in replies if len(r) > 1),
                     max(p.at for p in second_answered) - min(s.sent_at for s in second) if second_answered else nan,
                     max(p.at for p in answered) - min(s.sent_at for s in sent) if answered else nan,
                     sum(1 for p in answered if UNAVAILABLE in text_of(p)))


def render_two_bursts(runs: list[TwoBursts], command: str) -> str:
    n, after = runs[0].n, runs[0].after_s
    lines = [f"`{command}` ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {len(runs)} runs of {n} questions at once, then "
             f"{n} more {after:.1f} s later; medians over the runs)", "",
             "| Run | load avg (1 min) before | 1st burst ack p95 ms | 2nd burst: ack median ms | ack p95 ms "
             "| ack max ms | acks not 200 | lost | twice | 2nd burst sent -> last answer s | all answered s "
             "| model-unavailable notices |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(runs, start=1):
        lines.append(f"| {i} | {r.load:.2f} | {p95(r.first_ack_ms):.1f} | {med(r.ack_ms):.1f} | {p95(r.ack_ms):.1f} | "
                     f"{max(r.ack_ms):.1f} | {r.bad_acks} | {r.lost} | {r.duplicated} | {r.second_wall_s:.1f} | "
                     f"{r.wall_s:.1f} | {r.unavailable} |")
    lines.append(f"| **median** | {med([r.load for r in runs]):.2f} | {med([p95(r.first_ack_ms) for r in runs]):.1f} | "
                 f"{med([med(r.ack_ms) for r in runs]):.1f} | **{med([p95(r.ack_ms) for r in runs]):.1f}** | "
                 f"{med([max(r.ack_ms) for r in runs]):.1f} | {sum(r.bad_acks for r in runs)} | "
                 f"{sum(r.lost for r in runs)} | {sum(r.duplicated for r in runs)} | "
                 f"{med([r.second_wall_s for r in runs]):.1f} | {med([r.wall_s for r in runs]):.1f} | "
                 f"{sum(r.unavailable for r in runs)} |")
    return "\n".join(lines) + "\n"


def render_bursts(bursts: list[Burst], command: str) -> str:
    n = bursts[0].n
    lines = [f"`{command}` ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {len(bursts)} bursts of {n} questions at once, "
             "medians over the bursts)", "",
             "| Burst | load avg (1 min) before | bare aiohttp server: ack median / p95 ms | navibot serve: ack median "
             "ms | ack p95 ms | ack max ms | generator CPU ms (bare / navibot) | server CPU ms over the burst | "
             "acks not 200 | lost | answered twice | apologies | model-unavailable notices | wall s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, b in enumerate(bursts, start=1):
        lines.append(f"| {i} | {b.load:.2f} | {med(b.bare_ack_ms):.1f} / {p95(b.bare_ack_ms):.1f} | "
                     f"{med(b.ack_ms):.1f} | {p95(b.ack_ms):.1f} | {max(b.ack_ms):.1f} | "
                     f"{b.bare_generator_cpu_ms:.0f} / {b.generator_cpu_ms:.0f} | {b.server_cpu_ms:.0f} | "
                     f"{b.bad_acks} | {b.lost} | {b.duplicated} | {b.apologies} | {b.unavailable} | {b.wall_s:.1f} |")
    lines.append(f"| **median** | {med([b.load for b in bursts]):.2f} | {med([med(b.bare_ack_ms) for b in bursts]):.1f}"
                 f" / {med([p95(b.bare_ack_ms) for b in bursts]):.1f} | {med([med(b.ack_ms) for b in bursts]):.1f} | "
                 f"**{med([p95(b.ack_ms) for b in bursts]):.1f}** | {med([max(b.ack_ms) for b in bursts]):.1f} | "
                 f"{med([b.bare_generator_cpu_ms for b in bursts]):.0f} / "
                 f"{med([b.generator_cpu_ms for b in bursts]):.0f} | {med([b.server_cpu_ms for b in bursts]):.0f} | "
                 f"{sum(b.bad_acks for b in bursts)} | {sum(b.lost for b in bursts)} | "
                 f"{sum(b.duplicated for b in bursts)} | {sum(b.apologies for b in bursts)} | "
                 f"{sum(b.unavailable for b in bursts)} | {med([b.wall_s for b in bursts]):.1f} |")
    return "\n".join(lines) + "\n"


def main_burst(args: argparse.Namespace) -> int:
    """--at-once N: only the bursts (no storm, hang or locked store); prints a table, writes nothing."""
    command = "python benchmarks/bench_server.py " + " ".join(sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="navibot-bench-burst-") as tmp:
        extra = dict(pair.split("=", 1) for pair in args.server_env)
        harness = ServeHarness(args.keep or Path(tmp), command=args.command, extra_env=extra)
        print(f"starting navibot {args.command} {extra or ''}...", file=sys.stderr, flush=True)
        harness.start()
        try:
            for warm in range(2):  # lazy imports and connection set-up: not counted
                one_turn(harness, channel_id(), QUESTIONS[warm], None, 1)
            bursts, runs = [], []
            for i in range(args.repeat if args.second_burst_after is not None else 0):
                print(f"run {i + 1}/{args.repeat}: {args.at_once} at once, {args.at_once} more "
                      f"{args.second_burst_after:.1f} s later ...", file=sys.stderr, flush=True)
                runs.append(bench_two_bursts(harness, args.at_once, args.second_burst_after))
                print(f"  2nd burst ack p95 {p95(runs[-1].ack_ms):.1f} ms", file=sys.stderr, flush=True)
                time.sleep(1.0)
            for i in range(args.repeat if args.second_burst_after is None else 0):
                print(f"burst {i + 1}/{args.repeat}: {args.at_once} questions at once ...", file=sys.stderr,
                      flush=True)
                bursts.append(bench_burst(harness, args.at_once, args.preconnected))
                print(f"  ack p95 {p95(bursts[-1].ack_ms):.1f} ms", file=sys.stderr, flush=True)
        finally:
            code = harness.stop()
    if runs:
        print(render_two_bursts(runs, command) + f"\nServer exit code after SIGTERM: {code}")
        return 0 if all(r.lost == r.duplicated == r.bad_acks == 0 for r in runs) and code == 0 else 1
    print(render_bursts(bursts, command) + f"\nServer exit code after SIGTERM: {code}")
    return 0 if all(b.lost == b.duplicated == b.bad_acks == 0 for b in bursts) and code == 0 else 1


# --- 3. 503 storm ---------------------------------------------------------------------------------------------------

@dataclass
class Storm:
    turns: int
    with_notice: int
    answer_ms: list[float]
    generate_calls_per_turn: list[int]
    recovered: bool
    recovered_ms: float
    at_once: int = 0  # questions sent together during the storm
    at_once_with_notice: int = 0
    at_once_wall_s: float = 0.0
    at_once_answer_ms: list[float] = field(default_factory=list)


def bench_storm(h: ServeHarness, conversations: int, at_once: int, tally: Tally) -> Storm:
    h.gemini.generate_status = 503
    answer_ms: list[float] = []
    generate_calls: list[int] = []
    notice = 0
    try:
        for i in range(conversations):
            channel, thread = channel_id(), None
            for n, text in enumerate((QUESTIONS[i % len(QUESTIONS)], FOLLOW_UPS[i % len(FOLLOW_UPS)]), start=1):
                sent, post, _, calls = one_turn(h, channel, text, thread, n)
                tally.questions += 1
                thread = sent.ts
                answer_ms.append((post.at - sent.sent_at) * 1000)
                generate_calls.append(calls["generate"])
                notice += UNAVAILABLE in text_of(post) and post.args.get("thread_ts") == sent.ts
        # The same storm on a busy day: many questions at once, each failing over on every endpoint.
        channels = [channel_id() for _ in range(at_once)]
        sent_all: list[Sent] = run_all(h, [h.mention_async(ch, QUESTIONS[i % len(QUESTIONS)])
                                           for i, ch in enumerate(channels)])
        tally.questions += at_once
        posts = [h.wait_posts(ch, 1, timeout=120)[0] for ch in channels]
    finally:
        h.gemini.generate_status = None
    at_once_notice = sum(1 for s, p in zip(sent_all, posts, strict=True)
                         if UNAVAILABLE in text_of(p) and p.args.get("thread_ts") == s.ts)
    wall = max(p.at for p in posts) - min(s.sent_at for s in sent_all)
    at_once_ms = [(p.at - s.sent_at) * 1000 for s, p in zip(sent_all, posts, strict=True)]
    sent, post, _, _ = one_turn(h, channel_id(), QUESTIONS[0], None, 1)
    tally.questions += 1
    recovered = UNAVAILABLE not in text_of(post) and answer_id_of(post) is not None
    return Storm(len(answer_ms), notice, answer_ms, generate_calls, recovered, (post.at - sent.sent_at) * 1000,
                 at_once, at_once_notice, wall, at_once_ms)


@dataclass
class Hang:
    questions: int
    with_notice: int
    answer_ms: list[float]


def bench_hang(h: ServeHarness, n: int, hang_s: float, tally: Tally) -> Hang:
    """Gemini accepts the generation calls and never answers in time: the per-call timeout and the turn's deadline
    (NAVIBOT_PROVIDER_TIMEOUT_SECONDS 6, NAVIBOT_TURN_DEADLINE_SECONDS 12, the defaults) must bound the turn."""
    h.gemini.delays[":generateContent"] = hang_s
    try:
        channels = [channel_id() for _ in range(n)]
        sent: list[Sent] = run_all(h, [h.mention_async(ch, QUESTIONS[i % len(QUESTIONS)])
                                       for i, ch in enumerate(channels)])
        tally.questions += n
        posts = [h.wait_posts(ch, 1, timeout=hang_s + 30)[0] for ch in channels]
    finally:
        h.set_delays()
    notice = sum(1 for s, p in zip(sent, posts, strict=True)
                 if UNAVAILABLE in text_of(p) and p.args.get("thread_ts") == s.ts)
    return Hang(n, notice, [(p.at - s.sent_at) * 1000 for s, p in zip(sent, posts, strict=True)])


# --- 4. store unavailable -------------------------------------------------------------------------------------------

@dataclass
class StoreDown:
    questions: int
    apologies_with_trace: int
    reply_ms: list[float]
    reply_texts: list[str]
    health_before: tuple[int, str, float] | None  # lock taken, no question asked yet
    health_waiting: tuple[int, str, float] | None  # while the questions' writes wait on the lock
    health_locked: tuple[int, str, float] | None  # lock still held, no turn under way
    alive_while_locked: bool
    health_released: tuple[int, str, float] | None  # lock released, before any question
    health_after: tuple[int, str, float] | None  # after the next question was answered and saved
    recovered: bool
    recovered_ms: float
    alive_after: bool


def health(h: ServeHarness) -> tuple[int, str, float] | None:
    try:
        status, body, ms = h.get("/healthz", timeout=15)
    except Exception as exc:  # noqa: BLE001 - reported as is
        return 0, f"no response: {exc!r}", 0.0
    return None if status == 404 else (status, body.strip()[:300], ms)


def bench_store_down(h: ServeHarness, n: int, tally: Tally) -> StoreDown:
    lock = sqlite3.connect(h.conversations_path, timeout=30, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # what another writer (a backup, a migration, a stuck process) can do
    try:
        time.sleep(2.5)  # past /healthz's 2 s cache
        health_before = health(h)
        channels = [channel_id() for _ in range(n)]
        sent: list[Sent] = run_all(h, [h.mention_async(ch, QUESTIONS[i % len(QUESTIONS)])
                                       for i, ch in enumerate(channels)])
        tally.questions += n
        time.sleep(2.5)  # past the cache of the reading before; the first write still waits (5 s busy timeout)
        health_waiting = health(h)
        posts = [h.wait_posts(ch, 1, timeout=120)[0] for ch in channels]
        texts = [str(p.args.get("text")) for p in posts]
        traced = sum(1 for p, s in zip(posts, sent, strict=True)
                     if TRACE.search(text_of(p)) and p.args.get("thread_ts") == s.ts)
        tally.store_errors += traced
        health_locked = health(h)
        alive = h.alive()
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    health_released = health(h)
    sent_after, post, _, _ = one_turn(h, channel_id(), QUESTIONS[0], None, 1)
    tally.questions += 1
    recovered = answer_id_of(post) is not None and not TRACE.search(text_of(post))
    time.sleep(2.5)  # /healthz caches its probe for 2 s
    health_after = health(h)
    reply_ms = [(p.at - s.sent_at) * 1000 for s, p in zip(sent, posts, strict=True)]
    return StoreDown(n, traced, reply_ms, texts, health_before, health_waiting, health_locked, alive, health_released,
                     health_after, recovered, (post.at - sent_after.sent_at) * 1000, h.alive())


# --- 5. metrics -----------------------------------------------------------------------------------------------------

def scrape(h: ServeHarness) -> dict[str, float] | None:
    status, body, _ = h.get("/metrics")
    if status != 200:
        return None
    samples: dict[str, float] = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def metric(samples: dict[str, float], name: str, **labels: str) -> float:
    """Sum of the samples of `name` whose labels include `labels`."""
    total = 0.0
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base != name:
            continue
        if all(f'{k}="{v}"' in rest for k, v in labels.items()):
            total += value
    return total


# --- report ---------------------------------------------------------------------------------------------------------

def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def render(args: argparse.Namespace, seq: Sequential, conc: Concurrent, storm: Storm, hang: Hang, down: StoreDown,
           samples: dict[str, float] | None, tally: Tally, total_s: float, load: str, exit_code: int | None) -> str:
    command = "python benchmarks/bench_server.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
    rows: list[tuple[str, str, str, str]] = []
    n_seq = len(seq.ack_ms)
    rows += [
        (f"Sequential ({n_seq} events): event → HTTP 200 ack, median ms", f"{med(seq.ack_ms):.1f}", "—", "—"),
        (f"Sequential ({n_seq} events): event → HTTP 200 ack, p95 ms", f"{p95(seq.ack_ms):.1f}",
         f"< {ACK_P95_TARGET_MS:.0f}", verdict(p95(seq.ack_ms) < ACK_P95_TARGET_MS)),
        ("Sequential: event → chat.postMessage received, median ms (p95)",
         f"{med(seq.answer_ms):.1f} ({p95(seq.answer_ms):.1f})", "—", "—"),
        ("Sequential: bot overhead (answer time − fakes' fixed delays), median ms",
         f"{med(seq.overhead_ms):.1f}", f"< {OVERHEAD_MEDIAN_TARGET_MS:.0f}",
         verdict(med(seq.overhead_ms) < OVERHEAD_MEDIAN_TARGET_MS)),
        ("Sequential: bot overhead, p95 ms", f"{p95(seq.overhead_ms):.1f}", "—", "—"),
        ("Sequential: overhead of first questions / follow-ups, median ms",
         f"{med(seq.first_overhead_ms):.1f} / {med(seq.follow_overhead_ms):.1f}", "—", "—"),
        ("Sequential: turns not answered in their thread", str(seq.errors), "0", verdict(seq.errors == 0)),
    ]
    if seq.engine_overhead_ms:
        rows += [
            ("Sequential overhead, inside the engine (engine total − fakes' delays), median / p95 ms",
             f"{med(seq.engine_overhead_ms):.1f} / {p95(seq.engine_overhead_ms):.1f}", "—", "—"),
            *[(f"… of which stage {stage} (stage time − its fake's delay), median / p95 ms",
               f"{med(values):.1f} / {p95(values):.1f}", "—", "—") for stage, values in seq.stage_overhead_ms.items()],
            (("Sequential overhead, outside the engine (Bolt, thread hop, history and answer writes, rendering, "
              "chat.postMessage), median / p95 ms"),
             f"{med(seq.outside_engine_ms):.1f} / {p95(seq.outside_engine_ms):.1f}", "—", "—"),
        ]
    rows += [
        (f"{conc.n} at once: acks not 200 (events and clicks)", str(conc.bad_acks), "0", verdict(conc.bad_acks == 0)),
        (f"{conc.n} at once: answered in their own thread", f"{conc.answered_in_thread} / {conc.n}", f"{conc.n}",
         verdict(conc.answered_in_thread == conc.n)),
        (f"{conc.n} at once: event → ack, median / p95 ms", f"{med(conc.ack_ms):.1f} / {p95(conc.ack_ms):.1f}",
         "—", "—"),
        (f"{conc.n} at once: overhead per question (incl. waiting for a turn thread), median / p95 ms",
         f"{med(conc.overhead_ms):.0f} / {p95(conc.overhead_ms):.0f}", "—", "—"),
        (f"{conc.n} at once: wall time, first event sent → last answer received, s", f"{conc.wall_s:.2f}", "—", "—"),
        (f"{conc.n} feedback clicks at once: ack median / p95 ms",
         f"{med(conc.click_ack_ms):.1f} / {p95(conc.click_ack_ms):.1f}", "—", "—"),
        (f"{conc.n} feedback clicks: confirmed to the clicker; wall s",
         f"{conc.clicks_confirmed} / {len(conc.click_ack_ms)}; {conc.click_wall_s:.2f}", f"{conc.n}",
         verdict(conc.clicks_confirmed == conc.n)),
        (f"{conc.n} at once: rows in the conversation store (answers / history / feedback)",
         f"{conc.stored_answers} / {conc.stored_history} / {conc.stored_feedback}", f"{conc.n} each",
         verdict(conc.stored_answers == conc.stored_history == conc.stored_feedback == conc.n)),
        ("503 storm: answers posted with the unavailable notice", f"{storm.with_notice} / {storm.turns}",
         f"{storm.turns}", verdict(storm.with_notice == storm.turns)),
        ("503 storm: event → answer posted, median / p95 ms",
         f"{med(storm.answer_ms):.0f} / {p95(storm.answer_ms):.0f}", "—", "—"),
        ("503 storm: generation calls per turn (all refused), median", f"{med(storm.generate_calls_per_turn):.0f}",
         "—", "—"),
        (f"503 storm, {storm.at_once} questions at once: answered with the notice in their thread",
         f"{storm.at_once_with_notice} / {storm.at_once}", f"{storm.at_once}",
         verdict(storm.at_once_with_notice == storm.at_once)),
        (f"503 storm, {storm.at_once} at once: event → answer median / p95 ms; wall s",
         f"{med(storm.at_once_answer_ms):.0f} / {p95(storm.at_once_answer_ms):.0f}; {storm.at_once_wall_s:.2f}",
         "—", "—"),
        (f"Gemini hangs (no reply for {HANG_S:.0f} s), {hang.questions} questions at once: answered with the notice",
         f"{hang.with_notice} / {hang.questions}", f"{hang.questions}", verdict(hang.with_notice == hang.questions)),
        ("Gemini hangs: event → answer posted, median / max ms (turn deadline 12 s)",
         f"{med(hang.answer_ms):.0f} / {max(hang.answer_ms):.0f}", "< 13000",
         verdict(max(hang.answer_ms) < 13_000)),
        ("After the storm: next question answered by Gemini again; ms",
         f"{storm.recovered}; {storm.recovered_ms:.0f}", "True", verdict(storm.recovered)),
        ("Store locked: questions answered with an apology and trace id, in their thread",
         f"{down.apologies_with_trace} / {down.questions}", f"{down.questions}",
         verdict(down.apologies_with_trace == down.questions)),
        ("Store locked: event → apology posted, median / max ms",
         f"{med(down.reply_ms):.0f} / {max(down.reply_ms):.0f}", "—", "—"),
        ("Store locked: process still up", str(down.alive_while_locked), "True", verdict(down.alive_while_locked)),
    ]
    if down.health_before is not None:
        rows.append(("Store locked, no question asked yet: GET /healthz status", str(down.health_before[0]),
                     "—", "—"))
    if down.health_waiting is not None:
        rows.append(("Store locked, questions waiting on it: GET /healthz status (ms)",
                     f"{down.health_waiting[0]} ({down.health_waiting[2]:.0f} ms)", "503",
                     verdict(down.health_waiting[0] == 503)))
    if down.health_locked is not None:
        rows.append(("Store locked, no question under way: GET /healthz status (ms)",
                     f"{down.health_locked[0]} ({down.health_locked[2]:.0f} ms)", "503",
                     verdict(down.health_locked[0] == 503)))
    if down.health_released is not None:
        rows.append(("Lock released, before any question: GET /healthz status", str(down.health_released[0]),
                     "—", "—"))
    rows.append(("Lock released: next question answered; ms", f"{down.recovered}; {down.recovered_ms:.0f}",
                 "True", verdict(down.recovered and down.alive_after)))
    if down.health_after is not None:
        rows.append(("Lock released, a question answered and saved: GET /healthz status", str(down.health_after[0]),
                     "200", verdict(down.health_after[0] == 200)))
    metric_notes: list[str] = []
    if samples is not None:
        checks = [
            ("questions", metric(samples, "navibot_questions_total", platform="slack"), tally.questions),
            ("feedback 👍", metric(samples, "navibot_feedback_total", platform="slack", rating="up"), tally.clicks_up),
            ("feedback 👎", metric(samples, "navibot_feedback_total", platform="slack", rating="down"),
             tally.clicks_down),
            ("store errors", metric(samples, "navibot_errors_total", kind="store"), tally.store_errors),
            ("answers + no-answers + store errors",
             metric(samples, "navibot_answers_total", platform="slack")
             + metric(samples, "navibot_no_answers_total", platform="slack")
             + metric(samples, "navibot_errors_total", kind="store"), tally.questions),
            ("total-stage histogram count", metric(samples, "navibot_stage_seconds_count", stage="total"),
             tally.questions),  # a failed turn is timed too
        ]
        for name, seen, sent in checks:
            rows.append((f"/metrics {name}: counted vs sent", f"{seen:.0f} vs {sent}", "equal",
                         verdict(round(seen) == sent)))
        metric_notes.append(f"generation fallbacks counted: {metric(samples, 'navibot_fallbacks_total'):.0f} "
                            f"(by stage: " + ", ".join(
                                f"{k.partition('stage=')[2].strip('\"}')}={v:.0f}" for k, v in samples.items()
                                if k.startswith("navibot_fallbacks_total{")) + ")")
    else:
        rows.append(("/metrics", "not served (404)", "served", "FAIL"))
    rows.append(("Server exit code after SIGTERM", str(exit_code), "0", verdict(exit_code == 0)))

    failed = [r[0] for r in rows if r[3] == "FAIL"]
    overall = "PASS" if not failed else "FAIL: " + "; ".join(failed)
    down_text = down.reply_texts[0] if down.reply_texts else ""
    lines = [
        "## `navibot serve` under load (`bench_server.py`)",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python {platform.python_version()}; {load}",
        f"- Command: `{command}`" + (" (quick smoke check)" if args.quick else ""),
        (f"- Server: `navibot {args.command} --host 127.0.0.1 --port <free> --store <demo store>` as a subprocess, "
         "Slack HTTP mode against the fake Slack Web API; NAVIBOT_LLM=gemini, NAVIBOT_EMBEDDER=gemini, "
         "NAVIBOT_RERANK=cohere on fake APIs with fixed delays (generation "
         f"{GENERATE_S * 1000:.0f} ms, embedding {EMBED_S * 1000:.0f} ms, rerank {RERANK_S * 1000:.0f} ms); "
         "2 Gemini keys (2 failover endpoints); signed requests; the demo knowledge base."),
        f"- Model calls in the sequential run: {seq.calls}; in the {conc.n} concurrent questions: {conc.calls}.",
        f"- The store-locked apology reads: \"{down_text}\"",
        *(f"- /healthz {when}: {found[0]} {found[1]}" for when, found in
          (("with the lock taken, before any question", down.health_before),
           ("while the locked questions waited", down.health_waiting),
           ("with the lock held, no question under way", down.health_locked),
           ("right after the lock was released", down.health_released),
           ("after the next question was saved", down.health_after)) if found is not None),
        *(f"- {note}" for note in metric_notes + tally.notes),
        f"- Whole benchmark took {total_s:.0f} s. Overall: **{overall}**",
        "",
        "| Figure | Value | Target | Result |",
        "|---|---:|---:|:---:|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows],
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke check: fewer events (does not update RESULTS.md)")
    parser.add_argument("--write", action="store_true", help="update RESULTS.md even after a --quick run")
    parser.add_argument("--command", default="serve", choices=["serve", "slack"],
                        help="the server command (default serve; `slack` runs the Slack-only server, without "
                             "/healthz and /metrics)")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (server log, stores)")
    parser.add_argument("--at-once", type=int, metavar="N",
                        help="only N questions at once (load generator in its own process), --repeat times")
    parser.add_argument("--repeat", type=int, default=3, help="bursts with --at-once (default 3)")
    parser.add_argument("--preconnected", action="store_true",
                        help="with --at-once: the connections are opened first, untimed (benchmarks/load_burst.py)")
    parser.add_argument("--second-burst-after", type=float, metavar="S",
                        help="with --at-once: a second burst of N, S seconds after the first (its answers still "
                             "being worked out): the second burst's acks, and lost/duplicated over both")
    parser.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                        help="with --at-once: a setting for the server (e.g. NAVIBOT_COMPUTE_SLOTS=0), repeatable")
    args = parser.parse_args(argv)
    if args.at_once:
        return main_burst(args)
    conversations, concurrent, storm_conversations, hung, locked = ((5, 10, 2, 2, 2) if args.quick
                                                                    else (30, 50, 10, 5, 5))

    started = time.perf_counter()
    load = machine_load()
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="navibot-bench-server-") as tmp:
        workdir = args.keep or Path(tmp)
        harness = ServeHarness(workdir, command=args.command)
        print(f"starting navibot {args.command} in {workdir} ...", file=sys.stderr, flush=True)
        harness.start()
        exit_code: int | None = None
        try:
            print(f"{conversations * 2} sequential events ...", file=sys.stderr, flush=True)
            seq = bench_sequential(harness, conversations, tally)
            print(f"{concurrent} questions at once, then {concurrent} feedback clicks ...", file=sys.stderr,
                  flush=True)
            conc = bench_concurrent(harness, concurrent, tally)
            print("503 storm ...", file=sys.stderr, flush=True)
            storm = bench_storm(harness, storm_conversations, concurrent, tally)
            print(f"Gemini hangs, {hung} questions at once ...", file=sys.stderr, flush=True)
            hang = bench_hang(harness, hung, HANG_S, tally)
            print("store locked ...", file=sys.stderr, flush=True)
            down = bench_store_down(harness, locked, tally)
            samples = scrape(harness) if args.command == "serve" else None
        finally:
            exit_code = harness.stop()
            if args.keep:
                print(f"server log: {harness.log_path}", file=sys.stderr)
    section = render(args, seq, conc, storm, hang, down, samples, tally, time.perf_counter() - started, load, exit_code)
    publish("bench_server", section, args.quick, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The time the bot adds around the model calls with the OpenAI-compatible provider, per stage of a turn.

    python benchmarks/bench_openai.py [--write] [--conversations 25]

As bench_providers.py does for Gemini and Cohere: a fake OpenAI-compatible server (tests/fakes/fake_openai.py) and a
fake vLLM reranker (tests/fakes/fake_rerankers.py) on 127.0.0.1 reply after a fixed delay (200 ms per chat
completion, answer or rewrite; 30 ms per embedding call; 50 ms per rerank). Turns go through the turn handler on
the bundled demo knowledge base with NAVIBOT_LLM=openai, NAVIBOT_EMBEDDER=openai and NAVIBOT_RERANK=cohere pointed
at the reranker, driven by the real openai and cohere clients. For each stage, the time added by the bot is the
stage's time minus the fake's delay for the calls made in it.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import statistics
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pydantic import SecretStr

from benchmarks.results_file import machine_load, write_section
from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import build_bot
from rag.engine import Outcome
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.fake_rerankers import FakeVllmRerank

CHAT_MS, EMBED_MS, RERANK_MS = 200.0, 30.0, 50.0
TARGET_MS = 50.0
FIRST = ["Can college students get SNAP?", "What is the SNAP gross income limit?", "Who qualifies for Medicaid?",
         "How often do I renew Medicaid?", "Who can get WIC?", "How much is the Child Tax Credit?",
         "Can I get the EITC without children?", "How do I apply for LIHEAP?", "How much is SSI a month?",
         "How long does unemployment last?", "Does CHIP cover pregnant teens?", "Can a green card holder get SNAP?"]
FOLLOW = ["what if they work 20 hours a week?", "how do I apply?", "and for a family of four?"]
STAGES = ("rewrite", "retrieve", "rerank", "generate", "total")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(conversations: int) -> tuple[dict[str, list[float]], dict[str, list[float]], list[float], dict[str, int],
                                     list[float]]:
    server, reranker = FakeOpenAI("openai").start(), FakeVllmRerank().start()
    try:
        with tempfile.TemporaryDirectory(prefix="navibot-bench-openai-") as tmp:
            settings = Settings(_env_file=None, data_dir=Path(tmp), llm="openai", embedder="openai",  # type: ignore[call-arg]
                                openai_api_keys=[SecretStr("bench")], openai_base_urls=[f"{server.url}/v1"],
                                openai_embed_dim=256, rerank="cohere", cohere_base_urls=[reranker.url])
            bot = build_bot(settings)
            try:
                bot.core.ingestor.ingest_paths([demo_kb_path()])
                server.reset()
                reranker.reset()
                server.delays = {"/chat/completions": CHAT_MS / 1000, "/embeddings": EMBED_MS / 1000}
                reranker.delays = {"/v2/rerank": RERANK_MS / 1000}
                outcomes: list[Outcome] = []
                answer = bot.engine.answer

                def recording(*args: Any, **kwargs: Any) -> Outcome:
                    outcome = answer(*args, **kwargs)
                    outcomes.append(outcome)
                    return outcome

                bot.engine.answer = recording  # type: ignore[method-assign]
                bot.handler.handle(Turn("cli", "w", "c", "warm-up", "u", FIRST[0]))
                outcomes.clear()
                server.calls.clear()
                reranker.calls.clear()
                measured: dict[str, list[float]] = {s: [] for s in STAGES}
                raw: dict[str, list[float]] = {s: [] for s in STAGES}
                handler_added: list[float] = []
                cpu: list[float] = []  # CPU time of the turn's thread: what the machine's load cannot inflate
                questions, follow_ups = itertools.cycle(FIRST), itertools.cycle(FOLLOW)
                for conversation in range(conversations):
                    for text, is_follow_up in ((next(questions), False), (next(follow_ups), True)):
                        started, cpu_started = time.perf_counter(), time.thread_time()
                        reply = bot.handler.handle(Turn("cli", "w", "c", f"t{conversation}", "u", text))
                        wall = (time.perf_counter() - started) * 1000
                        cpu.append((time.thread_time() - cpu_started) * 1000)
                        outcome = outcomes[-1]
                        assert reply.kind in (ReplyKind.ANSWER, ReplyKind.NO_ANSWER) and not outcome.fallbacks, (
                            outcome.fallbacks)
                        t = outcome.timings_ms
                        delays = {"rewrite": CHAT_MS if is_follow_up else 0.0, "retrieve": EMBED_MS,
                                  "rerank": RERANK_MS, "generate": CHAT_MS if "generate" in t else 0.0}
                        delays["total"] = sum(delays.values())
                        for stage, delay in delays.items():
                            if stage == "rewrite" and not is_follow_up:
                                continue  # no model call on a first question: nothing to rewrite
                            raw[stage].append(t[stage])
                            measured[stage].append(t[stage] - delay)
                        handler_added.append(wall - delays["total"])
                counts = {"chat calls": sum(c.path.endswith("/chat/completions") for c in server.calls),
                          "embed calls": sum(c.path.endswith("/embeddings") for c in server.calls),
                          "rerank calls": len(reranker.calls),
                          "answers": sum(1 for o in outcomes if o.kind == "answer"), "turns": len(outcomes)}
            finally:
                bot.close()
    finally:
        server.stop()
        reranker.stop()
    return measured, raw, handler_added, counts, cpu


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    parser.add_argument("--conversations", type=int, default=25,
                        help="two-turn conversations, one after the other (default 25: 50 turns)")
    parser.add_argument("--no-compare", action="store_true",
                        help="skip the same-hour run of bench_providers.py (the Gemini path) for comparison")
    args = parser.parse_args()
    load = machine_load()
    measured, raw, handler_added, counts, cpu = run(args.conversations)
    gemini_added: list[float] = []
    if not args.no_compare:  # the same machine, the same hour: a shared machine's load moves every figure
        from benchmarks.bench_providers import run as run_gemini

        gemini_added = run_gemini(args.conversations)[2]
    delay = {"rewrite": CHAT_MS, "retrieve": EMBED_MS, "rerank": RERANK_MS, "generate": CHAT_MS}
    rows = ["| stage | fake server delay | stage time, median | added by the bot, median | added, p95 |",
            "|---|---|---|---|---|"]
    for stage, values in measured.items():
        fake = f"{delay[stage]:.0f} ms" if stage in delay else "all calls of the turn"
        rows.append(f"| {stage} | {fake} | {statistics.median(raw[stage]):.1f} ms | "
                    f"{statistics.median(values):.1f} ms | {p95(values):.1f} ms |")
    overhead = statistics.median(handler_added)
    rows.append(f"| turn through the handler (history and answer saved) | all calls of the turn | – | "
                f"{overhead:.1f} ms | {p95(handler_added):.1f} ms |")
    rows.append(f"| CPU time of the turn's thread (no waiting counted) | – | – | {statistics.median(cpu):.1f} ms | "
                f"{p95(cpu):.1f} ms |")
    verdict = "PASS" if overhead < TARGET_MS else "FAIL"
    compare = (f"The Gemini path (bench_providers.py), run right after on the same machine and load: "
               f"{statistics.median(gemini_added):.1f} ms median, {p95(gemini_added):.1f} ms p95 through the "
               "handler; a gap between the two is the provider's, the rest is the machine's load."
               if gemini_added else "")
    target = "\n".join(textwrap.wrap(
        f"Target: the bot's own overhead around the model calls under {TARGET_MS:.0f} ms median per turn: "
        f"**{verdict}** ({overhead:.1f} ms). {compare}", 116))
    body = f"""## OpenAI-compatible provider: time added by the bot around the model calls

Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, {load};
`python benchmarks/bench_openai.py`. {counts['turns']} turns ({args.conversations} two-turn conversations, one after
the other, on the demo knowledge base) through the turn handler with `NAVIBOT_LLM=openai`,
`NAVIBOT_EMBEDDER=openai` (256 dims) and `NAVIBOT_RERANK=cohere` on a vLLM-shaped reranker; the real openai and
cohere clients call local fake servers that reply after a fixed delay (chat completion {CHAT_MS:.0f} ms, embedding
{EMBED_MS:.0f} ms, rerank {RERANK_MS:.0f} ms). "Added by the bot" is the stage's time minus the fake's delay
(prompt building, the SDKs' request and response handling, the local HTTP round trip, retrieval, the citation
rail). Calls made: {counts['chat calls']} chat completions, {counts['embed calls']} query embeddings,
{counts['rerank calls']} reranks; {counts['answers']} of {counts['turns']} turns answered, no fallback taken.

{target}

{chr(10).join(rows)}
"""
    print(body)
    if args.write:
        write_section("bench_openai", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

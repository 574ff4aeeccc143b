"""Speed of the admin page (/admin of `navibot serve`, bot/server/admin/) on a large conversation store.

    python benchmarks/bench_admin.py            # 100,000 questions, 10,000 to group; updates RESULTS.md
    python benchmarks/bench_admin.py --quick    # 10,000 questions, 2,000 to group; prints only

What is measured (time.perf_counter, on this machine, the demo knowledge base and the bundled WordLlama embedder):

1. Start-up: the admin page's background read of the whole store into its in-memory snapshot (and the grouping
   of the default period's knowledge gaps), timed from the server's start until it is done.
2. The page opening: GET /admin (the Overview, default period: the last 30 days, which holds every stored
   question) through the real aiohttp routes and an HTTP client, logged in, on an embedded (SQLite) conversation
   store of N questions over 30 days (2 platforms, 60 channels, 22% not answered, 10% rated, 5% of the ratings
   👎 with a reason). The first request and the median of 5 more; the same for the Feedback and Documents views,
   the Overview with 20 answers saved before each view (a busy bot), and the Knowledge gaps page (grouped at
   start-up; and for another period, whose first view groups its no-answers and 👎).
3. Grouping unanswered questions by meaning (`group_by_meaning`: embedding with WordLlama + the one-pass grouping)
   on M distinct unanswered questions made from the templates below; median of 3 runs.

The store is filled with one transaction of inserts in the store's own schema (saving 100,000 answers one by one
with synchronous=FULL would take as long as the measurement is worth); the store is then reopened as the server
opens it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # measure this checkout, whatever the venv's editable install points at

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from benchmarks.results_file import machine_load, publish
from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import AnswerRecord
from bot.server.admin import add_admin_routes
from bot.server.admin.gaps import GapQuestion, group_by_meaning
from bot.server.admin.routes import ADMIN
from bot.wiring.runtime import Bot, build_bot, build_core

TOKEN = "benchmark-admin-token-0123456789"
PROGRAMS = ["SNAP", "WIC", "Medicaid", "CHIP", "LIHEAP", "SSI", "SSDI", "EITC", "TANF", "unemployment insurance",
            "the Child Tax Credit", "Section 8 housing"]
ASKS = ["How do I apply for {p}?", "Who is eligible for {p}?", "What is the income limit for {p} in {s}?",
        "Can a college student get {p}?", "How long does a {p} decision take in {s}?",
        "What documents does {p} need?", "Can an immigrant family get {p}?", "How do I appeal a {p} denial?",
        "What is the phone number of the {p} office in {s}?", "Does {p} count child support as income?"]
STATES = ["Texas", "Ohio", "Maine", "Iowa", "Utah", "Oregon", "Georgia", "Nevada", "Idaho", "Vermont"]
DOCS = [("demo_kb/snap-students", "SNAP for college students"), ("demo_kb/wic", "WIC for women, infants and children"),
        ("demo_kb/liheap", "LIHEAP energy assistance"), ("demo_kb/medicaid-eligibility", "Medicaid eligibility basics"),
        ("demo_kb/ssi", "Supplemental Security Income (SSI)"), ("demo_kb/chip", "CHIP, the Children's Health "
                                                                                 "Insurance Program")]


def question(rng: random.Random) -> str:
    return rng.choice(ASKS).format(p=rng.choice(PROGRAMS), s=rng.choice(STATES)) + rng.choice(["", " Thanks", " ?",
                                                                                             " urgent"])


def fill(path: Path, count: int, seed: int = 7) -> None:
    """`count` questions over the last 30 days into a conversation store file, in one transaction."""
    SQLiteConversationStore(path).close()  # the schema, as the bot makes it
    rng = random.Random(seed)
    now = datetime.now(UTC)
    answers, ratings = [], []
    for n in range(count):
        created = (now - timedelta(seconds=rng.uniform(60, 29.5 * 86400))).isoformat(timespec="milliseconds")
        platform = "slack" if rng.random() < 0.7 else "teams"
        channel = f"C{rng.randrange(60):03d}"
        answered = rng.random() >= 0.22
        doc_id, title = rng.choice(DOCS)
        citations = [{"number": 1, "doc_id": doc_id, "chunk_id": f"{doc_id}::0", "sub_id": f"{doc_id}::0.0",
                      "title": title, "heading_path": ["Eligibility"], "url": None, "page": None,
                      "quote": "A paragraph of the source, quoted verbatim."}] if answered else []
        text = question(rng)
        answers.append((f"a{n}", f"{platform}|T1|{channel}|t{n}", platform, f"U{n % 500}", text, text,
                        "A short answer in plain words [1]." if answered else "I couldn't find this.",
                        "answer" if answered else "no_answer", "concise", json.dumps(citations), created,
                        rng.lognormvariate(6.8, 0.5)))
        if rng.random() < 0.10:
            helpful = rng.random() >= 0.05
            ratings.append((f"a{n}", f"U{n % 500}", int(helpful), None if helpful else "It missed the state's rule",
                            created, created))
    db = sqlite3.connect(path)
    with db:
        db.executemany("INSERT INTO answers(answer_id, conversation_key, platform, user, question, standalone, answer,"
                       " kind, mood, citations, created, latency_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", answers)
        db.executemany("INSERT INTO feedback(answer_id, user, helpful, reason, created, updated) VALUES (?,?,?,?,?,?)",
                       ratings)
    db.close()


async def timed_get(client: TestClient[web.Request, web.Application], path: str, runs: int) -> tuple[float, float]:
    """(first request, median of `runs` more), in seconds, each a full response read."""
    times = []
    for _ in range(runs + 1):  # runs=0: the first request only
        start = time.perf_counter()
        response = await client.get(path)
        await response.read()
        assert response.status == 200, (path, response.status)
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:] or times)


async def measure_pages(bot: Bot, settings: Settings, runs: int) -> tuple[float, dict[str, tuple[float, float]]]:
    """(the start-up read of the snapshot, {view: (first request, median of `runs` more)})."""
    app = web.Application()
    add_admin_routes(app, bot, settings)
    started = time.perf_counter()
    async with TestClient(TestServer(app)) as client:
        warming = app[ADMIN].warming
        assert warming is not None
        await warming
        warm = time.perf_counter() - started
        origin = str(client.make_url("")).rstrip("/")
        login = await client.post("/admin/login", data={"token": TOKEN}, headers={"Origin": origin},
                                  allow_redirects=False)
        assert login.status == 303
        out = {}
        for name, path in (("Overview (/admin)", "/admin"), ("Feedback", "/admin/feedback"),
                           ("Documents", "/admin/documents")):
            out[name] = await timed_get(client, path, runs)
        times = []  # a busy bot: 20 new answers saved before each view
        rng = random.Random(3)
        for n in range(runs):
            for k in range(20):
                bot.conversations.save_answer(AnswerRecord(
                    f"new{n}-{k}", "slack|T1|C001|x", "slack", "U1", question(rng), "", "An answer [1].", "answer",
                    "concise", [], "", 900.0))
            first, _ = await timed_get(client, "/admin", 0)
            times.append(first)
        out["Overview, 20 new answers saved before each view"] = (times[0], statistics.median(times))
        out["Knowledge gaps (grouped at start-up)"] = await timed_get(client, "/admin/gaps", runs)
        out["Knowledge gaps, another period (first: groups them)"] = await timed_get(client, "/admin/gaps?days=29", 1)
        return warm, out


def gap_questions(count: int, seed: int = 11) -> list[GapQuestion]:
    rng = random.Random(seed)
    texts: set[str] = set()
    while len(texts) < count:
        texts.add(question(rng) + f" case {rng.randrange(1000)}")
    return [GapQuestion(f"g{n}", t, "", "no answer", "slack:C1") for n, t in enumerate(sorted(texts))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true", help="write a --quick run's figures into RESULTS.md")
    args = parser.parse_args()
    count, to_group, runs = (10_000, 2_000, 3) if args.quick else (100_000, 10_000, 5)
    load = machine_load()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = Settings(_env_file=None, data_dir=folder, admin_token=SecretStr(TOKEN),  # type: ignore[call-arg]
                            admin_plain_http=True)
        core = build_core(settings, folder / "knowledge.sqlite3")
        core.ingestor.ingest_paths([demo_kb_path()])
        core.close()
        start = time.perf_counter()
        fill(folder / "conversations.sqlite3", count)
        filled = time.perf_counter() - start
        bot = build_bot(settings, folder / "knowledge.sqlite3", folder / "conversations.sqlite3")
        try:
            embedder = bot.core.embedder
            embedder.embed_queries(["warm up the model"])  # loaded once per process, before timing
            warm, pages = asyncio.run(measure_pages(bot, settings, runs))
            questions = gap_questions(to_group)
            grouping, topics = [], 0
            for _ in range(3):
                start = time.perf_counter()
                topics = len(group_by_meaning(questions, embedder))
                grouping.append(time.perf_counter() - start)
        finally:
            bot.close()
    lines = [f"## Admin page speed (`bench_admin.py`{' --quick' if args.quick else ''})", "",
             f"{datetime.now(UTC).date().isoformat()}, {load}. An embedded (SQLite) conversation store of "
             f"{count:,} questions over the last 30 days (filled in {filled:.1f} s), the demo knowledge base, "
             "WordLlama; each page requested through the real aiohttp routes, logged in, response read in full. "
             "At start-up the admin page reads the store once into its in-memory snapshot and groups the default "
             f"period's knowledge gaps, in the background: {warm:.1f} s here; a view that comes earlier waits for "
             "it. Every view then reads only what is new; a period's gap topics are kept 5 minutes.",
             "",
             "| View (default period: last 30 days, every stored question) | first request | median of "
             f"{runs} more |", "|---|---|---|"]
    for name, (first, median) in pages.items():
        later = f"{median * 1000:,.0f} ms" if "first: groups" not in name else f"(cached: {median * 1000:,.0f} ms)"
        lines.append(f"| {name} | {first * 1000:,.0f} ms | {later} |")
    lines += ["", f"Grouping {len(questions):,} distinct unanswered questions by meaning (embedding + one-pass "
              f"grouping, {topics:,} topics): median {statistics.median(grouping):.2f} s of 3 runs "
              f"(target < 10 s). Overview target: < 1 s."]
    publish("bench_admin", "\n".join(lines), args.quick, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

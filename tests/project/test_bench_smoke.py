"""The server benchmarks' harness works: `navibot serve` as a subprocess answers a signed Slack event in its thread,
takes a feedback click, and its peak memory can be read (benchmarks/serve_harness.py; the benchmarks themselves
never run in the test suite)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from benchmarks.serve_harness import ServeHarness, answer_id_of, channel_id, run_all


def test_the_bench_harness_drives_navibot_serve_end_to_end(demo_store: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    harness = ServeHarness(tmp_path / "bench", store=demo_store, providers=False).start()
    try:
        channel = channel_id()
        sent = harness.mention(channel, "Can college students get SNAP?")
        assert sent.status == 200 and sent.ack_ms < 5000
        [post] = harness.wait_posts(channel, 1, timeout=30)
        assert post.args["thread_ts"] == sent.ts and post.at > sent.sent_at
        answer_id = answer_id_of(post)
        assert answer_id, post.args
        [(status, _)] = run_all(harness, [harness.click_feedback_async(post, "U0CLICKER", True)])
        assert status == 200
        [note] = harness.loop.run(harness.slack.wait_for("chat.postEphemeral", 1, channel, 15), 20)
        assert "saved" in note.args["text"]
        memory = harness.memory_kb()
        assert memory["VmHWM"] >= memory["VmRSS"] > 10_000  # kB: a live Python process with the bot loaded
        db = sqlite3.connect(f"file:{harness.conversations_path}?mode=ro", uri=True)
        try:
            assert db.execute("SELECT helpful FROM feedback WHERE answer_id = ?", (answer_id,)).fetchall() == [(1,)]
        finally:
            db.close()
        status_code, body, _ = harness.get("/metrics")
        assert status_code == 200 and 'navibot_questions_total{platform="slack"} 1' in body
    finally:
        assert harness.stop() == 0, harness.log_path.read_text(errors="replace")[-2000:]
    assert time.monotonic() - started < 30

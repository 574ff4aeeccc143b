"""Draws docs/images/assistant-pane.png: what the bot sent to Slack's assistant pane in one conversation, as the
test suite's fake Slack recorded it (the greeting, the suggested prompts, the title, the statuses, the streamed
answer and the blocks that close it), laid out like the pane and photographed with headless Chromium.

    .venv/bin/python docs/draw_assistant_pane.py

It is not a screenshot of Slack (the pane needs a real workspace): every text in the picture is one the bot sent.
The bot runs in this process on the demo knowledge base with NAVIBOT_LLM=gemini against the streaming fake Gemini,
so the answer is the fake model's (the first sentence of the paragraph that best matches the question)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from pydantic import SecretStr  # noqa: E402

from bot.cli.main import demo_kb_path  # noqa: E402
from bot.config.settings import Settings  # noqa: E402
from bot.wiring.runtime import build_bot, build_core  # noqa: E402
from tests.fakes.fake_gemini_stream import FakeStreamingGemini  # noqa: E402
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, Call, serve_http  # noqa: E402

SECRET = "draw-the-assistant-pane-secret-01"
QUESTION = "Can college students get SNAP?"
OUT = REPO / "docs" / "images" / "assistant-pane.png"


async def record() -> list[Call]:
    folder = Path(tempfile.mkdtemp(prefix="navibot-pane-"))
    gemini = FakeStreamingGemini()
    gemini.start()
    settings = Settings(_env_file=None, data_dir=folder, llm="gemini",  # type: ignore[call-arg]
                        gemini_api_keys=[SecretStr("draw-key")], gemini_base_urls=[gemini.url])
    core = build_core(settings, folder / "knowledge.sqlite3")
    core.ingestor.ingest_paths([demo_kb_path()])
    core.close()
    bot = build_bot(settings, folder / "knowledge.sqlite3", folder / "conversations.sqlite3")
    served = await serve_http(bot, SECRET)
    channel, thread_ts = "D0PANE", f"{int(time.time())}.000100"

    async def event(body: dict[str, Any]) -> None:
        envelope = json.dumps({"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                               "event": body, "event_id": f"Ev{uuid.uuid4().hex[:10]}",
                               "event_time": int(time.time()),
                               "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]})
        ts = str(int(time.time()))
        signature = hmac.new(SECRET.encode(), f"v0:{ts}:{envelope}".encode(), hashlib.sha256).hexdigest()
        async with served.session.post(served.url, data=envelope.encode(), headers={
                "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={signature}",
                "Content-Type": "application/json"}) as response:
            assert response.status == 200

    try:
        await event({"type": "assistant_thread_started", "event_ts": thread_ts, "assistant_thread": {
            "user_id": "U0NINA", "channel_id": channel, "thread_ts": thread_ts, "context": {}}})
        await served.fake.wait_for("assistant.threads.setSuggestedPrompts")
        ts = f"{int(time.time())}.000200"
        await event({"type": "message", "channel": channel, "channel_type": "im", "user": "U0NINA",
                     "text": QUESTION, "ts": ts, "thread_ts": thread_ts, "event_ts": ts, "team": TEAM_ID})
        await served.fake.wait_for("chat.stopStream", timeout=30)
        await asyncio.sleep(0.2)
        return list(served.fake.calls)
    finally:
        await served.stop()
        bot.close()
        gemini.stop()


def markdown_text(text: str) -> str:
    """The streamed markdown as Slack shows it (the escapes undone)."""
    for char in "\\`*_~[]<>|#":
        text = text.replace("\\" + char, char)
    return text


def page(calls: list[Call]) -> str:
    def first(method: str) -> dict[str, Any]:
        return next(c.args for c in calls if c.method == method)

    greeting = first("chat.postMessage")["text"]
    prompts = first("assistant.threads.setSuggestedPrompts")["prompts"]
    title = first("assistant.threads.setTitle")["title"]
    statuses = list(dict.fromkeys(c.args["status"] for c in calls if c.method == "assistant.threads.setStatus"))
    stop = first("chat.stopStream")
    streamed = "".join(str(c.get("text", "")) for call in calls if call.method in (
        "chat.startStream", "chat.appendStream", "chat.stopStream") for c in call.args.get("chunks") or [])
    context = " ".join(e.get("text", "") for b in stop["blocks"] if b["type"] == "context" for e in b["elements"])
    buttons = [e["text"]["text"] for b in stop["blocks"] if b["type"] == "actions" for e in b["elements"]]
    buttons += [e[side]["text"]["text"] for b in stop["blocks"] if b["type"] == "context_actions"
                for e in b["elements"] if e.get("type") == "feedback_buttons"
                for side in ("positive_button", "negative_button")]

    def esc(text: str) -> str:
        return html.escape(text).replace("\n", "<br>")

    chips = "".join(f'<span class="chip">{esc(p["title"])}</span>' for p in prompts)
    status_lines = "".join(f"<div>Navibot {esc(s[0].lower() + s[1:])}</div>" for s in statuses)
    button_row = "".join(f'<span class="button">{esc(b)}</span>' for b in buttons)
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; font: 15px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d1c1d;
       background: #f4ede4; }}
.pane {{ width: 560px; margin: 16px; background: #fff; border: 1px solid #ddd; border-radius: 8px; }}
.head {{ padding: 12px 16px; border-bottom: 1px solid #eee; font-weight: 700; }}
.head small {{ display: block; font-weight: 400; color: #616061; }}
.msg {{ display: flex; gap: 10px; padding: 10px 16px; }}
.avatar {{ width: 36px; height: 36px; border-radius: 6px; background: #1d4f91; color: #fff; flex: none;
          display: flex; align-items: center; justify-content: center; font-weight: 700; }}
.avatar.user {{ background: #e8912d; }}
.name {{ font-weight: 700; }}
.chip {{ display: inline-block; margin: 4px 6px 0 0; padding: 3px 10px; border: 1px solid #ccc; border-radius: 14px;
        font-size: 13px; }}
.status {{ margin: 0 16px 6px 62px; color: #616061; font-style: italic; font-size: 13px; }}
.context {{ color: #616061; font-size: 13px; margin-top: 6px; }}
.button {{ display: inline-block; margin: 8px 8px 0 0; padding: 4px 12px; border: 1px solid #bbb; border-radius: 4px;
          font-weight: 700; font-size: 13px; }}
.note {{ margin: 8px 16px 14px; color: #8a8a8a; font-size: 12px; }}
</style></head><body><div class="pane">
<div class="head">Navibot<small>Thread: {esc(title)}</small></div>
<div class="msg"><div class="avatar">N</div><div><div class="name">Navibot</div>{esc(greeting)}
<div>{chips}</div></div></div>
<div class="msg"><div class="avatar user">N</div>
<div><div class="name">Nina (navigator)</div>{esc(QUESTION)}</div></div>
<div class="status">While it worked, the thread's status:{status_lines}</div>
<div class="msg"><div class="avatar">N</div><div><div class="name">Navibot</div>{esc(markdown_text(streamed))}
<div class="context">{esc(context)}</div><div>{button_row}</div></div></div>
<div class="note">Drawn from the calls the bot made to the fake Slack in the test suite, not a screenshot of
Slack.</div>
</div></body></html>"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    calls = asyncio.run(record())
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "pane.html"
        source.write_text(page(calls), encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            view = browser.new_page(viewport={"width": 600, "height": 400}, device_scale_factor=1)
            view.goto(source.as_uri())
            view.locator(".pane").screenshot(path=str(OUT))
            browser.close()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

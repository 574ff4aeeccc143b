"""Under a burst of Slack requests the acks come first: the work a request starts waits until the requests stop
arriving (or a short cap), so it does not compete with the acks still to send for the event loop and the GIL."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from pydantic import SecretStr

from adapters.slack import app as slack_app
from adapters.slack.app import ACK_FIRST_MAX_SECONDS, ACK_FIRST_QUIET_SECONDS, SlackApp
from adapters.slack.settings import SlackSettings


def slack() -> SlackApp:
    settings = SlackSettings(_env_file=None, slack_bot_token=SecretStr("xoxb-test"),  # type: ignore[call-arg]
                             slack_signing_secret=SecretStr("secret"))
    bot: Any = SimpleNamespace(suggested_questions=list, is_chat_command=lambda text: False)
    return SlackApp(bot, settings)


async def started_after(app: SlackApp, requests_for: float, every: float = 0.001) -> tuple[float, float]:
    """Spawns work right after a request, keeps requests coming for `requests_for` seconds; returns when the work
    began and when the requests stopped (seconds from the spawn)."""
    loop = asyncio.get_running_loop()
    began = asyncio.get_running_loop().create_future()

    async def work() -> None:
        began.set_result(loop.time())

    t0 = loop.time()
    app.note_request()
    app._spawn(work())
    while loop.time() - t0 < requests_for and not began.done():
        await asyncio.sleep(every)
        app.note_request()
    stopped = loop.time() - t0
    return await asyncio.wait_for(began, 2) - t0, stopped


def test_work_waits_while_requests_keep_arriving_then_starts_at_once() -> None:
    async def scenario() -> tuple[float, float]:
        return await started_after(slack(), requests_for=0.08)

    began, stopped = asyncio.run(scenario())
    assert stopped >= 0.08  # the work did not start while the burst went on ...
    assert began >= 0.08
    assert began < stopped + ACK_FIRST_QUIET_SECONDS + 0.05  # ... and started right after it


def test_work_starts_within_the_cap_however_busy_the_door() -> None:
    async def scenario() -> tuple[float, float]:
        return await started_after(slack(), requests_for=1.0)

    began, stopped = asyncio.run(scenario())
    assert ACK_FIRST_MAX_SECONDS <= began < ACK_FIRST_MAX_SECONDS + 0.1 and stopped < 1.0


def test_a_lone_request_s_work_waits_only_the_quiet_gap() -> None:
    async def scenario() -> tuple[float, float]:
        return await started_after(slack(), requests_for=0.0)

    began, _ = asyncio.run(scenario())
    assert began < ACK_FIRST_QUIET_SECONDS + 0.05


def test_work_cancelled_before_it_began_is_closed_not_left_unawaited() -> None:
    ran: list[bool] = []

    async def work() -> None:
        ran.append(True)

    async def scenario() -> None:
        app = slack()
        app.note_request()
        coro = work()
        app._spawn(coro)
        await asyncio.sleep(0)
        for task in list(app.tasks):
            task.cancel()
        await asyncio.gather(*app.tasks, return_exceptions=True)
        assert getattr(coro, "cr_frame", "open") is None  # closed: no "never awaited" warning, and it never ran

    asyncio.run(scenario())
    assert ran == []


def test_the_events_route_notes_every_request() -> None:
    """events_handler calls note_request first, before the signature check: a refused request counts too."""
    calls: list[bool] = []

    class Noting(SlackApp):
        def note_request(self) -> None:
            calls.append(True)
            super().note_request()

    async def scenario() -> int:
        from aiohttp.test_utils import make_mocked_request
        bot: Any = SimpleNamespace(suggested_questions=list, is_chat_command=lambda t: False,
                                   report_error=lambda *a: None)
        app = Noting(bot,
                     SlackSettings(_env_file=None, slack_bot_token=SecretStr("xoxb-test"),  # type: ignore[call-arg]
                                   slack_signing_secret=SecretStr("secret")))
        request = make_mocked_request("POST", "/slack/events")
        request._read_bytes = b"{}"
        response = await slack_app.events_handler(app)(request)
        return response.status

    assert asyncio.run(scenario()) == 401
    assert calls == [True]

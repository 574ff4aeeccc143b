"""Under a burst of Slack requests the acks come first: the work a request starts waits while requests keep
arriving (judged by the event loop's progress, not by the clock), then starts in the order it was started, one
piece at a time, and never waits longer than the cap (adapters/slack/after_acks.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from pydantic import SecretStr

from adapters.slack import app as slack_app
from adapters.slack.after_acks import AfterAcks
from adapters.slack.app import SlackApp
from adapters.slack.settings import SlackSettings


def slack() -> SlackApp:
    settings = SlackSettings(_env_file=None, slack_bot_token=SecretStr("xoxb-test"),  # type: ignore[call-arg]
                             slack_signing_secret=SecretStr("secret"))
    bot: Any = SimpleNamespace(suggested_questions=list, is_chat_command=lambda text: False)
    return SlackApp(bot, settings)


async def started(door: AfterAcks, name: str, log: list[str]) -> None:
    await door.wait()
    log.append(name)


async def requests(door: AfterAcks, iterations: int) -> None:
    """A request noted on every loop iteration: a door that never goes quiet while this runs."""
    for _ in range(iterations):
        door.note_request()
        await asyncio.sleep(0)


def test_work_waits_while_requests_keep_arriving_then_starts_in_the_order_it_was_started() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        door, log = AfterAcks(cap=60.0), list[str]()
        door.note_request()
        work = [asyncio.create_task(started(door, name, log)) for name in ("first", "second", "third")]
        await requests(door, 3000)
        during = list(log)
        await asyncio.wait_for(asyncio.gather(*work), 5)
        return during, log

    during, after = asyncio.run(scenario())
    assert during == []  # nothing started while requests kept coming ...
    assert after == ["first", "second", "third"]  # ... then all of it, in order


def test_work_starts_after_the_cap_however_busy_the_door() -> None:
    async def scenario() -> tuple[float, bool]:
        loop = asyncio.get_running_loop()
        door, log = AfterAcks(cap=0.05), list[str]()
        t0 = loop.time()
        feeder = asyncio.create_task(requests(door, 10**9))
        await asyncio.wait_for(started(door, "work", log), 5)
        began = loop.time() - t0
        still_busy = not feeder.done()
        feeder.cancel()
        return began, still_busy

    began, still_busy = asyncio.run(scenario())
    assert began >= 0.05 and still_busy


def test_a_lone_request_s_work_starts_within_a_few_loop_iterations() -> None:
    async def scenario() -> int:
        door, log = AfterAcks(cap=60.0), list[str]()
        door.note_request()
        work = asyncio.create_task(started(door, "work", log))
        for iterations in range(1, 50):
            await asyncio.sleep(0)
            if log:
                await work
                return iterations
        raise AssertionError("the work did not start")

    assert asyncio.run(scenario()) <= 5


def test_a_backlog_is_released_one_piece_per_quiet_check_not_as_one_block() -> None:
    """A request arriving while a backlog is released gets in between: the pieces do not all start in one go."""
    async def scenario() -> list[str]:
        door, log = AfterAcks(cap=60.0), list[str]()
        work = [asyncio.create_task(started(door, f"work{i}", log)) for i in range(5)]
        while not log:  # noqa: ASYNC110 - counting loop iterations is the point: nothing signals the release
            await asyncio.sleep(0)
        log.append("request")
        door.note_request()
        await asyncio.wait_for(asyncio.gather(*work), 5)
        return log

    log = asyncio.run(scenario())
    assert log[0] == "work0" and log[1] == "request" and sorted(log[2:]) == [f"work{i}" for i in range(1, 5)]


def test_work_cancelled_before_it_began_is_closed_not_left_unawaited_and_the_rest_still_runs() -> None:
    ran: list[str] = []

    async def work(name: str) -> None:
        ran.append(name)

    async def scenario() -> Any:
        app = slack()
        app.note_request()
        doomed = work("doomed")
        app._spawn(doomed)
        await asyncio.sleep(0)
        for task in list(app.tasks):
            task.cancel()
        await asyncio.gather(*app.tasks, return_exceptions=True)
        app._spawn(work("next"))
        await asyncio.wait_for(app.drain(5), 6)
        return doomed

    doomed = asyncio.run(scenario())
    assert getattr(doomed, "cr_frame", "open") is None  # closed: no "never awaited" warning, and it never ran
    assert ran == ["next"]


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

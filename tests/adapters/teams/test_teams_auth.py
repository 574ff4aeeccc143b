"""Teams: who may make the bot post where. Tokens are signed with a test key whose JWKS the SDK's own key lookup
reads from 127.0.0.1 (in place of login.botframework.com); every host the bot could post to is a local recorder that
keeps every request it receives, so "nothing is sent" is checked, not assumed (tests/fakes/fake_teams_auth.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from microsoft_agents.hosting.core.authorization import JwtTokenValidator
from pydantic import SecretStr

from adapters.slack.settings import SlackSettings
from adapters.teams.agent import add_teams_routes
from adapters.teams.cards import VERB_HELPFUL
from adapters.teams.settings import TeamsSettings, load_teams_settings
from bot.cli.main import main
from bot.config.settings import Settings
from bot.errors import UserError
from bot.observability.metrics import Metrics
from bot.server.app import build_server_app
from bot.wiring.runtime import Bot
from tests.fakes.fake_teams_auth import (
    CLIENT_ID,
    OUTGOING_TOKEN,
    TENANT,
    Recorder,
    Seen,
    TestKeys,
    activity,
    installed,
    use_in_sdk,
)
from tests.fakes.fake_teams_auth import feedback_click as click

# Aiohttp warns about the SDK's JWT middleware storing the claims under a plain string key.
pytestmark = pytest.mark.filterwarnings("ignore::aiohttp.web_exceptions.NotAppKeyWarning")


@pytest.fixture
def metrics(bot: Bot) -> Metrics:
    """What /metrics serves, for this bot."""
    watcher = Metrics()
    bot.observers.add(watcher)
    return watcher


def refusals(metrics: Metrics) -> int:
    line = next(line for line in metrics.render().splitlines()
                if line.startswith("navibot_errors_total{") and 'kind="bad_request"' in line
                and 'platform="teams"' in line)
    return int(float(line.rsplit(" ", 1)[1]))


# --- helpers ----------------------------------------------------------------------------------------------------------

async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def outside_address() -> str | None:
    """A local address that is not loopback (the one the default route leaves from), or None. No packet is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


# --- the bot, with a test key in place of Microsoft's -----------------------------------------------------------------

@pytest.fixture
def signer(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestKeys]:
    """Tokens signed with a test key; the SDK's own key lookup reads its JWKS from 127.0.0.1."""
    keys = TestKeys()
    use_in_sdk(keys.jwks_url, monkeypatch.setattr)
    yield keys
    keys.close()


def credentials(**fields: Any) -> TeamsSettings:
    return TeamsSettings(_env_file=None, client_id=CLIENT_ID, client_secret=SecretStr("s"),  # type: ignore[call-arg]
                         tenant_id=TENANT, **fields)


def anonymous(**fields: Any) -> TeamsSettings:
    return TeamsSettings(_env_file=None, **fields)  # type: ignore[call-arg]


@dataclass
class Running:
    url: str
    session: aiohttp.ClientSession

    async def post(self, body: Any, token: str | None = None) -> tuple[int, str]:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with self.session.post(self.url, data=json.dumps(body), headers=headers) as response:
            return response.status, await response.text()


@asynccontextmanager
async def running(bot: Bot, settings: TeamsSettings) -> AsyncIterator[Running]:
    app = web.Application()
    add_teams_routes(app, bot, settings)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as session:
            yield Running(f"http://127.0.0.1:{port}/api/messages", session)
    finally:
        await runner.cleanup()


def feedback_click(service_url: str) -> dict[str, Any]:
    return click(service_url, VERB_HELPFUL)


def refused_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


# --- with credentials: the token vouches for one serviceUrl -----------------------------------------------------------

def test_a_token_for_the_real_connector_on_an_activity_naming_another_host_is_refused_and_nothing_is_sent(
        bot: Bot, metrics: Metrics, signer: TestKeys, caplog: pytest.LogCaptureFixture) -> None:
    """A validly signed Bot Framework token vouches for the real connector; the activity names another host. Before,
    that host got the typing indicator, the answer, and the bot's own `Authorization: Bearer` token."""
    async def scenario() -> tuple[list[int], list[Seen], list[Seen], int]:
        genuine, forged = await Recorder("127.0.0.1").start(), await Recorder("127.0.0.2").start()
        try:
            async with running(bot, credentials()) as r:
                token = signer.token(genuine.url)
                with caplog.at_level(logging.INFO):
                    statuses = [(await r.post(body, token))[0] for body in
                                (activity(forged.url), feedback_click(forged.url), installed(forged.url))]
                await asyncio.sleep(0.3)  # a background turn, had one started, would have posted by now
                lines = len(refused_lines(caplog))
                # The same token on an activity naming the host it vouches for is answered there, with our token.
                status, _ = await r.post(activity(genuine.url, activity_id="1700000000002"), token)
                assert status == 202
                await wait_until(genuine.messages)
                return statuses, forged.seen, genuine.seen, lines
        finally:
            await genuine.stop()
            await forged.stop()

    statuses, to_forged, to_genuine, lines = asyncio.run(scenario())
    assert statuses == [401, 401, 401]
    assert to_forged == [], "nothing at all reaches the host the token does not vouch for"
    assert all(s.authorization == f"Bearer {OUTGOING_TOKEN}" for s in to_genuine) and len(to_genuine) >= 2
    assert lines == 3, "one warning line per refusal (the SDK's own mismatch warning is not repeated)"
    assert "not the one the token vouches for ('127.0.0.1')" in caplog.text
    assert refusals(metrics) == 3
    assert bot.conversations.history(f"teams|{TENANT}|a:1personal|a:1personal", 5)[0] is not None


def test_a_token_naming_no_serviceurl_may_only_send_to_microsoft_or_a_listed_host(bot: Bot, signer: TestKeys) -> None:
    """The SDK's hosting with its host validator on: no `serviceurl` claim, so the activity's host must pass the
    validator (https on Microsoft's hosts) or be listed in NAVIBOT_TEAMS_SERVICE_URLS."""
    async def scenario(settings: TeamsSettings) -> tuple[int, list[Seen]]:
        host = await Recorder("127.0.0.1").start()
        try:
            async with running(bot, settings) as r:
                status, _ = await r.post(activity(host.url), signer.token(None))
                if status == 202:
                    await wait_until(host.messages)
                await asyncio.sleep(0.1)
                return status, host.seen
        finally:
            await host.stop()

    status, seen = asyncio.run(scenario(credentials()))
    assert status == 401 and seen == []
    status, seen = asyncio.run(scenario(credentials(service_urls="127.0.0.1")))
    assert status == 202 and seen and all(s.authorization == f"Bearer {OUTGOING_TOKEN}" for s in seen)


def test_a_token_header_the_sdk_cannot_validate_is_a_401_with_one_line_never_a_500(
        bot: Bot, metrics: Metrics, signer: TestKeys, caplog: pytest.LogCaptureFixture) -> None:
    """Before: a header with no `kid` was `KeyError: 'kid'` inside the SDK, a 500 and a 3 kB traceback each time."""
    async def scenario() -> tuple[dict[str, tuple[int, str]], list[Seen]]:
        host = await Recorder().start()
        try:
            async with running(bot, credentials()) as r:
                results = {name: await r.post(activity(host.url, activity_id=name.replace(" ", "-")), token)
                           for name, token in signer.forged_tokens(host.url).items()}
                await asyncio.sleep(0.2)
                return results, host.seen
        finally:
            await host.stop()

    with caplog.at_level(logging.INFO):
        results, seen = asyncio.run(scenario())
    assert {name: status for name, (status, _) in results.items()} == dict.fromkeys(results, 401)
    assert seen == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    lines = refused_lines(caplog)
    assert len(lines) == len(results) and all(len(r.getMessage()) < 200 for r in lines)
    assert all("request refused (401)" in r.getMessage() for r in lines)
    assert "no key id (kid)" in results["no kid"][1] and "'none'" in results["alg none"][1]
    assert "'HS256'" in results["HS256"][1]
    assert refusals(metrics) == len(results)


def test_anything_the_sdks_token_check_raises_is_a_401(bot: Bot, signer: TestKeys, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    async def broken(self: Any, token: str) -> Any:
        raise TypeError("unexpected claim shape")

    monkeypatch.setattr(JwtTokenValidator, "validate_token", broken)

    async def scenario() -> tuple[int, list[Seen]]:
        host = await Recorder().start()
        try:
            async with running(bot, credentials()) as r:
                status, _ = await r.post(activity(host.url), signer.token(host.url))
                await asyncio.sleep(0.1)
                return status, host.seen
        finally:
            await host.stop()

    with caplog.at_level(logging.INFO):
        status, seen = asyncio.run(scenario())
    assert status == 401 and seen == []
    assert [r.getMessage() for r in refused_lines(caplog)] == [
        "teams: request refused (401): the token could not be validated (TypeError)"]


# --- anonymous mode: loopback, or what NAVIBOT_TEAMS_SERVICE_URLS lists -----------------------------------------------

@pytest.mark.parametrize("service_url", [
    "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]:8080/", "http://metadata.google.internal/",
    "http://[fd00:ec2::254]/", "http://2852039166/", "http://[::ffff:169.254.169.254]/", "https://example.com/",
    "http://user:pw@127.0.0.1:9/",
])
def test_anonymous_mode_refuses_a_serviceurl_off_loopback_or_at_a_metadata_address(
        bot: Bot, metrics: Metrics, service_url: str, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> int:
        async with running(bot, anonymous(service_urls="example.org")) as r:
            caplog.clear()  # the start-up warnings
            status, _ = await r.post(activity(service_url))
            await asyncio.sleep(0.05)
            return status

    with caplog.at_level(logging.INFO):
        assert asyncio.run(scenario()) == 401
    assert len(refused_lines(caplog)) == 1 and "request refused (401): serviceUrl" in caplog.text
    assert bot.conversations.history(f"teams|{TENANT}|a:1personal|a:1personal", 5) == []
    assert refusals(metrics) == 1


def test_anonymous_mode_answers_on_loopback_and_on_a_listed_host_only(bot: Bot) -> None:
    address = outside_address()
    if address is None:
        pytest.skip("no non-loopback local address to stand for another host")

    async def scenario(settings: TeamsSettings, run: int) -> tuple[list[int], Recorder, Recorder]:
        local, outside = await Recorder("127.0.0.2").start(), await Recorder(address).start()
        try:
            async with running(bot, settings) as r:
                statuses = [(await r.post(activity(local.url, activity_id=f"l{run}")))[0],
                            (await r.post(activity(outside.url, activity_id=f"o{run}", conversation="a:2")))[0]]
                await wait_until(local.messages)
                if statuses[1] == 202:
                    await wait_until(outside.messages)
                await asyncio.sleep(0.1)
                return statuses, local, outside
        finally:
            await local.stop()
            await outside.stop()

    statuses, local, outside = asyncio.run(scenario(anonymous(), 1))
    assert statuses == [202, 401] and local.messages() and outside.seen == []
    assert all(s.authorization is None for s in local.seen), "anonymous mode sends no token"
    statuses, local, outside = asyncio.run(scenario(anonymous(service_urls=f"http://{address}:1234"), 2))
    assert statuses == [202, 202] and outside.messages()


@pytest.mark.parametrize("listed", ["169.254.169.254", "http://[fe80::1]/", "metadata.google.internal",
                                    "fd00:ec2::254", "10.0.0.1, http://169.254.170.2/", "0xa9.0xfe.0xa9.0xfe"])
def test_a_metadata_or_link_local_allow_list_entry_stops_the_start_with_one_line(
        listed: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UserError, match=r"NAVIBOT_TEAMS_SERVICE_URLS: .* is refused"):
        load_teams_settings(service_urls=listed)
    monkeypatch.setenv("NAVIBOT_TEAMS_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("NAVIBOT_TEAMS_SERVICE_URLS", listed)
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "NAVIBOT_TEAMS_SERVICE_URLS" in err


def test_serve_warns_when_anonymous_mode_meets_teams_access_groups(bot: Bot, tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    def warnings_for(groups: dict[str, list[str]]) -> list[str]:
        caplog.clear()
        settings = Settings(_env_file=None, data_dir=tmp_path, access_groups=groups)  # type: ignore[call-arg]
        with caplog.at_level(logging.WARNING):
            build_server_app(bot, settings, SlackSettings(_env_file=None),  # type: ignore[call-arg]
                             anonymous(allow_anonymous=True))
        return [r.getMessage() for r in caplog.records if "access groups protect nothing" in r.getMessage()]

    assert len(warnings_for({"teams:19:staff@thread.tacv2": ["supervisors"]})) == 1
    assert warnings_for({"slack:C0123ABCDEF": ["supervisors"]}) == []

"""The Teams bot on the Microsoft 365 Agents SDK: Teams activities in, bot Turns through the `bot.port.ChatBot`
protocol (the only door to the bot), cards out.

`add_teams_routes(app, bot, settings)` mounts `POST /api/messages` on an aiohttp application (the server wires it;
whoever builds the bot says at start-up whether its knowledge store is empty). With credentials, each request must
carry a Bot Framework / Entra token that the SDK validates (no token or a bad one: 401, nothing runs); without, the
bot runs in local anonymous mode for the Microsoft 365 Agents Playground and says so at start-up.
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import logging
import re
import uuid
import warnings
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    AdaptiveCardInvokeResponse,
    ChannelAccount,
    ContentTypes,
    DeliveryModes,
    InvokeResponse,
)
from microsoft_agents.hosting.aiohttp import (
    CloudAdapter,
    start_agent_process,
)
from microsoft_agents.hosting.core import (
    AgentApplication,
    MemoryStorage,
    TurnContext,
    TurnState,
)
from microsoft_agents.hosting.core.app import RouteRank, TypingIndicator, TypingOptions
from microsoft_agents.hosting.core.authorization import AuthenticationConstants, ClaimsIdentity
from pydantic import ValidationError

from adapters.teams.cards import FEEDBACK_VERBS
from adapters.teams.messages import (
    AnswerParts,
    answer_message,
    answer_variants,
    notice_message,
    reply_activity,
    reply_variants,
)
from adapters.teams.service_hosts import host_of
from adapters.teams.service_url_policy import ServiceUrlPolicy
from adapters.teams.settings import MESSAGES_PATH, TeamsSettings
from adapters.teams.streaming import TeamsAnswerStream, is_personal, starter_actions
from adapters.teams.token_guard import authenticated
from bot.port import Chat, ChatBot, FeedbackError, ReplyKind, Turn, Vote

log = logging.getLogger(__name__)

PLATFORM = "teams"
_FEEDBACK_VERB = re.compile(r"^feedback\.")
_MESSAGE_ID = ";messageid="
# Typing shows for a few seconds in Teams: after the first one, refresh it while a slow answer is being written.
_TYPING_REFRESH = TypingOptions(initial_delay_ms=3000, interval_ms=3000)


def clean_text(activity: Activity) -> str:
    """The message without the bot's mention (the SDK removes it, by the mention entity) and without Teams'
    markup: other people's mentions keep their names, entities like &nbsp; become plain characters."""
    text = re.sub(r"</?at>", "", activity.text or "")
    text = html.unescape(text)
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


def _tenant(activity: Activity) -> str:
    if activity.conversation and activity.conversation.tenant_id:
        return str(activity.conversation.tenant_id)
    data: dict[str, Any] = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    tenant = data.get("tenant")
    return str(tenant.get("id") or "") if isinstance(tenant, dict) else ""


def conversation_ids(activity: Activity) -> tuple[str, str]:
    """(channel, thread): the channel or chat id without `;messageid=`, and the full id (the reply chain)."""
    full = activity.conversation.id if activity.conversation else ""
    return full.split(_MESSAGE_ID, 1)[0], full


def user_id(activity: Activity) -> str:
    sender: ChannelAccount | None = activity.from_property  # typed as always set; a client may leave it out
    if sender is None:
        return "unknown"
    return str(sender.aad_object_id or sender.id or "unknown")


def team_id(activity: Activity) -> str:
    """The team of a channel conversation (channelData.team.id); empty in personal and group chats."""
    data: dict[str, Any] = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    team = data.get("team")
    return str(team.get("id") or "") if isinstance(team, dict) else ""


def chat_of(activity: Activity) -> Chat:
    """The chat of an activity: the bot honours a card button's answer id only in the chat that got the answer."""
    channel, thread = conversation_ids(activity)
    return Chat(PLATFORM, _tenant(activity), channel, thread)


def turn_from_activity(activity: Activity, text: str) -> Turn:
    channel, thread = conversation_ids(activity)
    # Teams message ids are timestamps, unique within a conversation only: scope them to it for redelivery checks.
    event_id = f"{channel}:{activity.id}" if activity.id else None
    return Turn(platform=PLATFORM, workspace=_tenant(activity), channel=channel, thread=thread,
                user=user_id(activity), text=text, event_id=event_id, team=team_id(activity))


__all__ = ["reply_activity", "reply_variants"]  # the renderers live in adapters/teams/messages.py


_REFUSING: contextvars.ContextVar[bool] = contextvars.ContextVar("navibot_teams_refusing", default=False)


class _QuietRefusals(logging.Filter):
    """The SDK logs every invalid Activity at ERROR with a traceback; a request refused with a 400 (and one warning
    line of ours) is the sender's mistake, not a failure of the bot."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_REFUSING.get() and str(record.msg).startswith("Validation error for Activity"))


logging.getLogger("microsoft_agents.activity.activity").addFilter(_QuietRefusals())
# The SDK's serviceUrl check logs its own warning; ours (below, with the reason) replaces it: one line per refusal.
logging.getLogger("microsoft_agents.hosting.core._http_adapter_base").addFilter(
    lambda record: not str(record.msg).startswith("Service URL"))


def _refuse(reason: str, status: int = 400) -> web.Response:
    log.warning("teams: request refused (%d): %s", status, reason)
    return web.json_response({"error": reason}, status=status)


def _unanswerable(activity: Activity) -> str | None:
    """Why a valid Activity still cannot be handled, or None. Checked before the 202: a message accepted here that
    cannot be answered would be processed (and saved) with its reply failing out of sight."""
    if not activity.type or not activity.conversation or not activity.conversation.id:
        return "an Activity needs type and conversation.id"
    if activity.type not in (ActivityTypes.message, ActivityTypes.invoke):
        return None
    url = urlsplit(activity.service_url or "")
    if url.scheme not in ("http", "https") or not url.netloc:
        return "an Activity needs serviceUrl (an absolute http(s) URL) to be answered"
    if not activity.recipient or not activity.recipient.id:
        return "an Activity needs recipient.id (the bot) to be answered"
    return None


RETRY_WAITS = (0.5, 2.0)  # seconds before the 2nd and 3rd attempt to post a reply


async def send_with_retry(context: TurnContext, activity: Activity) -> None:
    """Sends, retrying when the Bot Connector was not reached or asked to come back (429, 5xx): the answer is
    already computed and saved, so it is worth a second try. A timeout is not retried (the message may have been
    posted, and a duplicate answer in the thread is worse than a missing one, which the log names)."""
    waits = RETRY_WAITS
    for attempt in range(len(waits) + 1):
        try:
            await context.send_activity(activity)
            return
        except (aiohttp.ClientConnectionError, aiohttp.ClientResponseError) as exc:
            status = getattr(exc, "status", None)
            retryable = status is None or status == 429 or status >= 500
            if not retryable or attempt == len(waits):
                raise
            delay = waits[attempt]
            headers = getattr(exc, "headers", None) or {}
            if status == 429 and str(headers.get("Retry-After", "")).isdigit():
                delay = min(float(headers["Retry-After"]), 10.0)
            log.warning("teams: sending the reply failed (%s); retrying in %.1f s", status or type(exc).__name__,
                        delay)
            await asyncio.sleep(delay)


REFUSED_AS_TOO_BIG_OR_BAD = (400, 413)  # 413 MessageSizeTooBig; 400 e.g. citation entities on a card message


async def send_smaller_if_refused(send: Callable[[Activity], Awaitable[Any]], variants: list[Activity]) -> None:
    """Sends (or updates) a message: the first of `variants`; if Teams refuses it as too big (413) or malformed
    (400; citation entities on card messages are a preview feature), the next, smaller one (messages.py: without
    citation entities, then titles and links instead of quotes, then a list of the sources). Never silence: when
    every variant is refused the error is raised, and the caller apologises."""
    for attempt, outgoing in enumerate(variants):
        try:
            await send(outgoing)
            return
        except aiohttp.ClientResponseError as exc:
            if exc.status not in REFUSED_AS_TOO_BIG_OR_BAD or attempt == len(variants) - 1:
                raise
            log.warning("teams: the message was refused (%d: %s); sending a smaller one (%d of %d)", exc.status,
                        str(exc.message)[:200], attempt + 2, len(variants))


@dataclass(slots=True)
class FeedbackOutcome:
    card: dict[str, Any] | None  # the answer card showing the choice, or None when the rating was not saved
    message: str  # what to tell the user when there is no card
    parts: AnswerParts | None = None  # the rated answer, to rebuild its whole message around the card


class TeamsBot:
    """The AgentApplication and its adapter, wired to a ChatBot."""

    def __init__(self, bot: ChatBot, settings: TeamsSettings) -> None:
        self.bot = bot
        self.settings = settings
        # Imported here, not with the module: `navibot serve` for Slack alone loads this module but builds no
        # TeamsBot, and MSAL takes ~0.5 s of its start to import.
        from microsoft_agents.authentication.msal import MsalConnectionManager

        self.connections = MsalConnectionManager(**settings.sdk_configuration())
        # The SDK checks each activity's serviceUrl against the token through this validator (see its module).
        self.service_urls = ServiceUrlPolicy(settings.allowed_service_hosts, settings.anonymous)
        self.adapter = CloudAdapter(connection_manager=self.connections, host_validator=self.service_urls)
        self.adapter.on_turn_error = self._on_adapter_error
        self._pending: set[asyncio.Task[Any]] = set()
        # Turn state is not used (history, moods and feedback live in the bot's stores): TurnState() keeps only
        # the per-turn scratch state, so nothing piles up in memory per conversation.
        self.app: AgentApplication[TurnState] = AgentApplication[TurnState](
            storage=MemoryStorage(), connection_manager=self.connections, turn_state_factory=TurnState,
            start_typing_timer=False, remove_recipient_mention=True)
        self.app.adaptive_card.action_execute(_FEEDBACK_VERB)(self._on_feedback_execute)
        self.app.adaptive_card.action_submit(_FEEDBACK_VERB, rank=RouteRank.FIRST)(self._on_feedback_submit)
        self.app.activity(ActivityTypes.message, rank=RouteRank.DEFAULT)(self._on_message)
        self.app.conversation_update("membersAdded", rank=RouteRank.DEFAULT)(self._on_members_added)
        # Installs, member changes, reactions, edits: nothing to do (and no "no route found" warning for each).
        self.app.add_route(lambda context: context.activity.type != ActivityTypes.invoke, self._ignore,
                           rank=RouteRank.LAST)
        self.app.error(self._on_app_error)

    @property
    def auth_configuration(self) -> Any:
        return self.connections.get_default_connection_configuration()

    # --- HTTP ----------------------------------------------------------------------------------------------------

    async def handle_request(self, request: web.Request) -> web.StreamResponse:
        """Malformed input is a 400 with a reason, never a crash: the SDK itself only checks that the body is JSON."""
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # not JSON, not UTF-8; nested deeper than the parser goes
            return _refuse("the body is not JSON")
        if not isinstance(body, dict):
            return _refuse("the body must be an Activity (a JSON object)")
        token = _REFUSING.set(True)
        try:
            activity = Activity.model_validate(body)
        except ValidationError as exc:
            where = ", ".join(".".join(map(str, e["loc"])) for e in exc.errors()[:3])
            return _refuse(f"not a valid Activity ({where})")
        finally:
            _REFUSING.reset(token)
        if problem := _unanswerable(activity):
            return _refuse(problem)
        claims = request.get("claims_identity") or ClaimsIdentity()
        if problem := self.service_url_refusal(claims, activity):
            return _refuse(problem, 401)  # before anything runs: no typing indicator, no token sent anywhere
        if activity.type == ActivityTypes.message and activity.delivery_mode != DeliveryModes.expect_replies:
            # Acknowledge at once and answer in the background: the Bot Connector gives up (and redelivers) after
            # 15 s, and an answer from a language model can take most of that. The reply goes out through the
            # connector either way; an invoke (a card button) needs its answer in this response, so it waits.
            self._spawn(self.adapter.process_activity(claims, activity, self.app.on_turn), activity)
            return web.Response(status=202)
        response = await start_agent_process(request, self.app, self.adapter)
        return response if response is not None else web.Response(status=202)

    def service_url_refusal(self, claims: ClaimsIdentity, activity: Activity) -> str | None:
        """Why the bot must not post to this activity's serviceUrl, or None. The SDK's own check decides (the one
        `CloudAdapter.process` runs, which the background path would skip): a token's `serviceurl` claim must name
        the activity's host; our validator adds the host rules (adapters/teams/service_url_policy.py)."""
        url = activity.service_url
        claimed = claims.get_claim_value(AuthenticationConstants.SERVICE_URL_CLAIM)
        if not self.adapter._validate_service_url(claims, activity):  # the SDK's check (a private method), not a copy
            if url and (reason := self.service_urls.refusal(url)):
                return reason
            return (f"serviceUrl host {host_of(url or '')!r} is not the one the token vouches for "
                    f"({host_of(str(claimed)) if claimed else None!r})")
        if url and not self.settings.anonymous and not claimed:
            return self.service_urls.unvouched_refusal(url)
        return None

    def _spawn(self, work: Coroutine[Any, Any, Any], activity: Activity) -> None:
        task = asyncio.create_task(work)
        self._pending.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._pending.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                error = finished.exception()
                trace = uuid.uuid4().hex[:12]
                log.error("teams: activity %s in %s failed (trace %s): %s: %s", activity.id, activity.conversation.id,
                          trace, type(error).__name__, error, extra={"trace_id": trace})

        task.add_done_callback(done)

    @property
    def pending(self) -> int:
        """Turns acknowledged and still being answered."""
        return len(self._pending)

    async def drain(self, timeout: float = 15.0) -> None:
        """Lets the turns under way finish (at shutdown), then cancels what is left."""
        if self._pending:
            log.warning("teams: waiting for %d turn(s) under way to finish", len(self._pending))
            _done, left = await asyncio.wait(set(self._pending), timeout=timeout)
            for task in left:
                task.cancel()

    # --- handlers ------------------------------------------------------------------------------------------------

    async def _on_message(self, context: TurnContext, _state: TurnState) -> None:
        activity = context.activity
        text = clean_text(activity)
        turn = turn_from_activity(activity, text)
        try:
            await context.send_activity(Activity(type=ActivityTypes.typing))
        except Exception as exc:  # noqa: BLE001 - a lost typing indicator must not cost the answer
            log.info("teams: typing indicator not sent (%s)", exc)
        # A personal chat streams (informative updates, then the answer sentence by verified sentence, ending with
        # the card: adapters/teams/streaming.py); channels and group chats, where Teams does not, keep typing.
        stream = TeamsAnswerStream(context) if is_personal(context) else None
        if stream is not None:
            reply = await self.bot.handle(turn, progress=stream)
        else:
            async with TypingIndicator(context, typing_options=_TYPING_REFRESH):
                reply = await self.bot.handle(turn)
        if reply.kind is ReplyKind.DUPLICATE:
            log.info("teams: activity %s was already answered; not answering again", turn.event_id)
            return
        # send_activity addresses the reply to the incoming activity (replyToId) in the same conversation id, so
        # in a channel it lands in the same reply chain (`;messageid=` kept).
        try:
            if stream is None or not await stream.finish(reply):
                await send_smaller_if_refused(lambda outgoing: send_with_retry(context, outgoing),
                                              reply_variants(reply, asked=text))
        except Exception:
            self.bot.report_error("teams_send", PLATFORM)  # for the metrics; the apology and log follow
            await self.bot.reply_not_posted(turn)  # the answer is not out: a redelivery of the activity gets it
            raise
        await self.bot.reply_posted(turn)  # answered for good: a redelivery is dropped from now on

    async def _on_members_added(self, context: TurnContext, _state: TurnState) -> None:
        """Installed in someone's personal chat: say what the bot does. (Added to a team or group chat: nothing,
        a welcome there would land in front of everyone.)"""
        activity = context.activity
        me = activity.recipient.id if activity.recipient else None
        personal = bool(activity.conversation and activity.conversation.conversation_type == "personal")
        if personal and me and any(member.id == me for member in activity.members_added or []):
            welcome = notice_message(self.bot.help_text())
            try:  # the same questions as Slack's assistant pane, one tap to ask
                if actions := starter_actions(await self.bot.suggested_questions()):
                    welcome.suggested_actions = actions
            except Exception as exc:  # noqa: BLE001 - the welcome still goes out without them
                log.warning("teams: no suggested questions for the welcome: %r", exc)
            await context.send_activity(welcome)
        else:
            log.debug("teams: members added in %s", activity.conversation.id if activity.conversation else "?")

    async def _ignore(self, context: TurnContext, _state: TurnState) -> None:
        log.debug("teams: %s activity ignored", context.activity.type)

    async def _record(self, context: TurnContext, verb: str | None, data: Any) -> FeedbackOutcome:
        helpful = FEEDBACK_VERBS.get(verb or "")
        answer_id = data.get("answer_id") if isinstance(data, dict) else None
        if helpful is None or not isinstance(answer_id, str) or not answer_id:
            return FeedbackOutcome(None, "That button did not say which answer it rates; nothing was saved.")
        chat = chat_of(context.activity)
        try:
            await self.bot.record_feedback(Vote(answer_id, user_id(context.activity), helpful, chat))
        except FeedbackError as exc:
            return FeedbackOutcome(None, str(exc))
        stored = await self.bot.stored_answer(answer_id, chat)  # the rating was just saved for it, in this chat
        if stored is None:
            return FeedbackOutcome(None, "Thanks, feedback saved.")
        # The button's data comes back from the client: only a known mood's name goes on the card everyone sees.
        mood = self.bot.known_mood(data.get("mood") if isinstance(data.get("mood"), str) else None)
        understood = stored.standalone if stored.standalone.strip() != stored.question.strip() else None
        # An answer always has citations (the citation rail); a no-answer has none and was sent unlabelled.
        citations = list(stored.citations)
        parts = AnswerParts(stored.answer, citations, answer_id, mood, understood, feedback=helpful,
                            labelled=bool(citations))
        card = answer_message(parts).attachments[0].content  # within Teams' size limit, like the message
        return FeedbackOutcome(cast(dict[str, Any], card), "Thanks, feedback saved.", parts)

    async def _on_feedback_execute(self, context: TurnContext, _state: TurnState,
                                   data: Any) -> AdaptiveCardInvokeResponse:
        """Universal Actions: the invoke response carries the card Teams shows in place of the clicked one."""
        value = context.activity.value if isinstance(context.activity.value, dict) else {}
        verb = (value.get("action") or {}).get("verb")
        outcome = await self._record(context, verb, data)
        if outcome.card is None:
            return AdaptiveCardInvokeResponse(status_code=200, type=ContentTypes.message, value=outcome.message)
        return AdaptiveCardInvokeResponse(status_code=200, type=ContentTypes.adaptive_card, value=outcome.card)

    async def _on_feedback_submit(self, context: TurnContext, _state: TurnState, data: Any) -> None:
        """The Action.Submit fallback: a message whose value is the button's data; the card is updated in place."""
        outcome = await self._record(context, data.get("verb") if isinstance(data, dict) else None, data)
        card_id = context.activity.reply_to_id
        if outcome.parts is not None and card_id:
            # An update replaces the whole message: it carries the label and citation entities again.
            variants = answer_variants(outcome.parts)
            for updated in variants:
                updated.id = card_id
            await send_smaller_if_refused(context.update_activity, variants)
        else:
            await context.send_activity(notice_message(outcome.message))

    async def _on_app_error(self, context: TurnContext, error: Exception) -> None:
        await self._apologise(context, error)

    async def _on_adapter_error(self, context: TurnContext, error: Exception) -> None:
        await self._apologise(context, error)

    async def _apologise(self, context: TurnContext, error: Exception) -> None:
        """An unexpected failure: one log line with a trace id, and an apology card that names it (not the error)."""
        trace = uuid.uuid4().hex[:12]
        activity = context.activity
        # One line: the SDK has already logged the traceback of an application error.
        log.error("teams turn failed (trace %s, activity %s, conversation %s): %s: %s", trace, activity.id,
                  activity.conversation.id if activity.conversation else "?", type(error).__name__, error,
                  extra={"trace_id": trace})  # a field of its own in JSON logs, to search by
        apology = f"Sorry, something went wrong on my side. Please try again in a moment (trace id {trace})."
        try:
            if activity.type == ActivityTypes.invoke and activity.name == "adaptiveCard/action":
                # A card button: Teams shows this text in place of a generic error.
                body = AdaptiveCardInvokeResponse(status_code=200, type=ContentTypes.message, value=apology)
                await context.send_activity(Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(
                    status=200, body=body.model_dump(mode="json", by_alias=True, exclude_none=True))))
            elif activity.type == ActivityTypes.message:
                await context.send_activity(notice_message(apology, attention=True))
        except Exception:  # noqa: BLE001 - the connector itself may be what failed; the log line stays
            log.warning("teams: could not send the apology for trace %s", trace, extra={"trace_id": trace})


TEAMS_BOT = web.AppKey("navibot_teams_bot", TeamsBot)


def _counting_refusals(handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                       bot: ChatBot) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """Malformed (400) and unauthenticated (401: the SDK's JWT check, the token guard, a serviceUrl the token does
    not vouch for) requests, counted for the metrics."""

    async def counted(request: web.Request) -> web.StreamResponse:
        response = await handler(request)
        if response.status in (400, 401):
            bot.report_error("bad_request", PLATFORM)
        return response

    return counted


def add_teams_routes(app: web.Application, bot: ChatBot, settings: TeamsSettings,
                     path: str = MESSAGES_PATH) -> TeamsBot:
    """Mounts the Teams endpoint on `app`; logs at start-up what an admin must know of Teams (anonymous mode). An
    empty knowledge store is the bot's to announce, by whoever builds it (bot/cli/serve_cli.py)."""
    settings.check_credentials()
    teams = TeamsBot(bot, settings)
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]] = teams.handle_request
    if settings.anonymous:
        # Without an app id the SDK warns on every turn that its (unused) user-token client has none: once is enough.
        logging.getLogger("microsoft_agents.hosting.core.connector.client.user_token_client").setLevel(logging.ERROR)
        log.warning("Teams: no NAVIBOT_TEAMS_CLIENT_ID/CLIENT_SECRET/TENANT_ID set: running in LOCAL ANONYMOUS MODE "
                    "(requests are not authenticated; for the Microsoft 365 Agents Playground only)")
    else:
        # The SDK's JWT check reads its configuration from the application under this name.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            app["agent_configuration"] = teams.auth_configuration
        handler = authenticated(handler, _refuse)  # the SDK's JWT check; a token it cannot read is a 401
    app.router.add_post(path, _counting_refusals(handler, bot))
    app[TEAMS_BOT] = teams

    async def finish_turns(_app: web.Application) -> None:
        await teams.drain()

    app.on_shutdown.append(finish_turns)
    return teams

"""The Slack app: Bolt (async) listeners that turn mentions, DMs, `/navibot` and button clicks into bot Turns and
feedback, and post the replies in threads.

Every listener acknowledges at once (Bolt acks Events API requests before the listener runs; the others call
`ack()` first) and does the slow work in a background task, so Slack gets its HTTP 200 well inside 3 seconds.
The app talks to the bot only through `bot.port.ChatBot` (handle a turn, settle it, record a vote, fetch a stored
answer of this chat, report an error); the bot keeps its slow work off the event loop.

Use it from a server: `app = build_slack_app(bot, settings)`, then `add_slack_routes(web_app, app)` (HTTP mode) or
`socket_mode_handler(app, settings)` (Socket Mode).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.after_acks import AfterAcks
from adapters.slack.assistant import AssistantPane
from adapters.slack.blocks import (
    ACTION_FEEDBACK,
    ACTION_HIDE_QUOTES,
    ACTION_REASON,
    ACTION_SHOW_QUOTES,
    HELPFUL,
    NOT_HELPFUL,
    REASON_BLOCK,
    REASON_INPUT,
    VIEW_REASON,
    AnswerView,
    Message,
    answer_message,
    escape,
    feedback_confirmation,
    plain_message,
    reason_modal,
)
from adapters.slack.retry import retry_handlers
from adapters.slack.settings import Mode, SlackSettings
from adapters.slack.streaming import LOADING_MESSAGES, SlackAnswerStream
from bot.port import Chat, ChatBot, FeedbackError, Reply, ReplyKind, Turn, TurnProgress, Vote

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
PLATFORM = "slack"
THINKING_REACTION = "eyes"
APOLOGY = ("Sorry, something went wrong on my side and I could not post the answer. Please try again in a moment "
           "(trace id {trace}).")
SLASH_HELP = """Slash command: `/navibot ask <question>` posts your question in this channel and answers it in a \
thread; `/navibot mood`, `/navibot mood <name>`; `/navibot reset` forgets your latest thread's history here \
(or type `reset` after mentioning me in the thread); `/navibot help`.
In a channel, mention me (`@Navibot can college students get SNAP?`); in a direct message, just write."""
NOT_IN_CHANNEL = "I can't post in this channel. Invite me with `/invite @Navibot`, or ask me in a direct message."
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")
_SPECIAL = re.compile(r"<!([a-z]+)(?:\^[^|>]*)?(?:\|([^>]*))?>")
LATEST_THREADS_KEPT = 10_000
REACTION_WAIT_SECONDS = 0.5  # the longest a ready answer waits for its :eyes: reaction to land
ACK_FIRST_MAX_SECONDS = 0.25  # the longest work a request started waits for the acks (adapters/slack/after_acks.py)


class _NoBodyOfRefusedRequests(logging.Filter):
    """Slack Bolt logs a request whose signature does not match with its whole body, at INFO: with a wrong or
    rotated SLACK_SIGNING_SECRET that is every question navigators ask. The line stays; the body goes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Invalid request signature detected"):
            record.msg, record.args = ("Invalid request signature detected (a wrong SLACK_SIGNING_SECRET, a clock "
                                       "more than 5 minutes off, or a forged request; its body is not logged)"), ()
        return True


logging.getLogger("slack_bolt.RequestVerification").addFilter(_NoBodyOfRefusedRequests())


def question_text(text: str, bot_user_id: str | None) -> str:
    """The words of a Slack message as a person reads them: the bot's own mention removed, other mentions,
    links and channel names as their labels, and Slack's &amp; &lt; &gt; escapes undone."""
    if bot_user_id:  # with the comma or colon people type after a name: "@Navibot: reset" is the command
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[,:;]?", " ", text or "")
    text = _MENTION.sub(lambda m: f"@{m.group(1)}", text or "")
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _CHANNEL.sub(lambda m: f"#{m.group(1)}", text)
    text = _SPECIAL.sub(lambda m: m.group(2) or f"@{m.group(1)}", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return "\n".join(re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n")).strip()


def is_retry(request: AsyncBoltRequest) -> bool:
    """Slack's retry number above 0. Socket Mode envelopes carry `retry_attempt: 0` on the first delivery, which
    Bolt passes on as the same header as HTTP mode's X-Slack-Retry-Num (absent on a first HTTP delivery)."""
    values = request.headers.get("x-slack-retry-num") or ["0"]
    try:
        return int(values[0]) > 0
    except ValueError:
        return True  # an unreadable number is still a retry


def configure_web_client(client: AsyncWebClient, settings: SlackSettings) -> AsyncWebClient:
    """SLACK_API_URL as the Web API base URL (GovSlack, tests), and retries on 429 after Retry-After."""
    client.base_url = settings.slack_api_url
    client.retry_handlers = retry_handlers()
    return client


class SlackApp:
    """The Bolt app and the listeners, on one ChatBot. `tasks` are the answers still being worked on."""

    def __init__(self, bot: ChatBot, settings: SlackSettings, mode: Mode = "http") -> None:
        self.bot = bot
        self.settings = settings
        self.mode = mode
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
        # The token is given to Bolt rather than a ready client: with a client, Bolt still reads SLACK_BOT_TOKEN from
        # the environment and warns that it is unused. Its client is then pointed at SLACK_API_URL with our retries.
        self.app = AsyncApp(token=token, signing_secret=secret, name="navibot",
                            # Socket Mode requests are not signed; Bolt skips the check for them anyway.
                            request_verification_enabled=mode == "http")
        self.client = configure_web_client(self.app.client, settings)
        # The same check as Bolt's RequestVerification middleware, made at our door (events_handler) before the body
        # is parsed: Bolt parses first, so an unsigned body could reach its JSON parser and its int() of the timestamp.
        self.verifier = SignatureVerifier(secret) if mode == "http" and secret else None
        self.tasks: set[asyncio.Task[None]] = set()
        self.after_acks = AfterAcks(ACK_FIRST_MAX_SECONDS)  # the work requests start waits while more arrive
        # The thread a user last asked in, per channel: what `/navibot reset` (which has no thread) forgets.
        self._latest_thread: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._register()

    # --- wiring ---------------------------------------------------------------------------------------------------

    def _register(self) -> None:
        self.app.event("app_mention")(self._on_mention)
        self.app.event("message")(self._on_message)
        self.app.command("/navibot")(self._on_command)
        self.app.action(ACTION_SHOW_QUOTES)(self._on_toggle_quotes)
        self.app.action(ACTION_HIDE_QUOTES)(self._on_toggle_quotes)
        self.app.action(ACTION_FEEDBACK)(self._on_feedback)
        self.app.action(ACTION_REASON)(self._on_reason_button)
        self.app.view(VIEW_REASON)(self._on_reason_submitted)
        self.app.error(self._on_error)
        # Slack's assistant pane: Bolt's middleware takes the pane's events and every threaded DM (adapters/slack/
        # assistant.py answers the ones not started in the pane exactly as direct messages).
        self.pane = AssistantPane(self._pane_question, self.bot.suggested_questions, self.bot.is_chat_command)
        self.app.use(self.pane.middleware)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs after the acknowledgement; kept referenced so it is not collected mid-way, and drainable."""

        async def guarded() -> None:
            try:
                await self.after_acks.wait()
            except BaseException:  # cancelled at shutdown before it began: nothing ran
                work.close()
                raise
            try:
                await work
            except Exception:  # the work apologizes itself; this is the last net, for the log
                trace = uuid.uuid4().hex[:12]
                log.exception("slack: background work failed (trace %s)", trace, extra={"trace_id": trace})

        task = asyncio.get_running_loop().create_task(guarded())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def note_request(self) -> None:
        """A request reached /slack/events (called before it is checked or acknowledged)."""
        self.after_acks.note_request()

    def dispatch_acknowledged(self, body: str, query: str, headers: Mapping[str, str]) -> None:
        """An event acknowledged at the door (events_handler) goes through Bolt after the acks: its signature check,
        middleware and listeners, exactly as if Bolt had acked it; tracked in `tasks`, so a shutdown waits for it."""
        self._spawn(self._dispatch(body, query, headers))

    async def _dispatch(self, body: str, query: str, headers: Mapping[str, str]) -> None:
        request = AsyncBoltRequest(body=body, query=query, headers=headers)  # type: ignore[arg-type]
        response = await self.app.async_dispatch(request)
        if response.status in (400, 401):  # refused by Bolt (its own signature check agrees with ours)
            self.bot.report_error("bad_request", PLATFORM)
        if response.status != 200:  # no listener for it (Bolt's own warning says which), or an error logged already
            event = request.body.get("event")
            log.warning("slack: Bolt answered %d to an event already acknowledged (type %s)", response.status,
                        event.get("type") if isinstance(event, dict) else None)

    async def open_session(self) -> None:
        """One aiohttp session, kept open, for every Web API call (slack_sdk's AsyncWebClient `session`). Without
        it slack_sdk makes a session per call (a connector and a new connection) and closes it after: with 200
        questions at once, ~3 calls each, that work on the event loop delayed the acks past 100 ms
        (benchmarks/RESULTS.md). Must run on the server's loop; `close_session` when it stops."""
        if self.client.session is None or self.client.session.closed:
            # slack_sdk puts its timeout on the sessions it makes itself; a session given to it must carry it.
            self.client.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.client.timeout))

    async def close_session(self) -> None:
        session, self.client.session = self.client.session, None
        if session is not None:
            await session.close()

    async def drain(self, timeout: float = 30.0) -> None:
        """Waits for answers in progress (at shutdown), at most `timeout` seconds."""
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=timeout)

    async def _on_error(self, error: Exception, body: dict[str, Any]) -> None:
        trace = uuid.uuid4().hex[:12]
        log.error("slack: request failed (trace %s, type %s): %r", trace, body.get("type"), error, exc_info=error,
                  extra={"trace_id": trace})

    # --- questions: mentions, direct messages ---------------------------------------------------------------------

    async def _on_mention(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                          request: AsyncBoltRequest) -> None:
        if str(event.get("channel", "")).startswith("D"):
            return  # a mention in a DM also arrives as a message event, answered there
        self._spawn(self._question(event, body, context, request))

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                          request: AsyncBoltRequest) -> None:
        # Only what a person writes to the bot in a DM: no edits, joins or other subtypes, no bots (the bot's own
        # messages are already dropped by Bolt), no channel messages (those reach the bot as app_mention).
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return
        self._spawn(self._question(event, body, context, request))

    async def _pane_question(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                             request: AsyncBoltRequest, in_pane: bool) -> None:
        self._spawn(self._question(event, body, context, request, assistant=in_pane))

    async def _question(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                        request: AsyncBoltRequest, assistant: bool = False) -> None:
        channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
        thread_ts = str(event.get("thread_ts") or ts)
        team = str(body.get("team_id") or context.team_id or event.get("team") or "")
        user = str(event.get("user", ""))
        text = question_text(str(event.get("text", "")), context.bot_user_id)
        turn = Turn(PLATFORM, team, channel, thread_ts, user, text, event_id=body.get("event_id"))
        # A redelivery (Slack retries when an ack was late) is answered once; no second progress reaction for it.
        # Answered by the retry (its first delivery died with a crashed server), it clears that delivery's :eyes:.
        # In the assistant pane the thread's status shows the work instead of the reaction.
        retry = is_retry(request)
        await self._answer(turn, channel, thread_ts, react_to=None if retry or assistant else ts,
                           clear=ts if retry else None, assistant=assistant)

    async def _answer(self, turn: Turn, channel: str, thread_ts: str, react_to: str | None,
                      clear: str | None = None, assistant: bool = False) -> None:
        """Progress reaction, the handler, the reply in the thread; a failure anywhere becomes an apology there.
        The reaction is added while the handler works: a rate-limited reactions.add waits out its Retry-After, and
        the answer must not wait with it. A language model's answer is streamed sentence by verified sentence and
        closed with the quotes and buttons (adapters/slack/streaming.py); in the assistant pane the stage shows as
        the thread's status."""
        self._remember_thread(turn)
        adding = asyncio.create_task(self._react("add", channel, react_to)) if react_to is not None else None
        stream = SlackAnswerStream(self.client, channel, thread_ts, turn.user, turn.workspace, assistant=assistant,
                                   loading_messages=LOADING_MESSAGES if assistant else None)
        try:
            reply = await self._handle(turn, stream)
            if reply.kind is ReplyKind.DUPLICATE:
                log.info("slack: event %s was already answered; redelivery ignored", turn.event_id)
                return
            if adding is not None:  # normally long done; a moment for it, so :eyes: never lands after the answer
                await asyncio.wait({adding}, timeout=REACTION_WAIT_SECONDS)
            message = render(reply, turn.text)
            # Nothing streamed, the stream broke, or not an answer (an error after it began): the usual message.
            if not await stream.finish(message, answered=reply.kind is ReplyKind.ANSWER):
                await self._post_reply(message, channel, thread_ts)
            await self.bot.reply_posted(turn)  # answered for good: a redelivery is dropped from now on
            if clear is not None:
                await self._react("remove", channel, clear)
        except Exception as exc:  # noqa: BLE001 - whatever broke, the navigator gets an apology, not silence
            await self.bot.reply_not_posted(turn)  # the answer is not out: a retry of the event gets it
            await self._apologize(exc, channel, thread_ts, f"answering in {channel} (thread {thread_ts})")
        finally:
            if adding is not None and react_to is not None and await adding:
                await self._react("remove", channel, react_to)

    async def _post_reply(self, message: Message, channel: str, thread_ts: str) -> None:
        try:
            await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=message.text,
                                               blocks=message.blocks, unfurl_links=False, unfurl_media=False)
        except SlackApiError as exc:
            if exc.response.get("error") not in {"invalid_blocks", "invalid_blocks_format", "msg_too_long",
                                                 "msg_blocks_too_long"}:
                raise
            # Blocks Slack refuses (a limit changed, an odd link): the answer still goes out, as text.
            log.warning("slack: blocks refused (%s); posting the answer as text", exc.response.get("error"))
            await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=message.text,
                                               unfurl_links=False, unfurl_media=False)

    async def _react(self, how: str, channel: str, ts: str) -> bool:
        """The :eyes: progress reaction; best effort (a failed reaction must not cost the answer)."""
        try:
            if how == "add":
                await self.client.reactions_add(channel=channel, timestamp=ts, name=THINKING_REACTION)
            else:
                await self.client.reactions_remove(channel=channel, timestamp=ts, name=THINKING_REACTION)
            return True
        except SlackApiError as exc:
            if exc.response.get("error") not in ("already_reacted", "no_reaction"):
                log.warning("slack: reactions.%s failed: %s", how, exc.response.get("error"))
            return how == "add" and exc.response.get("error") == "already_reacted"
        except Exception as exc:  # noqa: BLE001 - network trouble: the answer may still get through
            log.warning("slack: reactions.%s failed: %r", how, exc)
            return False

    async def _apologize(self, exc: BaseException, channel: str, thread_ts: str | None, doing: str) -> None:
        trace = uuid.uuid4().hex[:12]
        # For the metrics: Slack refused or could not be reached (after the client's retries), or our own failure.
        slack_side = isinstance(exc, (SlackApiError, aiohttp.ClientError, TimeoutError))
        self.bot.report_error("slack_api" if slack_side else None, PLATFORM, exc)
        detail = exc.response.get("error") if isinstance(exc, SlackApiError) else None
        log.error("slack: %s failed (trace %s)%s", doing, trace, f": Web API error {detail}" if detail else "",
                  exc_info=exc, extra={"trace_id": trace})
        try:
            await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=APOLOGY.format(trace=trace))
        except Exception as again:  # noqa: BLE001 - Slack unreachable: the log line is all that is left
            log.error("slack: could not post the apology (trace %s): %r", trace, again, extra={"trace_id": trace})

    async def _handle(self, turn: Turn, progress: TurnProgress | None = None) -> Reply:
        return await self.bot.handle(turn, progress=progress)

    def _remember_thread(self, turn: Turn) -> None:
        key = (turn.workspace, turn.channel, turn.user)
        self._latest_thread[key] = turn.thread
        self._latest_thread.move_to_end(key)
        while len(self._latest_thread) > LATEST_THREADS_KEPT:
            self._latest_thread.popitem(last=False)

    # --- the slash command ----------------------------------------------------------------------------------------

    async def _on_command(self, ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        self._spawn(self._slash(command, respond))

    async def _slash(self, command: dict[str, Any], respond: AsyncRespond) -> None:
        text = question_text(str(command.get("text", "")), None)
        word, _, rest = text.partition(" ")
        team, channel, user = (str(command.get(k, "")) for k in ("team_id", "channel_id", "user_id"))
        try:
            if word.lower() in {"", "help"}:
                await respond(text=escape(f"{self.bot.help_text()}\n{SLASH_HELP}"), response_type="ephemeral")
            elif word.lower() == "ask" or not self.bot.is_chat_command(text):  # anything else is taken as a question
                await self._slash_ask(team, channel, user, rest if word.lower() == "ask" else text, respond)
            elif word.lower() == "reset":
                await self._slash_reset(team, channel, user, text, respond)
            else:  # mood: a preference per user and channel, whatever the thread
                turn = Turn(PLATFORM, team, channel, "", user, text)
                reply = await self._handle(turn)
                await respond(text=plain_message(reply.text).text, response_type="ephemeral")
        except Exception as exc:
            trace = uuid.uuid4().hex[:12]
            log.error("slack: /navibot %s failed (trace %s)", word, trace, exc_info=exc, extra={"trace_id": trace})
            try:
                await respond(text=APOLOGY.format(trace=trace), response_type="ephemeral")
            except Exception as again:  # noqa: BLE001 - the log line is all that is left
                log.error("slack: could not send the apology (trace %s): %r", trace, again,
                          extra={"trace_id": trace})

    async def _slash_ask(self, team: str, channel: str, user: str, question: str, respond: AsyncRespond) -> None:
        """The question goes into the channel as a message of the bot's, the answer into its thread; follow-ups
        mentioning the bot in that thread continue the conversation."""
        question = question.strip()
        if not question:
            await respond(text="Ask a question after `ask`, e.g. `/navibot ask can college students get SNAP?`",
                          response_type="ephemeral")
            return
        shown = question if len(question) <= 2900 else question[:2899] + "…"
        try:
            asker = f"<@{user}>" if _USER_ID.fullmatch(user) else "Someone"  # only a real user id is mentioned
            posted = await self.client.chat_postMessage(channel=channel, text=f"{asker} asked: {escape(shown)}")
        except SlackApiError as exc:
            if exc.response.get("error") in {"not_in_channel", "channel_not_found"}:
                await respond(text=NOT_IN_CHANNEL, response_type="ephemeral")
                return
            raise
        ts = str(posted["ts"])
        await self._answer(Turn(PLATFORM, team, channel, ts, user, question), channel, ts, react_to=ts)

    async def _slash_reset(self, team: str, channel: str, user: str, text: str, respond: AsyncRespond) -> None:
        thread = self._latest_thread.get((team, channel, user))
        if thread is None:
            await respond(text="I have no conversation of yours in this channel to forget (since I last started). "
                               "In a thread, mention me and write `reset` to clear that thread.",
                          response_type="ephemeral")
            return
        reply = await self._handle(Turn(PLATFORM, team, channel, thread, user, text))
        await respond(text=plain_message(f"{reply.text} (your latest thread in this channel)").text,
                      response_type="ephemeral")

    # --- buttons and the reason modal -----------------------------------------------------------------------------

    async def _on_toggle_quotes(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        self._spawn(self._toggle_quotes(body, action))

    async def _toggle_quotes(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        channel = str(body.get("channel", {}).get("id", ""))
        message = body.get("message") or {}
        ts = str(body.get("container", {}).get("message_ts") or message.get("ts", ""))
        thread_ts = message.get("thread_ts")
        user = str(body.get("user", {}).get("id", ""))
        try:
            stored = await self.bot.stored_answer(str(action.get("value", "")), chat_of(body, channel, thread_ts))
            if stored is None:
                await self._ephemeral(channel, user, thread_ts,
                                      plain_message("I can't find that answer any more, so I can't show its quotes."))
                return
            expanded = action.get("action_id") == ACTION_SHOW_QUOTES
            shown = answer_message(AnswerView.from_stored(stored), expanded=expanded)
            await self.client.chat_update(channel=channel, ts=ts, text=shown.text, blocks=shown.blocks)
        except Exception as exc:  # noqa: BLE001 - an apology in the thread rather than a dead button
            await self._apologize(exc, channel, thread_ts, "showing or hiding quotes")

    async def _on_feedback(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        self._spawn(self._feedback(body, action))

    async def _feedback(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        channel = str(body.get("channel", {}).get("id", ""))
        thread_ts = (body.get("message") or {}).get("thread_ts")
        user = str(body.get("user", {}).get("id", ""))
        rating, _, answer_id = str(action.get("value", "")).partition(":")
        try:
            if rating not in {HELPFUL, NOT_HELPFUL} or not answer_id:
                raise FeedbackError("That button did not say which answer it rates, so nothing was saved.")
            helpful = rating == HELPFUL
            await self.bot.record_feedback(Vote(answer_id, user, helpful, chat_of(body, channel, thread_ts)))
            confirmation = feedback_confirmation(helpful, answer_id)
        except FeedbackError as exc:
            confirmation = plain_message(str(exc))
        try:
            await self._ephemeral(channel, user, thread_ts, confirmation)
        except Exception as exc:  # noqa: BLE001 - the feedback is saved; only the confirmation is lost
            log.error("slack: could not confirm feedback to %s: %r", user, exc)

    async def _on_reason_button(self, ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        # The trigger id expires 3 seconds after the click: open the modal now, not in a queued task.
        metadata = json.dumps({"answer_id": str(action.get("value", "")),
                               "channel": str(body.get("channel", {}).get("id", "")),
                               "thread_ts": (body.get("container") or {}).get("thread_ts")})
        try:
            await self.client.views_open(trigger_id=str(body.get("trigger_id", "")),
                                         view=reason_modal(metadata, self.bot.max_reason_chars))
        except Exception as exc:  # noqa: BLE001 - the 👎 is saved; only the optional reason is lost
            log.error("slack: could not open the feedback reason form: %r", exc)

    async def _on_reason_submitted(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = str(body.get("user", {}).get("id", ""))
        try:
            where = json.loads(view.get("private_metadata") or "{}")
            reason = view["state"]["values"][REASON_BLOCK][REASON_INPUT].get("value") or ""
            if not isinstance(where, dict) or not where.get("channel") or not isinstance(reason, str):
                raise ValueError("no answer or chat in the form")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            await ack(response_action="errors", errors={REASON_BLOCK: "This form is out of date; click 👎 again."})
            return
        try:  # recorded before the ack (a few milliseconds), so a problem shows in the form itself
            # Only for an answer given in the chat the 👎 was clicked in, as the buttons: a form naming another
            # chat's answer records nothing. The 👎 itself was counted when it was clicked: not a second click.
            chat = chat_of(body, str(where["channel"]), where.get("thread_ts"))
            await self.bot.record_feedback(Vote(str(where.get("answer_id", "")), user, False, chat, reason,
                                                click=False))
        except FeedbackError as exc:
            await ack(response_action="errors", errors={REASON_BLOCK: str(exc)[:150]})
            return
        await ack()
        if where.get("channel"):
            self._spawn(self._confirm_quietly(str(where["channel"]), user, where.get("thread_ts"),
                                              plain_message("Thanks, your reason is saved with the 👎.")))

    async def _confirm_quietly(self, channel: str, user: str, thread_ts: str | None, message: Message) -> None:
        try:
            await self._ephemeral(channel, user, thread_ts, message)
        except Exception as exc:  # noqa: BLE001 - the reason is saved; only the confirmation is lost
            log.warning("slack: could not confirm to %s: %r", user, exc)

    async def _ephemeral(self, channel: str, user: str, thread_ts: str | None, message: Message) -> None:
        await self.client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=message.text,
                                             blocks=message.blocks)


def chat_of(body: dict[str, Any], channel: str, thread_ts: object) -> Chat:
    """The chat a button or form of `body` was used in (the bot honours a stored answer's id only there)."""
    team = body.get("team") if isinstance(body.get("team"), dict) else {}
    return Chat(PLATFORM, str((team or {}).get("id") or ""), channel, str(thread_ts or ""))


def render(reply: Reply, question: str) -> Message:
    """An answer gets quotes and buttons; everything else (commands, no-answers, errors) is plain text."""
    if reply.kind is ReplyKind.ANSWER and reply.answer_id:
        return answer_message(AnswerView.from_reply(reply, question))
    return plain_message(reply.text)


def build_slack_app(bot: ChatBot, settings: SlackSettings, mode: Mode = "http") -> SlackApp:
    """The Slack app on a ChatBot (bot.wiring.runtime.build_bot makes one); settings.check(mode) should have
    passed."""
    return SlackApp(bot, settings, mode)


def event_callback(content_type: str, charset: str | None, raw: bytes) -> str | None:
    """The body of an Events API callback (UTF-8 JSON of `"type": "event_callback"`), else None: the only requests
    whose ack carries nothing, so the only ones acknowledged before Bolt sees them. URL verification (its challenge
    is the reply), slash commands, buttons and forms (their ack may carry a message or form errors) go through Bolt
    first, as does anything odd (Bolt's path refuses it with a 400)."""
    if content_type != "application/json" or (charset or "utf-8").lower() != "utf-8":
        return None
    try:
        body = raw.decode("utf-8")
        payload = json.loads(body)
    except (ValueError, RecursionError):  # not UTF-8 (UnicodeDecodeError is a ValueError), not JSON, too deep
        return None
    return body if isinstance(payload, dict) and payload.get("type") == "event_callback" else None


def signature_problem(verifier: SignatureVerifier, body: bytes, timestamp: str | None,
                      signature: str | None) -> str | None:
    """None when Slack signed this request (slack_sdk's SignatureVerifier.is_valid: the HMAC of the body and a
    timestamp within 5 minutes); else why not, for the log. is_valid raises on input it does not expect: int() of a
    timestamp that is not a number (ValueError), hmac.compare_digest of a signature with non-ASCII characters
    (TypeError), a body that is not UTF-8 (UnicodeDecodeError); each is a refusal here, never a 500."""
    if not timestamp or not signature:
        return "no X-Slack-Signature or X-Slack-Request-Timestamp header"
    try:
        if verifier.is_valid(body, timestamp, signature):
            return None
    except UnicodeDecodeError:
        return "a body that is not UTF-8"
    except ValueError:
        return "an X-Slack-Request-Timestamp that is not a number"
    except TypeError:
        return "an X-Slack-Signature that is not ASCII"
    return "a signature that does not match (wrong SLACK_SIGNING_SECRET, clock over 5 minutes off, or forged)"


def events_handler(slack: SlackApp) -> Callable[[web.Request], Awaitable[web.Response]]:
    def refuse(request: web.Request, status: int, why: str) -> web.Response:
        # One short line and a count per refused request: anyone can POST to a public URL, so no traceback, no body.
        log.warning("slack: refused a request to %s (%d): %s", request.path, status, why)
        slack.bot.report_error("bad_request", PLATFORM)
        return web.Response(status=status, text="not a Slack request" if status == 400 else "invalid signature")

    async def handle(request: web.Request) -> web.Response:
        slack.note_request()
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:  # over aiohttp's client_max_size (1 MB): refused before it is read
            refuse(request, 413, "a body over the size limit")
            raise
        if slack.verifier is not None:
            problem = signature_problem(slack.verifier, raw, request.headers.get("X-Slack-Request-Timestamp"),
                                        request.headers.get("X-Slack-Signature"))
            if problem is not None:
                # "Invalid request signature detected" as Bolt words it, so an alert on Bolt's line still fires.
                return refuse(request, 401, f"Invalid request signature detected: {problem}")
            event = event_callback(request.content_type, request.charset, raw)
            if event is not None:
                # Slack wants nothing but an empty 200 for an event (Bolt too acks it before any listener runs):
                # sent now, and Bolt dispatches the event once the acks are out (SlackApp.dispatch_acknowledged).
                slack.dispatch_acknowledged(event, request.query_string, request.headers)
                return web.Response()
        try:
            bolt_request = await to_bolt_request(request)
        except (ValueError, AttributeError, TypeError, LookupError, RecursionError) as exc:
            # Bolt parses the body (json.loads in slack_bolt.request.internals.parse_body) as it builds the request:
            # not JSON, not a form, JSON nested deeper than Python's recursion limit, an unknown charset.
            return refuse(request, 400, f"a body that is not a Slack payload ({type(exc).__name__})")
        response = await slack.app.async_dispatch(bolt_request)
        if response.status in (400, 401):  # a payload Bolt refused (its own signature check agrees with ours)
            slack.bot.report_error("bad_request", PLATFORM)
        return await to_aiohttp_response(response)
    return handle


def add_slack_routes(web_app: web.Application, slack: SlackApp, path: str = EVENTS_PATH) -> None:
    """Events, slash commands and interactivity all arrive as signed POSTs at one URL (HTTP mode); in-progress
    answers are given time to finish when the server shuts down."""
    web_app.router.add_post(path, events_handler(slack))

    async def finish_answers(_: web.Application) -> None:
        await slack.drain()

    web_app.on_shutdown.append(finish_answers)


def keep_web_session(web_app: web.Application, slack: SlackApp) -> None:
    """The app's Web API session opens as the server starts and closes after the answers under way were posted
    (on_cleanup runs after on_shutdown's drain)."""
    async def open_it(_: web.Application) -> None:
        await slack.open_session()

    async def close_it(_: web.Application) -> None:
        await slack.close_session()

    web_app.on_startup.append(open_it)
    web_app.on_cleanup.append(close_it)


def socket_mode_handler(slack: SlackApp, settings: SlackSettings) -> AsyncSocketModeHandler:
    """Socket Mode: the app connects out to Slack over a WebSocket (no public URL); needs SLACK_APP_TOKEN."""
    if settings.slack_app_token is None:
        raise ValueError("Socket Mode needs SLACK_APP_TOKEN")
    return AsyncSocketModeHandler(slack.app, app_token=settings.slack_app_token.get_secret_value())

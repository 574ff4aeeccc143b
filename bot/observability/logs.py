"""Where log lines go and what they look like: text for a person at a terminal, JSON (one object per line) for a
log collector, with personal data redacted and secrets masked before anything is written.

`configure_logging` installs one handler on the root logger, writing to stderr. Every line is cleaned before it
is written: known secret shapes are always masked (a library's error message may quote a URL with `?key=` or a
MongoDB URI with its password), and with `NAVIBOT_REDACT_PII` on (the default) SSN-like numbers, phone numbers,
e-mail addresses and dates of birth are replaced as in the conversation store (bot/conversations/redacting.py).

In JSON each line carries time (ISO 8601, UTC), level, logger, message, the trace id of the turn under way
(`bot.observability.observers.current_trace`) and any structured fields given with `extra={...}`; a traceback is
one `exc` field.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TextIO

from bot.config.settings import Settings
from bot.conversations.redacting import redact
from bot.observability.observers import current_trace

LogFormat = Literal["json", "text"]
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
SERVER_COMMANDS = ("serve", "slack", "teams")  # long-running: their INFO lines (one per turn) are shown
# Kept to WARNING unless verbose: the Agents SDK, aiohttp's access log, and the HTTP clients of the model SDKs
# (httpx for Cohere, httpx2 for google-genai: one "HTTP Request: POST ..." line per model call, 3 to 6 per turn).
CHATTY_LIBRARIES = ("microsoft_agents", "aiohttp.access", "httpx", "httpx2")

_MASK = "***"
# Secret shapes masked in every line, whatever the PII setting. Each keeps its prefix so the line still says
# what was there.
_SECRETS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bxox[abeoprs]-[A-Za-z0-9-]+"), "xox*-" + _MASK),  # Slack bot/user/refresh tokens
    (re.compile(r"\bxapp-[A-Za-z0-9-]+"), "xapp-" + _MASK),  # Slack app-level token (Socket Mode)
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), "AIza" + _MASK),  # Google API keys
    (re.compile(r"(?i)\b(authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?)[^\s\"',;}]+"),
     rf"\1{_MASK}"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{_MASK}"),
    (re.compile(r"(?i)\b((?:api[_-]?)?key|token|access_token|client_secret|secret|password|passwd|pwd|signature|sig)"
                r"([\"']?\s*[=:]\s*[\"']?)([^\s&\"',;}]+)"), rf"\1\2{_MASK}"),
    (re.compile(r"(?i)\b(mongodb(?:\+srv)?://[^:/@\s]*:)[^@\s]+@"), rf"\1{_MASK}@"),  # user:PASSWORD@host
    (re.compile(r"(?i)\b(https?://[^:/@\s]*:)[^@\s/]+@"), rf"\1{_MASK}@"),  # a proxy URL's password
)


def mask_secrets(text: str) -> str:
    """The text with tokens, keys and URI passwords replaced by ***."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


# The attributes every LogRecord has; anything else on a record came from `extra={...}`.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}


# Trace ids (12 hex) and answer ids (32 hex) that start with 9 or 10 digits look like an SSN or a phone number to
# the PII patterns ("123456789abc" -> "[ssn]abc"): they are kept out of the redaction so that the id a user was
# given can always be found in the log.
_HEX_ID = re.compile(r"\b((?=[0-9a-f]*[a-f])(?:[0-9a-f]{32}|[0-9a-f]{12}))\b")


class _Cleaner:
    def __init__(self, redact_pii: bool) -> None:
        self.redact_pii = redact_pii

    def clean(self, text: str) -> str:
        text = mask_secrets(text)
        if not self.redact_pii:
            return text
        parts = _HEX_ID.split(text)  # odd positions are the ids
        return "".join(part if i % 2 else redact(part) for i, part in enumerate(parts))


def _clean_fields(value: Any, clean: Callable[[str], str]) -> Any:
    """A structured field with every string in it (in lists and dicts too) cleaned."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, (list, tuple)):
        return [_clean_fields(item, clean) for item in value]
    if isinstance(value, dict):
        return {key: _clean_fields(item, clean) for key, item in value.items()}
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per line; newlines inside the message or the traceback are escaped by JSON itself."""

    def __init__(self, redact_pii: bool = True) -> None:
        super().__init__()
        self.cleaner = _Cleaner(redact_pii)

    def format(self, record: logging.LogRecord) -> str:
        clean = self.cleaner.clean
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
                            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": clean(record.getMessage()),
        }
        trace = getattr(record, "trace_id", None) or current_trace.get()
        if trace:
            line["trace_id"] = trace
        for name, value in record.__dict__.items():
            if name not in _STANDARD and name not in line and not name.startswith("_"):
                # Structured fields are written by our code (ids, kinds, timings), but some carry an exception's
                # text (a turn's fallbacks: "generate: <the provider's error>"): cleaned like the message.
                line[name] = _clean_fields(value, clean)
        if record.exc_info:
            line["exc"] = clean(self.formatException(record.exc_info))
        elif record.exc_text:
            line["exc"] = clean(record.exc_text)
        if record.stack_info:
            line["stack"] = clean(self.formatStack(record.stack_info))
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """`LEVEL logger: message`, with the traceback (if any) on the following lines, cleaned like JSON."""

    def __init__(self, redact_pii: bool = True) -> None:
        super().__init__(TEXT_FORMAT)
        self.cleaner = _Cleaner(redact_pii)

    def format(self, record: logging.LogRecord) -> str:
        return self.cleaner.clean(super().format(record))


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time of writing (not the one at start-up), unless given a stream."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._fixed = stream
        super().__init__(stream)

    @property
    def stream(self) -> TextIO:
        return self._fixed if self._fixed is not None else sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:  # logging.StreamHandler assigns it; our property decides
        pass


_OURS = "navibot-stderr"  # the name of the handler configure_logging installs
_uncaught = logging.getLogger("navibot.uncaught")


def _log_uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """sys.excepthook in JSON mode: an exception nothing caught is one JSON line (masked), not a bare traceback."""
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)
        return
    _uncaught.critical("uncaught %s", kind.__name__, exc_info=(kind, exc, tb))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    """threading.excepthook in JSON mode, likewise for a thread (a library's) that dies of an exception."""
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    name = args.thread.name if args.thread is not None else "?"
    _uncaught.critical("uncaught %s in thread %s", args.exc_type.__name__, name,
                       exc_info=(args.exc_type, args.exc_value, args.exc_traceback))


def _route_uncaught(json_mode: bool) -> None:
    """Uncaught exceptions go through the log in JSON mode; back to Python's own printing otherwise."""
    if json_mode:
        sys.excepthook, threading.excepthook = _log_uncaught, _log_uncaught_in_thread
        return
    if sys.excepthook is _log_uncaught:
        sys.excepthook = sys.__excepthook__
    if threading.excepthook is _log_uncaught_in_thread:
        threading.excepthook = threading.__excepthook__


def configure_logging(fmt: LogFormat, verbose: bool, redact_pii: bool, *, level: int | None = None,
                      stream: TextIO | None = None) -> None:
    """Log to stderr (or `stream`) in `fmt`. Level: DEBUG with `verbose`, else `level` (WARNING by default).

    Calling it again replaces the handler it installed before (a command may reconfigure after reading its
    settings). When the root logger already has handlers installed by someone else (an application embedding
    the bot, the test runner), they are left alone and nothing is added, as `logging.basicConfig` does, unless
    `stream` is given."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _OURS:
            root.removeHandler(handler)
    if root.handlers and stream is None:
        return
    handler = _StderrHandler(stream)
    handler.set_name(_OURS)
    handler.setFormatter(JsonFormatter(redact_pii) if fmt == "json" else TextFormatter(redact_pii))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else (level if level is not None else logging.WARNING))
    # Slack Bolt copies the root level onto the logger named after the app ("navibot", the parent of
    # "navibot.turns") at each request; after a reconfiguration that stale copy would hide the turn lines.
    logging.getLogger("navibot").setLevel(logging.NOTSET)
    # At INFO the log has one line per turn (navibot.turns); the libraries' own INFO lines (the Agents SDK writes
    # two per Teams reply, aiohttp one per request, the model SDKs' HTTP clients one per call) would bury it. -v
    # shows them again.
    for name in CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
    # A library's Python warning, or an uncaught exception's traceback, would otherwise be bare text lines among
    # the JSON objects (and unmasked).
    logging.captureWarnings(fmt == "json")
    _route_uncaught(fmt == "json")


def resolve_format(log_format: str, command: str | None) -> LogFormat:
    """NAVIBOT_LOG_FORMAT for a command: "auto" is JSON for `navibot serve`, text for every other command."""
    if log_format in ("json", "text"):
        return log_format  # type: ignore[return-value]
    return "json" if command == "serve" else "text"


def configure_cli_logging(command: str | None, verbose: bool) -> LogFormat:
    """Logging for a `navibot` command, before its settings are validated: the format and PII choice are read
    from the settings when they are valid, and default (auto, redacted) when not, so that the command can then
    report the bad setting in its one-line error. Server commands log at INFO (one line per turn). Returns the
    format chosen."""
    try:
        settings = Settings()
        log_format, redact_pii = settings.log_format, settings.redact_pii
    except Exception:  # noqa: BLE001 - whatever is wrong, the command reports it when it reads the settings itself
        log_format, redact_pii = "auto", True
    fmt = resolve_format(log_format, command)
    configure_logging(fmt, verbose, redact_pii, level=logging.INFO if command in SERVER_COMMANDS else logging.WARNING)
    return fmt

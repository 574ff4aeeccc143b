"""Prometheus metrics of the bot, served as text on `GET /metrics` by `navibot serve`.

`Metrics` is an Observer (bot/observability/observers.py): it counts questions, answers, no-answers, feedback,
errors and model fallbacks, and keeps a latency histogram per stage. Turns end in the bot's worker threads, so
every update happens under one lock; `render()` writes the text exposition format 0.0.4 by hand (a few lines of code, no
client library to install). Label values are bounded: platforms, reply kinds, error kinds and stage names come
from the code, never from what a user typed.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable

from bot.observability.observers import TurnEvent

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Seconds. A turn's stages range from a few milliseconds (offline retrieval) to tens of seconds (a slow model
# near the turn deadline); the buckets follow that range roughly evenly on a log scale.
STAGE_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)
STAGES = ("rewrite", "retrieve", "rerank", "generate", "total")
PLATFORMS = ("slack", "teams")  # shown as zeros on an idle server; others (terminal) appear when used
# The error kinds each platform can report (bot/chat/handler.py error_kind, too_long, and the adapters'), and the model
# stages that can fall back (the stage names given to rag.answer.budget.note_fallback). They start at zero:
# Prometheus' increase() and rate() cannot see the first error of a series that did not exist before it.
ERROR_KINDS = {"slack": ("store", "knowledge_store", "disk_full", "internal", "too_long", "bad_request", "slack_api"),
               "teams": ("store", "knowledge_store", "disk_full", "internal", "too_long", "bad_request", "teams_send")}
FALLBACK_STAGES = ("rewrite", "embed", "rerank", "generate")

Labels = tuple[tuple[str, str], ...]


def escape_label(value: str) -> str:
    """A label value as the exposition format wants it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _format_labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{name}="{escape_label(value)}"' for name, value in labels) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class _Counter:
    def __init__(self, name: str, help_text: str, label_names: tuple[str, ...]) -> None:
        self.name, self.help, self.label_names = name, help_text, label_names
        self.values: dict[Labels, float] = {}

    def inc(self, *values: str, amount: float = 1.0) -> None:
        key = tuple(zip(self.label_names, values, strict=True))
        self.values[key] = self.values.get(key, 0.0) + amount

    def declare(self, *values: str) -> None:
        self.values.setdefault(tuple(zip(self.label_names, values, strict=True)), 0.0)

    def lines(self) -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} counter"
        for labels, value in sorted(self.values.items()):
            yield f"{self.name}{_format_labels(labels)} {_number(value)}"


class _Histogram:
    def __init__(self, name: str, help_text: str, label_name: str, buckets: tuple[float, ...]) -> None:
        self.name, self.help, self.label_name, self.buckets = name, help_text, label_name, buckets
        self.series: dict[str, tuple[list[int], list[float]]] = {}  # label value -> (per-bucket counts, [sum])

    def declare(self, value: str) -> tuple[list[int], list[float]]:
        return self.series.setdefault(value, ([0] * (len(self.buckets) + 1), [0.0]))

    def observe(self, value: str, amount: float) -> None:
        counts, total = self.declare(value)
        index = bisect.bisect_left(self.buckets, amount)  # the first bucket whose bound is >= amount (le)
        counts[index] += 1
        total[0] += amount

    def lines(self) -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} histogram"
        for value, (counts, total) in sorted(self.series.items()):
            label = (self.label_name, value)
            running = 0
            for bound, count in zip((*self.buckets, math.inf), counts, strict=True):
                running += count  # buckets are cumulative: each counts everything up to its bound
                yield f"{self.name}_bucket{_format_labels((label, ('le', _number(bound))))} {running}"
            yield f"{self.name}_sum{_format_labels((label,))} {_number(total[0])}"
            yield f"{self.name}_count{_format_labels((label,))} {running}"


def resident_memory_bytes() -> int | None:
    """VmRSS of this process from /proc (Linux); None elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        return None
    return None


class Metrics:
    """The bot's counters and histograms. Add it to `bot.observers`; serve `render()` with `CONTENT_TYPE`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.questions = _Counter("navibot_questions_total", "Questions the engine worked on.", ("platform",))
        self.answers = _Counter("navibot_answers_total", "Questions answered with cited sources.", ("platform",))
        self.no_answers = _Counter("navibot_no_answers_total",
                                   "Questions the bot could not answer from the knowledge base.", ("platform",))
        self.feedback_counter = _Counter("navibot_feedback_total", "Feedback clicks on answers.",
                                         ("platform", "rating"))
        self.errors = _Counter("navibot_errors_total",
                               "Failures: turns that failed (store, knowledge_store, disk_full, internal, too_long) "
                               "and platform-side errors (slack_api, teams_send, bad_request).", ("kind", "platform"))
        self.fallbacks = _Counter("navibot_fallbacks_total",
                                  "Model stages that fell back to their offline replacement.", ("stage",))
        self.stage_seconds = _Histogram("navibot_stage_seconds", "Time spent per stage of a question, in seconds.",
                                        "stage", STAGE_BUCKETS)
        for platform in PLATFORMS:  # an idle server shows zeros rather than nothing
            for counter in (self.questions, self.answers, self.no_answers):
                counter.declare(platform)
            for rating in ("up", "down"):
                self.feedback_counter.declare(platform, rating)
            for kind in ERROR_KINDS[platform]:
                self.errors.declare(kind, platform)
        for stage in FALLBACK_STAGES:
            self.fallbacks.declare(stage)
        for stage in STAGES:
            self.stage_seconds.declare(stage)

    # --- Observer protocol -----------------------------------------------------------------------------------
    def turn(self, event: TurnEvent) -> None:
        with self._lock:
            if event.is_question:
                self.questions.inc(event.platform)
                for stage, ms in event.timings_ms.items():
                    self.stage_seconds.observe(stage, max(ms, 0.0) / 1000)
            if event.kind == "answer":
                self.answers.inc(event.platform)
            elif event.kind == "no_answer":
                self.no_answers.inc(event.platform)
            if event.error:
                self.errors.inc(event.error, event.platform)
            for fallback in event.fallbacks:
                self.fallbacks.inc(fallback.split(":", 1)[0].strip() or "unknown")

    def feedback(self, platform: str, helpful: bool) -> None:
        with self._lock:
            self.feedback_counter.inc(platform, "up" if helpful else "down")

    def error(self, kind: str, platform: str) -> None:
        with self._lock:
            self.errors.inc(kind, platform)

    # --- exposition ------------------------------------------------------------------------------------------
    def render(self) -> str:
        """All series in the Prometheus text format 0.0.4 (ends with a newline)."""
        with self._lock:
            lines: list[str] = []
            for family in (self.questions, self.answers, self.no_answers, self.feedback_counter, self.errors,
                           self.fallbacks, self.stage_seconds):
                lines.extend(family.lines())
        memory = resident_memory_bytes()
        if memory is not None:
            lines += ["# HELP process_resident_memory_bytes Resident memory size in bytes.",
                      "# TYPE process_resident_memory_bytes gauge",
                      f"process_resident_memory_bytes {memory}"]
        return "\n".join(lines) + "\n"

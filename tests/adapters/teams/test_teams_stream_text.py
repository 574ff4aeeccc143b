"""Streamed text in Teams is Markdown: document and model text cannot format or inject markup; [n] stays.
And what the adapter asks of the SDK's StreamingResponse in a turn that ends in an error."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from adapters.teams.streaming import TeamsAnswerStream, markdown_escape
from bot.port import Reply, ReplyKind


def test_markdown_and_html_are_escaped_and_citation_markers_kept() -> None:
    assert markdown_escape("Work *20* hours [1]. <b>x</b> & [doc2] [2]") == (
        r"Work \*20\* hours [1]. &lt;b&gt;x&lt;/b&gt; &amp; \[doc2\] [2]")


class Recorded:
    """A stand-in for the SDK's StreamingResponse that records what the adapter asked of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def queue_informative_update(self, text: str) -> None:
        self.calls.append(("informative", text))

    def queue_text_chunk(self, text: str) -> None:
        self.calls.append(("text", text))

    def set_attachments(self, attachments: object) -> None:
        self.calls.append(("attachments", attachments))

    async def end_stream(self) -> None:
        self.calls.append(("end", None))


def test_an_error_after_the_answer_began_is_added_to_the_stream_before_it_ends() -> None:
    response = Recorded()
    stream = TeamsAnswerStream(SimpleNamespace(streaming_response=response))  # type: ignore[arg-type]

    async def turn() -> bool:
        await stream.status("Searching…")
        await stream.sentence("Students need 20 hours [1]. ")
        await stream.status("Checking the quotes…")  # not shown once text streams
        return await stream.finish(Reply(ReplyKind.ERROR, "Sorry, the disk is full (trace id x)."))

    assert asyncio.run(turn())
    assert response.calls == [("informative", "Searching…"), ("text", "Students need 20 hours [1]. "),
                              ("text", "\n\nSorry, the disk is full (trace id x)."), ("end", None)]

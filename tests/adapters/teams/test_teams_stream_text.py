"""Streamed text in Teams is Markdown: document and model text cannot format or inject markup; [n] stays."""

from adapters.teams.streaming import markdown_escape


def test_markdown_and_html_are_escaped_and_citation_markers_kept() -> None:
    assert markdown_escape("Work *20* hours [1]. <b>x</b> & [doc2] [2]") == (
        r"Work \*20\* hours [1]. &lt;b&gt;x&lt;/b&gt; &amp; \[doc2\] [2]")

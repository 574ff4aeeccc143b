"""The glossary's parse, remembered per file text for the test session.

Every `build_core` (the `bot` and `core` fixtures, each in-process `navibot` command of a CLI test) builds a
Glossary, which parses the bundled glossary.toml (~1,700 phrases): ~60 ms, about half of every build, and several
hundred builds a run. `rag.search.glossary._parse` is a pure function of the file's text and its name: the same text
gives the same entries, so the tests parse each text once and hand every caller its own copy (Glossary.__init__
updates the dict it gets). The file is still read every time, so a test that writes a glossary sees its own text
parsed; a text that fails to parse is not remembered and raises the same error each time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from rag.search import glossary


@contextmanager
def parses_remembered() -> Iterator[None]:
    original = glossary._parse
    remembered = cache(original)

    def parse(text: str, where: str) -> tuple[dict[str, tuple[str, ...]], bool]:
        entries, keep_bundled = remembered(text, where)
        return dict(entries), keep_bundled

    glossary._parse = parse
    try:
        yield
    finally:
        glossary._parse = original

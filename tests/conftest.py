"""Shared fixtures: every test gets its own data directory, so no test touches ~/.navibot."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.wiring.runtime import Bot, Core, build_bot, build_core
from tests.fakes.glossary_parse_cache import parses_remembered
from tests.fakes.teams_stream_pace import paced


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "navibot-data"
    monkeypatch.setenv("NAVIBOT_DATA_DIR", str(data))
    monkeypatch.chdir(tmp_path)  # a developer's .env in the repo must not leak into tests
    return data


@pytest.fixture(scope="session", autouse=True)
def teams_stream_pace() -> Iterator[None]:
    """The Agents SDK's one-second pause between streamed Teams activities, at a fifth (tests/fakes/
    teams_stream_pace.py says why the tests stay meaningful)."""
    with paced():
        yield


@pytest.fixture(scope="session", autouse=True)
def glossary_parsed_once() -> Iterator[None]:
    """The bundled glossary parsed once per session, not once per bot built (tests/fakes/glossary_parse_cache.py)."""
    with parses_remembered():
        yield


@pytest.fixture(scope="session")
def demo_store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled demo knowledge base, ingested once per test session. Use `demo_store` (a copy) to open it."""
    folder = tmp_path_factory.mktemp("demo-store")
    path = folder / "knowledge.sqlite3"
    core = build_core(Settings(_env_file=None, data_dir=folder), path)  # type: ignore[call-arg]
    try:
        assert core.ingestor.ingest_paths([demo_kb_path()]).ingested >= 12
    finally:
        core.close()  # the last connection checkpoints the WAL: the file alone is the whole store
    return path


@pytest.fixture(scope="module")
def demo_store(demo_store_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo store for one test module (a module may write to it)."""
    folder = tmp_path_factory.mktemp("demo")
    return Path(shutil.copy(demo_store_file, folder / "knowledge.sqlite3"))


@pytest.fixture(scope="module")
def demo(demo_store: Path) -> Iterator[Core]:
    """The demo knowledge base opened for one test module."""
    built = build_core(Settings(_env_file=None, data_dir=demo_store.parent), demo_store)  # type: ignore[call-arg]
    yield built
    built.close()


@pytest.fixture
def bot(demo_store: Path, tmp_path: Path) -> Iterator[Bot]:
    """The whole bot on the demo pages, with its conversation store in this test's folder (a test module may
    define its own `bot` with other settings)."""
    built = build_bot(Settings(_env_file=None, data_dir=tmp_path), demo_store,  # type: ignore[call-arg]
                      tmp_path / "conversations.sqlite3")
    yield built
    built.close()


@pytest.fixture
def core(tmp_path: Path) -> Iterator[Core]:
    built = build_core(Settings(), tmp_path / "store.sqlite3")
    yield built
    built.close()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    """A small knowledge base in Markdown, about distinct benefit topics."""
    root = tmp_path / "kb"
    write(root / "snap" / "students.md", """---
title: SNAP for college students
url: https://www.fns.usda.gov/snap/students
tags: snap
---

# SNAP for college students

## Who is a student

A person enrolled at least half-time in college or university is a student for SNAP purposes.

## Exemptions

A student can still get SNAP if one of these applies:

- works at least 20 hours a week for pay
- takes part in federal or state work study
- cares for a child under age 6
""")
    write(root / "wic.md", """---
title: WIC basics
url: https://www.fns.usda.gov/wic
tags: wic
---

# WIC basics

WIC serves pregnant women, new mothers, infants and children under five with healthy food and nutrition advice.

## Income

Household income at or below 185 percent of the poverty guidelines qualifies, and people on Medicaid qualify automatically.
""")  # noqa: E501 - a page's paragraph, one a line
    write(root / "internal" / "fraud-procedures.md", """---
title: Fraud referral procedures
tags: snap
groups: supervisors
---

# Fraud referral procedures

Supervisors send suspected trafficking cases to the ZX-42 referral desk within ten days.
""")
    write(root / "liheap.md", """---
title: LIHEAP energy help
url: https://www.acf.hhs.gov/ocs/programs/liheap
tags: liheap
---

# LIHEAP energy help

The Low Income Home Energy Assistance Program helps households pay heating and cooling bills and can
fix a shut-off notice in an energy crisis.
""")
    return root

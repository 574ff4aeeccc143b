"""The fully on-prem set-up: docker-compose.yml's "onprem" profile (Ollama beside the bot and MongoDB) and the .env
lines docs/own-models.md tells an admin to write, checked against each other and run against an Ollama-shaped
fake (no Docker engine here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.config.settings import Settings
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import build_bot
from tests.fakes.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
PAGE = (ROOT / "docs" / "own-models.md").read_text(encoding="utf-8")


def documented_env() -> dict[str, str]:
    """The indented block after "Put these lines in `.env`" on the page."""
    block = PAGE.split("Put these lines in `.env`", 1)[1].split("\n\n", 2)[1]
    lines = [line.strip() for line in block.splitlines()]
    assert lines and all(re.fullmatch(r"[A-Z_]+=\S+", line) for line in lines), lines
    return dict(line.split("=", 1) for line in lines)


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's ${NAME:-default}."""
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: env.get(m.group(1), m.group(2)), text)


def test_the_profile_puts_ollama_beside_the_bot_and_mongodb() -> None:
    services = COMPOSE["services"]
    ollama, pull = services["ollama"], services["ollama-pull"]
    assert ollama["profiles"] == pull["profiles"] == ["onprem"]
    assert "profiles" not in services["navibot"] and "profiles" not in services["mongodb"]
    assert re.fullmatch(r"ollama/ollama:\d+\.\d+\.\d+", ollama["image"]) and pull["image"] == ollama["image"]
    assert "ports" not in ollama, "the model server stays on the compose network"
    assert [v.split(":")[0] for v in ollama["volumes"]] == ["ollama"] and "ollama" in COMPOSE["volumes"]
    assert pull["environment"]["OLLAMA_HOST"] == f"http://{ollama['hostname']}:11434"


def test_the_documented_env_selects_the_profile_and_its_models(monkeypatch: pytest.MonkeyPatch) -> None:
    env = documented_env()
    assert env["COMPOSE_PROFILES"] == "onprem"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.llm == settings.embedder == "openai"
    [url] = settings.openai_base_urls
    assert url == f"http://{COMPOSE['services']['ollama']['hostname']}:11434/v1"
    pulled = interpolate(COMPOSE["services"]["ollama-pull"]["command"][0], env)
    assert pulled == f"ollama pull {settings.openai_model} && ollama pull {settings.openai_embed_model}"


def test_the_documented_env_answers_with_an_ollama_shaped_server(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path, kb: Path) -> None:
    with FakeOpenAI("ollama") as ollama:
        for name, value in documented_env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("NAVIBOT_OPENAI_BASE_URLS", f"{ollama.url}/v1")  # the compose host, here
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        bot = build_bot(settings, tmp_path / "store.sqlite3", tmp_path / "conversations.sqlite3")
        try:
            assert bot.core.ingestor.ingest_paths([kb]).ingested
            reply = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", "Who is a student for SNAP?", "e1"))
        finally:
            bot.close()
        assert reply.kind is ReplyKind.ANSWER and reply.citations, reply.text
        chats = [c for c in ollama.calls if c.path == "/v1/chat/completions"]
        assert len(chats) == 1 and chats[0].body["model"] == "llama3.1:8b"
        embeds = [c for c in ollama.calls if c.path == "/v1/embeddings"]
        assert embeds and all("dimensions" not in c.body for c in embeds)
        assert ollama.refused == []

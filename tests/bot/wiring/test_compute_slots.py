"""NAVIBOT_COMPUTE_SLOTS reaches the engine the bot runs (`navibot serve`, `ask`, `chat` all build it here)."""

from __future__ import annotations

import dataclasses

import pytest

from bot.config.settings import Settings
from bot.wiring.runtime import Bot, Core, build_engine


def test_the_bot_gates_its_turns_two_at_a_time_by_default(bot: Bot) -> None:
    assert Settings(_env_file=None).compute_slots == 2  # type: ignore[call-arg]
    assert bot.engine.gate.slots == 2


@pytest.mark.parametrize(("value", "slots"), [("1", 1), ("0", None)])
def test_the_setting_is_read_from_the_environment(demo: Core, monkeypatch: pytest.MonkeyPatch, value: str,
                                                  slots: int | None) -> None:
    monkeypatch.setenv("NAVIBOT_COMPUTE_SLOTS", value)
    settings = Settings(_env_file=None, data_dir=demo.settings.data_dir)  # type: ignore[call-arg]
    assert build_engine(dataclasses.replace(demo, settings=settings)).gate.slots == slots


def test_no_gate_on_mongodb_whose_searches_wait_on_the_network(demo: Core) -> None:
    settings = Settings(_env_file=None, data_dir=demo.settings.data_dir, store="mongodb",  # type: ignore[call-arg]
                        compute_slots=1)
    assert build_engine(dataclasses.replace(demo, settings=settings)).gate.slots is None


def test_a_bad_value_is_refused_with_the_setting_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_COMPUTE_SLOTS", "-1")
    with pytest.raises(ValueError, match="compute_slots"):
        Settings(_env_file=None)  # type: ignore[call-arg]

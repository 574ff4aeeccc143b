"""docs/settings.md is generated from the settings classes: it must match them, and every field must say what it
does."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

ROOT = Path(__file__).resolve().parents[3]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_settings", ROOT / "docs" / "gen_settings.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_settings", module)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def test_committed_reference_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert committed == gen.render(), (
        f"docs/settings.md is out of date with the settings classes: regenerate it with `{gen.REGENERATE}` "
        "and commit it")


def test_every_setting_has_a_description() -> None:
    missing = gen.missing_descriptions(gen.settings_classes())
    assert not missing, f"add a description= to the Field of: {', '.join(missing)}"


def test_every_field_of_every_settings_class_is_listed_under_the_name_it_is_read_from() -> None:
    page = gen.render()
    for model in gen.settings_classes():
        prefix = model.model_config.get("env_prefix", "")
        for name in model.model_fields:
            assert f"| `{(prefix + name).upper()}` |" in page, name


def test_every_settings_class_in_the_code_is_in_the_reference() -> None:
    """A settings class added anywhere in bot/, rag/ or adapters/ (not mixed into one the reference walks) would be
    read from the environment yet missing from the page."""
    found = set()
    for package in ("bot", "rag", "adapters"):
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
            module = importlib.import_module(info.name)
            found |= {cls for cls in vars(module).values() if inspect.isclass(cls) and issubclass(cls, BaseSettings)
                      and cls.__module__ == module.__name__}
    covered = {cls for model in gen.settings_classes() for cls in model.__mro__}
    missing = sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in found - covered)
    assert not missing, f"not in docs/settings.md: {missing}; add it to settings_classes() in docs/gen_settings.py"


@pytest.mark.parametrize(("variable", "value", "model", "field"), [
    ("NAVIBOT_TOP_K", "7", "Settings", "top_k"),
    ("NAVIBOT_LOG_FORMAT", "json", "Settings", "log_format"),
    ("SLACK_API_URL", "https://slack-gov.com/api/", "SlackSettings", "slack_api_url"),
    ("NAVIBOT_TEAMS_PORT", "4000", "TeamsSettings", "port"),
])
def test_a_documented_name_is_the_one_pydantic_settings_reads(
        variable: str, value: str, model: str, field: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert f"| `{variable}` |" in gen.render()
    monkeypatch.setenv(variable, value)
    settings_class = next(cls for cls in gen.settings_classes() if cls.__name__ == model)
    assert str(getattr(settings_class(), field)) == value


class _Example(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EXAMPLE_")

    token: SecretStr = Field(default=SecretStr("hunter2-do-not-print"), description="A token.")
    keys: list[SecretStr] = Field(default_factory=lambda: [SecretStr("sk-also-secret")], description="Keys.")
    unset_key: SecretStr | None = Field(default=None, description="An optional key.")
    renamed: int = Field(default=3, ge=1, le=9, validation_alias=AliasChoices("OLD_NAME", "other"),
                         description="A | piped <value>.")
    folder: Path = Field(default=Path.home() / ".example", description="A folder.")
    mode: bool = Field(default=False, description="")


def test_secret_defaults_are_never_printed_and_cells_stay_in_their_column() -> None:
    page = gen.render([_Example])
    assert "hunter2" not in page and "sk-also-secret" not in page
    assert "| `EXAMPLE_TOKEN` | secret | (secret, not shown) | A token. |" in page
    assert "| `EXAMPLE_KEYS` | list of secret | (secret, not shown) | Keys. |" in page
    assert "| `EXAMPLE_UNSET_KEY` | secret or unset | (none) | An optional key. |" in page
    # an alias is the variable read; a pipe would split the table row; <value> would vanish as an HTML tag
    assert "| `OLD_NAME` | int, 1–9 | `3` | A \\| piped &lt;value&gt;. |" in page
    # a default under the home folder is written with ~, so the page is the same on every machine
    assert "| `EXAMPLE_FOLDER` | path | `~/.example` |" in page
    assert gen.missing_descriptions([_Example]) == ["EXAMPLE_MODE"]


def test_check_mode_names_the_regenerate_command_when_the_page_is_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "settings.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(gen, "OUTPUT", stale)
    assert gen.main(["--check"]) == 1
    assert gen.REGENERATE in capsys.readouterr().err
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == gen.render()

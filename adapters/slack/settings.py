"""Slack settings, read from the environment (or .env) under Slack's own names, without the NAVIBOT_ prefix: the
names Slack's docs and app pages use are the ones an admin will look for."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Mode = Literal["socket", "http"]


class SlackSettingsError(ValueError):
    """A setting the chosen connection mode needs is missing; the message names it."""


class SlackSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", env_file=".env", env_file_encoding="utf-8", extra="ignore")

    slack_bot_token: SecretStr | None = Field(
        default=None,
        description="Bot User OAuth Token (xoxb-...), from OAuth & Permissions. Needed in both modes.")
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        description="Signing Secret, from Basic Information. Needed in HTTP mode (verifies each request).")
    slack_app_token: SecretStr | None = Field(
        default=None,
        description="App-Level Token (xapp-...) with connections:write. Set it to use Socket Mode.")
    slack_api_url: str = Field(
        default="https://slack.com/api/",
        description="Web API base URL: GovSlack uses https://slack-gov.com/api/; tests point it at a local fake.")

    @field_validator("slack_bot_token", "slack_signing_secret", "slack_app_token", mode="after")
    @classmethod
    def _blank_is_unset(cls, value: SecretStr | None) -> SecretStr | None:
        return value if value is not None and value.get_secret_value().strip() else None

    @field_validator("slack_api_url", mode="after")
    @classmethod
    def _url(cls, value: str) -> str:
        value = value.strip()
        if not value.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL such as https://slack.com/api/")
        return value if value.endswith("/") else value + "/"  # slack_sdk appends the method name to it

    def mode(self, explicit: Mode | None = None) -> Mode:
        """Socket Mode when an app-level token is set (no public URL needed), HTTP otherwise, unless asked."""
        if explicit is not None:
            return explicit
        return "socket" if self.slack_app_token is not None else "http"

    def check(self, mode: Mode) -> None:
        """Raises SlackSettingsError naming every setting the mode still needs."""
        needed = {"SLACK_BOT_TOKEN": self.slack_bot_token}
        if mode == "socket":
            needed["SLACK_APP_TOKEN"] = self.slack_app_token
        else:
            needed["SLACK_SIGNING_SECRET"] = self.slack_signing_secret
        missing = [name for name, value in needed.items() if value is None]
        if missing:
            what = "Socket Mode" if mode == "socket" else "HTTP mode"
            raise SlackSettingsError(f"{what} needs {' and '.join(missing)} (environment or .env); "
                                     "see manifests/slack/manifest.yaml and the README's Slack section")

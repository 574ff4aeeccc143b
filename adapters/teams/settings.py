"""Settings of the Teams adapter, read as NAVIBOT_TEAMS_<FIELD> from the environment or the .env file.

The bot's Azure identity (client id, secret, tenant) is mapped in code to the Agents SDK's own connection
configuration (`CONNECTIONS__SERVICE_CONNECTION__SETTINGS__…`), so an admin sets one family of names. With none of
the three set the bot runs in local anonymous mode (for the Microsoft 365 Agents Playground); a partial set is
refused at start-up (`check_credentials`) rather than silently running unauthenticated.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from adapters.teams.service_hosts import parse_allow_list
from bot.errors import UserError

ENV_PREFIX = "NAVIBOT_TEAMS_"
MESSAGES_PATH = "/api/messages"  # where the Bot Connector posts activities
GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


class TeamsSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", env_file_encoding="utf-8",
                                      extra="ignore")

    client_id: str = Field(default="", description="Microsoft App ID of the Azure Bot (the app registration's "
                                                   "Application (client) ID). Empty = local anonymous mode.")
    client_secret: SecretStr = Field(default=SecretStr(""), description="A client secret of that app registration.")
    tenant_id: str = Field(default="", description="Directory (tenant) ID: the bot is single-tenant.")
    host: str | None = Field(default=None, description="Interface `navibot teams` listens on (default: 0.0.0.0 "
                                                       "with credentials, 127.0.0.1 in anonymous mode).")
    port: int = Field(default=3978, ge=1, le=65535, description="Port of `navibot teams` (POST /api/messages).")
    allow_anonymous: bool = Field(
        default=False, description="`navibot serve` only: mount Teams without credentials (local anonymous mode). "
                                   "Anonymous mode answers anyone who reaches the port and posts to the serviceUrl "
                                   "a request names (loopback, or a host NAVIBOT_TEAMS_SERVICE_URLS lists), and "
                                   "serve listens on 0.0.0.0: for a local test only.")
    service_urls: str = Field(
        default="", description="Comma-separated hosts (or URLs) the bot may post replies to besides the usual "
                                "ones: in anonymous mode serviceUrl must be on loopback or listed here; with "
                                "credentials, an activity whose token names no serviceUrl must be on a Microsoft "
                                "host or a listed one. Link-local and cloud metadata addresses are refused even if "
                                "listed.")

    # The app package (`navibot teams package`); none of these are needed to run the bot.
    app_id: str = Field(default="", description="Teams app id (a GUID of your choosing, stable across versions). "
                                                "Empty: the bot's client id is used.")
    app_version: str = Field(default="1.0.0", description="App package version (semver); raise it on every upload.")
    app_name: str = Field(default="Navibot", description="Short app name shown in Teams (at most 30 characters).")
    developer_name: str = Field(default="Navibot project", description="Publisher name in the app details.")
    website_url: str = Field(default="https://github.com/navibot/navibot", description="Publisher website.")
    privacy_url: str = Field(default="https://github.com/navibot/navibot#privacy", description="Privacy statement URL.")
    terms_url: str = Field(default="https://github.com/navibot/navibot#license", description="Terms of use URL.")
    valid_domains: str = Field(default="", description="Comma-separated extra domains the app may open "
                                                       "(the bot itself needs none).")

    @field_validator("service_urls")
    @classmethod
    def _service_urls(cls, value: str) -> str:
        parse_allow_list(value)  # a bad or forbidden entry is refused at start-up, naming it
        return value

    @property
    def allowed_service_hosts(self) -> tuple[str, ...]:
        return parse_allow_list(self.service_urls)

    @model_validator(mode="after")
    def _guids(self) -> TeamsSettings:
        for name, value in (("CLIENT_ID", self.client_id), ("TENANT_ID", self.tenant_id), ("APP_ID", self.app_id)):
            if value.strip() and not GUID.match(value.strip()):
                raise ValueError(f"{ENV_PREFIX}{name} must be a GUID like 00000000-0000-0000-0000-000000000000")
        return self

    def check_credentials(self) -> None:
        """To run the bot: all three credentials, or none (local anonymous mode). A partial set is refused rather
        than silently running unauthenticated. (Building the package needs only the client id.)"""
        given = {"CLIENT_ID": bool(self.client_id.strip()),
                 "CLIENT_SECRET": bool(self.client_secret.get_secret_value()),
                 "TENANT_ID": bool(self.tenant_id.strip())}
        if any(given.values()) and not all(given.values()):
            missing = ", ".join(ENV_PREFIX + name for name, ok in given.items() if not ok)
            raise UserError(f"set all three of the bot's credentials, or none for local anonymous mode; missing: "
                            f"{missing}")

    @property
    def anonymous(self) -> bool:
        """No credentials: requests are not authenticated and replies carry no token (local testing only)."""
        return not self.client_id.strip()

    def sdk_configuration(self) -> dict[str, Any]:
        """The Agents SDK's configuration dict (the shape `load_configuration_from_env` builds from
        CONNECTIONS__SERVICE_CONNECTION__SETTINGS__* variables), for MsalConnectionManager."""
        settings: dict[str, Any] = {"AUTHTYPE": "ClientSecret"}
        if not self.anonymous:
            settings.update(CLIENTID=self.client_id.strip(), TENANTID=self.tenant_id.strip(),
                            CLIENTSECRET=self.client_secret.get_secret_value())
        return {"CONNECTIONS": {"SERVICE_CONNECTION": {"SETTINGS": settings}}, "CONNECTIONSMAP": [],
                "AGENTAPPLICATION": {}}


def load_teams_settings(**overrides: Any) -> TeamsSettings:
    """TeamsSettings, with a validation failure turned into one line that names the variables."""
    try:
        return TeamsSettings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            (f"{ENV_PREFIX}{'_'.join(map(str, e['loc'])).upper()}: " if e["loc"] else "")
            + str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise UserError(f"invalid Teams setting: {problems}") from exc

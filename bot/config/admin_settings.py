"""Settings of the admin page at /admin of `navibot serve` (bot/server/admin/). A mixin of
`bot.config.settings.Settings` (NAVIBOT_<FIELD>). The page is off until a token or a trusted proxy header is set."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode

MIN_TOKEN_CHARS = 16


def _words(value: Any) -> Any:
    """A comma-separated list from the environment (`a@x.org, b@x.org`), or a list as given."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class AdminSettings(BaseSettings):
    admin_token: SecretStr | None = Field(
        default=None,
        description=f"Turns on the admin page (/admin) with a login by this token or password (at least "
                    f"{MIN_TOKEN_CHARS} characters). A login gets a signed session cookie (HttpOnly, "
                    "SameSite=Strict, Secure); changing the token ends every session.")
    admin_proxy_header: str | None = Field(
        default=None,
        description="Turns on the admin page behind a single sign-on proxy (e.g. oauth2-proxy in front of "
                    "Microsoft Entra ID or Google): the request header that carries the signed-in user, e.g. "
                    "X-Forwarded-Email. Trusted only from NAVIBOT_ADMIN_PROXY_IPS and only for users in "
                    "NAVIBOT_ADMIN_USERS.")
    admin_users: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Who may open the admin page through the proxy (comma-separated e-mails or user names, "
                    "compared without regard to case). Required with NAVIBOT_ADMIN_PROXY_HEADER.")
    admin_proxy_ips: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["127.0.0.1", "::1"],
        description="Addresses (or networks, e.g. 10.0.0.0/8) of the proxy whose user header is trusted; a "
                    "request from anywhere else carrying that header is refused.")
    admin_plain_http: bool = Field(
        default=False,
        description="Send the admin session cookie without the Secure flag, for a browser on this machine over "
                    "plain http://localhost. Logins from other addresses are then refused. Off: serve /admin "
                    "behind HTTPS.")
    admin_session_hours: float = Field(default=8.0, gt=0, le=24 * 30,
                                       description="How long an admin login lasts.")
    admin_stale_days: int = Field(
        default=365, ge=1, le=10_000,
        description="Documents page: a document whose `updated` date, or whose page's last successful crawl, is "
                    "older than this many days is listed as stale.")

    @field_validator("admin_users", "admin_proxy_ips", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return _words(value)

    @field_validator("admin_token", mode="after")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().strip()) < MIN_TOKEN_CHARS:
            raise ValueError(f"must be at least {MIN_TOKEN_CHARS} characters (a password anyone could guess "
                             "would open every question and answer)")
        return value

    @field_validator("admin_proxy_ips", mode="after")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an IP address or network (e.g. 127.0.0.1 or 10.0.0.0/8)") from None
        return value

    @property
    def admin_enabled(self) -> bool:
        return self.admin_token is not None or bool(self.admin_proxy_header)

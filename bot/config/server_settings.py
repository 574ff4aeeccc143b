"""Settings of `navibot serve`, its logs and access control.

A mixin of `bot.config.settings.Settings` (NAVIBOT_<FIELD>)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode


class ServerSettings(BaseSettings):
    host: str = Field(default="0.0.0.0", description="Interface `navibot serve` listens on.")
    port: int = Field(default=8080, ge=1, le=65535,
                      description="Port of `navibot serve` (/slack/events, /api/messages, /healthz, /metrics).")
    shutdown_grace_seconds: float = Field(
        default=30.0, ge=0, le=600, description="On SIGTERM, how long answers under way may take to finish.")
    log_format: Literal["auto", "json", "text"] = Field(
        default="auto", description="Log lines as JSON (one object per line) or text; auto: JSON for "
                                    "`navibot serve`, text for the other commands.")
    log_questions: bool = Field(
        default=False, description="Put the question text (redacted when NAVIBOT_REDACT_PII is on) in the "
                                   "per-turn log line. Off: the log says what happened, not what was asked.")
    access_groups: Annotated[dict[str, list[str]], NoDecode] = Field(
        default_factory=dict,
        description='Which access groups a chat may see, as JSON: {"slack:C0123ABC": ["medicaid-staff"], '
                    '"teams:19:abc@thread.tacv2": ["supervisors"]}. Keys are slack:<channel id> and '
                    "teams:<team id>. Every chat sees the group `all`; a chat with no entry sees only `all`.")

    @field_validator("access_groups", mode="before")
    @classmethod
    def _json(cls, value: Any) -> Any:
        """Parsed here rather than by pydantic-settings, whose error for bad JSON names no variable."""
        if isinstance(value, str):
            if not value.strip():
                return {}
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f'must be JSON like {{"slack:C0123ABC": ["medicaid-staff"]}} ({exc.msg} at '
                                 f"character {exc.pos})") from None
        return value

"""What naming and configuring a MongoDB connection needs, without importing the driver: commands that only
mention MongoDB (the CLI's error handling, store descriptions) start without loading pymongo."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class MongoUnavailable(RuntimeError):
    """MongoDB cannot be used: unreachable, refused the credentials, or the connection string is wrong."""


@dataclass(frozen=True, slots=True)
class MongoConfig:
    uri: str = field(repr=False)  # may hold a password: never printed
    database: str = "navibot"
    connect_timeout: float = 5.0  # server selection: how long start-up waits for a reachable server
    operation_timeout: float = 10.0  # longest wait for one reply of the server (socketTimeoutMS)


def describe_hosts(uri: str) -> str:
    """The host list of a connection string, without scheme, credentials, database or options."""
    rest = re.sub(r"^[a-z+]+://", "", uri.strip(), flags=re.IGNORECASE)
    rest = rest.rsplit("@", 1)[-1]  # userinfo ends at the last @ before the hosts
    hosts = re.split(r"[/?]", rest, maxsplit=1)[0]
    return hosts or "(no host)"


def scrub(text: str, uri: str) -> str:
    """A driver message with the connection string's password (if any) taken out."""
    match = re.match(r"^[a-z+]+://([^@/]*)@", uri.strip(), flags=re.IGNORECASE)
    if match and ":" in match.group(1):
        password = match.group(1).split(":", 1)[1]
        if password:
            text = text.replace(password, "****")
    return text

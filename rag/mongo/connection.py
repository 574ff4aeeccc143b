"""Opening MongoDB: one async client per store on its bridge's loop, with start-up errors as one plain line.

A message names the host(s) of the connection string, never the user or password.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from pymongo import AsyncMongoClient
from pymongo.errors import (
    ConfigurationError,
    ConnectionFailure,
    OperationFailure,
    PyMongoError,
)

from rag.mongo.bridge import AsyncBridge
from rag.mongo.config import MongoConfig, MongoUnavailable, describe_hosts, scrub

T = TypeVar("T")


_SHARED: dict[tuple[str, str, float, float], MongoConnection] = {}
_SHARED_LOCK = threading.Lock()


class MongoConnection:
    """A database handle plus the bridge its coroutines run on. `open()` connects for real; tests pass a fake
    database (same async interface) to the constructor. `shared()` hands the knowledge and the conversation
    store of one process the same client (one connection pool, one loop thread)."""

    def __init__(self, bridge: AsyncBridge, db: Any, client: Any = None, host: str = "test",
                 operation_timeout: float = 10.0, server_version: tuple[int, ...] = (8, 1)) -> None:
        self.bridge = bridge
        self.db = db
        self.client = client
        self.host = host
        self.server_version = server_version
        # The bridge's limit only matters when pymongo's own timeouts did not fire: keep it above them.
        self._timeout = operation_timeout + 10.0
        self._shared_key: tuple[str, str, float, float] | None = None
        self._users = 1

    @classmethod
    def open(cls, config: MongoConfig) -> MongoConnection:
        host = describe_hosts(config.uri)
        bridge = AsyncBridge()
        try:
            client, version = bridge.run(_connect(config, host), timeout=config.connect_timeout + 30)
        except BaseException:
            bridge.close()
            raise
        return cls(bridge, client[config.database], client, host, config.operation_timeout, version)

    @classmethod
    def shared(cls, config: MongoConfig) -> MongoConnection:
        """The open connection for the same settings, or a new one; each user closes it once."""
        key = (config.uri, config.database, config.connect_timeout, config.operation_timeout)
        with _SHARED_LOCK:
            connection = _SHARED.get(key)
            if connection is not None:
                connection._users += 1
                return connection
            connection = cls.open(config)
            connection._shared_key = key
            _SHARED[key] = connection
            return connection

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.bridge.run(coro, self._timeout)

    def close(self) -> None:
        """Close the client and the loop thread (for a shared connection: when its last user closes it)."""
        with _SHARED_LOCK:
            self._users -= 1
            if self._users != 0:  # other users left, or closed before
                return
            if self._shared_key is not None:
                _SHARED.pop(self._shared_key, None)
        if self.client is not None:
            with contextlib.suppress(PyMongoError):  # closing a client whose server is gone must not fail shutdown
                self.bridge.run(self.client.close(), timeout=5)
        self.bridge.close()


async def _connect(config: MongoConfig, host: str) -> tuple[Any, tuple[int, ...]]:
    """Create the client on the bridge's loop (it belongs to that loop) and prove the server answers."""
    if not re.match(r"^mongodb(\+srv)?://", config.uri.strip(), flags=re.IGNORECASE):
        raise MongoUnavailable("NAVIBOT_MONGODB_URI is not a MongoDB connection string: it starts with mongodb:// "
                               "or mongodb+srv:// (copy it from Atlas: Connect > Drivers)")
    try:
        client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
            config.uri, serverSelectionTimeoutMS=int(config.connect_timeout * 1000),
            connectTimeoutMS=int(config.connect_timeout * 1000), socketTimeoutMS=int(config.operation_timeout * 1000),
            appname="navibot", tz_aware=True)  # not timeoutMS: it would stretch server selection to its length
    except ConfigurationError as exc:
        raise MongoUnavailable(f"NAVIBOT_MONGODB_URI is not usable ({host}): {scrub(str(exc), config.uri)}") from exc
    except (ValueError, TypeError) as exc:
        raise MongoUnavailable("NAVIBOT_MONGODB_URI is not a valid MongoDB connection string "
                               "(mongodb://host:27017 or mongodb+srv://cluster.example.mongodb.net)") from exc
    try:
        await client.admin.command("ping")
        info = await client.admin.command("buildInfo")
        version = tuple(int(p) for p in info.get("versionArray", [0])[:2])
    except ConnectionFailure as exc:
        await client.close()
        raise MongoUnavailable(f"cannot reach MongoDB at {host} within {config.connect_timeout:g} s "
                               "(NAVIBOT_MONGODB_URI, NAVIBOT_MONGODB_CONNECT_TIMEOUT)") from exc
    except OperationFailure as exc:
        await client.close()
        if exc.code in (18, 8000):  # AuthenticationFailed (Atlas answers 8000 AtlasError for bad credentials)
            raise MongoUnavailable(f"MongoDB at {host} refused the user name or password in "
                                   "NAVIBOT_MONGODB_URI") from exc
        raise MongoUnavailable(f"MongoDB at {host} refused the connection: "
                               f"{scrub(str(exc.details.get('errmsg', exc) if exc.details else exc), config.uri)}"
                               ) from exc
    except ConfigurationError as exc:  # e.g. the DNS name of a mongodb+srv:// cluster does not exist
        await client.close()
        raise MongoUnavailable(f"cannot find MongoDB at {host}: {scrub(str(exc), config.uri)}") from exc
    except PyMongoError as exc:
        await client.close()
        raise MongoUnavailable(f"MongoDB at {host} failed: {scrub(str(exc), config.uri)}") from exc
    return client, version

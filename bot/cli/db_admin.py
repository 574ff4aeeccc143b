"""What `navibot db init` and `navibot db status` do: prepare and inspect the MongoDB Atlas backend (the commands
are registered by bot/cli/db_cli.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pymongo.errors import PyMongoError

from bot.config.settings import Settings
from bot.conversations.mongo import ANSWERS, EVENTS, FEEDBACK, HISTORY, PREFERENCES, ensure_conversation_indexes
from bot.errors import UserError
from bot.wiring.choose_models import make_embedder
from bot.wiring.open_stores import mongo_config, search_options
from rag.mongo.connection import MongoConnection
from rag.mongo.indexes import (
    CHUNKS,
    DOCUMENTS,
    META,
    TERMS,
    SearchIndexError,
    create_or_update,
    search_index_models,
    search_index_states,
    wait_until_queryable,
)
from rag.mongo.knowledge import AsyncMongoKnowledge

COLLECTIONS = (DOCUMENTS, CHUNKS, TERMS, META, HISTORY, PREFERENCES, EVENTS, ANSWERS, FEEDBACK)
POLL_SECONDS = 5.0  # how often `db init` asks whether the search indexes are queryable


def _connect(settings: Settings) -> MongoConnection:
    if settings.store != "mongodb":
        raise UserError("`navibot db` prepares the MongoDB backend: set NAVIBOT_STORE=mongodb and "
                        "NAVIBOT_MONGODB_URI first (the default SQLite store needs no preparation)")
    return MongoConnection.open(mongo_config(settings))


def _progress(line: str, seen: list[str]) -> None:
    if not seen or seen[-1] != line:  # a line per change, not per poll
        print(line, file=sys.stderr, flush=True)
        seen.append(line)


async def _init(connection: MongoConnection, settings: Settings, name: str, dim: int, wait: bool,
                timeout: float) -> None:
    db = connection.db
    existing = set(await db.list_collection_names())
    for collection in COLLECTIONS:
        if collection not in existing:  # search indexes need the collection to exist
            await db.create_collection(collection)
    knowledge = AsyncMongoKnowledge(db, search_options(settings), connection.server_version)
    await knowledge.prepare()
    await knowledge.check_embedder(name, dim)
    await ensure_conversation_indexes(db, settings.mongodb_history_ttl_days, settings.mongodb_event_ttl_hours)
    print(f"collections and indexes ready in {connection.host}/{db.name}")
    models = search_index_models(dim, knowledge.options)
    for line in await create_or_update(db[CHUNKS], models):
        print(f"search index {line}")
    if not wait:
        print("not waiting: run `navibot db status` to see when the search indexes are queryable")
        return
    seen: list[str] = []
    await wait_until_queryable(db[CHUNKS], [m.document["name"] for m in models], timeout, POLL_SECONDS,
                               lambda line: _progress(line, seen))
    print("search indexes queryable: the bot can search this database")


def db_init(args: argparse.Namespace, settings: Settings) -> int:
    if args.timeout <= 0:
        raise UserError("--timeout must be more than 0")
    embedder = make_embedder(settings)  # its name and dimension only: no model is loaded
    connection = _connect(settings)
    try:
        connection.bridge.run(_init(connection, settings, embedder.name, embedder.dim, not args.no_wait,
                                    args.timeout), timeout=args.timeout + settings.mongodb_operation_timeout + 60)
    except SearchIndexError as exc:
        raise UserError(str(exc)) from exc
    except PyMongoError as exc:  # lost mid-way, or refused (a user without the right to create collections)
        raise UserError(f"MongoDB at {connection.host} failed: {exc}") from exc
    finally:
        connection.close()
    return 0


async def _status(connection: MongoConnection) -> list[str]:
    db = connection.db
    counts: dict[str, int] = {}
    for collection in (DOCUMENTS, CHUNKS, HISTORY, ANSWERS, FEEDBACK):
        counts[collection] = await db[collection].count_documents({})
    embedder: dict[str, Any] = await db[META].find_one({"_id": "embedder"}) or {}
    lines = [f"MongoDB {connection.host}, database {db.name} (server {'.'.join(map(str, connection.server_version))})",
             (f"documents {counts[DOCUMENTS]}, chunks {counts[CHUNKS]}; history turns {counts[HISTORY]}, "
             f"answers {counts[ANSWERS]}, feedback {counts[FEEDBACK]}"),
             "embedding model: " + (f"{embedder['name']} ({embedder['dim']} dims)" if embedder else "none yet")]
    for collection in (CHUNKS, DOCUMENTS, HISTORY, EVENTS, FEEDBACK):
        info = await db[collection].index_information()
        for name, spec in sorted(info.items()):
            if name == "_id_":
                continue
            extra = ", unique" if spec.get("unique") else ""
            if "expireAfterSeconds" in spec:
                extra += f", expires after {_duration(int(spec['expireAfterSeconds']))}"
            lines.append(f"index {collection}.{name}: ready{extra}")
    try:
        states = await search_index_states(db[CHUNKS])
    except SearchIndexError as exc:
        lines.append(f"search indexes: unavailable: {exc}")
    else:
        if not states:
            lines.append("search indexes: none; run `navibot db init`")
        for state in states:
            lines.append(f"search index {state.name} ({state.type}): {state.status.lower()}, "
                         f"{'queryable' if state.queryable else 'not queryable yet'}")
    return lines


def _duration(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} days"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hours"
    return f"{seconds} s"


def db_status(args: argparse.Namespace, settings: Settings) -> int:
    connection = _connect(settings)
    try:
        lines = connection.run(_status(connection))
    except PyMongoError as exc:
        raise UserError(f"MongoDB at {connection.host} failed: {exc}") from exc
    finally:
        connection.close()
    print("\n".join(lines))
    return 0

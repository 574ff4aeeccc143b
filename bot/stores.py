"""Opens the knowledge store and the conversation store chosen in settings (embedded SQLite by default,
MongoDB Atlas with NAVIBOT_STORE=mongodb). The conversation store comes wrapped: PII redaction when
NAVIBOT_REDACT_PII is on (either backend) and, on MongoDB, answering on without history when it is lost."""

from __future__ import annotations

import logging
from pathlib import Path

from bot.conversations import ConversationStore
from bot.errors import UserError
from bot.mongo_conversations import HistoryOptional, MongoConversationStore
from bot.redact import RedactingConversationStore
from bot.settings import Settings
from bot.sqlite_conversations import SQLiteConversationStore
from rag.mongo.connection import MongoConfig, describe_hosts
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.mongo.pipelines import SearchOptions
from rag.sqlite_store import SQLiteKnowledgeStore
from rag.store import KnowledgeStore

log = logging.getLogger(__name__)


def mongo_config(settings: Settings) -> MongoConfig:
    """Connection settings; a missing URI is a one-line UserError naming the variable to set."""
    uri = settings.mongodb_uri.get_secret_value().strip() if settings.mongodb_uri is not None else ""
    if not uri:
        raise UserError("NAVIBOT_STORE=mongodb needs NAVIBOT_MONGODB_URI (mongodb+srv://USER:PASSWORD@CLUSTER/ "
                        "for Atlas, mongodb://localhost:27017/?directConnection=true for mongodb-atlas-local)")
    return MongoConfig(uri=uri, database=settings.mongodb_database,
                       connect_timeout=settings.mongodb_connect_timeout,
                       operation_timeout=settings.mongodb_operation_timeout)


def search_options(settings: Settings) -> SearchOptions:
    return SearchOptions(vector_index=settings.mongodb_vector_index, search_index=settings.mongodb_search_index,
                         num_candidates_factor=settings.mongodb_num_candidates, exact=settings.mongodb_exact_search,
                         rank_fusion=settings.mongodb_rank_fusion)


def store_description(settings: Settings, path: Path | None = None) -> str:
    """Where the knowledge lives, for command output: a file, or the MongoDB host and database."""
    if settings.store == "mongodb":
        return f"MongoDB {describe_hosts(mongo_config(settings).uri)}/{settings.mongodb_database}"
    return str(path or settings.store_path)


def open_knowledge_store(settings: Settings, path: Path | None = None) -> KnowledgeStore:
    """`path` overrides the SQLite file (the CLI's --store); with MongoDB it does not apply."""
    if settings.store == "mongodb":
        if path is not None and path != settings.store_path:
            log.warning("--store %s is ignored: NAVIBOT_STORE=mongodb keeps the knowledge in MongoDB", path)
        return MongoKnowledgeStore.open(mongo_config(settings), search_options(settings))
    return SQLiteKnowledgeStore(path or settings.store_path)


def open_conversation_store(settings: Settings, path: Path | None = None) -> ConversationStore:
    store: ConversationStore
    if settings.store == "mongodb":
        config = mongo_config(settings)
        store = HistoryOptional(MongoConversationStore.open(config, settings.mongodb_history_ttl_days,
                                                            settings.mongodb_event_ttl_hours),
                                where=f"MongoDB {describe_hosts(config.uri)}")
    else:
        store = SQLiteConversationStore(path or settings.conversations_path)
    return RedactingConversationStore(store) if settings.redact_pii else store

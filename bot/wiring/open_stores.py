"""Opens the knowledge store and the conversation store chosen in settings (embedded SQLite by default,
MongoDB Atlas with NAVIBOT_STORE=mongodb). The conversation store comes wrapped: PII redaction when
NAVIBOT_REDACT_PII is on (either backend) and, on MongoDB, answering on without history when it is lost."""

from __future__ import annotations

from pathlib import Path

from bot.config.settings import Settings
from bot.conversations.redacting import RedactingConversationStore
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import ConversationStore
from bot.errors import UserError
from rag.mongo.config import MongoConfig, describe_hosts
from rag.mongo.pipelines import SearchOptions
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import KnowledgeStore

# The MongoDB stores are imported where they are opened: the embedded default starts without loading pymongo.


def mongo_config(settings: Settings) -> MongoConfig:
    """Connection settings; a missing URI is a one-line UserError naming the variable to set."""
    uri = settings.mongodb_uri.get_secret_value().strip() if settings.mongodb_uri is not None else ""
    if not uri:
        raise UserError("NAVIBOT_STORE=mongodb needs NAVIBOT_MONGODB_URI (for Atlas the mongodb+srv:// string from "
                        "Connect > Drivers, with the user's password; mongodb://localhost:27017/?directConnection=true "
                        "for mongodb-atlas-local)")
    return MongoConfig(uri=uri, database=settings.mongodb_database,
                       connect_timeout=settings.mongodb_connect_timeout,
                       operation_timeout=settings.mongodb_operation_timeout)


def search_options(settings: Settings) -> SearchOptions:
    return SearchOptions(vector_index=settings.mongodb_vector_index, search_index=settings.mongodb_search_index,
                         num_candidates_factor=settings.mongodb_num_candidates, exact=settings.mongodb_exact_search,
                         rank_fusion=settings.mongodb_rank_fusion)


def _uses_mongodb(settings: Settings, path: Path | None) -> bool:
    """MongoDB when configured, unless a SQLite file other than the configured one is named: `--store FILE` and
    `navibot eval --corpus` (a throwaway file) must never write into the production database."""
    return settings.store == "mongodb" and (path is None or path == settings.store_path)


def store_description(settings: Settings, path: Path | None = None) -> str:
    """Where the knowledge lives, for command output: a file, or the MongoDB host and database."""
    if _uses_mongodb(settings, path):
        return f"MongoDB {describe_hosts(mongo_config(settings).uri)}/{settings.mongodb_database}"
    return str(path or settings.store_path)


def open_knowledge_store(settings: Settings, path: Path | None = None) -> KnowledgeStore:
    """`path` names a SQLite file (the CLI's --store, eval's temporary store): it is used even when
    NAVIBOT_STORE=mongodb. Without it (or with the configured file, as crawl passes), the configured store."""
    if _uses_mongodb(settings, path):
        from rag.mongo.knowledge import MongoKnowledgeStore

        return MongoKnowledgeStore.open(mongo_config(settings), search_options(settings))
    return SQLiteKnowledgeStore(path or settings.store_path)


def open_conversation_store(settings: Settings, path: Path | None = None) -> ConversationStore:
    """`path` names a SQLite file, used even when NAVIBOT_STORE=mongodb (as for the knowledge store)."""
    store: ConversationStore
    if settings.store == "mongodb" and (path is None or path == settings.conversations_path):
        from bot.conversations.mongo import HistoryOptional, MongoConversationStore

        config = mongo_config(settings)
        store = HistoryOptional(MongoConversationStore.open(config, settings.mongodb_history_ttl_days,
                                                            settings.mongodb_event_ttl_hours,
                                                            owners_folder=settings.data_dir / "event-owners"),
                                where=f"MongoDB {describe_hosts(config.uri)}")
    else:
        store = SQLiteConversationStore(path or settings.conversations_path,
                                        retention_days=settings.retention_days or settings.mongodb_history_ttl_days,
                                        event_ttl_hours=settings.mongodb_event_ttl_hours)
    return RedactingConversationStore(store) if settings.redact_pii else store

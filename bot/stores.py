"""Opens the knowledge store and the conversation store chosen in settings (embedded SQLite by default)."""

from __future__ import annotations

from pathlib import Path

from bot.conversations import ConversationStore
from bot.settings import Settings
from bot.sqlite_conversations import SQLiteConversationStore
from rag.sqlite_store import SQLiteKnowledgeStore
from rag.store import KnowledgeStore


def open_knowledge_store(settings: Settings, path: Path | None = None) -> KnowledgeStore:
    """`path` overrides the SQLite file (the CLI's --store)."""
    return SQLiteKnowledgeStore(path or settings.store_path)


def open_conversation_store(settings: Settings, path: Path | None = None) -> ConversationStore:
    return SQLiteConversationStore(path or settings.conversations_path)

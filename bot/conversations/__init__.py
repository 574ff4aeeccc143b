"""Conversation stores: history, preferences, answers, feedback (SQLite, MongoDB, redacting)."""

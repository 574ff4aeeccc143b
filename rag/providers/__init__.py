"""Hosted model providers (Gemini, Cohere) behind the core's protocols, with failover across endpoints and keys.

Nothing here is imported unless settings select a provider (see bot/providers.py), so the offline bot never loads
the SDKs."""

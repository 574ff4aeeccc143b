"""Hosted model providers (Gemini, Cohere) behind the core's protocols, with failover across endpoints and keys.

The SDK-backed modules (gemini, cohere) are imported only when settings select a provider (see
bot/wiring/choose_models.py), so the offline bot never loads the SDKs; `budget` (the turn's deadline and fallbacks)
is used in every mode."""

"""Navibot's platform-neutral retrieval core: load, chunk, embed, store and retrieve benefits documents."""

"""The composition root of the core: stores, models and the turn handler chosen from settings."""

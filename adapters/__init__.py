"""Chat-platform adapters (Slack, Teams): translate platform events to turns and render replies.

They are built on top of `bot/` in their own issues; nothing here holds retrieval or prompt logic.
"""

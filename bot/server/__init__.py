"""`navibot serve`: one aiohttp application for Slack and Teams, /healthz and /metrics."""

"""The admin page of `navibot serve` (/admin): headline figures, knowledge gaps, feedback and documents, for the
supervisors and content owners who run the bot. Read-only; off unless NAVIBOT_ADMIN_TOKEN or
NAVIBOT_ADMIN_PROXY_HEADER is set (bot/config/admin_settings.py). Routes in bot/server/admin/routes.py."""

from bot.server.admin.routes import add_admin_routes

__all__ = ["add_admin_routes"]

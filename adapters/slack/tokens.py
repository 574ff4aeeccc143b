"""The Slack tokens, checked once at start-up by the server (bot/server/app.py): a wrong token or an unreachable Web
API is one clear line and exit 2 before anything listens, not a failure at the first question.

Both checks are Slack's own Web API calls through slack-sdk's client: `auth.test` for the bot token and
`apps.connections.open` for the app-level token (the Socket Mode client would otherwise retry a refused token
forever).
"""

from __future__ import annotations

import aiohttp
from slack_sdk.errors import SlackApiError

from adapters.slack.app import SlackApp
from bot.errors import UserError


async def check_token(slack: SlackApp) -> str:
    """auth.test with SLACK_BOT_TOKEN; returns "<bot user> in <workspace>" for the start-up line."""
    try:
        auth = await slack.client.auth_test()
    except SlackApiError as exc:
        raise UserError(f"Slack refused SLACK_BOT_TOKEN ({exc.response.get('error')}); copy the Bot User OAuth "
                        "Token (xoxb-...) from the app's OAuth & Permissions page") from exc
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UserError(f"cannot reach the Slack Web API at {slack.settings.slack_api_url} ({exc!r}); "
                        "check the network or SLACK_API_URL") from exc
    return f"{auth.get('user', '?')} in {auth.get('team', '?')}"


async def check_app_token(slack: SlackApp) -> None:
    """apps.connections.open with SLACK_APP_TOKEN (Socket Mode), once before connecting."""
    app_token = slack.settings.slack_app_token.get_secret_value() if slack.settings.slack_app_token else ""
    try:
        await slack.client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        raise UserError(f"Slack refused SLACK_APP_TOKEN ({exc.response.get('error')}); create an App-Level Token "
                        "with the connections:write scope on the app's Basic Information page") from exc
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UserError(f"cannot reach the Slack Web API at {slack.settings.slack_api_url} ({exc!r}); "
                        "check the network or SLACK_API_URL") from exc

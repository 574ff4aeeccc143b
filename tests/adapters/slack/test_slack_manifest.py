"""The Slack app manifest asks for exactly the scopes, events and command the code in adapters/slack/ uses."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "manifests" / "slack" / "manifest.yaml"
ADAPTER = ROOT / "adapters" / "slack"

# Bot-token scope each Web API method needs (https://docs.slack.dev/reference/methods); none for auth.test and
# views.open (a trigger id is the permission). A method missing here fails the test until its scope is known.
METHOD_SCOPES: dict[str, set[str]] = {
    "auth.test": set(),
    "apps.connections.open": set(),  # called with the app-level token; its scope connections:write is the token's
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "reactions.add": {"reactions:write"},
    "reactions.remove": {"reactions:write"},
    "views.open": set(),
    "assistant.threads.setStatus": {"assistant:write"},
    "chat.stream": {"chat:write"},  # slack_sdk's helper: chat.startStream, chat.appendStream, chat.stopStream
}
# The assistant pane's greeting prompts and titles go through Bolt's set_suggested_prompts / set_title (not
# `client.` calls): assistant.threads.setSuggestedPrompts and setTitle, also assistant:write.
EVENT_SCOPES = {"app_mention": "app_mentions:read", "message.im": "im:history",
                "assistant_thread_started": "assistant:write", "assistant_thread_context_changed": "assistant:write"}


def manifest() -> dict[str, Any]:
    loaded = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(ADAPTER.glob("*.py")))


def web_api_methods(code: str) -> set[str]:
    """`client.chat_postMessage(` → chat.postMessage: every Web API method the adapter calls."""
    return {name.replace("_", ".") for name in re.findall(r"\bclient\.([a-z]+(?:_[A-Za-z]+)+)\(", code)}


def test_scopes_are_exactly_those_the_code_uses() -> None:
    code = source()
    methods = web_api_methods(code)
    assert {"chat.postMessage", "chat.update", "reactions.add", "views.open", "apps.connections.open"} <= methods
    unknown = methods - METHOD_SCOPES.keys()
    assert not unknown, f"add the scopes of {unknown} to METHOD_SCOPES (and the manifest if needed)"
    data = manifest()
    needed = set().union(*(METHOD_SCOPES[m] for m in methods))
    needed |= {EVENT_SCOPES[e] for e in data["settings"]["event_subscriptions"]["bot_events"]}
    if data["features"]["slash_commands"]:
        needed.add("commands")
    assert sorted(data["oauth_config"]["scopes"]["bot"]) == sorted(needed)
    assert {"app_mentions:read", "assistant:write", "chat:write", "commands", "im:history", "reactions:write"} == needed


def test_events_command_interactivity_and_socket_mode() -> None:
    code = source()
    data = manifest()
    listened = set(re.findall(r'self\.app\.event\("([a-z_]+)"\)', code))
    assert listened == {"app_mention", "message"}
    assert 'event.get("channel_type") != "im"' in code  # message events are taken from DMs only: message.im
    assert set(data["settings"]["event_subscriptions"]["bot_events"]) == {
        "app_mention", "message.im", "assistant_thread_started", "assistant_thread_context_changed"}
    assert "assistant_view" in data["features"] and "AsyncAssistant(" in code  # the pane's feature and middleware
    commands = [c["command"] for c in data["features"]["slash_commands"]]
    assert commands == re.findall(r'self\.app\.command\("([^"]+)"\)', code) == ["/navibot"]
    assert data["settings"]["interactivity"]["is_enabled"] is True
    assert data["settings"]["socket_mode_enabled"] is True
    assert data["features"]["bot_user"]["display_name"] == data["display_information"]["name"] == "Navibot"
    assert 175 <= len(data["display_information"]["long_description"]) <= 4000  # Slack's bounds
    assert len(data["display_information"]["description"]) <= 140

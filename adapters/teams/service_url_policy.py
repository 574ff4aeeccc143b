"""The serviceUrl rules, plugged into the Agents SDK as its host validator.

The SDK's own check is `HttpAdapterBase._validate_service_url(claims_identity, activity)` (what `CloudAdapter.process`
/ `start_agent_process` run before a turn): it asks the adapter's `OutboundHostValidator` whether the activity's
serviceUrl is allowed and, when the token carries a `serviceurl` claim, refuses an activity naming another host. It
refuses that mismatch only when the validator is *enabled* (otherwise it logs and goes on), so the adapter gets this
enabled validator, whose `is_allowed` holds our rules:

- never a link-local or cloud metadata address, never anything but http(s), never user info in the URL;
- anonymous mode (no token at all): a loopback host (the Agents Playground) or a host NAVIBOT_TEAMS_SERVICE_URLS lists;
- with credentials, a token that vouches for a serviceUrl (Bot Framework tokens do) decides by the SDK's host match.
  A token that names none is held to what the SDK's enforcing host validator allows (`unvouched_refusal`): https
  on Microsoft's own hosts, or a listed host.
"""

from __future__ import annotations

from microsoft_agents.hosting.core import OutboundHostValidator
from yarl import URL

from adapters.teams.service_hosts import host_of, is_listed, is_loopback, never_reason


class ServiceUrlPolicy(OutboundHostValidator):
    def __init__(self, listed: tuple[str, ...], anonymous: bool) -> None:
        super().__init__(enabled=True, include_default_microsoft_hosts=False)
        self.listed = listed
        self.anonymous = anonymous
        # The SDK's validator as its own hosting configures it: Microsoft's hosts (Teams, Bot Framework) plus ours.
        self.microsoft = OutboundHostValidator(list(listed), enabled=True)

    def refusal(self, url: str) -> str | None:
        """Why the bot must not post to `url`, or None."""
        host = host_of(url)
        if host is None:
            return "serviceUrl is not an http(s) URL without user info"
        if reason := never_reason(host):
            return f"serviceUrl refused: {reason}"
        if self.anonymous and not (is_loopback(host) or is_listed(host, self.listed)):
            return (f"serviceUrl host {host!r} refused in anonymous mode: only loopback hosts and those "
                    "NAVIBOT_TEAMS_SERVICE_URLS lists")
        return None

    def unvouched_refusal(self, url: str) -> str | None:
        """With credentials, a token without a `serviceurl` claim: the URL must pass the SDK's host validator
        (https, a Microsoft host) or be listed."""
        host = host_of(url)
        if host is not None and (is_listed(host, self.listed) or self.microsoft.is_allowed(url)):
            return None
        return (f"serviceUrl host {host!r} refused: the token names no serviceUrl and the host is neither "
                "Microsoft's nor listed in NAVIBOT_TEAMS_SERVICE_URLS")

    def is_allowed(self, url: str | URL) -> bool:  # the SDK's hook
        return self.refusal(str(url)) is None

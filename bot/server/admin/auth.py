"""Who may open the admin page: a login with the token from the settings, kept in a signed session cookie, or the
user a single sign-on proxy (oauth2-proxy) names in a header.

The session cookie is signed with itsdangerous (a timed, salted HMAC with a key derived from NAVIBOT_ADMIN_TOKEN,
so changing the token ends every session and several instances behind a load balancer accept each other's), and
is HttpOnly, SameSite=Strict and Secure (`__Host-` prefixed) unless NAVIBOT_ADMIN_PLAIN_HTTP allows a browser on
this machine over http://localhost. The page only reads; the two forms that post (log in, log out) must come from
the page's own origin (Origin or Referer), which with SameSite=Strict stops cross-site request forgery.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import time
from collections import defaultdict, deque
from collections.abc import Callable
from urllib.parse import urlsplit

from aiohttp import web
from itsdangerous import BadSignature, URLSafeTimedSerializer

from bot.config.admin_settings import AdminSettings
from bot.errors import UserError

log = logging.getLogger(__name__)

SALT = "navibot-admin-session"
FAILURES_ALLOWED = 5  # wrong tokens from one address within FAILURE_WINDOW before it must wait
FAILURE_WINDOW = 600.0
MAX_ADDRESSES = 10_000  # addresses with recent wrong tokens kept before the quiet ones are forgotten
LOOPBACK = ("127.0.0.1", "::1")


class Refused(Exception):
    """Not allowed in: `status` and a short message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _is_loopback(remote: str | None) -> bool:
    try:
        return remote is not None and ipaddress.ip_address(remote).is_loopback
    except ValueError:
        return False


class AdminAuth:
    def __init__(self, settings: AdminSettings, clock: Callable[[], float] = time.monotonic) -> None:
        if settings.admin_proxy_header and not settings.admin_users:
            raise UserError("NAVIBOT_ADMIN_PROXY_HEADER is set without NAVIBOT_ADMIN_USERS: list who may open the "
                            "admin page (comma-separated e-mails)")
        self.settings = settings
        self.clock = clock
        self.failures: dict[str, deque[float]] = defaultdict(deque)  # wrong tokens per address, for the wait
        self.networks = [ipaddress.ip_network(item, strict=False) for item in settings.admin_proxy_ips]
        self.allowed = {user.strip().lower() for user in settings.admin_users}
        token = settings.admin_token.get_secret_value().strip() if settings.admin_token else None
        self.serializer = URLSafeTimedSerializer(token, salt=SALT) if token else None

    # -- the cookie ----------------------------------------------------------------------------------------------

    @property
    def cookie_name(self) -> str:
        # __Host-: the browser keeps it only if Secure, for this host alone, on path / (no subdomain can set it)
        return "navibot_admin" if self.settings.admin_plain_http else "__Host-navibot_admin"

    def set_session(self, response: web.StreamResponse, user: str) -> None:
        assert self.serializer is not None
        response.set_cookie(self.cookie_name, self.serializer.dumps({"u": user}), path="/",
                            max_age=int(self.settings.admin_session_hours * 3600), httponly=True,
                            samesite="Strict", secure=not self.settings.admin_plain_http)

    def end_session(self, response: web.StreamResponse) -> None:
        response.del_cookie(self.cookie_name, path="/", secure=not self.settings.admin_plain_http,
                            samesite="Strict", httponly=True)

    def session_user(self, request: web.Request) -> str | None:
        value = request.cookies.get(self.cookie_name)
        if not value or self.serializer is None:
            return None
        try:
            data = self.serializer.loads(value, max_age=int(self.settings.admin_session_hours * 3600))
        except BadSignature:  # also SignatureExpired: log in again
            return None
        user = data.get("u") if isinstance(data, dict) else None
        return user if isinstance(user, str) else None

    # -- who is asking -------------------------------------------------------------------------------------------

    def proxy_user(self, request: web.Request) -> str | None:
        """The proxy's signed-in user; Refused when the header comes from elsewhere or names someone not listed."""
        header = self.settings.admin_proxy_header
        if not header or header not in request.headers:
            return None
        remote = request.remote or ""
        try:
            trusted = any(ipaddress.ip_address(remote) in net for net in self.networks)
        except ValueError:
            trusted = False
        if not trusted:
            log.warning("admin: %s header from %s, which is not in NAVIBOT_ADMIN_PROXY_IPS: refused", header, remote)
            raise Refused(403, "This address may not sign in through the proxy header.")
        user = request.headers[header].strip()
        if user.lower() not in self.allowed:
            log.warning("admin: %s is not in NAVIBOT_ADMIN_USERS: refused", user or "(empty)")
            raise Refused(403, f"{user or 'This account'} may not open the admin page; ask to be added to "
                               "NAVIBOT_ADMIN_USERS.")
        return user

    def user(self, request: web.Request) -> str | None:
        """The signed-in user, or None (log in). Raises Refused for a proxy header that is not trusted."""
        return self.proxy_user(request) or self.session_user(request)

    # -- logging in ----------------------------------------------------------------------------------------------

    def check_origin(self, request: web.Request) -> None:
        """A form post must come from this page: its Origin (or, without one, its Referer) names this host."""
        source = request.headers.get("Origin") or request.headers.get("Referer")
        if not source or source == "null" or urlsplit(source).netloc != request.host:
            log.warning("admin: a form post from %r to %s refused (not this page's origin)", source, request.path)
            raise Refused(403, "This form must be sent from the admin page itself.")

    def check_token(self, request: web.Request, given: str) -> str:
        """The user name of a good token; Refused (and counted) otherwise."""
        remote = request.remote or "?"
        if self.serializer is None or self.settings.admin_token is None:
            raise Refused(403, "Sign in through your organisation's single sign-on.")
        if self.settings.admin_plain_http and not _is_loopback(request.remote):
            log.warning("admin: login from %s refused: NAVIBOT_ADMIN_PLAIN_HTTP allows this machine only", remote)
            raise Refused(403, "Over plain HTTP the admin page is open to this machine only; serve it behind HTTPS.")
        now = self.clock()
        recent = self.failures[remote]
        while recent and now - recent[0] > FAILURE_WINDOW:
            recent.popleft()
        if len(recent) >= FAILURES_ALLOWED:
            raise Refused(429, "Too many wrong tokens from this address; wait ten minutes.")
        expected = self.settings.admin_token.get_secret_value().strip()
        if not hmac.compare_digest(given.strip().encode(), expected.encode()):
            recent.append(now)
            if len(self.failures) > MAX_ADDRESSES:  # many addresses guessing: forget those that went quiet
                quiet = [a for a, times in self.failures.items() if not times or now - times[-1] > FAILURE_WINDOW]
                for address in quiet:
                    del self.failures[address]
            log.warning("admin: wrong token from %s", remote)
            raise Refused(401, "That token is not right.")
        self.failures.pop(remote, None)
        log.info("admin: signed in with the token from %s", remote)
        return "admin"

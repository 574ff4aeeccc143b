"""Test keys for the Teams endpoint and hosts that record every request: for tests/adapters/teams/test_teams_auth.py and
benchmarks/attack_teams_auth.py.

`TestKeys` signs Bot Framework tokens with a key of ours and serves its JWKS over HTTP on 127.0.0.1; the Agents
SDK's own key lookup (`_JwkClientManager.get_signing_key`, a PyJWKClient) is pointed at it (`use_in_sdk`), so the
token validation is the SDK's. `Recorder` is any host a forged serviceUrl could name.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
KID = "test-key"
ISSUER = "https://api.botframework.com"
OUTGOING_TOKEN = "outgoing-token"  # what the bot's MSAL is stubbed to return


def _b64(data: dict[str, Any] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class TestKeys:
    """An RSA key, its JWKS served on 127.0.0.1 (`jwks_url`), and tokens signed with it."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        keys = json.dumps({"keys": [{**jwk, "kid": KID, "use": "sig", "alg": "RS256"}]}).encode()

        class Keys(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the stdlib's name
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(keys)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Keys)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.jwks_url = f"http://127.0.0.1:{self._server.server_address[1]}/keys"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def claims(self, service_url: str | None) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {"iss": ISSUER, "aud": CLIENT_ID, "iat": now, "nbf": now, "exp": now + 600}
        if service_url is not None:
            claims["serviceurl"] = service_url
        return claims

    def token(self, service_url: str | None) -> str:
        """A valid Bot Framework token for CLIENT_ID, vouching for `service_url` (None: no serviceurl claim)."""
        return jwt.encode(self.claims(service_url), self.key, algorithm="RS256", headers={"kid": KID})

    def forged_tokens(self, service_url: str) -> dict[str, str]:
        """Tokens whose header the SDK cannot validate, by name."""
        claims = self.claims(service_url)
        public_pem = self.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                        serialization.PublicFormat.SubjectPublicKeyInfo)

        def hs256(header: dict[str, Any], secret: bytes) -> str:
            signing_input = f"{_b64(header)}.{_b64(claims)}"
            return f"{signing_input}.{_b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())}"

        def rs256(header: dict[str, Any]) -> str:  # PyJWT will not write a header like this one
            signing_input = f"{_b64(header)}.{_b64(claims)}"
            signature = jwt.algorithms.RSAAlgorithm(jwt.algorithms.RSAAlgorithm.SHA256).sign(
                signing_input.encode(), self.key)
            return f"{signing_input}.{_b64(signature)}"

        return {
            "no kid": jwt.encode(claims, self.key, algorithm="RS256"),
            "alg none": f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}.",
            "alg none with kid": f"{_b64({'alg': 'none', 'kid': KID})}.{_b64(claims)}.",
            "HS256": hs256({"alg": "HS256", "typ": "JWT"}, b"guessed-secret"),
            "HS256 keyed with the public key": hs256({"alg": "HS256", "kid": KID}, public_pem),
            "kid not a string": rs256({"alg": "RS256", "kid": 7}),
        }


def use_in_sdk(jwks_url: str, patch: Any) -> None:
    """Points the SDK's key lookup at `jwks_url` and stubs the bot's outgoing token; `patch(obj, name, value)` is
    monkeypatch.setattr in a test, setattr in a process of its own."""
    from microsoft_agents.authentication.msal import MsalAuth
    from microsoft_agents.hosting.core.authorization import JwtTokenValidator
    from microsoft_agents.hosting.core.authorization.jwt import jwt_token_validator

    manager = jwt_token_validator._JwkClientManager()
    entry = jwt_token_validator._JwkClientCacheEntry(jwt.PyJWKClient(jwks_url), threading.Lock())
    patch(manager, "_get_jwk_client", lambda _uri: entry)
    patch(JwtTokenValidator, "_jwk_client_manager", manager)

    async def outgoing_token(self: Any, resource_url: str, scopes: list[str], force_refresh: bool = False) -> str:
        return OUTGOING_TOKEN

    patch(MsalAuth, "get_access_token", outgoing_token)


@dataclass
class Seen:
    method: str
    path: str
    authorization: str | None
    body: str


@dataclass
class Recorder:
    """Any host: records every request whatever its method or path, and answers as a Bot Connector does."""
    host: str = "127.0.0.1"
    seen: list[Seen] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> Recorder:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._any)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://{self.host}:{port}/"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _any(self, request: web.Request) -> web.Response:
        self.seen.append(Seen(request.method, request.path, request.headers.get("Authorization"),
                              (await request.read()).decode("utf-8", "replace")))
        return web.json_response({"id": f"sent-{len(self.seen)}"})

    def messages(self) -> list[Seen]:
        return [s for s in self.seen if s.body.startswith("{") and json.loads(s.body).get("type") == "message"]


def activity(service_url: str, text: str = "Can college students get SNAP?", activity_id: str = "1700000000001",
             conversation: str = "a:1personal", bot_id: str = "28:00000000-0000-0000-0000-0000000000b0"
             ) -> dict[str, Any]:
    """A personal-chat message as the Bot Connector posts it."""
    return {"type": "message", "id": activity_id, "timestamp": "2026-11-22T02:00:00.000Z", "serviceUrl": service_url,
            "channelId": "msteams", "from": {"id": "29:1user", "name": "Nina", "aadObjectId": "6a2c5b8e-1111"},
            "conversation": {"id": conversation, "conversationType": "personal", "tenantId": TENANT},
            "recipient": {"id": bot_id, "name": "Navibot"}, "text": text, "textFormat": "plain", "locale": "en-US",
            "channelData": {"tenant": {"id": TENANT}}}


def feedback_click(service_url: str, verb: str, activity_id: str = "click-1") -> dict[str, Any]:
    """A card button (Action.Execute) as Teams posts it: an invoke."""
    return {**activity(service_url, activity_id=activity_id), "type": "invoke", "name": "adaptiveCard/action",
            "text": None, "value": {"action": {"type": "Action.Execute", "verb": verb,
                                               "data": {"answer_id": "no-such-answer"}}}}


def installed(service_url: str, activity_id: str = "install-1",
              bot_id: str = "28:00000000-0000-0000-0000-0000000000b0") -> dict[str, Any]:
    """The bot added to someone's personal chat: it would say hello at serviceUrl."""
    return {**activity(service_url, activity_id=activity_id), "type": "conversationUpdate", "text": None,
            "membersAdded": [{"id": bot_id}]}

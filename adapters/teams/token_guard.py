"""The Teams endpoint's token check: the Agents SDK's (`jwt_authorization_decorator`, i.e. `JwtTokenValidator`), with
the shapes it does not survive refused first.

The SDK's `_JwkClientManager.get_signing_key` reads `header["kid"]` unguarded, so a token without a key id was a
`KeyError` and a 500 with a 3 kB traceback per request; its `decode` accepts RS256 only, but only after fetching a
signing key for whatever the header names. So a token whose header is not RS256 with a key id is refused here (401,
one log line) before the SDK runs, and anything else the SDK's check raises is a 401 too: an authentication step
that fails is a refusal, never a 500.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import jwt
from aiohttp import web
from microsoft_agents.hosting.aiohttp import jwt_authorization_decorator

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ALGORITHM = "RS256"  # the only one JwtTokenValidator.validate_token decodes with


def token_header_problem(authorization: str | None) -> str | None:
    """Why a Bearer token's header cannot be one the SDK validates, or None (also for no or a malformed
    Authorization header: the SDK refuses those itself, with a 401)."""
    parts = (authorization or "").split(maxsplit=1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    try:
        header = jwt.get_unverified_header(parts[1].strip())
    except jwt.PyJWTError:
        return "the token is not a JWT"
    algorithm = header.get("alg")
    if algorithm != ALGORITHM:
        return f"the token's algorithm is {str(algorithm)[:16]!r}, not {ALGORITHM}"
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid.strip():
        return "the token's header has no key id (kid)"
    return None


def authenticated(handler: Handler, refuse: Callable[[str, int], web.Response]) -> Handler:
    """`handler` behind the SDK's JWT check, with the guard above; `refuse(reason, status)` answers a refusal."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        if problem := token_header_problem(request.headers.get("Authorization")):
            return refuse(problem, 401)
        reached = False

        async def inner(checked: web.Request) -> web.StreamResponse:
            nonlocal reached
            reached = True
            return await handler(checked)

        try:
            response: web.StreamResponse = await jwt_authorization_decorator(inner)(request)
            return response
        except Exception as exc:
            if reached:  # the token was fine: a failure of the handler is not a refusal
                raise
            return refuse(f"the token could not be validated ({type(exc).__name__})", 401)

    return guarded

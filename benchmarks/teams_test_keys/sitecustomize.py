"""Imported at start-up by a Python whose PYTHONPATH holds this folder: benchmarks/attack_teams_auth.py starts
`navibot serve` that way, so the server validates tokens signed with the benchmark's test key. Only the JWKS location
(NAVIBOT_BENCH_JWKS_URL instead of login.botframework.com) and MSAL's outgoing token change; the token validation and
the serviceUrl check are the Agents SDK's and the bot's own. Does nothing without NAVIBOT_BENCH_JWKS_URL."""

import os

if os.environ.get("NAVIBOT_BENCH_JWKS_URL"):
    from tests.fakes.fake_teams_auth import use_in_sdk

    use_in_sdk(os.environ["NAVIBOT_BENCH_JWKS_URL"], setattr)

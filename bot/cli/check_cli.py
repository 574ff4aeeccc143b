"""`navibot check`: what an IT admin runs after configuring. Every configured part is tried once (the knowledge
store and its size, the embedder against the store's, each model endpoint with one tiny call, the reranker,
MongoDB and its indexes, Slack's auth.test and scopes, the Teams token) and shown in one table with its latency;
the exit status is 1 when any part failed, with one line per problem saying what to do. Secrets are never
printed. The checks themselves are in bot/cli/check_parts.py."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.check_parts import (
    Row,
    check_answerer,
    check_embedder,
    check_reranker,
    check_rewriter,
    check_slack,
    check_store,
    check_teams,
    timed,
)
from bot.config.settings import Settings
from bot.wiring.choose_models import make_answerer, make_embedder, make_reranker, make_rewriter
from bot.wiring.open_stores import mongo_config, open_knowledge_store
from rag.answer.answerer import FallbackAnswerer
from rag.answer.rewrite import CachedTitles


def add_check_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "check", help="try every configured part once (store, models, MongoDB, Slack, Teams) and show a table",
        description="Tries every configured part once: the knowledge store, the embedder (and that it is the one "
                    "the store was built with), each model endpoint with one tiny call, the reranker, MongoDB and "
                    "its indexes, Slack's auth.test and scopes, the Teams token. Exits 1 if anything failed, with "
                    "one line per problem saying what to do. Secrets are never printed.")
    parser.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    parser.set_defaults(func=cmd_check)


def check_mongodb(settings: Settings) -> list[Row]:
    """Reachable, and every search index READY and queryable (`navibot db init` makes them)."""
    from rag.mongo.connection import MongoConnection
    from rag.mongo.indexes import CHUNKS, search_index_states

    try:
        connection, ms = timed(lambda: MongoConnection.open(mongo_config(settings)))
    except Exception as exc:  # noqa: BLE001 - pymongo's message names the host and the cause; the URI's password is not in it
        return [Row("mongodb", False, None, f"{type(exc).__name__}: {str(exc)[:200]}",
                    "check NAVIBOT_MONGODB_URI, the user's password and the network access list")]
    try:
        states = connection.run(search_index_states(connection.db[CHUNKS]))
    except Exception as exc:  # noqa: BLE001 - the listing's own failure is the row
        return [Row("mongodb", True, ms, f"{connection.host}/{connection.db.name}"),
                Row("mongodb search indexes", False, None, str(exc)[:200], "run `navibot db init`")]
    finally:
        connection.close()
    rows = [Row("mongodb", True, ms, f"{connection.host}/{connection.db.name}")]
    if not states:
        return [*rows, Row("mongodb search indexes", False, None, "none", "run `navibot db init`")]
    for state in states:
        ready = state.status == "READY" and state.queryable
        rows.append(Row(f"mongodb index {state.name}", ready, None, f"{state.type}, {state.status.lower()}",
                        "" if ready else "wait for it to build (`navibot db status`), or run `navibot db init`"))
    return rows


def run_checks(settings: Settings, store_path: Path | None = None) -> list[Row]:
    rows: list[Row] = []
    if settings.store == "mongodb" and store_path is None:
        rows += check_mongodb(settings)
    store_rows, store = check_store(settings, store_path, open_knowledge_store)
    rows += store_rows
    try:
        embedder = make_embedder(settings)
        rows += check_embedder(embedder, store)
        if settings.llm != "offline":
            answerer = make_answerer(settings, embedder)
            if isinstance(answerer, FallbackAnswerer):
                rows += check_answerer(answerer.primary)
            rows += check_rewriter(make_rewriter(settings, CachedTitles(list)))
        reranker = make_reranker(settings)
        if reranker is not None:
            rows += check_reranker(reranker)
    finally:
        if store is not None:
            store.close()
    rows += _chat_platforms()
    return rows


def _chat_platforms() -> list[Row]:
    from adapters.slack.settings import SlackSettings
    from adapters.teams.settings import load_teams_settings

    rows: list[Row] = []
    slack = SlackSettings()
    if slack.slack_bot_token is not None:
        rows += check_slack(slack.slack_bot_token.get_secret_value(), slack.slack_api_url)
    else:
        rows.append(Row("slack", None, None, "not configured (SLACK_BOT_TOKEN unset)"))
    teams = load_teams_settings()
    if teams.anonymous:
        rows.append(Row("teams", None, None, "not configured (NAVIBOT_TEAMS_CLIENT_ID unset)"))
    else:
        teams.check_credentials()
        rows += check_teams(teams.sdk_configuration())
    return rows


def table(rows: list[Row]) -> str:
    """The parts, their verdict and latency; then one line per problem."""
    width = max(len(r.part) for r in rows)
    lines = [f"{'part':<{width}}  {'status':<6}  {'ms':>7}  detail"]
    for r in rows:
        status = "ok" if r.ok else "SKIP" if r.ok is None else "FAIL"
        ms = f"{r.ms:7.0f}" if r.ms is not None else f"{'':>7}"
        lines.append(f"{r.part:<{width}}  {status:<6}  {ms}  {r.detail}")
    problems = [r for r in rows if r.ok is False]
    if problems:
        lines += ["", f"{len(problems)} problem(s):"]
        lines += [f"- {r.part}: {r.fix}" for r in problems]
    else:
        lines += ["", "everything configured works"]
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    rows = run_checks(settings, args.store)
    print(table(rows))
    return 1 if any(r.ok is False for r in rows) else 0

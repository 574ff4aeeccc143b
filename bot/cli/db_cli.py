"""`navibot db init` and `navibot db status`: registered here; the work is in bot/cli/db_admin.py, imported when the
command runs, because every `navibot` command registers this one and pymongo takes a while to import."""

from __future__ import annotations

import argparse

from bot.config.settings import Settings


def add_db_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = subparsers.add_parser(
        "db", help="prepare (init) or inspect (status) the MongoDB Atlas backend",
        description="The MongoDB backend (NAVIBOT_STORE=mongodb, NAVIBOT_MONGODB_URI). `init` creates the "
                    "collections, their indexes, the Atlas Vector Search and Atlas Search indexes, and waits until "
                    "they can be queried; safe to run again (a changed definition is updated). `status` shows "
                    "what is stored and the state of every index.")
    actions = db.add_subparsers(dest="db_action", metavar="ACTION", required=True)
    init = actions.add_parser("init", help="create collections and indexes, wait until search is queryable")
    init.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                      help="give up waiting for the search indexes after this long (default 600; they keep "
                           "building on the server)")
    init.add_argument("--no-wait", action="store_true", help="create or update the indexes and return at once")
    init.set_defaults(func=cmd_db_init)
    status = actions.add_parser("status", help="documents, chunks, conversations and the state of every index")
    status.set_defaults(func=cmd_db_status)


def cmd_db_init(args: argparse.Namespace, settings: Settings) -> int:
    from bot.cli.db_admin import db_init

    return db_init(args, settings)


def cmd_db_status(args: argparse.Namespace, settings: Settings) -> int:
    from bot.cli.db_admin import db_status

    return db_status(args, settings)

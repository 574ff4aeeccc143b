"""`navibot db init` and `navibot db status`: prepare and inspect the MongoDB Atlas backend
(registered by bot/cli.py)."""

from __future__ import annotations

import argparse


def add_db_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `db` command (filled in by the MongoDB backend)."""

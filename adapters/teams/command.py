"""`navibot teams` and `navibot teams package`: run the Teams bot on its own, build the app package
(registered by bot/cli.py)."""

from __future__ import annotations

import argparse


def add_teams_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `teams` command (filled in by the Teams adapter)."""

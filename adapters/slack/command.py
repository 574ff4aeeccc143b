"""`navibot slack`: run the Slack app on its own (registered by bot/cli.py)."""

from __future__ import annotations

import argparse


def add_slack_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `slack` command (filled in by the Slack adapter)."""

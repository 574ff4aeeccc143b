"""Navibot's application layer: settings, wiring and the `navibot` command line."""

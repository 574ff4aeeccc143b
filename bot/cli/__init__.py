"""The `navibot` command line and its subcommands."""

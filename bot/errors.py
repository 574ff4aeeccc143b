"""Errors the person running a command can fix: the command line prints them as one line, without a traceback."""


class UserError(Exception):
    """Bad input or a missing prerequisite, with a message saying what to do."""

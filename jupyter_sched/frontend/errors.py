"""The errors every front end raises for what a user typed; each front end maps them to its own form.

The command line turns :class:`UsageError` into exit code 2 and :class:`CommandError` into exit code 1; the
notebook turns both into IPython's ``UsageError`` (one line, no traceback). :class:`ParserExit` is argparse
asking to stop after printing (``--help``): the command line exits 0, the notebook prints the text.
"""

from __future__ import annotations


class UsageError(ValueError):
    """Bad input (an unknown flag, scheduler or option, a malformed value): the message says what was wrong
    and, where it helps, ends with the usage."""

    exit_code = 2


class CommandError(Exception):
    """Well-formed input that cannot be carried out (e.g. an unknown app, role or replica)."""

    exit_code = 1


class ParserExit(Exception):
    """An argparse parser asked to exit (``--help`` after printing the help, or ``--version``)."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message

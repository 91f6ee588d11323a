"""Exceptions of the command line, and the exit codes they map to."""

from __future__ import annotations


class CliUsageError(ValueError):
    """Bad command-line input (an unknown flag, scheduler or option, a malformed value). The message says
    what was wrong and, where it helps, ends with the usage. Exit code 2."""

    exit_code = 2


class CliError(Exception):
    """The command was well formed but cannot be carried out (e.g. an unknown app). Exit code 1."""

    exit_code = 1


class CliExit(Exception):
    """An argparse parser asked to exit (``--help`` after printing the help, or ``--version``)."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message

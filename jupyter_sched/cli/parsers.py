"""An ``argparse.ArgumentParser`` that raises instead of exiting, so parsing is reusable from a notebook."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn, Optional

from jupyter_sched.cli.errors import CliExit, CliUsageError


class RaisingArgumentParser(argparse.ArgumentParser):
    """Raises :class:`CliUsageError` (message + usage) on bad input and :class:`CliExit` on ``--help``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise CliUsageError(f"{self.prog}: error: {message}\n{self.format_usage().rstrip()}")

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise CliExit(status, message or "")

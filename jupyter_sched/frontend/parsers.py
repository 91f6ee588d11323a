"""An ``argparse.ArgumentParser`` that raises instead of exiting, so parsing is reusable from a notebook."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn, Optional

from jupyter_sched.frontend.errors import ParserExit, UsageError


class RaisingArgumentParser(argparse.ArgumentParser):
    """Raises :class:`UsageError` (message + usage) on bad input and :class:`ParserExit` on ``--help``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}\n{self.format_usage().rstrip()}")

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise ParserExit(status, message or "")

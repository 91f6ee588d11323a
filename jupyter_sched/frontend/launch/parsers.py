"""An ``argparse.ArgumentParser`` that raises instead of exiting, so parsing is reusable from a notebook."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn, Optional

from jupyter_sched.frontend.errors import ParserExit, UsageError


def error_prefix(prog: str) -> str:
    """How a usage error of ``prog`` begins: ``jupyter-sched run: error: `` as argparse words it on the
    command line, ``%sched_run: `` for a magic (IPython already labels it ``UsageError``)."""
    return f"{prog}: " if prog.startswith("%") else f"{prog}: error: "


class RaisingArgumentParser(argparse.ArgumentParser):
    """Raises :class:`UsageError` (message + usage) on bad input and :class:`ParserExit` on ``--help``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{error_prefix(self.prog)}{message}\n{self.format_usage().rstrip()}")

    def exit(self, status: int = 0, message: Optional[str] = None) -> NoReturn:
        raise ParserExit(status, message or "")

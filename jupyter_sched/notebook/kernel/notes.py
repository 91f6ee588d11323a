"""The ``jupyter_sched`` logger in a notebook: a one-line note under the cell, never raw stderr.

Library diagnostics (image pulls, workspace builds and pushes at INFO; warnings) go through ``logging``.
Without a handler, Python would print warnings to the kernel's stderr, one red block each, and drop the
progress. While the extension is loaded, :class:`NoteHandler` shows them instead as one small line per
cell that progress updates in place (a display with an id); a warning gets a line of its own that later
progress does not overwrite. Text is escaped: a message may quote what a job or an engine printed.
"""

from __future__ import annotations

import html
import logging
from typing import Any, Optional

LOGGER = "jupyter_sched"


class NoteHandler(logging.Handler):
    """Shows each record of the ``jupyter_sched`` logger as a one-line note in the running cell."""

    def __init__(self, shell: Any) -> None:
        super().__init__(logging.INFO)
        self.shell = shell
        self._cell: Optional[int] = None
        self._progress: Any = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from IPython.display import display

            lines = record.getMessage().strip().splitlines()
            line = lines[0] if lines else ""
            warn = record.levelno >= logging.WARNING
            text = f"jupyter_sched: {'warning: ' if warn else ''}{line}"
            bundle = {
                "text/plain": text,
                "text/html": f'<div class="jsched-note" style="font-size:12px;opacity:0.75;'
                f'white-space:nowrap;overflow:hidden;text-overflow:ellipsis">{html.escape(text)}</div>',
            }
            cell = getattr(self.shell, "execution_count", None)
            if warn:
                display(bundle, raw=True)
            elif self._progress is None or cell != self._cell:
                self._progress = display(bundle, raw=True, display_id=True)
                self._cell = cell
            else:
                self._progress.update(bundle, raw=True)
        except Exception:  # noqa: BLE001 - logging must never break the caller
            self.handleError(record)


def install(shell: Any) -> NoteHandler:
    """Adds a :class:`NoteHandler` for ``shell`` (and lowers the logger to INFO if it is unset)."""
    logger = logging.getLogger(LOGGER)
    handler = NoteHandler(shell)
    logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    return handler


def uninstall(shell: Any) -> None:
    """Removes the handlers :func:`install` added for ``shell``."""
    logger = logging.getLogger(LOGGER)
    for h in list(logger.handlers):
        if isinstance(h, NoteHandler) and h.shell is shell:
            logger.removeHandler(h)

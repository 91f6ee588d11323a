"""Following an app's logs into a text stream, with the renderer that suits it: ``jupyter-sched log -f`` and
``%sched_logs -f``. It sits above the renderers it chooses between (``printer``, ``live_printer``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, TextIO, Tuple

from jupyter_sched.frontend.logview.follow import FollowRenderer, TailOptions, follow
from jupyter_sched.frontend.logview.live_printer import LivePrinter
from jupyter_sched.frontend.logview.printer import JsonLinePrinter, LogPrinter

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner

__all__ = ["tail"]


def tail(
    runner: "Runner",
    app_handle: str,
    replicas: List[Tuple[str, int]],
    out: TextIO,
    opts: TailOptions,
    color: bool = False,
    on_error: Optional[Callable[[str], None]] = None,
    clean: Optional[Callable[[str], str]] = None,
    json_lines: bool = False,
    live: bool = False,
) -> List[str]:
    """:func:`follow` printed to ``out`` by a :class:`LogPrinter`, a :class:`JsonLinePrinter` with
    ``json_lines``, or with ``live`` (``out`` is a terminal) a :class:`LivePrinter`, whose progress bars
    update in place."""
    printer: FollowRenderer
    if json_lines:
        printer = JsonLinePrinter(out, on_error)
    elif live:
        printer = LivePrinter(out, replicas, color, on_error, clean)
    else:
        printer = LogPrinter(out, replicas, color, on_error, clean)
    return follow(runner, app_handle, replicas, opts, printer)

"""The last lines a failed replica wrote on stderr, read from its scheduler's logs: the one input of a
failure's reason (:mod:`.reasons`) that its status does not carry.

Why here and not in each front end: the notebook's pane used to take them from the log it follows, and
the Jupyter server had none, so a detached job that died with ``error: loss is NaN`` on stderr read so in
its kernel pane and "exit code 3" in JupyterLab. Every front end now asks :func:`stderr_of` (or a
:class:`StderrTails` of its own), which reads the replica's stderr through ``Runner.log_lines`` the way
any front end reads a log, so the pane, ``JobFailed``, ``jupyter-sched status``, the server's rows and the
saved records all see the same lines.

Cheap enough for a listing of many apps: a replica is read only when it has failed and nothing in its
status explains why (:func:`~jupyter_sched.frontend.jobs.reasons.needs_stderr`), once: an ended replica's
log does not change, so what was read is kept (at most :data:`CACHE_SIZE` replicas, least recently asked
dropped first). A log that could not be read (its backend is down) is not kept and is asked again next
time. Memory stays bounded whatever the replica printed: the lines go through a
:class:`~jupyter_sched.logs.TerminalBuffer` of :data:`TAIL_LINES` lines of :data:`LINE_CHARS` characters,
which also resolves ``\\r`` frames and colours as the log panes do. The lines come back masked
(:func:`~jupyter_sched.specs.output.masking.mask_out`), since they are shown.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from itertools import islice
from typing import TYPE_CHECKING, AbstractSet, Iterable, List, Optional, Tuple

from jupyter_sched.frontend.jobs.reasons import StderrOf
from jupyter_sched.frontend.logview.metric_lines import MetricLineFilter
from jupyter_sched.logs import TerminalBuffer
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.specs.output.masking import mask_out

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner

__all__ = ["CACHE_SIZE", "LINE_CHARS", "TAIL_LINES", "StderrTails", "read_tail", "stderr_of"]

TAIL_LINES = 20
"""Lines kept of a replica's stderr: the reason is the last one; the panes show the last few under it."""
LINE_CHARS = 2000
"""Characters kept per line (a reason is cut to 300 anyway)."""
CACHE_SIZE = 4096
"""Replicas whose tails are kept."""
_BATCH = 512


def read_tail(runner: "Runner", handle: str, role: str, k: int, last_n: int = TAIL_LINES) -> Optional[List[str]]:
    """The last ``last_n`` non-empty lines replica ``k`` of ``role`` wrote on stderr, as a log pane shows
    them and masked; None when its log cannot be read (unknown replica, a backend that cannot answer)."""
    try:
        # the marked metric lines are data, never why a replica failed (the followers store their records)
        items: Iterable[str] = MetricLineFilter(runner.log_lines(handle, role, k, streams=Stream.STDERR), None)
        term = TerminalBuffer(max_lines=max(last_n, 1), max_line_chars=LINE_CHARS)
        it = iter(items)
        while True:
            batch = list(islice(it, _BATCH))
            if not batch:
                break
            term.feed("".join(batch))
        term.flush()
    except Exception:  # noqa: BLE001 - a reason without stderr falls back to the exit code; never an error
        return None
    lines = [line for line in term.plain_lines() if line.strip()]
    return [str(mask_out(line)) for line in lines[-last_n:]]


class StderrTails:
    """Failed replicas' stderr tails, read once each and kept (see the module docstring); thread-safe."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._kept: "OrderedDict[Tuple[str, str, int], List[str]]" = OrderedDict()
        self._lock = threading.Lock()

    def lines(self, runner: "Runner", handle: str, role: str, k: int) -> List[str]:
        """The replica's last stderr lines (empty when unreadable). Ask only for a replica that has ended:
        what is read is kept as its final word."""
        key = (handle, role, k)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                return kept
        lines = read_tail(runner, handle, role, k)
        if lines is None:
            return []
        with self._lock:
            self._kept[key] = lines
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return lines

    def of(self, runner: "Runner", handle: str) -> StderrOf:
        """The :data:`~jupyter_sched.frontend.jobs.reasons.StderrOf` of one app, for the reason functions."""
        return lambda role, k: self.lines(runner, handle, role, k)

    def keep_only(self, handles: AbstractSet[str]) -> None:
        """Drops what is kept of apps other than ``handles`` (a listing no longer shows them: their records
        were removed)."""
        with self._lock:
            for key in [key for key in self._kept if key[0] not in handles]:
                del self._kept[key]


_TAILS = StderrTails()


def stderr_of(runner: "Runner", handle: str) -> StderrOf:
    """The process's one :class:`StderrTails`, for one app: what the notebook, ``JobFailed`` and the CLI ask."""
    return _TAILS.of(runner, handle)

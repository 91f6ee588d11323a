"""Replicas end with their owner's signals: SIGTERM always, SIGINT only outside IPython.

Inside IPython SIGINT belongs to the user (it interrupts a cell and must never kill jobs); elsewhere the
handler that was installed before is chained to, not replaced.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Dict

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.local_scheduler import LocalScheduler


class SignalException(Exception):
    """Raised in the owner when it receives SIGTERM and had no handler of its own, so that ``with``
    blocks unwind and close their schedulers."""

    def __init__(self, msg: str, sigval: signal.Signals) -> None:
        super().__init__(msg)
        self.sigval = sigval


class SignalCleanup:
    """Ends every live local scheduler's replicas on SIGTERM (always) and SIGINT (outside IPython), then
    chains to the handler that was installed before. Installed once, from the main thread only."""

    _schedulers: "weakref.WeakSet[LocalScheduler]" = weakref.WeakSet()
    _installed = False
    _previous: Dict[int, Any] = {}

    @classmethod
    def register(cls, scheduler: LocalScheduler) -> None:
        cls._schedulers.add(scheduler)
        if cls._installed or threading.current_thread() is not threading.main_thread():
            return
        cls._installed = True
        sigs = [signal.SIGTERM]
        if not _in_ipython():
            sigs.append(signal.SIGINT)
        for sig in sigs:
            cls._previous[sig] = signal.getsignal(sig)
            signal.signal(sig, cls._handle)

    @classmethod
    def _handle(cls, signum: int, frame: Any) -> None:
        for scheduler in list(cls._schedulers):
            scheduler._stop_owned_apps(grace=2.0)
        previous = cls._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            raise SignalException(f"Process {os.getpid()} got signal: {signum}", signal.Signals(signum))


def _in_ipython() -> bool:
    ipython = sys.modules.get("IPython")
    return bool(ipython and getattr(ipython, "get_ipython", lambda: None)())

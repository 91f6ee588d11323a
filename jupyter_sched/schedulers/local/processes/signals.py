"""Replicas end with their owner's signals: SIGTERM always, SIGINT only outside IPython.

Inside IPython SIGINT belongs to the user (it interrupts a cell and must never kill jobs); elsewhere the
handler that was installed before is chained to, not replaced. A signal the process was started with
ignored stays ignored: a script's background job (``jupyter-sched run ... &``) starts with SIGINT ignored,
so that the Ctrl-C its terminal sends to the script's whole process group leaves it running, and its apps
with it (``nohup`` does the same with SIGHUP). Whoever owns replicas registers a clean-up callback (the
local scheduler registers its "stop my apps"); callbacks are held weakly, so a scheduler that is gone is
simply not called.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import weakref
from typing import Any, Callable, Dict

STOP_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL for the replicas stopped because their owner got a signal."""


class SignalException(Exception):
    """Raised in the owner when it receives SIGTERM and had no handler of its own, so that ``with``
    blocks unwind and close their schedulers."""

    def __init__(self, msg: str, sigval: signal.Signals) -> None:
        super().__init__(msg)
        self.sigval = sigval


class SignalCleanup:
    """Calls every registered clean-up on SIGTERM (always) and SIGINT (outside IPython), then chains to the
    handler that was installed before; a signal ignored then is left ignored. Installed once, from the main
    thread only."""

    _callbacks: "list[weakref.WeakMethod[Callable[[float, int], None]]]" = []
    _installed = False
    _previous: Dict[int, Any] = {}

    @classmethod
    def register(cls, stop: Callable[[float, int], None]) -> None:
        """``stop(grace, signum)`` is called on the signal; ``stop`` must be a bound method (held weakly)."""
        cls._callbacks = [ref for ref in cls._callbacks if ref() is not None]
        cls._callbacks.append(weakref.WeakMethod(stop))
        if cls._installed or threading.current_thread() is not threading.main_thread():
            return
        cls._installed = True
        sigs = [signal.SIGTERM]
        if not _in_ipython():
            sigs.append(signal.SIGINT)
        for sig in sigs:
            previous = signal.getsignal(sig)
            if previous == signal.SIG_IGN:  # ignored by whoever started the process: left so (see top)
                continue
            cls._previous[sig] = previous
            signal.signal(sig, cls._handle)

    @classmethod
    def _handle(cls, signum: int, frame: Any) -> None:
        for ref in list(cls._callbacks):
            stop = ref()
            if stop is not None:
                stop(STOP_GRACE_S, signum)
        previous = cls._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            raise SignalException(f"Process {os.getpid()} got signal: {signum}", signal.Signals(signum))


def _in_ipython() -> bool:
    ipython = sys.modules.get("IPython")
    return bool(ipython and getattr(ipython, "get_ipython", lambda: None)())

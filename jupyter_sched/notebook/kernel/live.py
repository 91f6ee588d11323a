"""The only threads of the notebook layer: periodic tickers that refresh panes, and log followers (the front
ends' one :class:`~jupyter_sched.frontend.logview.follower.LogFollower`, registered here by the log pane).

Rules they keep (reference §2.3, §4.5): they never print, ``display`` or clear output, because where thread
output lands changed three times across ipykernel 6.29-7.x; they only set widget traits, under the pane's
lock, at most once per interval. They are daemon threads with an explicit :meth:`stop`, registered here so
that unloading the extension stops all of them (jobs keep running). Errors in a thread are kept on the
object for the pane to show, not raised into some other cell.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Callable, List, Optional, Protocol, TypeVar


class Live(Protocol):
    """A background thread that unloading the extension stops: a ticker or a log follower."""

    @property
    def alive(self) -> bool: ...

    def stop(self) -> None: ...


_LIVE: "weakref.WeakSet[Live]" = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def register(thing: Live) -> None:
    """Counts ``thing`` among :func:`live_threads` (until it is gone), so :func:`stop_all` stops it."""
    with _LIVE_LOCK:
        _LIVE.add(thing)


def live_threads() -> List[Live]:
    """Tickers and followers that are still running."""
    with _LIVE_LOCK:
        return [t for t in _LIVE if t.alive]


def stop_all(timeout: float = 2.0) -> None:
    """Stops every ticker and follower (used by ``unload``); waits up to ``timeout`` for tickers."""
    for thing in live_threads():
        thing.stop()
    deadline = time.monotonic() + timeout
    for thing in live_threads():
        if isinstance(thing, Ticker):
            thing.join(max(0.0, deadline - time.monotonic()))


_T = TypeVar("_T", bound="LiveThread")


class LiveThread:
    """What a pane's background threads share: a named daemon thread registered with :func:`live_threads`,
    a stop flag that the thread checks, and ``join`` that never joins the calling thread itself."""

    def __init__(self, name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"jupyter_sched-{name}", daemon=True)

    def _run(self) -> None:  # pragma: no cover - each kind of thread has its own loop
        raise NotImplementedError

    def start(self: _T) -> _T:
        register(self)
        self._thread.start()
        return self

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        """Asks the thread to finish at its next step; returns at once."""
        self._stop.set()

    def join(self, timeout: Optional[float] = None) -> None:
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)


class Ticker(LiveThread):
    """Calls ``tick()`` every ``interval`` seconds on a daemon thread until it returns False or
    :meth:`stop` is called; then calls ``final()`` once. If a tick takes more than a quarter of the
    interval the interval doubles (up to ``max_interval``), so a slow render cannot eat the kernel."""

    def __init__(
        self,
        name: str,
        interval: float,
        tick: Callable[[], bool],
        final: Optional[Callable[[], None]] = None,
        max_interval: float = 4.0,
    ) -> None:
        super().__init__(name)
        self.interval = self.base_interval = interval
        self.max_interval = max(max_interval, interval)
        self.error: Optional[BaseException] = None
        self.ticks = 0
        self._tick = tick
        self._final = final
        self._wake = threading.Event()

    def stop(self) -> None:
        """Asks the thread to finish after its current tick; returns at once."""
        super().stop()
        self._wake.set()

    def wake(self) -> None:
        """Runs the next tick now instead of at the end of the interval."""
        self._wake.set()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                self.ticks += 1
                if not self._tick():
                    break
                took = time.monotonic() - started
                if took > self.interval / 4:
                    self.interval = min(self.interval * 2, self.max_interval)
                elif took < self.base_interval / 20 and self.interval > self.base_interval:
                    self.interval = max(self.base_interval, self.interval / 2)
                self._wake.wait(self.interval)
                self._wake.clear()
        except BaseException as e:  # noqa: BLE001 - kept for the pane to show; never raised elsewhere
            self.error = e
        finally:
            if self._final is not None:
                try:
                    self._final()
                except BaseException as e:  # noqa: BLE001 - kept as the error
                    self.error = self.error or e

"""Reading a local replica's log files (see ``log_files``): followers of this process's apps are woken by
the IO loop the moment output arrives; apps of another process are polled, 5 ms to 50 ms apart."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Hashable, Optional, Protocol

from jupyter_sched.schedulers.log_files import IndexedLogIterator
from jupyter_sched.specs.state import is_terminal

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.api import Scheduler

__all__ = ["ChangeFeed", "LogIterator"]


class ChangeFeed(Protocol):
    """What a writer in this process offers followers (``ProcessLoop`` does): a version bumped on every
    change, a wait for the next change, and a wake-up for everyone waiting."""

    version: int

    def wait_for_change(self, version: int, timeout: float) -> None: ...

    def notify(self) -> None: ...


class LogIterator(IndexedLogIterator):
    """Iterates the log of one replica of a local app.

    The positional parameters are TorchX's (``LogIterator(app_id, regex, log_file, scheduler,
    should_tail=True)``), so code that builds one directly keeps working. Ours come as keywords:
    ``finished`` says when the replica has ended (by default: when ``scheduler.describe(app_id)`` says
    the app has, which any scheduler answers); ``changes`` is the writer's change feed when the app
    belongs to this process.

    With ``should_tail=True`` it follows until ``finished()`` *and* every byte was yielded. With
    ``changes`` new output wakes it at once, with no sleep loop; without, the file is polled every 5 ms,
    backing off to 50 ms while it stays quiet.
    """

    first_poll_s = 0.005
    max_poll_s = 0.05

    def __init__(
        self,
        app_id: str,
        regex: Optional[str],
        log_file: str,
        scheduler: "Scheduler[Any]",
        should_tail: bool = True,
        *,
        finished: Optional[Callable[[], bool]] = None,
        changes: Optional[ChangeFeed] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> None:
        super().__init__(log_file, regex, should_tail, since, until)
        self._is_finished = finished or _app_ended(scheduler, app_id)
        self._changes = changes
        if changes is not None:
            self.max_poll_s = 0.25  # a safety net only: the loop wakes us on every change

    def _finished(self) -> bool:
        return self._is_finished()

    def _change_token(self) -> Hashable:
        return self._changes.version if self._changes is not None else None

    def _wait_for_change(self, token: Hashable, timeout: float) -> None:
        if self._changes is None:
            super()._wait_for_change(token, timeout)
        else:
            self._changes.wait_for_change(int(token), timeout)  # type: ignore[call-overload]

    def _wake(self) -> None:
        if self._changes is not None:
            self._changes.notify()


def _app_ended(scheduler: "Scheduler[Any]", app_id: str) -> Callable[[], bool]:
    """TorchX's notion of "finished" for a follower built without a callback: the app has ended (or is
    unknown), as the scheduler's public ``describe`` says."""

    def ended() -> bool:
        described = scheduler.describe(app_id)
        return described is None or is_terminal(described.state)

    return ended

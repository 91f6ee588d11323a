"""Reading a local replica's log files (see ``log_files``): followers of this process's apps are woken by
the IO loop the moment output arrives; apps of another process are polled, 5 ms to 50 ms apart.

:func:`replica_log` picks the file to read from the app's record, and refuses what the record cannot
vouch for (a path outside the app's directory, ``since``/``until`` without a time index).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Hashable, Optional, Protocol

from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.common.log_files import IndexedLogIterator
from jupyter_sched.schedulers.common.roles import unknown_replica
from jupyter_sched.schedulers.local.record.state import AppRecord, is_within
from jupyter_sched.specs.status.state import is_terminal

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.api import Scheduler

__all__ = ["ChangeFeed", "LogIterator", "replica_log"]


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


def replica_log(
    app_id: str,
    record: AppRecord,
    role_name: str,
    k: int,
    stream: Stream,
    regex: Optional[str],
    since: Optional[datetime],
    until: Optional[datetime],
    should_tail: bool,
    *,
    scheduler: "Scheduler[Any]",
    finished: Callable[[], bool],
    changes: Optional[ChangeFeed],
) -> LogIterator:
    """The iterator over one replica's ``stream`` of the app ``app_id``, whose record is ``record``
    (``log_iter``); ``finished`` and ``changes`` are the :class:`LogIterator` keywords."""
    rep = record.replica(role_name, k)
    if rep is None:
        raise unknown_replica(app_id, role_name, k, ((r.role, r.replica_id) for r in record.replicas))
    path = {Stream.STDOUT: rep.stdout, Stream.STDERR: rep.stderr, Stream.COMBINED: rep.combined}[stream]
    if record.outlive_owner and stream is Stream.COMBINED:
        path = rep.stdout  # detached replicas write their streams straight to files
    if not path or not is_within(path, record.app_dir):
        raise ValueError(
            f"the record of app {app_id} names no {stream.value} log inside its directory"
            f" {record.app_dir!r}; it was edited or is damaged"
        )
    if record.outlive_owner and (since or until):
        raise ValueError(
            "since/until are not available for apps started with outlive_owner=true (their output"
            " is not timestamped); read the whole log and filter it instead"
        )
    return LogIterator(
        app_id,
        regex,
        path,
        scheduler,
        should_tail,
        finished=finished,
        changes=changes,
        since=since,
        until=until,
    )

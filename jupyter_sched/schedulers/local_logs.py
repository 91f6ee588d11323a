"""Reading a local replica's log files (see ``log_files``): followers of this process's apps are woken by
the IO loop the moment output arrives; apps of another process are polled, 5 ms to 100 ms apart."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Hashable, Optional

from jupyter_sched.schedulers.log_files import IndexedLogIterator, read_index

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.local_scheduler import LocalScheduler

__all__ = ["LogIterator", "read_index"]


class LogIterator(IndexedLogIterator):
    """Iterates the log of one replica of a local app.

    With ``should_tail=True`` it follows until the replica has ended *and* every byte was yielded; new
    output wakes it at once (no sleep loop) when the app belongs to this process, and within a few
    milliseconds otherwise.
    """

    def __init__(
        self,
        app_id: str,
        regex: Optional[str],
        log_file: str,
        scheduler: "LocalScheduler",
        should_tail: bool = True,
        role_name: str = "",
        k: int = 0,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> None:
        super().__init__(log_file, regex, should_tail, since, until)
        self._app_id = app_id
        self._scheduler = scheduler
        self._role = role_name
        self._k = k

    def _finished(self) -> bool:
        return self._scheduler._replica_finished(self._app_id, self._role, self._k)

    def _change_token(self) -> Hashable:
        return self._scheduler._log_version()

    def _wait_for_change(self, token: Hashable, idle: int) -> None:
        self._scheduler._wait_log_change(int(token), idle, self._app_id)  # type: ignore[call-overload]

    def _wake(self) -> None:
        self._scheduler._wake_log_followers()

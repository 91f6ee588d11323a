"""Timed log items: an optional extension of the Scheduler contract, beside ``log_iter``.

``log_iter`` is TorchX's: it yields plain strings, and that stays exactly so. But a replica's stdout and
stderr are read as two streams (so stderr can be marked), and two followers deliver at their own pace, so
a front end that merges them in arrival order can show a line above one written seconds before it. Most
backends know when each chunk was written (the local and Slurm backends keep a time index beside each log
file), so a scheduler that can say it implements :class:`TimedLogs` and yields ``(time, item)`` with the
same items, in the same order, as ``log_iter`` with the same arguments. Front ends merge by that time
(``logs.reorder``). A backend that does not implement it needs no edit: ``Runner.log_items`` stamps its
items with the time they arrive, which is arrival order.
"""

from __future__ import annotations

import abc
from datetime import datetime
from typing import Iterable, Optional, Tuple

from jupyter_sched.schedulers.api import Stream

__all__ = ["TimedLogs"]


class TimedLogs(abc.ABC):
    """Mixin for schedulers that know when their log items were written: ``class S(TimedLogs, Scheduler)``."""

    @abc.abstractmethod
    def log_iter_timed(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[Tuple[float, str]]:
        """``log_iter``'s items as ``(time, item)``: ``time`` is POSIX seconds (``time.time()``) at which the
        item was written (for an item written in several pieces, its last). Times of one stream never
        decrease. The items, and their errors for bad arguments, are exactly ``log_iter``'s."""

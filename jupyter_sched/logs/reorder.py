"""Merging timed items of several streams into time order, live, with a short bounded hold.

A replica's stdout and stderr (or several replicas) are read by separate followers that deliver in
batches at their own pace, so the order items *arrive* in is not the order they were *written* in: a
line printed to stdout a second after a stderr line can arrive first when the stderr follower is
between polls. Backends record when each chunk was written (see ``Scheduler``'s timed items); this
buffer holds arriving items briefly and hands them out sorted by that time.

Two rules release an item, and nothing else holds one back:

* **watermark**: each stream's items come in time order, so once every stream still open has delivered
  an item at or after time ``t``, nothing earlier than ``t`` can still come: everything up to the oldest
  of the streams' newest times goes out at once (two busy streams add no delay);
* **window**: an item that has been held ``window`` seconds (by the caller's clock of arrival, so a
  backend whose clock is off cannot stretch it) goes out, with every held item not newer than it. This
  bounds the delay when a stream is silent, and ``max_held`` items per stream bound the memory.

The result is in time order whenever no item arrives more than ``window`` after one written later on
another stream was delivered; an item later than that is released at once (never lost), just out of
order. Pure and not thread-safe: the owner serialises calls and passes the time in (testable without
sleeping). Why hand-written: a k-way merge with a watermark is a few lines over ``heapq.merge``; stream
processing libraries bring a runtime we do not need.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Deque, Generic, List, Optional, Tuple, TypeVar

__all__ = ["Reorder", "WINDOW_S"]

T = TypeVar("T")
WINDOW_S = 0.15
"""Default hold: longer than a follower's poll interval (local 5-50 ms, Slurm 50-70 ms) plus the quiet
time before unterminated text is yielded (30 ms), short against a pane's refresh (250 ms)."""


class Reorder(Generic[T]):
    """Held items of ``streams`` streams; :meth:`push` as they arrive, :meth:`release` what is ready."""

    def __init__(self, streams: int, window: float = WINDOW_S, max_held: int = 100_000) -> None:
        self.window = window
        self.max_held = max_held
        self._held: List[Deque[Tuple[float, float, T]]] = [deque() for _ in range(streams)]
        self._newest = [-math.inf] * streams
        self._ended = [False] * streams

    def push(self, stream: int, ts: float, item: T, arrived: float) -> None:
        """An item of ``stream`` written at ``ts`` that arrived at ``arrived`` (the clock of ``release``)."""
        self._held[stream].append((ts, arrived, item))
        if ts > self._newest[stream]:
            self._newest[stream] = ts

    def push_many(self, stream: int, entries: List[Tuple[float, float, T]]) -> None:
        """Several ``(ts, arrived, item)`` of ``stream`` at once, in the order they arrived."""
        if entries:
            self._held[stream].extend(entries)
            self._newest[stream] = max(self._newest[stream], max(entry[0] for entry in entries))

    def end(self, stream: int) -> None:
        """``stream`` will deliver nothing more: it no longer holds the watermark back."""
        self._ended[stream] = True

    def held(self, stream: Optional[int] = None) -> int:
        """Items held (of ``stream``, or of all streams)."""
        return sum(len(h) for h in self._held) if stream is None else len(self._held[stream])

    def release(self, now: float, everything: bool = False) -> List[Tuple[float, int, T]]:
        """The items ready at ``now`` as ``(ts, stream, item)``, in time order (ties: lower stream first);
        ``everything`` releases all that is held."""
        open_newest = [n for n, ended in zip(self._newest, self._ended) if not ended]
        cutoff = math.inf if everything or not open_newest else min(open_newest)
        window = self.window
        due = []
        for held in self._held:
            over = len(held) - self.max_held  # over the bound: the oldest are due
            n = 0
            for ts, arrived, _ in held:
                if arrived + window > now and n >= over:
                    break
                n += 1
                cutoff = ts if cutoff < ts else cutoff
            due.append(n)
        runs = []
        for stream, (held, n) in enumerate(zip(self._held, due)):
            run = []
            while held and (n > 0 or held[0][0] <= cutoff):
                ts, _, item = held.popleft()
                run.append((ts, stream, item))
                n -= 1
            if run:
                runs.append(run)
        if len(runs) <= 1:
            return runs[0] if runs else []
        return list(heapq.merge(*runs, key=lambda entry: entry[0]))

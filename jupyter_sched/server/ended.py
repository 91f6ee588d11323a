"""The jobs that ended, as the server saw them happen: a bounded ring of "this job reached this end", each
with a cursor, so a client asks "what ended since my cursor" instead of diffing two listings.

Why not diff listings: a job that starts and ends between two polls of the list is in neither list as
running, so a front end that notifies on "was running, is gone" never hears of it -- and a short failure is
exactly what a user must hear about. The server's listing thread sees every job every refresh, running or
not, so it can say when one is first seen ended.

The rule, applied to each listing (:meth:`EndedJobs.observe`):

* a job seen running before and ended now has ended (once: a job already seen ended is not told again);
* a job first seen already ended, in any listing but the server's first, has ended (it started and ended
  between two listings);
* in the server's first listing every job is first seen: one that ended after the server started counts,
  and so does one that ended up to :data:`RECALL_S` before (the jobs that ended while the server was
  restarted), cursored by its end time so that only a client whose cursor is older than that end hears of it.

Cursors are whole numbers that only grow: the milliseconds of the UNIX time when the server saw the end
(or one more than the previous cursor, if that is larger). Being times, a cursor kept by a browser across
a server restart still means "ends after this moment" to the next server. A client with no cursor is given
the current one and no jobs (a fresh page says nothing about the past).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Deque, Dict, Iterable, List, Optional, Tuple

from jupyter_sched.frontend.jobs.rows import JobRow

MAX_ENDED = 2000
"""How many ends the ring keeps (a client further behind is told ``truncated``)."""
RECALL_S = 24 * 3600.0
"""How long before the server started an end still counts, in its first listing (for a client whose cursor is
older): a server restarted within a day tells what ended while it was down, not a whole history."""
MAX_KNOWN = 50_000
"""How many jobs' last seen state is kept (least recently listed forgotten first)."""


class BadCursor(ValueError):
    """A ``since`` that is not a cursor this API gives."""


def parse_since(text: Optional[str]) -> Optional[int]:
    """``?since=`` as a cursor, None if absent; :class:`BadCursor` saying what to give otherwise."""
    if text is None or text == "":
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise BadCursor(f"since={text[:40]!r}: give the cursor of a previous answer as it was (a whole number), or "
                        "leave since out to get the cursor of now")  # fmt: skip
    return int(text)


@dataclass
class Ended:
    cursor: int
    row: JobRow


class EndedJobs:
    """The ring of ends and the last state seen of each job (thread-safe: the listing thread writes, the
    request threads read)."""

    def __init__(self, started: Optional[float] = None, size: int = MAX_ENDED) -> None:
        self.started = time.time() if started is None else started
        self._lock = threading.Lock()
        self._ring: Deque[Ended] = deque(maxlen=size)
        self._running: Dict[str, bool] = {}
        self._last = int(self.started * 1000)
        self._observed = False
        self._dropped = 0
        """The largest cursor that fell out of the ring (a client at or past it missed nothing)."""

    def observe(self, rows: Iterable[JobRow], now: Optional[float] = None) -> List[Ended]:
        """Takes one listing's rows; returns the ends it adds to the ring."""
        now = time.time() if now is None else now
        with self._lock:
            first = not self._observed
            self._observed = True
            found: List[Tuple[int, JobRow]] = []
            for row in rows:
                before = self._running.pop(row.handle, None)
                self._running[row.handle] = row.running  # re-inserted: the most recently listed last
                if row.running or before is False:
                    continue
                if before is True or not first:
                    found.append((self._next(now), row))
                elif row.ended is not None and row.ended >= self.started - RECALL_S:
                    # the first listing: an end from before it is cursored by when it happened
                    found.append((min(int(row.ended * 1000), int(now * 1000)), row))
            while len(self._running) > MAX_KNOWN:
                self._running.pop(next(iter(self._running)))
            added = [Ended(cursor, row) for cursor, row in sorted(found, key=lambda f: f[0])]
            for item in added:
                if len(self._ring) == self._ring.maxlen:
                    self._dropped = max(self._dropped, self._ring[0].cursor)
                self._ring.append(item)
                self._last = max(self._last, item.cursor)
            return added

    def _next(self, now: float) -> int:
        self._last = max(self._last + 1, int(now * 1000))
        return self._last

    @property
    def observed(self) -> bool:
        """Whether a listing has been taken (before that, nothing is known to have ended)."""
        with self._lock:
            return self._observed

    def since(self, cursor: Optional[int]) -> Tuple[int, List[JobRow], bool]:
        """``(cursor now, the rows of the jobs that ended after cursor, oldest first, whether some ends after
        cursor were dropped from the ring)``; with no cursor, none."""
        with self._lock:
            now = self._last
            if cursor is None:
                return now, [], False
            rows = [e.row for e in self._ring if e.cursor > cursor]
            return now, rows, cursor < self._dropped

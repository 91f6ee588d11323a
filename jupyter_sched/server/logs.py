"""A replica's log for the browser: a snapshot, and a live follow shared by every viewer.

Both render through :class:`jupyter_sched.logs.TerminalBuffer`, the model behind the notebook's log panes,
so lines, ``\\r`` progress frames (the open line is redrawn in place), ``\\b``, erase-in-line and ANSI
colours mean what they mean there, and every character of log text is escaped before it becomes HTML.

- :func:`snapshot` reads the log once (no follow) into a buffer of the last ``lines`` lines.
- :class:`Followers` keeps at most ``max_followers`` :class:`ReplicaLog` s, one reader thread each (the
  front ends' one :class:`~jupyter_sched.frontend.logview.follower.LogFollower` over
  ``Runner.log_lines(should_tail=True)``) feeding one bounded buffer, whatever the number of viewers. A
  viewer holds a :class:`Cursor` and asks :meth:`ReplicaLog.diff` for what changed since: the lines
  committed since (all of them, or a reset with the kept tail when more arrived than are kept), the open
  line, the total count, and whether the log has ended. Memory is ``keep_lines`` lines of
  ``max_line_chars`` per follower, so a flood costs the same as a trickle.

Both leave out the marked metric lines (``@@jupyter_sched:metrics {...}``) and store their records with the
app's metrics (``frontend.logview.metric_lines``): they are data for the charts, not output.

A follower nobody watches is stopped ``linger`` seconds after its last viewer left (so a job view that
reconnects at once finds it), or at once when another one needs its place. Stopping closes its log iterator
(``IndexedLogIterator.close``), which wakes the reader even while the replica is silent: the thread ends and
the log file is closed then, not at the replica's next output. One janitor thread does the stopping; it
exists only while some follower does, so a server whose clients have left holds no thread and no file of
ours.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from jupyter_sched.frontend.logview.follower import LogFollower
from jupyter_sched.frontend.logview.metric_lines import without_metric_lines
from jupyter_sched.logs import TerminalBuffer
from jupyter_sched.runner import Runner
from jupyter_sched.schedulers.api import Stream
from jupyter_sched.specs.output.masking import mask_out

STREAMS = ("combined", "stdout", "stderr")
_BATCH = 256


def _feed(term: TerminalBuffer, items: Iterable[str]) -> None:
    batch: List[str] = []
    for item in items:
        batch.append(item)
        if len(batch) >= _BATCH:
            term.feed("".join(batch))
            batch.clear()
    term.feed("".join(batch))


def snapshot(runner: Runner, handle: str, role: str, k: int, lines: int, stream: str = "combined",
             max_line_chars: int = 4000) -> Dict[str, Any]:  # fmt: skip
    """The last ``lines`` lines of replica ``role/k`` as escaped HTML and as plain text, the open line
    (a progress bar mid-redraw) last, and how many lines there were in all."""
    term = TerminalBuffer(lines, max_line_chars)
    items = runner.log_lines(handle, role, k, streams=Stream(stream))
    _feed(term, without_metric_lines(runner, handle, role, k, items))
    term.flush()
    shown = term.lines[-lines:]
    current = term.current
    return {
        "role": role, "k": k, "stream": stream,
        "html": [line.to_html() for line in shown],
        "text": [line.text for line in shown],
        "current": current.to_html() if current.text or current.truncated else "",
        "current_text": current.text,
        "total": term.total_lines,
        "dropped": term.dropped,
    }  # fmt: skip


@dataclass
class Cursor:
    """What one viewer has been sent."""

    total: int = -1
    version: int = -1
    ended: bool = False


class ReplicaLog:
    """One replica's log followed by one :class:`~jupyter_sched.frontend.logview.follower.LogFollower` into
    one bounded terminal buffer, fed on the follower's thread as items arrive (its ``sink``); viewers read
    the buffer."""

    def __init__(self, runner: Runner, handle: str, role: str, k: int, stream: str, keep_lines: int,
                 max_line_chars: int) -> None:  # fmt: skip
        self.key = (handle, role, k, stream)
        self.term = TerminalBuffer(keep_lines, max_line_chars)
        self.lock = threading.Lock()
        self.viewers = 0
        self.last_viewed = time.monotonic()
        self.ended = False
        self.error: Optional[str] = None
        self._follower: LogFollower[str] = LogFollower(
            lambda: without_metric_lines(
                runner, handle, role, k, runner.log_lines(handle, role, k, should_tail=True, streams=Stream(stream))
            ),
            f"jsched-server-log-{role}-{k}", sink=self._feed, on_change=self._take,
        )  # fmt: skip
        self._follower.start()

    def _feed(self, item: str) -> None:
        with self.lock:
            self.term.feed(item)

    def _take(self) -> None:
        """On the follower's thread, once the log has ended: the end (and why, if it failed)."""
        batch = self._follower.read()
        with self.lock:
            if batch.ended and not self.ended:
                if batch.error is not None:
                    e = batch.error
                    self.error = mask_out(f"cannot read the log of {self.key[1]}/{self.key[2]}: "
                                          f"{' '.join(str(e).split())[:300]}")  # fmt: skip
                self.term.flush()
                self.term.version += 1
                self.ended = True

    def stop(self) -> None:
        """Ends the follow now: the reader wakes from its wait (or its next read), closes the log file and
        exits, however long the replica stays silent."""
        self._follower.stop()

    @property
    def stopped(self) -> bool:
        return self._follower.stopped

    @property
    def alive(self) -> bool:
        """True while the reader thread runs."""
        return self._follower.alive

    def diff(self, cursor: Cursor) -> Optional[Dict[str, Any]]:
        """What changed since ``cursor`` (which is advanced), or None if nothing did."""
        with self.lock:
            term = self.term
            if term.version == cursor.version and self.ended == cursor.ended:
                return None
            new = term.total_lines - cursor.total if cursor.total >= 0 else None
            kept = term.lines
            reset = new is None or new > len(kept)
            fresh = kept if reset else kept[len(kept) - new:] if new else []
            current = term.current
            event = {
                "reset": reset,
                "html": [line.to_html() for line in fresh],
                "current": current.to_html() if current.text or current.truncated else "",
                "total": term.total_lines,
                "dropped": term.dropped,
                "ended": self.ended,
                "error": self.error,
            }
            cursor.total, cursor.version, cursor.ended = term.total_lines, term.version, self.ended
            return event


class TooManyFollowers(RuntimeError):
    pass


class Followers:
    """At most ``max_followers`` live logs; the least recently watched unwatched one makes room, and one
    nobody has watched for ``linger`` seconds is stopped."""

    def __init__(self, max_followers: int = 16, keep_lines: int = 2000, max_line_chars: int = 4000,
                 linger: float = 5.0) -> None:  # fmt: skip
        self.max_followers = max_followers
        self.keep_lines = keep_lines
        self.max_line_chars = max_line_chars
        self.linger = linger
        self._logs: "OrderedDict[Tuple[str, str, int, str], ReplicaLog]" = OrderedDict()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._janitor: Optional[threading.Thread] = None
        self._closed = False

    def attach(self, runner: Runner, handle: str, role: str, k: int, stream: str = "combined") -> ReplicaLog:
        key = (handle, role, k, stream)
        with self._lock:
            if self._closed:
                raise TooManyFollowers("the server is shutting down")
            log = self._logs.get(key)
            if log is None or (log.stopped and not log.ended):
                if len(self._logs) >= self.max_followers:
                    self._evict()
                log = self._logs[key] = ReplicaLog(runner, handle, role, k, stream, self.keep_lines,
                                                   self.max_line_chars)  # fmt: skip
            self._logs.move_to_end(key)
            log.viewers += 1
            log.last_viewed = time.monotonic()
            self._start_janitor()
            return log

    def detach(self, log: ReplicaLog) -> None:
        with self._lock:
            log.viewers = max(0, log.viewers - 1)
            log.last_viewed = time.monotonic()
            self._changed.notify_all()

    def _evict(self) -> None:
        idle = [log for log in self._logs.values() if log.viewers == 0]
        if not idle:
            raise TooManyFollowers(
                f"{len(self._logs)} logs are being followed, the most this server allows"
                " (c.JobsServer.max_log_streams); close a job view and try again"
            )
        victim = min(idle, key=lambda log: (not log.ended, log.last_viewed))
        self._drop(victim)

    def _drop(self, log: ReplicaLog) -> None:
        del self._logs[log.key]
        log.stop()

    def _start_janitor(self) -> None:
        if self._janitor is None:
            self._janitor = threading.Thread(target=self._sweep, name="jsched-server-log-janitor", daemon=True)
            self._janitor.start()

    def _sweep(self) -> None:
        """Stops each follower nobody has watched for ``linger`` seconds; ends when none is left."""
        with self._lock:
            while self._logs and not self._closed:
                now = time.monotonic()
                for log in [log for log in self._logs.values() if log.viewers == 0]:
                    if now - log.last_viewed >= self.linger:
                        self._drop(log)
                due = [log.last_viewed + self.linger for log in self._logs.values() if log.viewers == 0]
                if not self._logs:
                    break
                self._changed.wait(max(0.05, min(due) - now) if due else None)
            self._janitor = None

    def stop_all(self) -> None:
        """Stops every follower and the janitor (the server is stopping): no thread or file is left."""
        with self._lock:
            self._closed = True
            for log in list(self._logs.values()):
                self._drop(log)
            self._changed.notify_all()
            janitor = self._janitor
        if janitor is not None:
            janitor.join(5)

    def __len__(self) -> int:
        return len(self._logs)

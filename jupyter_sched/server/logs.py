"""A replica's log for the browser: a snapshot, and a live follow shared by every viewer.

Both render through :class:`jupyter_sched.logs.TerminalBuffer`, the model behind the notebook's log panes,
so lines, ``\\r`` progress frames (the open line is redrawn in place), ``\\b``, erase-in-line and ANSI
colours mean what they mean there, and every character of log text is escaped before it becomes HTML.

- :func:`snapshot` reads the log once (no follow) into a buffer of the last ``lines`` lines.
- :class:`Followers` keeps at most ``max_followers`` :class:`ReplicaLog` s, one reader thread each
  (``Runner.log_lines(should_tail=True)``) feeding one bounded buffer, whatever the number of viewers. A
  viewer holds a :class:`Cursor` and asks :meth:`ReplicaLog.diff` for what changed since: the lines
  committed since (all of them, or a reset with the kept tail when more arrived than are kept), the open
  line, the total count, and whether the log has ended. Memory is ``keep_lines`` lines of
  ``max_line_chars`` per follower, so a flood costs the same as a trickle.

A follower nobody watches is stopped when another one needs its place; its thread ends at the replica's
next output or end (a blocked read cannot be interrupted from outside).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from jupyter_sched.logs import TerminalBuffer
from jupyter_sched.runner import Runner
from jupyter_sched.schedulers.api import Stream

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
    _feed(term, runner.log_lines(handle, role, k, streams=Stream(stream)))
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
    """One replica's log followed by one thread into one bounded terminal buffer."""

    def __init__(self, runner: Runner, handle: str, role: str, k: int, stream: str, keep_lines: int,
                 max_line_chars: int) -> None:  # fmt: skip
        self.key = (handle, role, k, stream)
        self.term = TerminalBuffer(keep_lines, max_line_chars)
        self.lock = threading.Lock()
        self.viewers = 0
        self.last_viewed = time.monotonic()
        self.ended = False
        self.error: Optional[str] = None
        self.stopped = False
        self._runner = runner
        self._thread = threading.Thread(target=self._read, name=f"jsched-server-log-{role}-{k}", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        handle, role, k, stream = self.key
        try:
            items = self._runner.log_lines(handle, role, k, should_tail=True, streams=Stream(stream))
            for item in items:
                with self.lock:
                    self.term.feed(item)
                if self.stopped:
                    break
        except Exception as e:  # noqa: BLE001 - shown to the viewer; the server goes on
            self.error = f"cannot read the log of {role}/{k}: {' '.join(str(e).split())[:300]}"
        finally:
            with self.lock:
                self.term.flush()
                self.term.version += 1
                self.ended = True

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
    """At most ``max_followers`` live logs; the least recently watched unwatched one makes room."""

    def __init__(self, max_followers: int = 16, keep_lines: int = 2000, max_line_chars: int = 4000) -> None:
        self.max_followers = max_followers
        self.keep_lines = keep_lines
        self.max_line_chars = max_line_chars
        self._logs: "OrderedDict[Tuple[str, str, int, str], ReplicaLog]" = OrderedDict()
        self._lock = threading.Lock()

    def attach(self, runner: Runner, handle: str, role: str, k: int, stream: str = "combined") -> ReplicaLog:
        key = (handle, role, k, stream)
        with self._lock:
            log = self._logs.get(key)
            if log is None or (log.stopped and not log.ended):
                if len(self._logs) >= self.max_followers:
                    self._evict()
                log = self._logs[key] = ReplicaLog(runner, handle, role, k, stream, self.keep_lines,
                                                   self.max_line_chars)  # fmt: skip
            self._logs.move_to_end(key)
            log.viewers += 1
            log.last_viewed = time.monotonic()
            return log

    def detach(self, log: ReplicaLog) -> None:
        with self._lock:
            log.viewers = max(0, log.viewers - 1)
            log.last_viewed = time.monotonic()

    def _evict(self) -> None:
        idle = [log for log in self._logs.values() if log.viewers == 0]
        if not idle:
            raise TooManyFollowers(
                f"{len(self._logs)} logs are being followed, the most this server allows"
                " (c.JobsServer.max_log_streams); close a job view and try again"
            )
        victim = min(idle, key=lambda log: (not log.ended, log.last_viewed))
        victim.stopped = True
        del self._logs[victim.key]

    def stop_all(self) -> None:
        with self._lock:
            for log in self._logs.values():
                log.stopped = True
            self._logs.clear()

    def __len__(self) -> int:
        return len(self._logs)

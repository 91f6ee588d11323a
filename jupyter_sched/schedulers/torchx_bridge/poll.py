"""Following a log that its backend cannot tail: read it whole every ``interval`` seconds, yield what is new.

TorchX's Ray scheduler returns a job's whole log on each call and cannot follow it (nor can Ray's job API
without a websocket of its own). A log only grows, so after each read the lines beyond those already
yielded are the new ones; a last line still without its newline is held until it has one, or until the app
has ended. Whether the app has ended is asked *before* each read, so the read after the end holds every
line: none is lost at the end, none is yielded twice. A line shows at most ``interval`` seconds (plus one
request) after it reached the backend's log. Pure: the reads, the state and the clock are passed in.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Iterator, List

__all__ = ["poll_lines"]


def poll_lines(
    read: Callable[[], Iterable[str]],
    ended: Callable[[], bool],
    interval: float,
    follow: bool,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """The lines of the log ``read()`` returns whole (each ending in ``\\n`` but perhaps the last), each
    once. Without ``follow``, one read. With it, reads until a read made after ``ended()`` was true."""
    done = 0
    while True:
        final = not follow or ended()
        lines: List[str] = list(read())
        if not final and lines and not lines[-1].endswith("\n"):
            lines.pop()  # still being written: it comes whole with a later read
        yield from lines[done:]
        done = max(done, len(lines))
        if final:
            return
        sleep(interval)

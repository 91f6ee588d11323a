"""Reading a Slurm replica's log files: whole lines, live ``\\r`` frames, ``since``/``until``, follow.

The files are written on the node by ``slurm_replica.py`` (each chunk appended as it is read, with an index
record ``(file size after the chunk, time)`` beside it) and read here from the shared job directory. The
items are those of the local backend: lines ending in ``\\n``; a ``\\r`` progress frame as its own item as
soon as it is written; a trailing partial line once the replica has ended (or, without ``should_tail``, as
part of "what is there now").
"""

from __future__ import annotations

import os
import re
import time
from datetime import datetime
from typing import BinaryIO, Callable, Iterator, Optional, Tuple

from jupyter_sched.logs.lines import LineSplitter
from jupyter_sched.schedulers.slurm_replica import INDEX_RECORD

_CHUNK = 1 << 16
_POLL_MIN = 0.05  # seconds between looks at a followed file while it grows...
_POLL_MAX = 0.25  # ...and, after a while without output, at most this


class SlurmLogIterator:
    """Iterates one log file of one replica; see the module docstring.

    ``finished()`` says whether the replica can write nothing more (Slurm is asked, at the caller's pace).
    With ``should_tail=True`` the iterator follows the file until the replica has finished *and* every byte
    was yielded, polling every 0.05 to 0.25 s. ``close()`` (from another thread) ends a follow at the next
    poll.
    """

    def __init__(
        self,
        log_file: str,
        finished: Callable[[], bool],
        regex: Optional[str] = None,
        should_tail: bool = False,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> None:
        self._log_file = log_file
        self._finished = finished
        self._regex = re.compile(regex) if regex else None
        self._should_tail = should_tail and until is None
        self._since = since.timestamp() if since else None
        self._until = until.timestamp() if until else None
        self._closed = False
        self._idle = 0

    def close(self) -> None:
        self._closed = True

    def __iter__(self) -> Iterator[str]:
        items = self._timed_items() if (self._since or self._until) else self._items()
        if self._regex is None:
            return items
        pattern = self._regex
        return (item for item in items if pattern.search(item))

    def _wait(self) -> bool:
        """Sleeps until the next look at the file; False once closed."""
        if self._closed:
            return False
        time.sleep(min(_POLL_MIN * 1.5**self._idle, _POLL_MAX))
        self._idle += 1
        return not self._closed

    def _items(self) -> Iterator[str]:
        splitter = LineSplitter()
        held = b""  # a trailing b"\r" of a full read, kept back so "\r\n" is never cut in two
        with open(self._log_file, "rb", buffering=0) as f:
            while True:
                done = self._finished()  # before reading: what a finished replica wrote is all there
                while True:
                    chunk = f.read(_CHUNK)
                    if not chunk:
                        break
                    if held:
                        chunk, held = held + chunk, b""
                    if len(chunk) >= _CHUNK and chunk.endswith(b"\r"):
                        chunk, held = chunk[:-1], b"\r"
                    self._idle = 0
                    yield from splitter.feed(chunk)
                if held:
                    yield from splitter.feed(held)
                    held = b""
                if done or not self._should_tail:
                    yield from splitter.flush()
                    return
                if not self._wait():
                    return

    def _timed_items(self) -> Iterator[str]:
        """Walks the index: each chunk is kept or dropped by the time the wrapper read it."""
        splitter = LineSplitter()
        since, until = self._since, self._until
        index_path = self._log_file[: -len(".log")] + ".idx"
        pos = 0
        with open(self._log_file, "rb", buffering=0) as log, open(index_path, "rb", buffering=0) as index:
            while True:
                done = self._finished()
                for end, when in _records(index):
                    data = log.read(end - pos)
                    pos = end
                    if until is not None and when > until:
                        return
                    self._idle = 0
                    items = splitter.feed(data)
                    if since is None or when >= since:
                        yield from items
                if done or not self._should_tail:
                    last = splitter.flush()
                    if last and (since is None or time.time() >= since):
                        yield from last
                    return
                if not self._wait():
                    return


def _records(index: BinaryIO) -> Iterator[Tuple[int, float]]:
    """Whole index records not read yet (a record being written is left for the next pass)."""
    size = INDEX_RECORD.size
    data = index.read() or b""
    usable = len(data) - len(data) % size
    if usable < len(data):
        index.seek(usable - len(data), os.SEEK_CUR)
    yield from INDEX_RECORD.iter_unpack(data[:usable])

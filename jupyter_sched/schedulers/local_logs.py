"""Reading a local replica's log files: whole lines, live ``\\r`` frames, ``since``/``until``, follow."""

from __future__ import annotations

import os
import re
import struct
import time
from datetime import datetime
from typing import TYPE_CHECKING, Iterator, List, Optional, Tuple

from jupyter_sched.logs.lines import LineSplitter
from jupyter_sched.schedulers.local_procs import INDEX_RECORD

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.local_scheduler import LocalScheduler

_CHUNK = 1 << 16


class LogIterator:
    """Iterates the log of one replica of a local app.

    Items are whole lines ending in ``\\n``; a progress frame ending in ``\\r`` is its own item, yielded as
    soon as it is written; a trailing partial line comes out once the replica has ended (or, with
    ``should_tail=False``, as part of "what is there now"). With ``should_tail=True`` it follows until the
    replica has ended *and* every byte was yielded; new output wakes it at once (no sleep loop) when the app
    belongs to this process, and within a few milliseconds otherwise. ``since``/``until`` select lines by
    the time they were written (each read chunk is timestamped in an index file beside the log).
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
        self._app_id = app_id
        self._regex = re.compile(regex) if regex else None
        self._log_file = log_file
        self._scheduler = scheduler
        self._should_tail = should_tail and until is None
        self._role = role_name
        self._k = k
        self._since = since.timestamp() if since else None
        self._until = until.timestamp() if until else None
        self._closed = False
        self._idle = 0  # consecutive waits without new output: paces polling of other processes' apps

    def close(self) -> None:
        """Stops a follow from another thread, even while the replica is silent: the iterator ends at
        its next wake-up (at once for apps of this process, within 0.1 s otherwise)."""
        self._closed = True
        self._scheduler._wake_log_followers()

    def _wait(self, version: int) -> bool:
        """Waits for new output; False once closed."""
        if self._closed:
            return False
        self._scheduler._wait_log_change(version, self._idle, self._app_id)
        self._idle += 1
        return not self._closed

    def __iter__(self) -> Iterator[str]:
        items = self._timed_items() if (self._since or self._until) else self._items()
        if self._regex is None:
            return items
        pattern = self._regex
        return (item for item in items if pattern.search(item))

    # -- plain path: read the log straight through --------------------------------------------------------
    def _open(self, path: str):  # type: ignore[no-untyped-def]
        """Opens a log file, waiting for it if the replica was started a moment ago (its files are
        created by the scheduler's IO thread just after the process starts)."""
        while True:
            version = self._scheduler._log_version()
            try:
                return open(path, "rb", buffering=0)
            except FileNotFoundError:
                if self._finished() and not os.path.exists(path):
                    raise
                if not self._wait(version):
                    raise FileNotFoundError(path)

    def _items(self) -> Iterator[str]:
        splitter = LineSplitter()
        held = b""  # a trailing b"\r" of a full read, kept back so "\r\n" is never cut in two
        with self._open(self._log_file) as f:
            while True:
                version = self._scheduler._log_version()
                done = self._finished()
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
                if not self._wait(version):
                    return

    # -- time-filtered path: walk the chunk index -----------------------------------------------------------
    def _timed_items(self) -> Iterator[str]:
        splitter = LineSplitter()
        since, until = self._since, self._until
        index_path = self._log_file[:-4] + ".idx"
        pos = 0
        with self._open(self._log_file) as log, self._open(index_path) as index:
            while True:
                version = self._scheduler._log_version()
                done = self._finished()
                for end, when in _records(index):
                    data = log.read(end - pos)
                    pos = end
                    if until is not None and when > until:
                        return
                    items = splitter.feed(data)
                    if since is None or when >= since:
                        yield from items
                if done or not self._should_tail:
                    last = splitter.flush()
                    if last and (since is None or time.time() >= since):
                        yield from last
                    return
                if not self._wait(version):
                    return

    def _finished(self) -> bool:
        return self._scheduler._replica_finished(self._app_id, self._role, self._k)


def _records(index) -> Iterator[Tuple[int, float]]:  # type: ignore[no-untyped-def]
    """Whole index records not read yet (a record being written is left for the next pass)."""
    size = INDEX_RECORD.size
    data = index.read()
    usable = len(data) - len(data) % size
    if usable < len(data):
        index.seek(usable - len(data), os.SEEK_CUR)
    for end, when in struct.iter_unpack(INDEX_RECORD.format, data[:usable]):
        yield end, when


def read_index(path: str) -> List[Tuple[int, float]]:
    with open(path, "rb") as f:
        return list(_records(f))

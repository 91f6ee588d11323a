"""Reading a replica's log file that a writer appends chunk by chunk, with a time index beside it.

The local backend's IO loop and the Slurm backend's replica wrapper both write ``<stream>.log`` plus
``<stream>.idx``: one record ``(file size after the chunk, time the chunk was read)`` per chunk. This module
reads such a pair; subclasses say how to know the replica ended and how to wait for more output.

The log items every backend yields (``log_iter``):

* Whole lines ending in ``\\n`` (``\\r\\n`` stays inside one item), wherever the program ended them: a
  consumer that treats items as lines (TorchX-style) gets the program's lines.
* A ``\\r`` progress frame is its own item as soon as it is written.
* Live text (``should_tail=True`` only): text that no ``\\n``/``\\r`` has ended yet and that has been quiet
  for :data:`QUIET_S` (a prompt, ``printf '\\r10%'`` then a slow step) is yielded as an item of its own
  then, so a follower sees it within a fraction of a second; the rest of that line comes as a later item.
  Such an item is recognisable: it does not end in ``\\n`` or ``\\r``.
* A snapshot (``should_tail=False``) never cuts a line: it is the resolved lines there now, the last one
  possibly unterminated.
* Nothing is lost or repeated: the items concatenated are exactly the bytes written, decoded as UTF-8
  (invalid bytes as U+FFFD; a multi-byte character is never split).
* ``since``/``until`` select by the time each chunk was written.

:meth:`IndexedLogIterator.timed` yields the same items with that time, ``(time, item)``: what a front
end needs to merge stdout and stderr in the order they were written (``Scheduler`` timed items).
"""

from __future__ import annotations

import itertools
import os
import re
import struct
import time
from datetime import datetime
from typing import BinaryIO, Generator, Hashable, Iterator, List, Optional, Tuple

from jupyter_sched.logs.lines import LineSplitter
from jupyter_sched.specs import NONE

INDEX_RECORD = struct.Struct("<Qd")
"""One record per chunk appended to a log: the file size after the chunk, and when it was read."""

_CHUNK = 1 << 16
QUIET_S = 0.03
"""How long unterminated text must stay quiet before a follower yields it as an item of its own."""


class IndexedLogIterator:
    """Iterates one log file; see the module docstring. ``close()`` ends a follow from another thread.

    A follow that waits for output polls every :attr:`first_poll_s`, backing off to :attr:`max_poll_s`
    while the file stays quiet (a backend that can be woken by its writer waits up to that long instead).
    """

    first_poll_s = 0.05
    max_poll_s = 0.25

    def __init__(
        self,
        log_file: str,
        regex: Optional[str] = None,
        should_tail: bool = False,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> None:
        self._log_file = log_file
        self._regex = re.compile(regex) if regex else None
        self._should_tail = should_tail and until is None
        self._since = since.timestamp() if since else None
        self._until = until.timestamp() if until else None
        self._closed = False
        self._idle = 0  # consecutive waits without new output: paces polling

    # -- what a backend provides ----------------------------------------------------------------------------
    def _finished(self) -> bool:
        """True once the replica can write nothing more (everything it wrote is in the file)."""
        raise NotImplementedError

    def _change_token(self) -> Hashable:
        """Taken before each pass over the file; :meth:`_wait_for_change` returns early once it is stale."""
        return None

    def _wait_for_change(self, token: Hashable, timeout: float) -> None:
        """Blocks until there may be new output (``token`` is stale), for at most ``timeout`` seconds."""
        time.sleep(timeout)

    def _wake(self) -> None:
        """Wakes a blocked :meth:`_wait_for_change` (after ``close``), where the backend can."""

    # -- iteration ---------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Stops a follow, even while the replica is silent: the iterator ends at its next wake-up."""
        self._closed = True
        self._wake()

    def __iter__(self) -> Iterator[str]:
        # The generators below yield one list of items per chunk read; chain() hands the items out at C
        # speed, so the Python generator resumes once per 64 KiB instead of once per line.
        if self._since or self._until:
            batches: Iterator[List[str]] = (items for _, items in self._timed_batches())
        else:
            batches = self._batches()
        items = itertools.chain.from_iterable(batches)
        if self._regex is None:
            return items
        return filter(self._regex.search, items)

    def timed(self) -> "TimedItems":
        """The same items as iterating, each as ``(time, item)``: the time (``time.time()`` seconds) at
        which the writer read the chunk that completed the item (for live text: its last chunk). Reads
        the time index, so it needs one (a log without an index raises FileNotFoundError). Its ``close``
        ends a follow from another thread, as :meth:`close` does."""
        return TimedItems(self, self._timed())

    def _timed(self) -> Generator[Tuple[float, str], None, None]:
        search = self._regex.search if self._regex is not None else None
        for when, items in self._timed_batches():
            for item in items:
                if search is None or search(item):
                    yield when, item

    def _wait(self, token: Hashable, at_most: Optional[float] = None) -> bool:
        """Waits for new output (or ``at_most`` seconds); False once closed."""
        if self._closed:
            return False
        timeout = min(self.first_poll_s * 1.5 ** min(self._idle, 64), self.max_poll_s)  # 1.5**n overflows
        if at_most is not None:
            timeout = max(0.0, min(timeout, at_most))
        self._wait_for_change(token, timeout)
        self._idle += 1
        return not self._closed

    def _live_text(self, splitter: LineSplitter, last_data: float) -> Tuple[List[str], Optional[float]]:
        """While following: the unterminated text, as an item, once it has been quiet for ``QUIET_S``; else
        how long to wait at most before it will be (None: nothing is pending)."""
        if not splitter.pending:
            return [], None
        quiet = time.monotonic() - last_data
        if quiet >= QUIET_S:
            return splitter.take_pending(), None
        return [], QUIET_S - quiet

    def _open(self, path: str) -> BinaryIO:
        """Opens a log file, waiting for it while the replica has not finished (a writer may create its
        files a moment after the replica starts)."""
        while True:
            token = self._change_token()
            try:
                return open(path, "rb", buffering=0)
            except FileNotFoundError:
                if self._finished() and not os.path.exists(path):
                    raise
                if not self._wait(token):
                    raise

    def _batches(self) -> Iterator[List[str]]:
        splitter = LineSplitter()
        held = b""  # a trailing b"\r" of a full read, kept back so "\r\n" is never cut in two
        last_data = time.monotonic()
        with self._open(self._log_file) as f:
            while True:
                token = self._change_token()
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
                    last_data = time.monotonic()
                    yield splitter.feed(chunk)
                if held:
                    yield splitter.feed(held)
                    held = b""
                if done or not self._should_tail:
                    yield splitter.flush()
                    return
                live, at_most = self._live_text(splitter, last_data)
                if live:
                    yield live
                if not self._wait(token, at_most):
                    return

    def _timed_batches(self) -> Iterator[Tuple[float, List[str]]]:
        """Walks the index: each chunk's items with the time it was written, kept or dropped by that time."""
        splitter = LineSplitter()
        since, until = self._since, self._until
        pos = 0
        when = 0.0
        last_data = time.monotonic()
        with self._open(self._log_file) as log, self._open(index_path(self._log_file)) as index:
            while True:
                token = self._change_token()
                done = self._finished()
                for end, when in _records(index):
                    data = log.read(end - pos)
                    pos = end
                    if until is not None and when > until:
                        return
                    self._idle = 0
                    last_data = time.monotonic()
                    items = splitter.feed(data)
                    if items and (since is None or when >= since):
                        yield when, items
                if done or not self._should_tail:
                    last = splitter.flush()
                    if last and (since is None or time.time() >= since):
                        yield when, last
                    return
                live, at_most = self._live_text(splitter, last_data)
                if live and (since is None or time.time() >= since):
                    yield when, live
                if not self._wait(token, at_most):
                    return


class TimedItems:
    """What :meth:`IndexedLogIterator.timed` returns: an iterator of ``(time, item)`` that, unlike a
    generator (which cannot be closed while its thread runs it), can be closed from another thread: a
    follower's stop then wakes a follow that waits for output, and the log file is closed at once."""

    def __init__(self, reader: IndexedLogIterator, items: Generator[Tuple[float, str], None, None]) -> None:
        self._reader = reader
        self._items = items

    def __iter__(self) -> "TimedItems":
        return self

    def __next__(self) -> Tuple[float, str]:
        return next(self._items)

    def close(self) -> None:
        self._reader.close()
        try:  # not running (closed by its own thread, or between items): its file is closed now
            self._items.close()
        except ValueError:  # running on another thread: it ends at its next wake-up, and closes it then
            pass


def read_error_file(path: str) -> str:
    """A replica's structured error file (``TORCHELASTIC_ERROR_FILE``), or ``NONE`` when it is absent."""
    if not path:
        return NONE
    try:
        with open(path, errors="replace") as f:
            return f.read() or NONE
    except OSError:
        return NONE


def index_path(log_file: str) -> str:
    """``stdout.log`` -> ``stdout.idx``."""
    return log_file[: -len(".log")] + ".idx"


def _records(index: BinaryIO) -> Iterator[Tuple[int, float]]:
    """Whole index records not read yet (a record being written is left for the next pass)."""
    data = index.read() or b""
    usable = len(data) - len(data) % INDEX_RECORD.size
    if usable < len(data):
        index.seek(usable - len(data), os.SEEK_CUR)
    yield from INDEX_RECORD.iter_unpack(data[:usable])

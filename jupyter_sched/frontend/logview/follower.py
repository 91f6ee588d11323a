"""One replica's log followed on one thread: the reader the notebook's log pane, ``jupyter-sched log -f`` and
the Jupyter server share.

A :class:`LogFollower` iterates what ``open_items`` returns (a replica's ``log_iter(should_tail=True)``, or
its timed items) on a daemon thread of its own, into a bounded buffer that one consumer takes from with
:meth:`LogFollower.read`: the items in order, and once they are all taken, the end (and why, if reading
failed). What is done with the items is each front end's own: the pane merges its sources by time into a
bounded view, the CLI prints every item, the server renders them into one terminal buffer that any number of
browser viewers read with their own cursors (``server.logs``).

The buffer loses nothing: when ``max_items`` items (or ``max_chars`` characters) are untaken, the reader
waits until the consumer takes them, so a slow consumer slows the reading, not memory. None of the three may
drop items here: the CLI prints every line, the pane counts every line it does not show, and the server's
terminal counts every line for its viewers (a viewer that falls behind the lines it keeps gets a reset
there, in lines).

A consumer that keeps its own bounded model and feeds it as items come (the server's terminal buffer) passes
``sink``: each item goes to it on the reader thread, and the buffer stays empty (only the end is read).

The consumer learns of new items without polling: :meth:`LogFollower.wait` blocks until there is an item or
the end, and ``on_change`` is called on the reader thread when the buffer stops being empty, when it is full
(before the reader waits for room) and at the end: a consumer that watches several followers at once sets
one event for all of them there, and one that takes on the reader thread (the server's, a pane's flood) takes
there. The reader thread appends without a lock (one producer; ``deque.append`` is atomic) and takes the lock
only to wake a waiting consumer or to wait for room, so following costs little more than iterating.

:meth:`LogFollower.stop` ends the follow now. It closes the iterator when the iterator can be closed from
another thread (a backend's ``IndexedLogIterator``, what the local and Slurm backends' ``log_iter`` return,
and its ``timed()`` items: their ``close`` wakes a follow that waits for output), so the thread ends and the
log file is closed then, however long the replica stays silent; any other iterable (a generator) ends at its
next item. What was read stays readable.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Deque, Generic, Iterable, List, Optional, TypeVar

__all__ = ["Batch", "LogFollower"]

T = TypeVar("T")


@dataclass
class Batch(Generic[T]):
    """What :meth:`LogFollower.read` hands over."""

    items: List[T] = field(default_factory=list)
    ended: bool = False
    """The log has ended and every item has been taken: nothing more will come."""
    error: Optional[BaseException] = None
    """Why the log ended early (it could not be read); only with ``ended``."""


def _len(item: object) -> int:
    return len(item)  # type: ignore[arg-type]


class LogFollower(Generic[T]):
    """Follows one log on a daemon thread into a bounded buffer (see the module docstring)."""

    def __init__(
        self,
        open_items: Callable[[], Iterable[T]],
        name: str,
        max_items: int = 4096,
        max_chars: Optional[int] = None,
        on_change: Optional[Callable[[], None]] = None,
        size: Callable[[T], int] = _len,
        sink: Optional[Callable[[T], None]] = None,
    ) -> None:
        """``open_items`` is called on the reader thread (opening a log may wait for its file). ``size``
        measures an item for ``max_chars`` (timed items: the length of their text). ``sink``: see the
        module docstring. Call :meth:`start`."""
        if max_items < 1:
            raise ValueError(f"max_items must be 1 or more, not {max_items}")
        self.name = name
        self.max_items = max_items
        self.max_chars = max_chars
        self._open_items = open_items
        self._on_change = on_change
        self._size = size
        self._sink = sink
        self._items: Deque[T] = deque()
        # counters each written by one side only, so neither needs the lock to update them
        self._appended = 0  # by the reader
        self._chars_in = 0  # by the reader (only with max_chars)
        self._taken = 0  # by the consumer
        self._chars_out = 0  # by the consumer
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiters = 0  # threads in wait() or waiting for room: whoever changes the buffer wakes them
        self._iterable: Optional[Iterable[T]] = None
        self._stopping = False
        self._ended = False
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "LogFollower[T]":
        self._thread.start()
        return self

    # -- the reader thread ----------------------------------------------------------------------------------
    def _run(self) -> None:
        error: Optional[BaseException] = None
        on_change = self._on_change
        try:
            iterable = self._open_items()
            with self._lock:
                self._iterable = iterable
                if self._stopping:  # stopped while the log was being opened: stop() could not close it
                    return
            if self._sink is not None:
                self._drain_into(iterable, self._sink)
                return
            append = self._items.append
            size = self._size if self.max_chars is not None else None
            max_items, max_chars = self.max_items, self.max_chars
            for item in iterable:
                if self._stopping:
                    break
                if self._appended - self._taken >= max_items or (
                    max_chars is not None and self._chars_in - self._chars_out >= max_chars
                ):
                    if on_change is not None:
                        on_change()  # the consumer may take them here and now
                    if self._full() and not self._wait_for_room():
                        break
                append(item)
                self._appended += 1
                if size is not None:
                    self._chars_in += size(item)
                if self._waiters:
                    with self._lock:
                        self._changed.notify_all()
                if on_change is not None and self._appended - self._taken == 1:
                    on_change()  # no longer empty
        except Exception as e:  # noqa: BLE001 - the consumer reads it with the end
            if not self._stopping:  # a log closed under its reader may fail in its own way: that is the stop
                error = e
        finally:
            _close(self._iterable)
            with self._lock:
                self._iterable = None  # what it holds (a file) goes now, not with the follower
                self._ended = True
                self._error = error
                self._changed.notify_all()
            if on_change is not None:
                on_change()

    def _drain_into(self, iterable: Iterable[T], sink: Callable[[T], None]) -> None:
        for item in iterable:
            if self._stopping:
                break
            sink(item)

    def _full(self) -> bool:
        if self._appended - self._taken >= self.max_items:
            return True
        return self.max_chars is not None and self._chars_in - self._chars_out >= self.max_chars

    def _wait_for_room(self) -> bool:
        """Waits while the buffer is full; False once stopped."""
        with self._lock:
            self._waiters += 1
            try:
                while not self._stopping and self._full():
                    self._changed.wait()
            finally:
                self._waiters -= 1
            return not self._stopping

    # -- the consumer ----------------------------------------------------------------------------------------
    def read(self, max_items: Optional[int] = None) -> Batch[T]:
        """The untaken items (at most ``max_items``), taken; see :class:`Batch`."""
        with self._lock:
            ended = self._ended  # before counting: every item of an ended log is in the buffer by then
            count = self._appended - self._taken
            if max_items is not None and max_items < count:
                count, ended = max_items, False
            popleft = self._items.popleft
            items = [popleft() for _ in range(count)]
            self._taken += count
            if self.max_chars is not None:
                self._chars_out += sum(map(self._size, items))
            if self._waiters and count:
                self._changed.notify_all()  # a reader waiting for room
            return Batch(items, ended, self._error if ended else None)

    @property
    def unread(self) -> int:
        """Items read from the log and not yet taken."""
        return self._appended - self._taken

    @property
    def held_chars(self) -> int:
        """Characters of the untaken items (counted only with ``max_chars``)."""
        return self._chars_in - self._chars_out

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until there is an untaken item or the log has ended (True), or ``timeout`` passed."""
        with self._lock:
            self._waiters += 1
            try:
                return self._changed.wait_for(lambda: self._ended or self._appended > self._taken, timeout)
            finally:
                self._waiters -= 1

    def stop(self) -> None:
        """Ends the follow now (see the module docstring); returns at once."""
        with self._lock:
            self._stopping = True
            iterable = self._iterable
            self._changed.notify_all()  # a reader waiting for room
        _close(iterable)

    def join(self, timeout: Optional[float] = None) -> None:
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """True while the reader thread runs."""
        return self._thread.is_alive()

    @property
    def stopped(self) -> bool:
        """:meth:`stop` was called."""
        return self._stopping

    @property
    def ended(self) -> bool:
        """The reader is done with the log (it ended, failed or was stopped); items may still be untaken."""
        return self._ended

    @property
    def error(self) -> Optional[BaseException]:
        return self._error


def _close(items: Optional[Iterable[object]]) -> None:
    """Closes a log iterator from any thread, if it can be closed: a backend's ``IndexedLogIterator`` (its
    ``close`` is thread-safe and wakes a waiting follow). A generator that is running on the reader thread
    cannot be closed from another (``ValueError``); it ends at its next item, when the stop is seen."""
    close = getattr(items, "close", None)
    if close is None:
        return
    try:
        close()
    except ValueError:
        pass

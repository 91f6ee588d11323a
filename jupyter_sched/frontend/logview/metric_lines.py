"""Marked metric lines taken out of a replica's log on their way to the reader, and their records stored.

A program with no metrics directory (a ``torchx:*`` backend) or one that does not write the files (a shell,
a C++ program) prints each record as one line on stderr: ``@@jupyter_sched:metrics {...}``
(``logs.metric_lines``, which parses them, pure). Those lines are data, not output: every follower of a log
(the notebook's log pane, ``jupyter-sched log``, the Jupyter server's live and snapshot logs) reads the
replica's items through :class:`MetricLineFilter`, which yields every other item and hands each marked line's
record to a :class:`RecordStore`. ``jupyter-sched log --raw`` shows them as printed.

The store appends the records to the replica's records file in the app's metrics directory
(``Runner.metrics_dir``), when the app has one this process can write: there ``job.metrics()``, ``jupyter-sched
metrics`` and the server read them as if the replica had written them. A record counts once: each writer's
``seq`` increases strictly, so a record whose ``seq`` is not above the last one of its writer in the file is
one already there (written by the replica itself, or stored by another follower: the pane and the server
follow the same log). The check and the append hold an exclusive ``flock`` on the file, so followers in
several processes of this machine store each record once. A line that is marked but not a valid record is
hidden too (the mark says it is not for people), and counted.

TorchX tracker entries printed the same way (``@@jupyter_sched:tracker {...}``, by
``track.torchx_tracker`` without a metrics directory) are hidden too and go to the replica's
``<role>.<k>.tracker.jsonl`` (:class:`TrackerStore`), so ``jupyter-sched describe`` shows them.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Dict, Generic, Iterable, Iterator, List, Optional, Protocol, Tuple, TypeVar

from jupyter_sched.logs.metric_lines import (
    MetricRecord,
    format_record,
    marked_payload,
    parse_record,
    tracker_entry,
    tracker_payload,
)
from jupyter_sched.track.layout import RECORDS_SUFFIX, TRACKER_SUFFIX, replica_stem

__all__ = ["MetricLineFilter", "RecordStore", "TrackerStore", "timed_text", "without_metric_lines"]

T = TypeVar("T")


def _write_all(fd: int, data: bytes) -> None:
    """Appends all of ``data`` (``os.write`` may write less than asked)."""
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])


def replica_file(
    directory: Callable[[], Optional[str]], role: str, replica: int, suffix: str
) -> Tuple[Optional[str], Optional[str]]:
    """The replica's file ending in ``suffix`` in the app's metrics ``directory`` (asked now), and why there
    is none (None when there is one)."""
    try:
        found = directory()
    except Exception as e:  # noqa: BLE001 - a scheduler that cannot say: the lines are hidden, not stored
        return None, f"no metrics directory ({e})"
    if not found:
        return None, "the app has no metrics directory"
    return os.path.join(found, replica_stem(role, replica) + suffix), None


class RecordStore:
    """Appends records of one replica to its records file in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Callable[[], Optional[str]], role: str, replica: int) -> None:
        """``directory`` is asked once, at the first record (asking a scheduler may cost a request)."""
        self._directory = directory
        self._path: Optional[str] = None
        self._resolved = False
        self.role, self.replica = role, replica
        self.stored = 0
        """Records appended by this store."""
        self.failed: Optional[str] = None
        """Why records are not stored (no metrics directory, not writable), once known."""
        self._last: Dict[str, int] = {}  # writer -> the highest seq in the file, as of ``_cursor``
        self._cursor = 0
        self._fd: Optional[int] = None
        self._lock = threading.Lock()

    def path(self) -> Optional[str]:
        if not self._resolved:
            self._resolved = True
            self._path, self.failed = replica_file(self._directory, self.role, self.replica, RECORDS_SUFFIX)
        return self._path

    def add(self, records: List[Tuple[MetricRecord, Optional[str]]]) -> int:
        """Appends those of ``records`` not in the file yet; returns how many. Each comes with its text as
        printed (valid strict JSON, stored as it is), or None to have it formatted. Never raises."""
        path = self.path()
        if path is None or not records or self.failed is not None:
            return 0
        with self._lock:
            try:
                return self._append(path, records)
            except OSError as e:
                self.failed = f"cannot store metric records in {path}: {e}"
                self.close()
                return 0

    def _append(self, path: str, records: List[Tuple[MetricRecord, Optional[str]]]) -> int:
        import fcntl

        fd = self._fd
        if fd is None:
            # a TorchX backend's app has no directory here until its first record is stored
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            fd = self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            self._catch_up(fd)
            lines = []
            for r, text in records:
                if r.seq > self._last.get(r.writer, -1):
                    self._last[r.writer] = r.seq
                    lines.append((text if text is not None else format_record(r)) + "\n")
            if lines:
                data = "".join(lines).encode("utf-8")
                _write_all(fd, data)
                self._cursor += len(data)
                self.stored += len(lines)
            return len(lines)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Closes the file (kept open between records: a record costs a lock and a write)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def _catch_up(self, fd: int) -> None:
        """Reads what others appended since the last look: each writer's highest ``seq``."""
        size = os.fstat(fd).st_size
        if size < self._cursor:  # the file was replaced: read it all again
            self._cursor, self._last = 0, {}
        while self._cursor < size:
            data = os.pread(fd, min(size - self._cursor, 1 << 20), self._cursor)
            end = data.rfind(b"\n") + 1
            if end == 0:
                break  # a line being written: it is read whole next time
            for raw in data[:end].split(b"\n"):
                try:
                    record = parse_record(raw.decode("utf-8")) if raw.strip() else None
                except UnicodeDecodeError:
                    record = None
                if record is not None and record.seq > self._last.get(record.writer, -1):
                    self._last[record.writer] = record.seq
            self._cursor += end


class TrackerStore:
    """Appends TorchX tracker entries of one replica, printed as ``@@jupyter_sched:tracker {...}`` lines, to its
    ``<role>.<k>.tracker.jsonl`` in the app's metrics directory, where ``describe`` reads them. An entry
    carries no sequence number, so one counts once by its text (it holds the time it was made, to the
    microsecond): a line already in the file is not appended again (the pane and the server follow the same
    log). The check and the append hold an exclusive ``flock``, as :class:`RecordStore`'s."""

    def __init__(self, directory: Callable[[], Optional[str]], role: str, replica: int) -> None:
        self._directory = directory
        self.role, self.replica = role, replica
        self._path: Optional[str] = None
        self._resolved = False
        self.stored = 0
        self.failed: Optional[str] = None
        self._seen: set = set()
        self._cursor = 0
        self._lock = threading.Lock()

    def path(self) -> Optional[str]:
        if not self._resolved:
            self._resolved = True
            self._path, self.failed = replica_file(self._directory, self.role, self.replica, TRACKER_SUFFIX)
        return self._path

    def add(self, payload: str) -> bool:
        """Appends the entry ``payload`` (its JSON text) unless the file has it; never raises."""
        path = self.path()
        if path is None or self.failed is not None:
            return False
        import fcntl

        with self._lock:
            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    self._catch_up(fd)
                    if payload in self._seen:
                        return False
                    data = (payload + "\n").encode("utf-8")
                    _write_all(fd, data)
                    self._seen.add(payload)
                    self._cursor += len(data)
                    self.stored += 1
                    return True
                finally:
                    os.close(fd)  # (the lock goes with it)
            except OSError as e:
                self.failed = f"cannot store tracker entries in {path}: {e}"
                return False

    def _catch_up(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size < self._cursor:
            self._cursor, self._seen = 0, set()
        while self._cursor < size:
            data = os.pread(fd, min(size - self._cursor, 1 << 20), self._cursor)
            end = data.rfind(b"\n") + 1
            if end == 0:
                break
            self._seen.update(raw.decode("utf-8", "replace").strip() for raw in data[:end].split(b"\n"))
            self._cursor += end


class MetricLineFilter(Generic[T]):
    """The items of a log without its marked metric lines, whose records go to ``store`` (None: hidden only).

    An iterable that closes as the one it wraps (a follower stops a silent log by closing its iterator from
    another thread). ``text`` gives an item's text (``(time, text)`` items: its second part).
    """

    def __init__(self, items: Iterable[T], store: Optional[RecordStore], text: Callable[[T], str] = str,
                 tracker: Optional[TrackerStore] = None) -> None:  # fmt: skip
        self._items = items
        self._store = store
        self._tracker = tracker
        self._text = text
        self.hidden = 0
        """Marked lines taken out."""
        self.invalid = 0
        """Of those, lines that were not valid records (not stored)."""

    def __iter__(self) -> Iterator[T]:
        text, store, tracker = self._text, self._store, self._tracker
        try:
            for item in self._items:
                line = text(item)
                payload = marked_payload(line)
                if payload is None:
                    entry = tracker_payload(line)
                    if entry is None:
                        yield item
                        continue
                    self.hidden += 1
                    if tracker_entry(entry) is None:
                        self.invalid += 1
                    elif tracker is not None:
                        tracker.add(entry.strip())
                    continue
                self.hidden += 1
                record = parse_record(payload)
                if record is None:
                    self.invalid += 1
                elif store is not None:
                    store.add([(record, payload.strip())])
        finally:
            if store is not None:
                store.close()

    def close(self) -> None:
        close = getattr(self._items, "close", None)
        if close is not None:
            close()


class _Runner(Protocol):
    def metrics_dir(self, app_handle: str) -> Optional[str]: ...


def without_metric_lines(
    runner: _Runner, handle: str, role: str, k: int, items: Iterable[T], text: Callable[[T], str] = str
) -> MetricLineFilter[T]:
    """``items`` of replica ``k`` of ``role`` without its marked lines, their records stored in the app's
    metrics directory (``runner.metrics_dir(handle)``, asked at the first marked line)."""
    directory = lambda: runner.metrics_dir(handle)  # noqa: E731 - asked by each store at its first line
    return MetricLineFilter(items, RecordStore(directory, role, k), text, TrackerStore(directory, role, k))


def timed_text(item: Tuple[float, str]) -> str:
    """The text of a ``(time, text)`` item (``Runner.log_items(timed=True)``)."""
    return item[1]

"""The event loop that owns the local backend's replica processes.

One thread per scheduler waits (epoll) on every replica's stdout and stderr pipes and on a pidfd per
process. It copies each chunk, the moment it arrives, to ``stdout.log``/``stderr.log`` and to
``combined.log`` (so the combined log is in the order the chunks were written), appends an index record
``(end offset, time)`` used for ``since``/``until``, and wakes log followers. A replica counts as finished
only after its process has exited *and* its pipes are drained, so the last bytes it printed are in the
files before anyone is told it finished. Nothing here sleeps in a polling loop.

epoll reports descriptors in the order they became readable, but only for descriptors it watched when
that happened: pipes registered after a quick replica had written to both would come out in registration
order, and ``echo out; echo err >&2`` would often land in ``combined.log`` swapped. So :func:`spawn`
watches each replica's pipes with a small epoll of its own from before the process starts (no thread
reads them), and :meth:`ProcessLoop._register` registers them with the loop in the order that epoll saw
them become readable.
"""

from __future__ import annotations

import heapq
import os
import select
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from jupyter_sched.schedulers.log_files import INDEX_RECORD

_READ_SIZE = 1 << 16
_LEFTOVER_GRACE_S = 5.0
"""How long processes left behind in a replica's group may hold its pipes open after it exited."""


@dataclass(eq=False)
class _Sink:
    """A log file and its index, appended to with raw ``os.write``."""

    path: str
    fd: int = -1
    index_fd: int = -1
    size: int = 0

    def open(self) -> None:
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.index_fd = os.open(self.path[:-4] + ".idx", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, chunk: bytes, now: float) -> None:
        view = memoryview(chunk)
        while view:
            view = view[os.write(self.fd, view) :]
        self.size += len(chunk)
        os.write(self.index_fd, INDEX_RECORD.pack(self.size, now))

    def close(self) -> None:
        for fd in (self.fd, self.index_fd):
            if fd >= 0:
                os.close(fd)
        self.fd = self.index_fd = -1


@dataclass(eq=False)
class Replica:
    """A running replica as the loop sees it. ``on_done`` is called (on the loop thread) once the process
    has exited and its output is fully written."""

    proc: subprocess.Popen
    out_fd: int
    err_fd: int
    stdout: _Sink
    stderr: _Sink
    combined: _Sink
    on_done: Callable[["Replica"], None]
    exit_code: Optional[int] = None
    exited_at: Optional[float] = None
    open_fds: set = field(default_factory=set)
    pidfd: int = -1
    finished: bool = False
    extra: Dict[str, object] = field(default_factory=dict)
    first_ready: Optional["select.epoll"] = None
    """An epoll watching the pipes since before the process started: says which became readable first."""

    @property
    def pid(self) -> int:
        return self.proc.pid


class ProcessLoop:
    """Watches replicas; started lazily, stopped by :meth:`stop`."""

    def __init__(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._pending: List[Tuple[List[Replica], Optional[Callable[[], None]]]] = []
        self._timers: List[Tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = 0
        self._lock = threading.Lock()
        self.changed = threading.Condition()
        """Notified after every chunk written and every replica finished: log followers wait on it."""
        self.version = 0
        """Bumped (under ``changed``) on every change, so a follower can tell whether it missed one."""
        self._thread: Optional[threading.Thread] = None
        self._stopping = False

    # -- called from any thread -------------------------------------------------------------------------
    def add(self, replicas: List[Replica], then: Optional[Callable[[], None]] = None) -> None:
        """Starts watching ``replicas`` (already spawned). Their log files are opened here, on the loop
        thread, to keep that work off the caller's submit path; ``then`` runs once they are set up."""
        with self._lock:
            self._pending.append((replicas, then))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="jupyter_sched-local-io", daemon=True)
                self._thread.start()
        self._wake()

    def call_later(self, delay: float, fn: Callable[[], None]) -> None:
        with self._lock:
            self._timer_seq += 1
            heapq.heappush(self._timers, (time.monotonic() + delay, self._timer_seq, fn))
        self._wake()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._wake()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass

    # -- loop thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._lock:
                pending, self._pending = self._pending, []
                timeout = max(0.0, self._timers[0][0] - time.monotonic()) if self._timers else None
            for replicas, then in pending:
                for rep in replicas:
                    self._register(rep)
                if then is not None:
                    try:
                        then()
                    except Exception:  # noqa: BLE001 - bookkeeping must never kill the loop
                        pass
            if self._stopping and len(self._sel.get_map()) <= 1:  # only the wake pipe is left
                break
            for key, _ in self._sel.select(timeout):
                kind, rep = key.data
                if kind == "wake":
                    try:
                        while os.read(self._wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                elif kind == "pid":
                    self._on_exit(rep, key.fd)
                else:
                    self._on_output(rep, key.fd, kind)
            self._run_timers()
        self._sel.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _run_timers(self) -> None:
        now = time.monotonic()
        due = []
        with self._lock:
            while self._timers and self._timers[0][0] <= now:
                due.append(heapq.heappop(self._timers)[2])
        for fn in due:
            try:
                fn()
            except Exception:  # noqa: BLE001 - a timer must never kill the loop
                pass

    def _register(self, rep: Replica) -> None:
        for sink in (rep.stdout, rep.stderr, rep.combined) if rep.out_fd >= 0 else ():
            if sink.fd < 0:
                sink.open()
        fds = [fd for fd in (rep.out_fd, rep.err_fd) if fd >= 0]
        if rep.first_ready is not None:  # already-readable fds join the ready list in registration order
            ready = [fd for fd, _ in rep.first_ready.poll(0)]  # in the order they became readable
            fds = ready + [fd for fd in fds if fd not in ready]
            rep.first_ready.close()
            rep.first_ready = None
        rep.open_fds = set(fds)
        for fd in fds:
            self._sel.register(fd, selectors.EVENT_READ, ("out" if fd == rep.out_fd else "err", rep))
        try:
            rep.pidfd = os.pidfd_open(rep.pid)
            self._sel.register(rep.pidfd, selectors.EVENT_READ, ("pid", rep))
        except (AttributeError, OSError):  # no pidfd (old kernel): a waiter thread stands in
            threading.Thread(target=self._wait_thread, args=(rep,), daemon=True).start()

    def _wait_thread(self, rep: Replica) -> None:
        rep.proc.wait()
        self.call_later(0, lambda: self._on_exit(rep, -1))

    def _on_output(self, rep: Replica, fd: int, kind: str) -> None:
        try:
            chunk = os.read(fd, _READ_SIZE)
        except OSError:
            chunk = b""
        if chunk:
            now = time.time()
            (rep.stdout if kind == "out" else rep.stderr).write(chunk, now)
            rep.combined.write(chunk, now)
        else:
            self._sel.unregister(fd)
            os.close(fd)
            rep.open_fds.discard(fd)
            self._maybe_done(rep)
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    def _on_exit(self, rep: Replica, pidfd: int) -> None:
        if pidfd >= 0:
            self._sel.unregister(pidfd)
            os.close(pidfd)
        if rep.exited_at is not None:
            return
        # The leader is a zombie until reaped, so its pid (= the group id) cannot have been reused yet:
        # it is safe to signal processes it left behind in its group, which may hold its pipes open.
        if rep.open_fds:
            _signal_group(rep.pid, signal.SIGTERM)
            self.call_later(_LEFTOVER_GRACE_S, lambda: self._force_close(rep))
        rep.exit_code = rep.proc.wait()
        rep.exited_at = time.time()
        self._maybe_done(rep)

    def _force_close(self, rep: Replica) -> None:
        """Leftover processes ignored SIGTERM and still hold the pipes: kill them and stop reading."""
        if rep.finished:
            return
        _signal_group(rep.pid, signal.SIGKILL)
        for fd in rep.open_fds:
            self._sel.unregister(fd)
            os.close(fd)
        rep.open_fds.clear()
        self._maybe_done(rep)

    def _maybe_done(self, rep: Replica) -> None:
        if rep.finished or rep.exited_at is None or rep.open_fds:
            return
        rep.finished = True
        for sink in (rep.stdout, rep.stderr, rep.combined):
            sink.close()
        try:
            rep.on_done(rep)
        finally:
            with self.changed:
                self.version += 1
                self.changed.notify_all()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass

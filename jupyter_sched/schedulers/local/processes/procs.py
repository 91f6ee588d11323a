"""The event loop that owns the local backend's replica processes.

One thread per scheduler waits (a ``selectors`` selector: epoll on Linux, kqueue on macOS) on every
replica's stdout and stderr pipes and, on Linux, on a pidfd per process (elsewhere a waiter thread per
replica reports its exit; see ``posix``). It copies each chunk, the moment it arrives, to
``stdout.log``/``stderr.log`` and to ``combined.log`` (so the combined log is in the order the chunks were
read), appends an index record ``(end offset, time)`` used for ``since``/``until``, and wakes log
followers. A replica counts as finished only after its process has exited *and* its pipes are drained, so
the last bytes it printed are in the files before anyone is told it finished. Nothing here sleeps in a
polling loop.

epoll reports descriptors in the order they became readable, but only for descriptors it watched when
that happened: pipes registered after a quick replica had written to both would come out in registration
order. So on Linux :func:`spawn` watches each replica's pipes from before the process starts
(``posix.FirstWrites``), and until each pipe has been read once, :meth:`ProcessLoop._on_output` reads
the one that became readable first, whichever the loop's selector names (it is level-triggered: the other
is named again on the next turn). Ordering the registration alone is not enough: both pipes can become
readable between asking the watcher and registering them.

A log write that fails (a full disk) is contained in its sink (``sinks``); any other error while
handling a replica is logged and the loop carries on (see :class:`ProcessLoop`).

The loop thread never waits for another thread or process: every app of the process would stall with it.
It joins no thread, starts none (starting one waits for it to run: waiter threads are started by
:meth:`ProcessLoop.add`, on the caller's thread), spawns no process and sleeps nowhere; the only locks it
takes are held by their other users just to update a list or a dict. What it calls back into (a replica's
end in ``local_owned``, usage totals in ``local_usage``, the reaper's bookkeeping in ``local_reaper``)
keeps to the same rule; ``tests/schedulers/loop_guard.py`` watches every call the thread makes for one
that blocks.
"""

from __future__ import annotations

import heapq
import logging
import os
import selectors
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Protocol, Set, Tuple

from jupyter_sched.schedulers.local.logs.sinks import LogSink
from jupyter_sched.schedulers.local.processes.groups import Group
from jupyter_sched.schedulers.local.processes.posix import FirstWrites, leave_signals_to_the_main_thread, pidfd_open

logger = logging.getLogger(__name__)

_READ_SIZE = 1 << 16
_LEFTOVER_GRACE_S = 5.0
"""How long processes left behind in a replica's group may hold its pipes open after it exited."""
_MAX_FAULTS = 100
"""Unexpected errors handling one replica before the loop stops reading its pipes (a hot loop otherwise)."""


_io_thread = threading.local()


def in_io_thread() -> bool:
    """True on the thread of any :class:`ProcessLoop`: code that may run there (a callback, a finaliser
    run by a garbage collection) must not wait for another thread, or every replica of the loop stalls."""
    return getattr(_io_thread, "active", False)


class Process(Protocol):
    """What the loop needs of a replica's process: ``subprocess.Popen``, or ``zygote.ZygoteProc`` for
    one forked by a zygote (which also has ``watch_exit``: its exit is reported, not waited for)."""

    pid: int

    def poll(self) -> Optional[int]: ...

    def wait(self, timeout: Optional[float] = None) -> int: ...


@dataclass(eq=False)
class Replica:
    """A running replica as the loop sees it. ``on_done`` is called (on the loop thread) once the process
    has exited and its output is fully written; ``on_fault`` (loop thread) with a reason when its logs
    stop being written in full (the replica keeps running and being drained)."""

    proc: Process
    out_fd: int
    err_fd: int
    stdout: LogSink
    stderr: LogSink
    combined: LogSink
    on_done: Callable[["Replica"], None]
    on_fault: Callable[["Replica", str], None] = lambda rep, reason: None
    exit_code: Optional[int] = None
    exited_at: Optional[float] = None
    open_fds: Set[int] = field(default_factory=set)
    pidfd: int = -1
    finished: bool = False
    fault: str = ""
    """Why its logs are incomplete ("" while they are whole)."""
    faults: int = 0
    first_ready: Optional[FirstWrites] = None
    """Watches the pipes since before the process started: says which became readable first. Closed once
    each pipe has been read once."""
    unread_fds: Set[int] = field(default_factory=set)
    """Pipes not read yet (while ``first_ready`` is open)."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def sinks(self) -> Tuple[LogSink, LogSink, LogSink]:
        return (self.stdout, self.stderr, self.combined)


class ProcessLoop:
    """Watches replicas; started lazily, stopped by :meth:`stop`.

    Followers use the public change API: :attr:`version` (bumped on every chunk written and every replica
    finished), :meth:`wait_for_change` and :meth:`notify`. No exception stops the loop: one raised while
    handling a replica is logged (``jupyter_sched`` logger) and the loop carries on; if the loop itself
    cannot go on (its selector broke), every replica it watched is stopped and reported with the reason.
    """

    def __init__(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._pending: List[Tuple[List[Replica], Optional[Callable[[], None]]]] = []
        self._exited: List[Replica] = []
        """Replicas whose exit a waiter thread saw (where there is no pidfd), handled after ``_pending``."""
        self._timers: List[Tuple[float, int, Callable[[], None]]] = []
        self._timer_seq = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        self.version = 0
        """Bumped (under the change condition) on every change, so a follower can tell it missed one."""
        self._thread: Optional[threading.Thread] = None
        self._stopping = False
        self._live: Set[Replica] = set()
        self._fd_ops: List[Tuple[int, Optional[Callable[[], None]]]] = []
        self._watched: Dict[int, Callable[[], None]] = {}
        self.failure = ""
        """Why the loop stopped for good ("" while it runs): no replica can be added then."""

    # -- called from any thread -------------------------------------------------------------------------
    def add(self, replicas: List[Replica], then: Optional[Callable[[], None]] = None) -> None:
        """Starts watching ``replicas`` (already spawned). Their log files are opened on the loop thread,
        to keep that work off the caller's submit path; ``then`` runs once they are set up.

        What tells the loop of each exit is set up here, on the caller's thread: a pidfd, or where there is
        none a waiter thread, started here because starting a thread waits for it to run, and the loop
        thread never waits for another thread."""
        waiters = []
        for rep in replicas:
            try:  # a replica forked by a zygote too: its zygote may not be answering (see local/zygote)
                rep.pidfd = pidfd_open(rep.pid)
            except OSError:  # no pidfd (old kernel, not Linux, or the portable path): a waiter thread stands in
                if getattr(rep.proc, "watch_exit", None) is None:  # (a zygote's report does for a forked one)
                    waiters.append(rep)
        with self._lock:
            failure = self.failure
            if not failure:
                self._pending.append((replicas, then))
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="jupyter_sched-local-io", daemon=True)
                    self._thread.start()
        if failure:
            for rep in replicas:
                if rep.pidfd >= 0:
                    os.close(rep.pidfd)
                    rep.pidfd = -1
            raise RuntimeError(f"the local IO loop stopped: {failure}")
        for rep in waiters:  # after the replica is pending: the loop registers it before it handles its exit
            threading.Thread(target=self._wait_thread, args=(rep,), name="jupyter_sched-wait", daemon=True).start()
        self._wake()

    def watch_fd(self, fd: int, on_readable: Callable[[], None]) -> None:
        """Calls ``on_readable()`` on the loop thread whenever ``fd`` is readable, until :meth:`unwatch_fd`
        (a zygote's reports: see ``zygote``). Does not keep a stopping loop running."""
        with self._lock:
            if self.failure:
                raise RuntimeError(f"the local IO loop stopped: {self.failure}")
            self._fd_ops.append((fd, on_readable))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="jupyter_sched-local-io", daemon=True)
                self._thread.start()
        self._wake()

    def unwatch_fd(self, fd: int) -> None:
        """Stops watching ``fd``: at once on the loop thread, else on its next turn."""
        if self.in_loop_thread():
            self._apply_fd_op(fd, None)
            return
        with self._lock:
            self._fd_ops.append((fd, None))
        self._wake()

    def in_loop_thread(self) -> bool:
        return self._thread is threading.current_thread()

    def call_later(self, delay: float, fn: Callable[[], None]) -> None:
        with self._lock:
            self._timer_seq += 1
            heapq.heappush(self._timers, (time.monotonic() + delay, self._timer_seq, fn))
        self._wake()

    def wait_for_change(self, version: int, timeout: float) -> None:
        """Blocks until :attr:`version` differs from ``version`` or ``timeout`` seconds passed."""
        with self._changed:
            if self.version == version:
                self._changed.wait(timeout)

    def notify(self) -> None:
        """Bumps :attr:`version` and wakes every waiter (also used to wake a follower being closed)."""
        with self._changed:
            self.version += 1
            self._changed.notify_all()

    def stop(self, timeout: float = 5.0) -> None:
        """Ends the loop once its replicas are drained; waits up to ``timeout`` for that, except on an IO
        thread (a scheduler collected there is closed there), which never waits for another thread."""
        self._stopping = True
        self._wake()
        if self._thread is not None and not in_io_thread():
            self._thread.join(timeout)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass

    # -- loop thread ------------------------------------------------------------------------------------
    def _run(self) -> None:
        leave_signals_to_the_main_thread()
        _io_thread.active = True
        try:
            while self._step():
                pass
        except BaseException as e:  # noqa: BLE001 - the loop cannot go on: say so for every replica
            logger.exception("jupyter_sched: the local IO loop stopped")
            self._fail_all(f"the IO loop of the process that started it failed: {e!r}")
        finally:
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            try:
                self._sel.close()
            except Exception:  # noqa: BLE001 - teardown of the loop's selector: nothing may keep the loop from ending
                pass

    def _step(self) -> bool:
        with self._lock:
            pending, self._pending = self._pending, []
            exited, self._exited = self._exited, []
            fd_ops, self._fd_ops = self._fd_ops, []
            timeout = max(0.0, self._timers[0][0] - time.monotonic()) if self._timers else None
        for fd, on_readable in fd_ops:
            self._guard(None, self._apply_fd_op, fd, on_readable)
        for replicas, then in pending:
            for rep in replicas:
                self._guard(rep, self._register, rep)
            if then is not None:
                self._guard(None, then)
        for rep in exited:
            self._guard(rep, self._on_exit, rep, -1)
        if self._stopping and len(self._sel.get_map()) - len(self._watched) <= 1:  # only the wake pipe is left
            return False
        for key, _ in self._sel.select(timeout):
            kind, rep = key.data
            if kind == "wake":
                try:
                    while os.read(self._wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            elif kind == "pid":
                self._guard(rep, self._on_exit, rep, key.fd)
            elif kind == "fd":
                self._guard(None, rep)
            else:
                self._guard(rep, self._on_output, rep, key.fd, kind)
        self._run_timers()
        return True

    def _guard(self, rep: Optional[Replica], fn: Callable[..., None], *args: object) -> None:
        """Runs one handler; an exception is logged and, for a replica, counted (see ``_MAX_FAULTS``)."""
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - one replica's trouble must not stop the others
            if rep is None:
                logger.exception("jupyter_sched: error in the local IO loop (it carries on)")
                return
            rep.faults += 1
            if rep.faults == 1:
                logger.exception("jupyter_sched: error handling replica pid %s (the IO loop carries on)", rep.pid)
            self._set_fault(rep, f"internal error in the IO loop: {e!r}")
            if rep.faults >= _MAX_FAULTS:
                self._abandon(rep)

    def _run_timers(self) -> None:
        now = time.monotonic()
        due = []
        with self._lock:
            while self._timers and self._timers[0][0] <= now:
                due.append(heapq.heappop(self._timers)[2])
        for fn in due:
            self._guard(None, fn)

    def _apply_fd_op(self, fd: int, on_readable: Optional[Callable[[], None]]) -> None:
        if on_readable is not None:
            self._sel.register(fd, selectors.EVENT_READ, ("fd", on_readable))
            self._watched[fd] = on_readable
        elif self._watched.pop(fd, None) is not None:
            self._sel.unregister(fd)

    def _register(self, rep: Replica) -> None:
        self._live.add(rep)
        for sink in rep.sinks if rep.out_fd >= 0 else ():
            if sink.fd < 0:
                sink.open()
                if sink.error:
                    self._set_fault(rep, sink.error)
        fds = [fd for fd in (rep.out_fd, rep.err_fd) if fd >= 0]
        if rep.first_ready is not None:
            rep.unread_fds = set(fds)
        rep.open_fds = set(fds)
        for fd in fds:  # the selector may name a pipe another handler of the same turn has drained
            os.set_blocking(fd, False)
        for fd in fds:
            self._sel.register(fd, selectors.EVENT_READ, ("out" if fd == rep.out_fd else "err", rep))
        watch_exit = getattr(rep.proc, "watch_exit", None)
        if watch_exit is not None:  # forked by a zygote, which reports its exit (see local/zygote)
            watch_exit(lambda: self._guard(rep, self._on_exit, rep, -1))
        if rep.pidfd >= 0:  # else a waiter thread reports its exit (see add)
            self._sel.register(rep.pidfd, selectors.EVENT_READ, ("pid", rep))

    def _wait_thread(self, rep: Replica) -> None:
        leave_signals_to_the_main_thread()
        rep.proc.wait()
        with self._lock:
            self._exited.append(rep)
        self._wake()

    def _on_output(self, rep: Replica, fd: int, kind: str) -> None:
        if fd not in rep.open_fds:  # closed by another handler of the same turn
            return
        first = rep.first_ready
        if first is not None and fd in rep.unread_fds:  # a pipe's first read: the one readable first (see top)
            fd = next((f for f in first.ready() if f in rep.unread_fds), fd)
            kind = "out" if fd == rep.out_fd else "err"
            rep.unread_fds.discard(fd)
            if not rep.unread_fds:
                first.close()
                rep.first_ready = None
        try:
            chunk = os.read(fd, _READ_SIZE)
        except BlockingIOError:  # already drained this turn (read first, in its place: see above)
            return
        except OSError:
            chunk = b""
        if chunk:
            now = time.time()
            ok = (rep.stdout if kind == "out" else rep.stderr).write(chunk, now)
            ok = rep.combined.write(chunk, now) and ok
            if not ok and not rep.fault:
                self._set_fault(rep, next(s.error for s in rep.sinks if s.error))
        else:
            self._close_fd(rep, fd)
            self._maybe_done(rep)
        self.notify()

    def _set_fault(self, rep: Replica, reason: str) -> None:
        if rep.fault:
            return
        rep.fault = reason
        try:
            rep.on_fault(rep, reason)
        except Exception:  # noqa: BLE001 - a recording callback's error is logged; it must not stop the IO loop
            logger.exception("jupyter_sched: error recording a replica's log fault")

    def _close_fd(self, rep: Replica, fd: int) -> None:
        try:
            self._sel.unregister(fd)
        except (KeyError, ValueError):
            pass
        try:
            os.close(fd)
        except OSError:
            pass
        rep.open_fds.discard(fd)

    def _on_exit(self, rep: Replica, pidfd: int) -> None:
        if pidfd >= 0:
            self._sel.unregister(pidfd)
            os.close(pidfd)
            rep.pidfd = -1
        if rep.exited_at is not None:
            return
        if getattr(rep.proc, "watch_exit", None) is not None and rep.proc.poll() is None:
            return  # forked by a zygote that has not reported, and its status cannot be read: the report will do
        if rep.exited_at is not None:
            return  # poll() learnt the status, and watch_exit's callback has handled the exit
        # The leader is a zombie until reaped, so its pid (= the group id) cannot have been reused yet:
        # it is safe to signal processes it left behind in its group, which may hold its pipes open.
        if rep.open_fds:
            Group(rep.pid).signal(signal.SIGTERM)
            self.call_later(_LEFTOVER_GRACE_S, lambda: self._force_close(rep))
        rep.exit_code = rep.proc.wait()
        rep.exited_at = time.time()
        self._maybe_done(rep)

    def _force_close(self, rep: Replica) -> None:
        """Leftover processes ignored SIGTERM and still hold the pipes: kill them and stop reading."""
        if rep.finished:
            return
        try:
            os.killpg(rep.pid, signal.SIGKILL)  # leaderless group of our own: no pid to check
        except (ProcessLookupError, PermissionError):
            pass
        for fd in list(rep.open_fds):
            self._close_fd(rep, fd)
        self._maybe_done(rep)

    def _abandon(self, rep: Replica) -> None:
        """Stops reading a replica whose handling keeps failing; it is still waited for."""
        for fd in list(rep.open_fds):
            self._close_fd(rep, fd)
        self._maybe_done(rep)

    def _maybe_done(self, rep: Replica) -> None:
        if rep.finished or rep.exited_at is None or rep.open_fds:
            return
        rep.finished = True
        self._live.discard(rep)
        if rep.first_ready is not None:
            rep.first_ready.close()
            rep.first_ready = None
        for sink in rep.sinks:
            sink.close()
        try:
            rep.on_done(rep)
        finally:
            self.notify()

    def _fail_all(self, reason: str) -> None:
        """The loop cannot go on: nobody would drain the pipes. Stop every replica, keep its real exit code,
        and report the reason (``on_fault``) before ``on_done``."""
        with self._lock:
            self.failure = reason
            pending, self._pending = self._pending, []
            self._exited = []
        live = list(self._live) + [r for reps, _ in pending for r in reps]
        for rep in live:
            for fd in list(rep.open_fds) + [fd for fd in (rep.out_fd, rep.err_fd, rep.pidfd) if fd >= 0]:
                try:
                    os.close(fd)
                except OSError:
                    pass
            rep.open_fds.clear()
            if rep.first_ready is not None:
                rep.first_ready.close()
                rep.first_ready = None
            if rep.exited_at is None:
                Group(rep.pid).signal(signal.SIGKILL)
                rep.exit_code = rep.proc.wait()
                rep.exited_at = time.time()
            rep.fault = ""
            self._set_fault(rep, reason)
            try:
                self._maybe_done(rep)
            except Exception:  # noqa: BLE001 - a recording callback's error is logged; it must not stop the IO loop
                logger.exception("jupyter_sched: error recording a replica's end")

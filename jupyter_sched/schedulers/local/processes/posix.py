"""The few operating-system calls of the local backend that differ between Linux and other POSIX systems.

On Linux the backend uses what Linux offers: ``/proc/<pid>/stat`` for a process's identity and state,
``pidfd_open`` to hear of an exit in the IO loop's own selector, and an ``epoll`` that watches a replica's
pipes from before it starts, so that its first writes to stdout and stderr reach ``combined.log`` in the
order they were made. Elsewhere (macOS, the BSDs) the same jobs are done portably: psutil for identity
and state, a waiter thread per replica for exits, and no first-write watcher.

Setting ``JUPYTER_SCHED_PORTABLE=1`` selects the portable path on Linux too (CI runs the local, runner,
CLI and notebook tests a second time that way, so every fallback really runs).

Ordering guarantees of ``combined.log``:

* Linux: chunks are in the order the pipes became readable, including a quick replica's very first
  writes (``echo out; echo err >&2`` is always in order), as long as the IO thread gets back to its
  selector between a replica's writes to its two pipes: epoll's level-triggered ready list keeps a pipe
  the loop has just drained in its old place until the next wait, so an IO thread kept off the CPU for
  longer than the gap can read a later write to that pipe before an earlier one to the other.
* Portable: chunks are in the order the selector (kqueue on macOS, epoll/poll elsewhere) reports them; a
  replica that writes to both pipes before the loop has registered them may see those first two writes
  swapped. Each stream's own file (``stdout.log``, ``stderr.log``) is always exactly in order.

A process's identity is its start time in hundredths of a second since boot (on Linux exactly the clock
ticks of ``/proc/<pid>/stat`` at the usual 100 Hz), the same number on both paths.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

PORTABLE_ENV = "JUPYTER_SCHED_PORTABLE"
PORTABLE = os.environ.get(PORTABLE_ENV, "") not in ("", "0") or not sys.platform.startswith("linux")
"""True when the Linux-only calls are not used (not Linux, or ``JUPYTER_SCHED_PORTABLE=1``)."""

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_stat(pid: int) -> Optional[Tuple[str, int, int]]:
    """``(state, start time, process group)`` of ``pid``; state ``"Z"`` for a zombie; None if no such
    process (or it cannot be seen)."""
    if PORTABLE:
        return _psutil_stat(pid)
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[19]) * 100 // _TICKS, int(fields[2])


def _psutil_stat(pid: int) -> Optional[Tuple[str, int, int]]:
    import psutil

    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            zombie = proc.status() == psutil.STATUS_ZOMBIE
            started = round((proc.create_time() - psutil.boot_time()) * 100)
        pgid = os.getpgid(pid)
    except (psutil.Error, OSError):
        return None
    return ("Z" if zombie else "R"), started, pgid


def all_pids() -> Iterable[int]:
    if PORTABLE:
        import psutil

        return psutil.pids()
    return (int(name) for name in os.listdir("/proc") if name.isdigit())


def processes_with_env(name: str, value: str) -> Dict[int, Dict[str, str]]:
    """The processes this user may read whose environment (as they were started: ``exec`` fixes it) has
    ``name=value``: pid -> that environment. Linux reads ``/proc/<pid>/environ``; the portable path asks
    psutil."""
    found: Dict[int, Dict[str, str]] = {}
    if PORTABLE:
        import psutil

        for proc in psutil.process_iter():
            try:
                env = proc.environ()
            except (psutil.Error, OSError):
                continue
            if env.get(name) == value:
                found[proc.pid] = env
        return found
    needle = b"\0" + f"{name}={value}".encode() + b"\0"
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                data = f.read()
        except OSError:
            continue
        if needle in b"\0" + data + b"\0":
            items = (item.decode(errors="replace").partition("=") for item in data.split(b"\0") if item)
            found[pid] = {key: val for key, _, val in items}
    return found


def pidfd_open(pid: int) -> int:
    """A descriptor that becomes readable when ``pid`` exits; OSError where there is none (then the
    caller waits for the exit in a thread)."""
    if PORTABLE or not hasattr(os, "pidfd_open"):
        raise OSError("pidfd_open is not available")
    return os.pidfd_open(pid)


class FirstWrites:
    """Watches a replica's pipes from before it starts and tells, later, the order in which they became
    readable (Linux: an epoll's ready list keeps that order). Portable: no watcher, the given order."""

    def __init__(self, fds: List[int]) -> None:
        self._fds = list(fds)
        self._epoll: Any = None
        if not PORTABLE:
            self._epoll = select.epoll()
            for fd in fds:
                self._epoll.register(fd, select.EPOLLIN)

    def ready(self) -> List[int]:
        """The fds readable now, in the order they first became so (until one is read: epoll re-queues a
        level-triggered fd it reported behind those already queued, so asking again keeps the order).
        Portable: none (the caller keeps its own order)."""
        if self._epoll is None:
            return []
        return [fd for fd, _ in self._epoll.poll(0)]

    def close(self) -> None:
        if self._epoll is not None:
            self._epoll.close()
            self._epoll = None


_SYNCHRONOUS = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGTRAP", "SIGSYS", "SIGKILL", "SIGSTOP"}
_ASYNC_SIGNALS = {s for s in signal.valid_signals() if getattr(s, "name", "") not in _SYNCHRONOUS}


def leave_signals_to_the_main_thread() -> None:
    """Blocks asynchronous signals in the calling (helper) thread.

    The kernel delivers a signal sent to the process to any thread that does not block it. Python runs its
    handlers in the main thread, but if a helper thread received the signal, a main thread sitting in
    ``time.sleep`` is not woken and the handler (a SIGTERM that should stop the replicas) waits for the
    sleep to end. Every thread this backend starts calls this first."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, _ASYNC_SIGNALS)


@contextlib.contextmanager
def signals_unblocked() -> Iterator[None]:
    """Unblocks them for a moment: a process started from a helper thread must not inherit the mask."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_UNBLOCK, _ASYNC_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

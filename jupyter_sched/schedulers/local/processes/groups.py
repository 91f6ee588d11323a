"""Signalling a replica's process group, only when it provably is ours, and the one SIGTERM -> SIGKILL path.

Every local replica leads its own session and process group, so its pid is its group id. A pid read from a
file (``state.json``, a reaper's registration) is only trusted together with the process start time that
was recorded when the replica started: a later, unrelated process that reused the pid has another start
time and is never signalled. ``stop_groups`` is the single place where the backend ends groups: SIGTERM
now, SIGKILL to the survivors after a grace period, either later on an event loop (the owner) or blocking
(the reaper and the detached escalation of a CLI ``cancel``).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Callable, Iterable, List, NamedTuple, Optional, Tuple

from jupyter_sched.schedulers.local.processes.posix import all_pids, proc_stat


class Group(NamedTuple):
    """A replica's process group: the leader's pid and its start time (None: not checked, for a process
    this one spawned and has not reaped, whose pid cannot have been reused)."""

    pid: int
    started: Optional[int] = None

    def is_ours(self) -> bool:
        """The leader exists (a zombie not yet reaped counts) and is the process that was recorded."""
        if self.pid <= 0:
            return False
        if self.started is None:
            return True
        stat = _stat(self.pid)
        return stat is not None and stat[1] == self.started

    def alive(self) -> bool:
        """Ours, and some process of the group still runs (a zombie leader alone does not count)."""
        if not self.is_ours():
            return False
        stat = _stat(self.pid)
        if stat is not None and stat[0] != "Z":
            return True
        if self.started is not None and stat is None:
            return False  # the leader is gone: what is left is not provably ours
        return _running_member(self.pid)

    def signal(self, sig: int) -> bool:
        """Sends ``sig`` to the group if it is ours; False if it is gone or not provably ours."""
        if not self.is_ours():
            return False
        try:
            os.killpg(self.pid, sig)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def encode(self) -> str:
        return f"{self.pid}:{self.started if self.started is not None else ''}"

    @staticmethod
    def decode(text: str) -> "Group":
        pid, _, started = text.partition(":")
        return Group(int(pid), int(started) if started else None)


def _stat(pid: int) -> Optional[Tuple[str, int, int]]:
    """(state, start time, process group): see ``posix.proc_stat``."""
    return proc_stat(pid)


def _running_member(pgid: int) -> bool:
    """Some process other than a zombie belongs to group ``pgid`` (a scan of every process)."""
    for pid in all_pids():
        stat = _stat(pid)
        if stat is not None and stat[2] == pgid and stat[0] != "Z":
            return True
    return False


def process_start_time(pid: int) -> Optional[int]:
    """The start time of ``pid`` (hundredths of a second since boot), which tells a process apart from a
    later one that reused its pid. None if there is no such process."""
    stat = _stat(pid)
    return stat[1] if stat is not None else None


def stop_groups(
    groups: Iterable[Group],
    grace: float,
    later: Optional[Callable[[float, List[Group]], None]] = None,
    alive: Optional[Callable[[Group], bool]] = None,
) -> List[Group]:
    """SIGTERM to every group now, SIGKILL after ``grace`` seconds to those still alive.

    With ``later`` this returns at once and ``later(grace, signalled_groups)`` arranges the SIGKILL (on an
    event loop, or in a detached process); without it, it blocks (see :func:`kill_survivors`). Returns
    the groups that were sent SIGKILL (always empty with ``later``).
    """
    live = [g for g in groups if g.signal(signal.SIGTERM)]
    if later is not None:
        later(grace, live)
        return []
    return kill_survivors(live, grace, alive)


def kill_survivors(
    groups: Iterable[Group], grace: float = 0.0, alive: Optional[Callable[[Group], bool]] = None
) -> List[Group]:
    """Waits up to ``grace`` seconds (checking every 50 ms) for the groups to end, then sends SIGKILL to
    those still alive (``alive``, default: the group exists and is provably ours). Returns those."""
    alive = alive or Group.alive
    groups = list(groups)
    deadline = time.monotonic() + grace
    while any(alive(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [g for g in groups if alive(g) and g.signal(signal.SIGKILL)]

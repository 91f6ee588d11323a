"""Which process did something, in a form another process can check later: is that process gone?

A submit that is cut short (a SIGKILL, the OOM killer) cannot clean up after itself, so what it leaves
carries its submitter's identity: ``host/pid/start``, the host name, the pid and the process's start time
in hundredths of a second since the epoch. Whoever finds it later asks :func:`is_gone`: a pid alone could
have been reused by an unrelated process, the start time tells them apart. Only a process on the same host
can tell; anywhere else the answer is "not known to be gone", so nothing is removed on a guess (a docker
engine reached from another machine, a Slurm job directory shared by the cluster's nodes).
"""

from __future__ import annotations

import os
import socket
from typing import Optional

import psutil


def _start(pid: int) -> Optional[int]:
    """``pid``'s start time (hundredths of a second since the epoch); None if no such live process (a
    zombie, killed and not yet waited for by its parent, counts as gone)."""
    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            return round(proc.create_time() * 100)
    except (psutil.Error, OSError):
        return None


def this_process() -> str:
    """This process's identity, ``host/pid/start`` (computed each time: a forked child is another process)."""
    pid = os.getpid()
    return f"{socket.gethostname()}/{pid}/{_start(pid)}"


def pid_of(identity: str) -> Optional[int]:
    """The pid an identity names (for messages), or None if it is not one."""
    parts = identity.split("/")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def is_gone(identity: str) -> bool:
    """True only when ``identity`` names a process of this host that has ended. False when it still runs,
    when it ran on another host (it cannot be checked from here) and when ``identity`` is not one."""
    parts = identity.split("/")
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    started = _start(int(parts[1]))
    return started is None or str(started) != parts[2]

"""Cancelling a local app: the ``cancelled`` marker in its directory, and SIGTERM -> SIGKILL to its groups.

Any process may cancel an app, but only its owner (the process that started it) hears its replicas end.
So a cancel leaves a marker file in the app's directory: the owner reads it when a replica ends, and any
reader of the record sees it, so the app ends CANCELLED rather than FAILED whoever cancelled it. The
signals go out one of two ways:

* the owner stops the process groups it started (not reaped yet, so each pid is still its group's id)
  and SIGKILLs the survivors after the grace period on its IO loop (:func:`stop_replicas`);
* another process (a CLI ``cancel``, a restarted kernel) stops only the groups that the record proves are
  the app's (pid and process start time) and leaves the SIGKILL to a small detached process, so that it
  happens even if the canceller exits at once (:func:`cancel_recorded`).
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List

from jupyter_sched.schedulers.local.processes.groups import Group, kill_survivors, stop_groups
from jupyter_sched.schedulers.local.processes.procs import ProcessLoop, Replica
from jupyter_sched.schedulers.local.processes.reaper import escalate_later
from jupyter_sched.schedulers.local.record.state import AppRecord

__all__ = ["CANCEL_MARKER", "cancel_recorded", "cancel_requested", "mark_cancelled", "stop_replicas"]

CANCEL_MARKER = "cancelled"


def mark_cancelled(app_dir: str) -> None:
    """Leaves the marker in ``app_dir`` (an OSError, e.g. a read-only directory, is raised)."""
    with open(os.open(os.path.join(app_dir, CANCEL_MARKER), os.O_WRONLY | os.O_CREAT, 0o600), "w"):
        pass


def cancel_requested(app_dir: str) -> bool:
    """Someone cancelled the app in ``app_dir`` (possibly another process)."""
    return os.path.exists(os.path.join(app_dir, CANCEL_MARKER))


def cancel_recorded(record: AppRecord) -> None:
    """Cancels an app this process does not own: SIGTERM now to the groups its record proves are its own,
    SIGKILL after ``cancel_grace`` from a detached process; returns at once."""
    mark_cancelled(record.app_dir)
    groups = [r.group for r in record.replicas if not r.done and r.pid and r.pid_started is not None]
    # The SIGKILL after the grace period must happen even if this process exits right away (a CLI
    # `cancel`), so a small detached process of its own does it.
    stop_groups(groups, record.cancel_grace, later=escalate_later)


def stop_replicas(replicas: Iterable[Replica], grace: float, loop: ProcessLoop) -> None:
    """SIGTERM now to the groups of the owner's replicas that have not exited, SIGKILL after ``grace``
    seconds (on the IO ``loop``) to those still running then; returns at once."""
    running = {rep.pid: rep for rep in replicas if rep.exited_at is None}
    # not reaped yet, so each pid is still its group's id: no start time to check
    stop_groups(
        [Group(pid) for pid in running],
        grace,
        later=lambda delay, live: loop.call_later(delay, lambda: _kill_survivors(live, running)),
    )


def _kill_survivors(groups: List[Group], running: Dict[int, Replica]) -> None:
    kill_survivors(groups, 0.0, lambda g: running[g.pid].exited_at is None)

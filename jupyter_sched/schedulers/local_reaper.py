"""Ends local replicas when their owner dies, however it dies (including SIGKILL).

The owner starts this module once, as a tiny child process whose stdin is a pipe from the owner, and
tells it each replica process group as it starts (``+app_dir pgid...``) and ends (``-pgid...``). When the
owner dies the pipe closes; the reaper then sends SIGTERM to every group still registered, SIGKILL after a
grace period, and records in each app's ``state.json`` why the app ended. A signal handler cannot do this
(SIGKILL cannot be caught) and ``PR_SET_PDEATHSIG`` fires when the *thread* that spawned a process exits,
which would kill jobs launched from a worker thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Dict, Iterable, Optional

GRACE_S = 3.0


class ReaperClient:
    """The owner's side: a lazily started reaper shared by every local scheduler of the process."""

    _lock = threading.Lock()
    _proc: Optional[subprocess.Popen] = None
    _pid: Optional[int] = None  # the owner pid that started it (a forked child must start its own)

    @classmethod
    def _ensure(cls) -> Optional[subprocess.Popen]:
        if cls._proc is None or cls._pid != os.getpid() or cls._proc.poll() is not None:
            cls._proc = subprocess.Popen(
                [sys.executable, "-m", "jupyter_sched.schedulers.local_reaper"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C in the owner's terminal must not kill the reaper first
                close_fds=True,
            )
            cls._pid = os.getpid()
        return cls._proc

    @classmethod
    def _send(cls, line: str) -> None:
        with cls._lock:
            proc = cls._ensure()
            if proc is None or proc.stdin is None:
                return
            try:
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                cls._proc = None

    @classmethod
    def watch(cls, app_dir: str, pgids: Iterable[int]) -> None:
        cls._send("+" + app_dir + "\t" + " ".join(str(p) for p in pgids))

    @classmethod
    def forget(cls, pgids: Iterable[int]) -> None:
        cls._send("-" + " ".join(str(p) for p in pgids))


def escalate_later(grace: float, pgids: Iterable[int]) -> None:
    """Starts a detached process that sends SIGKILL to the groups still alive after ``grace`` seconds."""
    subprocess.Popen(
        [sys.executable, "-m", "jupyter_sched.schedulers.local_reaper", "--escalate", str(grace),
         *[str(p) for p in pgids]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )  # fmt: skip


def _signal_groups(pgids: Iterable[int], sig: int) -> None:
    for pgid in pgids:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _escalate(grace: float, pgids: Iterable[int]) -> None:
    """Waits up to ``grace`` seconds for the groups to end, then sends SIGKILL to those still alive."""
    deadline = time.monotonic() + grace
    live = [p for p in pgids if _group_alive(p)]
    while live and time.monotonic() < deadline:
        time.sleep(0.05)
        live = [p for p in live if _group_alive(p)]
    _signal_groups(live, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _mark_owner_gone(app_dir: str, owner_pid: int) -> None:
    from jupyter_sched.schedulers.local_state import load_record

    record = load_record(app_dir)
    if record is None:
        return
    now = time.time()
    for rep in record.replicas:
        if not rep.done:
            rep.finished = now
            rep.exit_code = -int(signal.SIGTERM) if rep.exit_code is None else rep.exit_code
    record.msg = f"owner process {owner_pid} exited; its replicas were stopped"
    try:
        record.save()
    except OSError:
        pass


def main() -> None:
    if sys.argv[1:2] == ["--escalate"]:
        _escalate(float(sys.argv[2]), [int(p) for p in sys.argv[3:]])
        return
    owner = os.getppid()
    groups: Dict[int, str] = {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for raw in sys.stdin.buffer:
        line = raw.decode(errors="replace").rstrip("\n")
        if line.startswith("+"):
            app_dir, _, pids = line[1:].partition("\t")
            for p in pids.split():
                groups[int(p)] = app_dir
        elif line.startswith("-"):
            for p in line[1:].split():
                groups.pop(int(p), None)
    # stdin closed: the owner is gone
    live = [p for p in groups if _group_alive(p)]
    _signal_groups(live, signal.SIGTERM)
    _escalate(GRACE_S, live)
    for app_dir in set(groups.values()):
        _mark_owner_gone(app_dir, owner)


if __name__ == "__main__":
    main()

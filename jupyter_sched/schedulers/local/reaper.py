"""Ends local replicas when their owner dies, however it dies (including SIGKILL), even if the reaper died first.

The owner starts this module once, as a tiny child process whose stdin is a pipe from the owner, and
tells it each replica process group as it starts (``+app_dir pid:start...``) and ends (``-pid...``). When
the owner dies the pipe closes; the reaper then sends SIGTERM to every group still registered, SIGKILL
after a grace period, and records in each app's ``state.json`` why the app ended and each replica's exit
code: -9 for one it had to SIGKILL, -15 for one that ended after its SIGTERM (the reaper is not the
replicas' parent, so it cannot wait for their exit status; these are the signals that ended them). A
signal handler cannot do this (SIGKILL cannot be caught) and ``PR_SET_PDEATHSIG`` fires when the *thread*
that spawned a process exits, which would kill jobs launched from a worker thread.

If the reaper itself dies (the OOM killer, a user ending stray Pythons), a watcher thread in the owner
notices at once, starts a new reaper and hands it every group still registered, so replicas never outlive
their owner for want of a reaper. Groups are named with their leader's start time, so a pid reused by an
unrelated process is never signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Dict, Iterable, List, Optional, Tuple

from jupyter_sched.schedulers.local.groups import Group, kill_survivors, stop_groups
from jupyter_sched.schedulers.local.posix import leave_signals_to_the_main_thread, signals_unblocked

GRACE_S = 3.0
CLAIM_FILE = "reaper.claim"
"""Written in an app's directory by the one process that stops its orphaned replicas (pid:start time)."""


class ReaperClient:
    """The owner's side: a reaper shared by every local scheduler of the process, restarted (and handed
    every registered group) whenever it dies."""

    _lock = threading.Lock()
    _proc: Optional[subprocess.Popen] = None
    _pid: Optional[int] = None  # the owner pid that started it (a forked child must start its own)
    _watched: Dict[str, Dict[int, Group]] = {}  # app_dir -> {pid: group}
    restarts = 0
    """How many times a reaper was started again after dying (for tests and diagnostics)."""

    @classmethod
    def _start(cls) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_sched.schedulers.local.reaper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C in the owner's terminal must not kill the reaper first
            close_fds=True,
        )
        cls._proc = proc
        for app_dir, groups in cls._watched.items():  # adoption: the new reaper learns every live group
            cls._write(_watch_line(app_dir, groups.values()))
        watcher = threading.Thread(target=cls._watch_reaper, args=(proc,), name="jupyter_sched-reaper", daemon=True)
        watcher.start()
        return proc

    @classmethod
    def _watch_reaper(cls, proc: subprocess.Popen) -> None:
        leave_signals_to_the_main_thread()
        proc.wait()
        with cls._lock, signals_unblocked():
            if cls._proc is proc and cls._pid == os.getpid() and cls._watched:
                cls.restarts += 1
                cls._start()

    @classmethod
    def _ensure(cls) -> None:
        if cls._pid != os.getpid():  # first use, or a forked child: its parent's groups are not its own
            cls._watched = {}
            cls._proc = None
            cls._pid = os.getpid()
        if cls._proc is None or cls._proc.poll() is not None:
            cls._start()

    @classmethod
    def _write(cls, line: str) -> None:
        proc = cls._proc
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: the watcher thread starts another and re-registers everything

    @classmethod
    def watch(cls, app_dir: str, groups: Iterable[Group]) -> None:
        with cls._lock:
            cls._ensure()
            groups = list(groups)
            cls._watched.setdefault(app_dir, {}).update({g.pid: g for g in groups})
            cls._write(_watch_line(app_dir, groups))

    @classmethod
    def forget(cls, pids: Iterable[int]) -> None:
        with cls._lock:
            if cls._pid != os.getpid():
                return
            pids = list(pids)
            for app_dir in list(cls._watched):
                groups = cls._watched[app_dir]
                for pid in pids:
                    groups.pop(pid, None)
                if not groups:
                    del cls._watched[app_dir]
            cls._write("-" + " ".join(str(p) for p in pids))

    @classmethod
    def reaper_pid(cls) -> Optional[int]:
        with cls._lock:
            return cls._proc.pid if cls._proc is not None and cls._pid == os.getpid() else None


def _watch_line(app_dir: str, groups: Iterable[Group]) -> str:
    return "+" + app_dir + "\t" + " ".join(g.encode() for g in groups)


def escalate_later(grace: float, groups: Iterable[Group]) -> None:
    """Starts a detached process that sends SIGKILL to the groups still alive after ``grace`` seconds."""
    subprocess.Popen(
        [sys.executable, "-m", "jupyter_sched.schedulers.local.reaper", "--escalate", str(grace),
         *[g.encode() for g in groups]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )  # fmt: skip


def adopt_orphans(app_dir: str, grace: float) -> None:
    """Starts a detached reaper for one app whose owner died while its replicas ran on (the reaper was gone
    too): it stops them and records how they ended."""
    subprocess.Popen(
        [sys.executable, "-m", "jupyter_sched.schedulers.local.reaper", "--adopt", app_dir, str(grace)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def claim(app_dir: str) -> bool:
    """Makes this process the one that stops the app's orphaned replicas; False if another live process
    already is (the owner's reaper and a reader's adopter may both notice the owner's death)."""
    from jupyter_sched.schedulers.local.groups import process_start_time

    path = os.path.join(app_dir, CLAIM_FILE)
    me = Group(os.getpid(), process_start_time(os.getpid())).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if claimed(app_dir):
            return False
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC, 0o600)  # its holder died: take over
    except OSError:
        return True  # cannot write there (a full disk): stop them anyway
    try:
        os.write(fd, me.encode())
    except OSError:
        pass
    finally:
        os.close(fd)
    return True


def claimed(app_dir: str) -> bool:
    """A live process holds the app's claim (see :func:`claim`)."""
    try:
        with open(os.path.join(app_dir, CLAIM_FILE)) as f:
            holder = Group.decode(f.read().strip())
    except (OSError, ValueError):
        return False
    return holder.pid != os.getpid() and holder.alive()


def _record_ends(app_dir: str, signalled: Iterable[Group], killed: Iterable[Group], msg: str) -> None:
    """Writes into the app's record how its unfinished replicas ended."""
    from jupyter_sched.schedulers.local.state import load_record

    record = load_record(app_dir)
    if record is None:
        return
    termed = {g.pid for g in signalled}
    kills = {g.pid for g in killed}
    now = time.time()
    for rep in record.replicas:
        if rep.done and rep.exit_code is not None:
            continue
        rep.finished = rep.finished or now
        if rep.pid in kills:
            rep.exit_code = -int(signal.SIGKILL)
        elif rep.pid in termed:
            rep.exit_code = -int(signal.SIGTERM)
    record.msg = msg
    try:
        record.save()
    except OSError:
        pass


def _stop(groups: List[Group], grace: float) -> Tuple[List[Group], List[Group]]:
    """SIGTERM, then SIGKILL after ``grace`` (blocking): the groups signalled, and those killed."""
    signalled: List[Group] = []
    stop_groups(groups, grace, later=lambda _grace, live: signalled.extend(live))
    return signalled, kill_survivors(signalled, grace)


def main() -> None:
    if sys.argv[1:2] == ["--escalate"]:
        kill_survivors([Group.decode(g) for g in sys.argv[3:]], float(sys.argv[2]))
        return
    if sys.argv[1:2] == ["--adopt"]:
        from jupyter_sched.schedulers.local.state import load_record

        app_dir, grace = sys.argv[2], float(sys.argv[3])
        record = load_record(app_dir)
        if record is None or not claim(app_dir):
            return
        groups = [r.group for r in record.replicas if not r.done and r.pid and r.pid_started is not None]
        signalled, killed = _stop(groups, grace)
        msg = f"owner process {record.owner_pid} exited; its replicas were stopped"
        _record_ends(app_dir, signalled, killed, msg)
        return
    owner = os.getppid()
    registered: Dict[int, Group] = {}
    apps: Dict[int, str] = {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for raw in sys.stdin.buffer:
        line = raw.decode(errors="replace").rstrip("\n")
        if line.startswith("+"):
            app_dir, _, encoded = line[1:].partition("\t")
            for text in encoded.split():
                group = Group.decode(text)
                registered[group.pid] = group
                apps[group.pid] = app_dir
        elif line.startswith("-"):
            for p in line[1:].split():
                registered.pop(int(p), None)
    # stdin closed: the owner is gone
    mine = {app_dir for app_dir in {apps[p] for p in registered} if claim(app_dir)}
    signalled, killed = _stop([g for p, g in registered.items() if apps[p] in mine], GRACE_S)
    for app_dir in mine:
        _record_ends(app_dir, signalled, killed, f"owner process {owner} exited; its replicas were stopped")


if __name__ == "__main__":
    main()

"""Ends local replicas when their owner dies, however it dies (including SIGKILL), even if the reaper died first.

The owner starts this module once, as a tiny child process whose stdin is a pipe from the owner, and
tells it, one line each:

* ``?["app_dir", "app_id"]`` before it starts an app (before the app's directory exists): a submit is
  under way;
* ``+["app_dir", ["pid:start", ...]]`` once the app is recorded, with its replicas' process groups: the
  submit is done, and these groups end with the owner;
* ``="app_dir"`` instead, when the submit failed (nothing of it is left) or the app is meant to outlive
  its owner (``outlive_owner``): the reaper has nothing to do for it;
* ``-pid:start...`` as groups end (a group that ended is never signalled anyway: its leader's start time
  is checked first; this only keeps the lists short);
* ``zpid:start`` for each zygote the owner starts (``zygote``): one that has not ended by itself
  ``ZYGOTE_GRACE_S`` after the owner died (it cannot: it is stopped) is killed, once the replicas are.

When the owner dies the pipe closes. The reaper then

* rolls back every submit that was under way: a replica spawned before its pid could be sent is found by
  its environment (``JUPYTER_SCHED_APP_ID``, which its own children inherit too), killed with its group,
  and the app's directory is removed, as a submit that fails leaves nothing. The pipe closes only once
  every process the owner forked has closed its copy, which a child does just before its ``exec``: so a
  replica caught between fork and exec is found too, once its exec has given it its environment (the
  reaper looks again for a short while);
* sends SIGTERM to every group of a recorded app still running, SIGKILL after a grace period, and
  records in the app's ``state.json`` why the app ended and each replica's exit code: -9 for one it had
  to SIGKILL, -15 for one that ended after its SIGTERM (the reaper is not the replicas' parent, so it
  cannot wait for their exit status; these are the signals that ended them). An app whose record says
  it ended is left alone;
* kills the owner's zygotes that are still there ``ZYGOTE_GRACE_S`` after it died (see above).

A signal handler cannot do this (SIGKILL cannot be caught), and ``PR_SET_PDEATHSIG`` is not used: it fires
when the *thread* that spawned a process exits (which would kill jobs launched from a worker thread), it
can only be set between fork and exec (``preexec_fn``, unsafe in a threaded process), it covers the leader
and not the processes it starts, and it does not exist outside Linux. The portable path
(``JUPYTER_SCHED_PORTABLE=1``, macOS) does the same as Linux, reading environments through psutil.

If the reaper itself dies (the OOM killer, a user ending stray Pythons), a watcher thread in the owner
notices at once, starts a new reaper and hands it every group still registered, so replicas never outlive
their owner for want of a reaper. Groups are named with their leader's start time, so a pid reused by an
unrelated process is never signalled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Dict, Iterable, List, Optional, Tuple

from jupyter_sched.schedulers.local.processes.groups import Group, kill_survivors, stop_groups
from jupyter_sched.schedulers.local.processes.posix import leave_signals_to_the_main_thread, signals_unblocked

GRACE_S = 3.0
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["jupyter_sched"].__file__ or "")))
"""Where this package is imported from (the folder holding ``jupyter_sched/``): the reaper's processes start
there, because ``python -m`` imports from the working directory first, and another copy of the package there
would speak another protocol. Taken from the package itself (imported before any of its modules), not counted
up from this file, whose depth changes when it moves."""
SETTLE_S = 0.5
"""How long a rollback keeps looking for replicas of the app that appear (a fork finishing its exec)."""
ROLLBACK_LIMIT_S = 10.0
ZYGOTE_GRACE_S = 6.0
"""How long after the owner's death a zygote may take to end by itself (it kills its groups after 4 s)."""
CLAIM_FILE = "reaper.claim"
"""Written in an app's directory by the one process that stops its orphaned replicas (pid:start time)."""


class ReaperClient:
    """The owner's side: a reaper shared by every local scheduler of the process, restarted (and handed
    every registered group) whenever it dies."""

    _lock = threading.Lock()
    _proc: Optional[subprocess.Popen] = None
    _pid: Optional[int] = None  # the owner pid that started it (a forked child must start its own)
    _watched: Dict[str, Dict[int, Group]] = {}  # app_dir -> {pid: group}
    _starting: Dict[str, str] = {}  # app_dir -> app id: submits under way
    _zygotes: Dict[int, Group] = {}  # pid -> the zygote processes of this owner
    _ended: "deque[Group]" = deque()
    """Groups that ended, told to the reaper with the next message. Appended by the IO loop, which takes no
    lock here: ``_lock`` is held while a reaper is started and while writing to its pipe."""
    restarts = 0
    """How many times a reaper was started again after dying (for tests and diagnostics)."""

    @classmethod
    def _start(cls) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_sched.schedulers.local.processes.reaper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C in the owner's terminal must not kill the reaper first
            close_fds=True,
            cwd=_HERE,
        )
        cls._proc = proc
        cls._drain_ended()
        for app_dir, app_id in cls._starting.items():  # adoption: the new reaper learns every submit under way
            cls._write("?" + json.dumps([app_dir, app_id]))
        for app_dir, groups in cls._watched.items():  # and every live group
            cls._write(_watch_line(app_dir, groups.values()))
        for group in cls._zygotes.values():
            cls._write("z" + group.encode())
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
            cls._starting = {}
            cls._zygotes = {}
            cls._ended = deque()
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
    def starting(cls, app_dir: str, app_id: str) -> None:
        """Before anything of the app exists: if this process dies before :meth:`watch` or :meth:`drop`,
        the reaper rolls the submit back. Returns once the reaper's pipe holds the message."""
        with cls._lock:
            cls._ensure()
            cls._drain_ended()
            cls._starting[app_dir] = app_id
            cls._write("?" + json.dumps([app_dir, app_id]))

    @classmethod
    def watch(cls, app_dir: str, groups: Iterable[Group]) -> None:
        """The app is recorded: its groups end with this process."""
        with cls._lock:
            cls._ensure()
            cls._drain_ended()
            cls._starting.pop(app_dir, None)
            groups = list(groups)
            cls._watched.setdefault(app_dir, {}).update({g.pid: g for g in groups})
            cls._write(_watch_line(app_dir, groups))

    @classmethod
    def drop(cls, app_dir: str) -> None:
        """Nothing to do for the app: its submit failed and was undone, or it outlives this process."""
        with cls._lock:
            if cls._pid != os.getpid() or cls._starting.pop(app_dir, None) is None:
                return
            cls._drain_ended()
            cls._write("=" + json.dumps(app_dir))

    @classmethod
    def zygote(cls, group: Group) -> None:
        """A zygote this process started (see ``zygote``): the reaper kills it if it outlives this process."""
        with cls._lock:
            cls._ensure()
            cls._drain_ended()
            cls._zygotes[group.pid] = group
            cls._write("z" + group.encode())

    @classmethod
    def forget(cls, groups: Iterable[Group]) -> None:
        """These groups ended (called on the IO loop: it never waits here, see ``_ended``)."""
        if cls._pid == os.getpid():
            cls._ended.extend(groups)

    @classmethod
    def _drain_ended(cls) -> None:
        """Under ``_lock``: tells the reaper the groups that ended since the last message."""
        gone = []
        while cls._ended:
            gone.append(cls._ended.popleft())
        if not gone:
            return
        for app_dir in list(cls._watched):
            groups = cls._watched[app_dir]
            for group in gone:
                if groups.get(group.pid) == group:
                    del groups[group.pid]
            if not groups:
                del cls._watched[app_dir]
        for group in gone:
            if cls._zygotes.get(group.pid) == group:
                del cls._zygotes[group.pid]
        cls._write("-" + " ".join(g.encode() for g in gone))

    @classmethod
    def reaper_pid(cls) -> Optional[int]:
        with cls._lock:
            return cls._proc.pid if cls._proc is not None and cls._pid == os.getpid() else None


def _watch_line(app_dir: str, groups: Iterable[Group]) -> str:
    return "+" + json.dumps([app_dir, [g.encode() for g in groups]])


def escalate_later(grace: float, groups: Iterable[Group]) -> None:
    """Starts a detached process that sends SIGKILL to the groups still alive after ``grace`` seconds."""
    _start_detached("--escalate", str(grace), *[g.encode() for g in groups])


def adopt_orphans(app_dir: str, grace: float) -> None:
    """Starts a detached reaper for one app whose owner died while its replicas ran on (the reaper was gone
    too): it stops them and records how they ended."""
    _start_detached("--adopt", app_dir, str(grace))


def _start_detached(*args: str) -> None:
    """This module, run with ``args`` in a session of its own, with no pipe to its starter (it outlives it)."""
    subprocess.Popen(
        [sys.executable, "-m", "jupyter_sched.schedulers.local.processes.reaper", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        cwd=_HERE,
    )


def claim(app_dir: str) -> bool:
    """Makes this process the one that stops the app's orphaned replicas; False if another live process
    already is (the owner's reaper and a reader's adopter may both notice the owner's death)."""
    from jupyter_sched.schedulers.local.processes.groups import process_start_time

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
    """Writes into the app's record how its unfinished replicas ended, and when: now, as this process saw
    them end (the record read as saved: a reconciling read would take their last log write for the end)."""
    from jupyter_sched.schedulers.local.record.state import load_record

    record = load_record(app_dir, reconcile=False)
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


def _ended(app_dir: str) -> bool:
    """The app's record says it ended (its last groups' end may not have reached the reaper)."""
    from jupyter_sched.schedulers.local.record.state import load_record

    record = load_record(app_dir, reconcile=False)
    return record is not None and record.done


def roll_back(app_dir: str, app_id: str, owner: int) -> None:
    """Undoes a submit that its owner did not live to finish: kills every process of the app (found by
    its environment, see the module docstring) and removes the app's directory, unless a record there
    names another owner."""
    import shutil

    from jupyter_sched.schedulers.local.record.state import load_record

    if os.path.basename(app_dir) != app_id or not os.path.isabs(app_dir):
        return  # not what an owner sends: touch nothing
    claim(app_dir)  # a reader that finds the record meanwhile leaves it to this process
    start = time.monotonic()
    quiet_until = start + SETTLE_S
    while True:
        found = _processes_of(app_dir, app_id)
        for pid in found:
            _kill_with_group(pid)
        now = time.monotonic()
        if (not found and now >= quiet_until) or now - start > ROLLBACK_LIMIT_S:
            break
        time.sleep(0.02)
    record = load_record(app_dir, reconcile=False)
    if record is None or record.owner_pid == owner:
        shutil.rmtree(app_dir, ignore_errors=True)


def _processes_of(app_dir: str, app_id: str) -> List[int]:
    """The processes whose environment names the app: its id, and (when they are set, as they are unless
    the role overrides them) a torchelastic path inside its directory, so that an app elsewhere that was
    given the same id (code that fixes ids, as TorchX's tests do) is not taken for it."""
    from jupyter_sched.schedulers.local.processes.posix import processes_with_env
    from jupyter_sched.schedulers.local.request.build import APP_ID_ENV, ERROR_FILE_ENV, PET_LOG_DIR_ENV

    inside = app_dir.rstrip(os.sep) + os.sep
    found = []
    for pid, env in processes_with_env(APP_ID_ENV, app_id).items():
        paths = [env[k] for k in (PET_LOG_DIR_ENV, ERROR_FILE_ENV) if k in env]
        if pid != os.getpid() and (not paths or any(p.startswith(inside) for p in paths)):
            found.append(pid)
    return found


def _kill_with_group(pid: int) -> None:
    """SIGKILL to ``pid`` and, if it leads one, its process group (a replica leads its own)."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(groups: List[Group], grace: float) -> Tuple[List[Group], List[Group]]:
    """SIGTERM, then SIGKILL after ``grace`` (blocking): the groups signalled, and those killed."""
    signalled: List[Group] = []
    stop_groups(groups, grace, later=lambda _grace, live: signalled.extend(live))
    return signalled, kill_survivors(signalled, grace)


def _read_line(
    line: str, registered: Dict[int, Group], apps: Dict[int, str], starting: Dict[str, str], zygotes: Dict[int, Group]
) -> None:
    """One message from the owner (see the module docstring; paths are JSON strings, so no name can break a
    line); ValueError or TypeError if it is not understood."""
    if line.startswith("?"):
        app_dir, app_id = json.loads(line[1:])
        starting[str(app_dir)] = str(app_id)
    elif line.startswith("+"):
        app_dir, encoded = json.loads(line[1:])
        starting.pop(app_dir, None)
        for group in [Group.decode(text) for text in encoded]:
            registered[group.pid] = group
            apps[group.pid] = str(app_dir)
    elif line.startswith("="):
        starting.pop(json.loads(line[1:]), None)
    elif line.startswith("-"):
        for group in [Group.decode(text) for text in line[1:].split()]:
            if group.started is None or registered.get(group.pid) == group:
                registered.pop(group.pid, None)
            if zygotes.get(group.pid) == group:
                del zygotes[group.pid]
    elif line.startswith("z"):
        group = Group.decode(line[1:])
        zygotes[group.pid] = group


def main() -> None:
    if sys.argv[1:2] == ["--escalate"]:
        kill_survivors([Group.decode(g) for g in sys.argv[3:]], float(sys.argv[2]))
        return
    if sys.argv[1:2] == ["--adopt"]:
        from jupyter_sched.schedulers.local.record.state import load_record

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
    starting: Dict[str, str] = {}
    zygotes: Dict[int, Group] = {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for raw in sys.stdin.buffer:
        line = raw.decode(errors="replace").rstrip("\n")
        try:
            _read_line(line, registered, apps, starting, zygotes)
        except (ValueError, TypeError):
            continue  # not understood: the rest must still be heard
    # stdin closed: the owner is gone
    gone_at = time.monotonic()
    by_app: Dict[str, List[Group]] = {}
    for pid, group in registered.items():
        by_app.setdefault(apps[pid], []).append(group)
    mine = {app_dir for app_dir in by_app if not _ended(app_dir) and claim(app_dir)}
    signalled = [g for app_dir in mine for g in by_app[app_dir] if g.signal(signal.SIGTERM)]
    for app_dir, app_id in starting.items():
        roll_back(app_dir, app_id, owner)
    killed = kill_survivors(signalled, GRACE_S)
    for app_dir in mine:
        _record_ends(app_dir, signalled, killed, f"owner process {owner} exited; its replicas were stopped")
    kill_survivors(list(zygotes.values()), max(0.0, gone_at + ZYGOTE_GRACE_S - time.monotonic()))


if __name__ == "__main__":
    main()

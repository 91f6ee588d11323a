"""Warm starts for local replicas: forked from a zygote (a small warm Python) instead of exec'ing a new one.

A role whose ``metadata["jupyter_sched.warm_start"]`` lists what to preload (function jobs list
cloudpickle and their bootstrap) may have its replicas forked from a zygote of this process's interpreter
that has already imported those, so a replica skips the interpreter's start and those imports. Each
forked replica is still its own process exactly as an exec'd one is: its own session and process group,
its own stdout and stderr pipes into the IO loop (``local_procs``), its own record (pid and start time in
``state.json``), usage sampling, cancel, and the owner's reaper stops it when the owner dies.

Its exit is heard by the owner itself, as an exec'd replica's is: the IO loop watches a pidfd of the
replica, and the zygote, its parent, keeps it a zombie (so its pid still names its process group while the
loop signals what it left behind) until the loop has handled the exit (``ZygoteProc.wait``). The exit
status is the zygote's report ``(pid, code)`` on a socket the loop also watches, or, when that has not
come (the zygote is stopped), the zombie's own ``/proc/PID/stat``: so a replica is followed, cancelled
and recorded whether or not its zygote answers. The zygote ends with its owner (end of file on that
socket; it kills what is still running after a grace period, see ``zygote_server``; the owner's reaper
kills a zygote that cannot, being stopped), and its replicas die with it (``PR_SET_PDEATHSIG``) if
something else kills it; the owner then reports them as killed (-9).

A zygote that does not answer a spawn within :data:`ANSWER_TIMEOUT_S` (stopped, or starved of CPU) is
*retired*, never killed while replicas of it run: the replica is started with exec at once (its dry-run
note and a warning say so), the next one gets a new zygote, and the replicas the old one started run to
their end, followed as above. The old zygote is killed once the last of them has ended (a stopped zygote
would otherwise stay), or by the reaper once the owner is gone. A request given up on never runs: its
replica, if the zygote forks it later, exits without running anything (the go pipe, see
``zygote_server``). The owner is not made a subreaper (``PR_SET_CHILD_SUBREAPER``) to adopt a dead
zygote's replicas: every orphaned descendant of the owner (a notebook's ``nohup cmd &``) would become its
child too, and stay a zombie that nothing in it reaps; the zombie's ``/proc`` status does the job.

A replica is forked only when a fresh interpreter would start the same (:func:`why_cold` says why not,
and the dry run says which): the role's command is this interpreter running a script, the replica's
environment starts Python as this process's does (``PYTHON*`` variables but ``PYTHONUNBUFFERED``, which
the zygote honours per replica, ``LD_*``, locale, ``TZ``, ``HOME``), and it neither outlives its owner
(``outlive_owner``) nor runs under ``memory_limit`` (applied before exec). Not on the portable path (no
pidfds or ``/proc`` there, and ``PR_SET_PDEATHSIG`` is Linux's), nor with ``JUPYTER_SCHED_ZYGOTE=0``.
Anything the zygote cannot do at spawn time (it died or did not answer; its site directories changed so
a new one starts first) falls back to the exec path for that replica.

Differences from an exec'd replica that remain: the replicas of one zygote share its hash seed (unless
``PYTHONHASHSEED`` is set), see the preloaded modules already imported, and keep the resource limits,
nice value and CPU affinity the owner had when the zygote started.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from typing import Callable, Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.schedulers.local.processes.groups import Group, process_start_time
from jupyter_sched.schedulers.local.processes.posix import PORTABLE, PORTABLE_ENV
from jupyter_sched.schedulers.local.processes.procs import ProcessLoop
from jupyter_sched.schedulers.local.processes.reaper import ReaperClient
from jupyter_sched.schedulers.local.request.popen import PopenRequest, ReplicaParam
from jupyter_sched.schedulers.local.usage.limit import LIMIT_ENV
from jupyter_sched.schedulers.warm_start import WARM_START
from jupyter_sched.specs import AppDef

__all__ = ["WARM_START", "ZYGOTE_ENV", "ZygotePool", "ZygoteProc", "plan_starts", "why_cold"]

logger = logging.getLogger(__name__)

ZYGOTE_ENV = "JUPYTER_SCHED_ZYGOTE"
"""Set to ``0`` to start every replica with exec (the fallback path; tests run both)."""
SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zygote_server.py")
_START_TIMEOUT_S = 30.0
"""How long the first spawn of a new zygote waits for it to have preloaded (imports on a loaded machine)."""
ANSWER_TIMEOUT_S = 1.0
"""How long a spawn waits for a ready zygote's answer (a fork takes milliseconds); one that does not
answer in time is retired and the replica exec'd."""
_HONOURED = ("PYTHONUNBUFFERED",)
"""Start variables a forked replica honours itself."""
_START_PREFIXES = ("PYTHON", "LD_", "LC_", "MALLOC_")
_START_NAMES = ("LANG", "LANGUAGE", "TZ", "HOME", "GLIBC_TUNABLES")


def is_start_var(name: str) -> bool:
    """Whether ``name`` changes how Python starts (read before any of a script's code runs)."""
    return (name.startswith(_START_PREFIXES) or name in _START_NAMES) and name not in _HONOURED


def start_key(env: Mapping[str, str]) -> Tuple[Tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in env.items() if is_start_var(k)))


def disabled() -> str:
    """Why no replica is forked in this process ("" when they may be)."""
    if os.environ.get(ZYGOTE_ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return f"{ZYGOTE_ENV}={os.environ[ZYGOTE_ENV]}"
    if PORTABLE:
        return f"the portable path ({PORTABLE_ENV}=1, or not Linux) starts every replica with exec"
    return ""


def why_cold(param: ReplicaParam, outlive_owner: bool, env: Optional[Mapping[str, str]] = None) -> str:
    """Why this replica cannot be forked from a zygote ("" when it can). ``env`` is its whole environment
    (default: :meth:`ReplicaParam.process_env`)."""
    reason = disabled()
    if reason:
        return reason
    if outlive_owner:
        return "outlive_owner: it must not depend on this process's zygote"
    if LIMIT_ENV in param.launch_env:
        return "memory_limit is applied before exec"
    argv = param.args
    if not argv or argv[0] != sys.executable:
        return f"its interpreter {argv[0] if argv else '(none)'!r} is not this process's ({sys.executable})"
    if len(argv) < 2 or argv[1].startswith("-") or not argv[1].endswith(".py"):
        return "its command is not 'python SCRIPT.py ...'"
    env = param.process_env() if env is None else env
    owner = os.environ
    differ = sorted(k for k in set(env) | set(owner) if is_start_var(k) and env.get(k) != owner.get(k))
    if differ:
        return f"its env sets {', '.join(differ)} otherwise than this process, which changes how Python starts"
    return ""


def plan_starts(request: PopenRequest, app: Optional[AppDef]) -> None:
    """Marks each replica of a warm-start role with how it will start (``warm_start`` and ``start_note``,
    which the dry run shows)."""
    if app is None:
        return
    for role in app.roles:
        preload = role.metadata.get(WARM_START)
        if not isinstance(preload, (list, tuple)) or role.name not in request.role_params:
            continue
        for param in request.role_params[role.name]:
            reason = why_cold(param, request.outlive_owner)
            python = param.args[0] if param.args else ""
            if reason:
                param.warm_start = None
                param.start_note = f"exec {python} (a cold start: {reason})"
            else:
                param.warm_start = [str(p) for p in preload]
                names = ", ".join(os.path.basename(p) for p in param.warm_start)
                param.start_note = (
                    f"forked from a warm {python} (a zygote that has loaded {names}); its own session,"
                    f" process group, pipes and record; exec'd instead if the zygote does not answer within"
                    f" {ANSWER_TIMEOUT_S:g} s"
                )


def _umask() -> int:
    """This process's umask, read without changing it (``os.umask`` would, for every thread)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


class ZygoteError(Exception):
    """The zygote cannot fork this replica; it is started with exec instead. ``fatal``: nor any other
    (it could not preload what it was given)."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


def zombie_exit_code(pid: int, parent: int) -> Optional[int]:
    """The Popen-style exit status of ``pid`` if it is a zombie child of ``parent`` (which has not reaped
    it), read from ``/proc/PID/stat``; None if it is not one, or its status cannot be read (the kernel shows
    it only to who may trace the process: a replica that made itself undumpable is left to its zygote's
    report)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        owner = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    # fields[0] is field 3 of proc(5): the state; field 4 the parent; field 52 the exit code (as waitpid's)
    if len(fields) < 50 or fields[0] != b"Z" or int(fields[1]) != parent or owner != os.geteuid():
        return None
    status = int(fields[49])
    return -(status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF


class _Stale(ZygoteError):
    """The zygote's site directories changed since it started: start a new zygote."""


class ZygoteProc:
    """The owner's handle on a forked replica, in the shape of ``subprocess.Popen`` that the IO loop uses
    (``pid``, ``poll``, ``wait``), plus :meth:`watch_exit` through which the loop hears its exit."""

    def __init__(self, pid: int, zygote: "Zygote") -> None:
        self.pid = pid
        self.returncode: Optional[int] = None
        self._zygote = zygote
        self._event = threading.Event()
        self._watcher: Optional[Callable[[], None]] = None
        self._released = False
        self._lock = threading.Lock()

    def poll(self) -> Optional[int]:
        """The exit status if it is known by now (never waits): the zygote's report if it has come (read
        here on the IO loop's thread), else the zombie's own, which needs no answer from the zygote."""
        if self.returncode is None and not self._zygote.dead and self._zygote.loop.in_loop_thread():
            self._zygote.read_reports()
        if self.returncode is None:
            code = zombie_exit_code(self.pid, self._zygote.proc.pid)
            if code is not None:
                self.exited(code)
        return self.returncode

    def watch_exit(self, callback: Callable[[], None]) -> None:
        """IO loop thread: ``callback()`` (on that thread) once the exit status is known, now if it is."""
        with self._lock:
            known = self.returncode is not None
            if not known:
                self._watcher = callback
        if known:
            callback()

    def exited(self, code: int) -> None:
        """The zygote reported the exit (IO loop thread, or a spawning thread for an early report)."""
        with self._lock:
            if self.returncode is not None:
                return
            self.returncode = code
            callback, self._watcher = self._watcher, None
        self._event.set()
        if callback is not None:
            callback()

    def wait(self, timeout: Optional[float] = None) -> int:
        """The exit status; the zygote then reaps the replica (so its pid may be reused from then on).
        The IO loop calls it once :meth:`poll` knows; the rare waits before that (a rollback, the loop's
        last resort) look at the zombie every 50 ms too, for a zygote that does not report."""
        deadline = None if timeout is None else time.monotonic() + timeout
        code = self.poll()
        while code is None:
            left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if left <= 0:
                raise subprocess.TimeoutExpired(["(forked replica)"], timeout or 0.0)
            if self._zygote.loop.in_loop_thread():  # nobody else reads the zygote's reports here
                self._zygote.read_until(self, left)
            else:
                self._event.wait(left)
            code = self.poll()
        if not self._released:
            self._released = True
            self._zygote.release(self.pid)
        return code


class Zygote:
    """The owner's side of one zygote process: spawns (from any thread, one at a time) and its reports
    (read on the IO loop's thread)."""

    def __init__(
        self, python: str, preload: Sequence[str], key: Tuple[Tuple[str, str], ...], loop: ProcessLoop
    ) -> None:
        self.preload = tuple(preload)
        self.key = key
        self.loop = loop
        self.dead = False
        self.retired = False
        self.unresponsive = ""
        """Why it was retired for not answering ("" if it was not): it is killed once its replicas are gone."""
        self.ready = False
        self.closing = False
        self._children: Dict[int, ZygoteProc] = {}
        self._early: Dict[int, int] = {}  # reports read before the spawn's answer was
        self._state = threading.Lock()
        self._ctl_lock = threading.Lock()
        self._releases: Deque[int] = collections.deque()
        ctl, ctl_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        status, status_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = dict(os.environ)
        for name in _HONOURED:
            env.pop(name, None)
        try:
            self.proc = subprocess.Popen(
                [python, SERVER, str(ctl_child.fileno()), str(status_child.fileno()), *self.preload],
                pass_fds=(ctl_child.fileno(), status_child.fileno()),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C in the owner's terminal is not for it
                env=env,
            )
        except BaseException:
            for s in (ctl, status):
                s.close()
            raise
        finally:
            ctl_child.close()
            status_child.close()
        status.setblocking(False)
        self.ctl, self.status = ctl, status
        self._status_fd = status.fileno()
        loop.watch_fd(self._status_fd, self.read_reports)
        # if this process dies, its reaper kills a zygote that cannot end itself (stopped) once the replicas
        # are stopped; the start time is read once the zygote is exec'd (a millisecond), before any spawn
        self.group = Group(self.proc.pid, process_start_time(self.proc.pid))
        if self.group.started is not None:  # (None: it died already, and a pid is never named without it)
            ReaperClient.zygote(self.group)

    # -- any thread -----------------------------------------------------------------------------------------
    def spawn(self, argv: List[str], env: Mapping[str, str], cwd: str, fds: Sequence[int]) -> ZygoteProc:
        """The forked replica; ZygoteError if this zygote does not serve it (the caller execs it). One spawn
        at a time: each waits at most :data:`ANSWER_TIMEOUT_S` for the answer (the first one also for the
        preloading, up to ``_START_TIMEOUT_S``), and a zygote that lets it pass is retired."""
        msg = json.dumps({"op": "spawn", "argv": argv, "env": dict(env), "cwd": cwd, "umask": _umask()}).encode()
        go_r, go_w = os.pipe()  # the replica runs its script once a byte comes (see zygote_server)
        try:
            with self._ctl_lock:
                reply = self._ask(msg, [*fds, go_r])
                os.close(go_r)
                go_r = -1
                proc = self._answered(reply)
            try:
                os.write(go_w, b"g")
            except OSError:
                pass  # it is gone already (its zygote was killed): its exit is reported as any other
            return proc
        finally:
            for fd in (go_r, go_w):  # unwritten, the go pipe's end makes a late fork of this request exit
                if fd >= 0:
                    os.close(fd)

    def _ask(self, msg: bytes, fds: List[int]) -> bytes:
        """Under ``_ctl_lock``: sends the request and returns the answer, waiting no longer than allowed."""
        if self.dead or self.retired:
            raise ZygoteError("the zygote is gone")
        what = "preload"
        try:
            if not self.ready:
                self.ctl.settimeout(_START_TIMEOUT_S)
                ready = self.ctl.recv(1 << 16)
                if not ready:
                    raise ConnectionError("it exited")
                self.ready = True
            what = "answer"
            self.ctl.settimeout(ANSWER_TIMEOUT_S)
            socket.send_fds(self.ctl, [msg], fds)
            reply = self.ctl.recv(1 << 16)
        except OSError as e:  # a timeout, or a broken socket: this zygote is of no more use
            if isinstance(e, TimeoutError):
                limit = _START_TIMEOUT_S if what == "preload" else ANSWER_TIMEOUT_S
                reason = f"the zygote (pid {self.proc.pid}) did not {what} within {limit:g} s"
            else:
                reason = f"the zygote (pid {self.proc.pid}) failed: {e!r}"
            self.give_up(reason)
            raise ZygoteError(reason) from e
        if not reply:
            self.give_up(f"the zygote (pid {self.proc.pid}) exited")
            raise ZygoteError("the zygote exited")
        return reply

    def _answered(self, reply: bytes) -> ZygoteProc:
        answer = json.loads(reply)
        if "stale" in answer:
            raise _Stale(answer["stale"])
        if "pid" not in answer:
            raise ZygoteError(str(answer.get("error", answer)), fatal=bool(answer.get("fatal")))
        pid = int(answer["pid"])
        proc = ZygoteProc(pid, self)
        with self._state:
            self._children[pid] = proc
            early = self._early.pop(pid, None)
            lost = self.dead
        if early is not None:
            proc.exited(early)
        elif lost:
            proc.exited(-int(signal.SIGKILL))
        return proc

    def give_up(self, reason: str) -> None:
        """Retires a zygote that did not answer (or whose socket broke): it serves no more spawns, and is
        killed once no replica of it runs (at once if none does). Never before: its replicas would die with
        it (``PR_SET_PDEATHSIG``); until then the owner follows them without it (see ``ZygoteProc.poll``)."""
        with self._state:
            running = sum(1 for p in self._children.values() if p.returncode is None)
        self.retired = True
        self.unresponsive = reason
        if running:
            logger.warning(
                "jupyter_sched: %s; it is retired (its %d running replica(s) run on, followed by this process)",
                reason, running,
            )  # fmt: skip
        self._end_if_idle()

    def _end_if_idle(self) -> None:
        with self._state:
            idle = not self._children
        if self.unresponsive and idle:
            self.kill()

    def release(self, pid: int) -> None:
        """Lets the zygote reap ``pid`` (non-blocking; queued for the IO loop if the socket is full)."""
        with self._state:
            self._children.pop(pid, None)
        if self.dead:
            return
        if self.unresponsive:  # its last replica: end it (its zombies go to init, which reaps them)
            self._end_if_idle()
        self._releases.append(pid)
        self._flush()

    def _flush(self) -> None:
        while True:  # each caller takes its own items off the queue: no lock, from any thread
            try:
                pid = self._releases.popleft()
            except IndexError:
                return
            try:
                self.status.send(b"r %d" % pid)
            except BlockingIOError:
                self._releases.appendleft(pid)
                self.loop.call_later(0.01, self._flush)
                return
            except OSError:
                return

    def retire(self) -> None:
        """Serve no more spawns; the zygote exits once its last replica is reaped."""
        with self._ctl_lock:
            if self.retired or self.dead:
                return
            self.retired = True
            try:
                self.ctl.send(b'{"op": "retire"}')
            except OSError:
                pass

    def kill(self) -> None:
        """Ends the zygote (its replicas die with it and are reported killed: only called when it has none)."""
        try:
            self.proc.kill()
        except OSError:
            pass

    def close(self) -> None:
        """The owner is done: the zygote reaps its replicas (stopping any left after its grace) and exits.
        The sockets are shut down, not closed: their descriptors stay taken until the IO loop, seeing the
        end of file, has stopped watching them (a closed number could be reused by a replica's pipe)."""
        self.closing = True
        for s in (self.ctl, self.status):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # -- the IO loop's thread ----------------------------------------------------------------------------
    def read_reports(self) -> None:
        """Reads every pending ``x PID CODE`` report and hands each to its replica."""
        while True:
            try:
                msg = self.status.recv(64)
            except BlockingIOError:
                return
            except OSError:
                msg = b""
            if not msg:
                self._lost()
                return
            _, pid, code = msg.split()
            self._report(int(pid), int(code))

    def read_until(self, proc: ZygoteProc, timeout: Optional[float]) -> None:
        """Reads reports (blocking) until ``proc``'s has come: for a wait on the IO loop's own thread."""
        import select
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while proc.returncode is None and not self.dead:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            ready, _, _ = select.select([self.status], [], [], 1.0 if left is None else min(left, 1.0))
            if ready:
                self.read_reports()

    def _report(self, pid: int, code: int) -> None:
        with self._state:
            proc = self._children.get(pid)
            if proc is None:
                self._early[pid] = code
        if proc is not None:
            proc.exited(code)

    def _lost(self) -> None:
        """The zygote exited: those of its replicas still running were killed with it (PDEATHSIG)."""
        was_dead = self.dead
        self.dead = True
        if not was_dead:
            self.loop.unwatch_fd(self._status_fd)
        with self._state:
            orphans = [p for p in self._children.values() if p.returncode is None]
        if orphans and not self.closing:
            logger.warning(
                "jupyter_sched: the zygote process %s exited; its %d running replica(s) were killed with it",
                self.proc.pid, len(orphans),
            )  # fmt: skip
        for proc in orphans:
            proc.exited(-int(signal.SIGKILL))
        if not was_dead:
            ReaperClient.forget([self.group])
            for s in (self.ctl, self.status):
                try:
                    s.close()
                except OSError:
                    pass
        self.proc.poll()  # reaped now if it has exited; else when it does (subprocess reaps a dropped Popen)


class ZygotePool:
    """The zygotes of one IO loop (one per local scheduler), one per preload list, started on first use."""

    def __init__(self, loop: ProcessLoop) -> None:
        self.loop = loop
        self._zygotes: Dict[Tuple[str, ...], Zygote] = {}
        self._lock = threading.Lock()
        self._devnull = -1
        self._closed = False
        self._broken: Dict[Tuple[str, ...], str] = {}  # preload -> why no zygote can serve it
        _POOLS.add(self)

    def spawn(self, param: ReplicaParam, env: Mapping[str, str], out_w: int, err_w: int) -> Optional[ZygoteProc]:
        """The replica forked from a zygote, or None if it must be started with exec (see :func:`why_cold`;
        a zygote that fails is logged and the replica is started with exec)."""
        if param.warm_start is None or why_cold(param, False, env) or self._closed:
            return None
        preload = tuple(param.warm_start)
        if preload in self._broken:
            return None
        key = start_key(os.environ)
        for attempt in range(2):
            zygote = self._zygote(preload, key, fresh=attempt > 0)
            if zygote is None:
                return None
            try:
                return zygote.spawn(param.args, env, param.cwd or os.getcwd(), [self._stdin(), out_w, err_w])
            except _Stale as e:
                logger.info("jupyter_sched: starting a new zygote (%s)", e)
                zygote.retire()
            except ZygoteError as e:
                logger.warning("jupyter_sched: starting a replica with exec: %s", e)
                python = param.args[0] if param.args else ""
                param.start_note = f"exec {python} (fell back from a warm start: {e})"  # what its dry run shows now
                if e.fatal:  # say it once, and exec from now on
                    self._broken[preload] = str(e)
                    zygote.retire()
                return None
        return None

    def _zygote(self, preload: Tuple[str, ...], key: Tuple[Tuple[str, str], ...], fresh: bool) -> Optional[Zygote]:
        with self._lock:
            if self._closed:
                return None
            current = self._zygotes.get(preload)
            if current is not None and not fresh and current.key == key and not (current.dead or current.retired):
                return current
            if current is not None:
                current.retire()  # the owner's environment changed, or it went stale: a new one
            try:
                zygote = Zygote(sys.executable, preload, key, self.loop)
            except OSError as e:
                logger.warning("jupyter_sched: could not start a zygote: %s", e)
                return None
            self._zygotes[preload] = zygote
            return zygote

    def _stdin(self) -> int:
        if self._devnull < 0:
            self._devnull = os.open(os.devnull, os.O_RDONLY)
        return self._devnull

    def pids(self) -> List[int]:
        """The zygote processes running for this pool (for tests and diagnostics)."""
        with self._lock:
            return [z.proc.pid for z in self._zygotes.values() if not z.dead]

    def close(self) -> None:
        """Lets every zygote go (each exits once its replicas are gone); idempotent."""
        with self._lock:
            self._closed = True
            zygotes, self._zygotes = list(self._zygotes.values()), {}
        for zygote in zygotes:
            zygote.close()
        if self._devnull >= 0:
            os.close(self._devnull)
            self._devnull = -1

    def forget_after_fork(self) -> None:
        """In a child forked from the owner: these zygotes are the parent's; drop our copies of their sockets
        (so each still sees its real owner's end), and never use them."""
        self._closed = True
        for zygote in self._zygotes.values():
            zygote.dead = True
            for s in (zygote.ctl, zygote.status):
                try:
                    s.close()
                except OSError:
                    pass
        self._zygotes = {}


_POOLS: "weakref.WeakSet[ZygotePool]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for pool in list(_POOLS):
        pool.forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

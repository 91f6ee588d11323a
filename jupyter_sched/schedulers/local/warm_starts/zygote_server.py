"""The zygote: a warm Python that forks local replicas instead of each exec'ing a fresh interpreter.

Run by its owner (``zygote.ZygotePool``) as ``python zygote_server.py CTL_FD STATUS_FD
PRELOAD...``, in a session of its own and with the owner's environment. It imports only the standard
library (it must not bring this package into the replicas it forks), preloads what it is told (modules by
name, scripts by path, compiled once) and then serves two sockets (``AF_UNIX``, ``SOCK_SEQPACKET``, so
each message arrives whole):

* ``CTL``: first ``{"ready": true}`` from the zygote, once it has preloaded (the owner waits longer for
  that than for an answer). Then ``{"op": "spawn", argv, env, cwd, umask}`` with four descriptors passed
  along (``SCM_RIGHTS``, as ``multiprocessing.forkserver`` passes them): the replica's stdin, stdout and
  stderr, and the read end of its *go* pipe. The answer is ``{"pid": N}`` (sent once the replica leads
  its own session, as ``Popen`` returns once the exec is done, so a cancel right after it finds the
  process group), ``{"error": ...}`` or ``{"stale": ...}`` (a package was installed since this zygote
  started: the owner starts a new one). ``{"op": "retire"}``: serve no more spawns, exit once the last
  replica is gone.
* The go pipe: the forked replica runs nothing of its script until the owner writes a byte into it, which
  the owner does once it has the answer. An owner that stopped waiting for the answer (this zygote did not
  answer in time: the owner started the replica with exec instead) closes the pipe unwritten, and a
  replica forked from that request later exits at once (status 70) without running anything: a request
  that was given up on never runs twice.
* ``STATUS``: ``x PID CODE`` to the owner when a replica exits (its Popen-style return code: ``-N`` for
  a signal). The replica stays a zombie, so its pid still names its process group, until the owner says
  ``r PID`` (reap it), exactly as the owner's own ``Popen`` children are reaped only once it has
  handled their exit. End of file on this socket means the owner is gone (or closed the pool): the
  zygote stops serving, waits for its replicas (the owner's reaper stops them) and after ``GRACE_S``
  kills the process groups of any still running, then exits.

A forked replica becomes what ``python SCRIPT ARGS...`` would have been: its own session and process
group, the passed descriptors as 0, 1 and 2 and nothing else open, its umask, working directory and whole
environment from the request, ``sys.argv``, ``sys.path[0]`` (the script's directory) and a fresh
``__main__`` module in which the script runs; the interpreter then ends as a fresh one would (atexit,
threads, exit status). ``PR_SET_PDEATHSIG`` kills it if the zygote itself dies.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import sys
import types
from typing import Any, Dict, List, Optional

GRACE_S = 4.0
"""After the owner is gone: how long replicas may run on (its reaper stops them within 3 s) before the
zygote kills their groups."""
_MAX_MSG = 1 << 20
_PR_SET_PDEATHSIG = 1


class _Child(BaseException):
    """Raised in a forked child to leave the serving loop with its request."""

    def __init__(self, request: Dict[str, Any], code: types.CodeType, script: str) -> None:
        super().__init__()
        self.request = request
        self.code = code
        self.script = script


class _Server:
    def __init__(self, ctl_fd: int, status_fd: int, preload: List[str]) -> None:
        self.ctl = socket.socket(fileno=ctl_fd)
        self.status = socket.socket(fileno=status_fd)
        _libc()
        self.children: Dict[int, bool] = {}  # pid -> its exit was reported
        self.codes: Dict[bytes, types.CodeType] = {}  # a script's source -> its compiled code
        self.preload_error = ""
        self.retired = False
        self.site_dirs = _site_dirs()
        self.sig_r, self.sig_w = os.pipe()
        os.set_blocking(self.sig_r, False)
        os.set_blocking(self.sig_w, False)
        self._preload(preload)

    def _preload(self, preload: List[str]) -> None:
        for item in preload:
            try:
                if item.endswith(".py"):
                    with open(item, "rb") as f:
                        self._compiled(f.read(), item)
                else:
                    __import__(item)
            except Exception as e:  # noqa: BLE001 - reported with every spawn request, which then fails
                self.preload_error = f"the zygote could not preload {item!r}: {e!r}"
                return

    def _compiled(self, source: bytes, path: str) -> types.CodeType:
        code = self.codes.get(source)
        if code is None:
            code = compile(source, path, "exec", dont_inherit=True)
            self.codes[source] = code
        return _refile(code, path) if code.co_filename != path else code

    # -- serving --------------------------------------------------------------------------------------------
    def serve(self) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])  # whatever thread of the owner started it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.sig_w)
        gc.freeze()  # what is preloaded stays untouched by the collector, so forked pages stay shared
        sel = selectors.DefaultSelector()
        sel.register(self.ctl, selectors.EVENT_READ, "ctl")
        sel.register(self.status, selectors.EVENT_READ, "status")
        sel.register(self.sig_r, selectors.EVENT_READ, "sig")
        self.sel = sel
        try:
            self.ctl.send(b'{"ready": true}')
        except OSError:
            pass  # the owner is gone: the status socket's end of file says so
        while True:
            for key, _ in sel.select():
                if key.data == "sig":
                    self._drain_signals()
                    self._report_exits()
                elif key.data == "status":
                    if not self._on_status():
                        self._stop_serving()
                        return
                elif key.data == "ctl":
                    self._on_ctl()
            if self.retired and not self.children:
                return

    def _drain_signals(self) -> None:
        try:
            while os.read(self.sig_r, 4096):
                pass
        except BlockingIOError:
            pass

    def _report_exits(self) -> None:
        for pid, reported in list(self.children.items()):
            if reported:
                continue
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                del self.children[pid]
                continue
            if info is None or info.si_pid == 0:
                continue
            code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            self.children[pid] = True
            try:
                self.status.send(f"x {pid} {code}".encode())
            except OSError:
                pass  # the owner is gone: the status socket's end of file says so

    def _on_status(self) -> bool:
        """The owner's releases; False at end of file (the owner is gone)."""
        try:
            msg = self.status.recv(64)
        except OSError:
            return False
        if not msg:
            return False
        op, _, pid_text = msg.decode().partition(" ")
        if op == "r":
            pid = int(pid_text)
            if self.children.pop(pid, None) is not None:
                try:
                    os.waitpid(pid, 0)  # a zombie already: returns at once
                except ChildProcessError:
                    pass
        return True

    def _on_ctl(self) -> None:
        try:
            msg, fds, flags, _ = socket.recv_fds(self.ctl, _MAX_MSG, 4)
        except OSError:
            msg, fds, flags = b"", [], 0
        if not msg:  # the owner closed its end (or retired us): serve no more spawns
            self.sel.unregister(self.ctl)
            self.retired = True
            return
        try:
            request = json.loads(msg)
            if request.get("op") == "retire":
                self.retired = True
                reply = None
            else:
                reply = self._spawn(request, fds, flags)  # in the forked child this raises _Child
        except Exception as e:  # noqa: BLE001 - a bad request is answered, never fatal
            reply = {"error": repr(e)}
        for fd in fds:
            os.close(fd)
        if reply is None:
            return
        try:
            self.ctl.send(json.dumps(reply).encode())
        except OSError:
            pass

    def _spawn(self, request: Dict[str, Any], fds: List[int], flags: int) -> Dict[str, Any]:
        """Forks the replica; an error answer makes the owner start it the usual way (exec), so whatever
        goes wrong here (a missing working directory or script) goes wrong exactly as it would there."""
        if self.preload_error:
            return {"error": self.preload_error, "fatal": True}
        if flags & socket.MSG_TRUNC or len(fds) != 4:
            return {"error": "the request was cut short"}
        stale = self._stale()
        if stale:
            return {"stale": stale}
        argv, cwd = request["argv"], request["cwd"]
        if not os.path.isdir(cwd):
            return {"error": f"no working directory {cwd!r}"}
        script = os.path.abspath(os.path.join(cwd, argv[1]))  # __file__ of a script is absolute
        with open(script, "rb") as f:
            code = self._compiled(f.read(), script)
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                self._into_child(fds)  # closes ready_w once it leads its own session
            except BaseException:  # noqa: BLE001 - nothing in the child may return into the server
                os._exit(70)
            raise _Child(request, code, script)
        self.children[pid] = False
        os.close(ready_w)
        try:
            os.read(ready_r, 1)  # as Popen returns only after the exec: the pid names a group once answered
        finally:
            os.close(ready_r)
        return {"pid": pid}

    def _into_child(self, fds: List[int]) -> None:
        parent = os.getppid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
        _parent_death_signal(signal.SIGKILL)
        if os.getppid() != parent:  # the zygote died before the line above: so must this replica
            os._exit(70)
        go = fds[3]
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        self.sel.close()
        self.ctl.close()
        self.status.close()
        os.closerange(3, go)  # the ready pipe among them: the zygote answers the owner now
        os.closerange(go + 1, _max_fd())
        if not os.read(go, 1):  # the owner gave up on this request and started the replica with exec
            os._exit(70)
        os.close(go)

    def _stale(self) -> str:
        """Why this zygote no longer starts Python as a fresh interpreter would ("" when it still does):
        a package was installed or removed since it started (a new ``.pth`` file is read only at start)."""
        now = _site_dirs()
        if now != self.site_dirs:
            changed = sorted(d for d in set(now) | set(self.site_dirs) if now.get(d) != self.site_dirs.get(d))
            return f"changed since the zygote started: {', '.join(changed)}"
        return ""

    def _stop_serving(self) -> None:
        """The owner is gone: wait for the replicas (its reaper stops them), kill the groups of those
        still running after ``GRACE_S``, reap them all."""
        import time

        deadline = time.monotonic() + GRACE_S
        while self.children:
            for pid in list(self.children):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    del self.children[pid]
            if not self.children:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for _ in self.sel.select(min(left, 0.1)):
                self._drain_signals()
        for pid in list(self.children):  # unreaped children: each pid is still its group's id
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _site_dirs() -> Dict[str, Optional[int]]:
    """``{directory: mtime}`` of the site directories (where installs add packages and ``.pth`` files)."""
    import site

    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE and site.USER_SITE:
        dirs.append(site.USER_SITE)
    out: Dict[str, Optional[int]] = {}
    for d in dirs:
        try:
            out[d] = os.stat(d).st_mtime_ns
        except OSError:
            out[d] = None
    return out


def _refile(code: types.CodeType, path: str) -> types.CodeType:
    """``code`` (and the code it holds) as if compiled from ``path``: a cached compile of the same source
    found under another name (each job directory has its own copy of the script)."""
    consts = tuple(_refile(c, path) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def _parent_death_signal(sig: int) -> None:
    libc = _libc()
    if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        import ctypes

        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


_LIBC: List[Any] = []


def _libc() -> Any:
    """The C library through ctypes, loaded once in the zygote (so each replica does not)."""
    if not _LIBC:
        import ctypes

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _max_fd() -> int:
    try:
        return max(int(os.sysconf("SC_OPEN_MAX")), 256)
    except (ValueError, OSError):
        return 65536


def _become(request: Dict[str, Any], code: types.CodeType, script: str) -> Dict[str, Any]:
    """In the forked child: the process state ``python SCRIPT ARGS...`` would start with; returns the
    namespace of the fresh ``__main__`` module to run ``code`` in."""
    import importlib

    os.umask(int(request["umask"]))
    os.chdir(request["cwd"])
    env = request["env"]
    os.environ.clear()
    os.environ.update(env)
    argv = list(request["argv"])
    sys.argv = argv[1:]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = argv
    if not getattr(sys.flags, "safe_path", False):  # where a fresh interpreter puts the script's directory
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    if env.get("PYTHONUNBUFFERED"):
        _unbuffered_stdio()
    importlib.invalidate_caches()
    import builtins
    from importlib.machinery import SourceFileLoader

    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__cached__ = None  # type: ignore[attr-defined]
    main.__loader__ = SourceFileLoader("__main__", script)
    sys.modules["__main__"] = main
    return main.__dict__


def _unbuffered_stdio() -> None:
    """``sys.stdout``/``sys.stderr`` as ``PYTHONUNBUFFERED`` makes them at start: raw, written through."""
    import io

    for name, fd in (("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(raw, encoding=old.encoding, errors=old.errors, newline="\n", write_through=True)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def main(argv: List[str]) -> None:
    """Serves until the owner is gone; in a forked child, runs the replica's script and exits."""
    server = _Server(int(argv[1]), int(argv[2]), argv[3:])
    try:
        server.serve()
        sys.exit(0)
    except _Child as forked:
        child = forked
    del server  # outside the handler: the script's exceptions must not chain to _Child
    namespace = _become(child.request, child.code, child.script)
    _exit(_run(child.code, namespace))


def _run(code: types.CodeType, namespace: Dict[str, Any]) -> int:
    """Runs the script as the interpreter runs ``__main__``: its exit status, an uncaught exception
    printed from the script's frame on (not this file's)."""
    try:
        exec(code, namespace)
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code & 0xFF
        _print_exit_message(e.code)
        return 1
    except BaseException as e:  # noqa: BLE001 - as the interpreter would: print it, exit 1 (or die of SIGINT)
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        try:
            sys.excepthook(type(e), e.with_traceback(tb), tb)
        except BaseException:  # noqa: BLE001
            pass
        return -int(signal.SIGINT) if isinstance(e, KeyboardInterrupt) else 1
    return 0


def _print_exit_message(message: object) -> None:
    try:
        sys.stderr.write(f"{message}\n")
    except BaseException:  # noqa: BLE001
        pass


def _exit(code: int) -> None:
    """Ends the replica as the interpreter would, minus the tear-down of every module: that tear-down
    would write to each page the replica shares with the zygote (copying them all), which costs more
    than the rest of a short replica. What runs: non-daemon threads are joined, ``atexit`` handlers run
    (``logging`` flushes, ``weakref.finalize`` objects), the replica's own garbage is collected (the
    zygote's was frozen), and stdout/stderr are flushed. Objects still reachable at that point are not
    finalized (Python never promises that they are)."""
    import atexit
    import threading

    # the two steps of the interpreter's own exit (multiprocessing's children call the first one too)
    for step in (threading._shutdown, atexit._run_exitfuncs, gc.collect):  # type: ignore[attr-defined]
        try:
            step()
        except BaseException:  # noqa: BLE001 - as at the interpreter's exit: report and go on
            try:
                sys.excepthook(*sys.exc_info())
            except BaseException:  # noqa: BLE001
                pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    if code == -int(signal.SIGINT):  # as the interpreter does after an uncaught KeyboardInterrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main(sys.argv)

"""Starting a local app's replicas: checks that run before anything starts, the spawn itself, rollback."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from typing import BinaryIO, Callable, Dict, List, Mapping, Optional

from jupyter_sched.schedulers.common.private_files import DIR_MODE, make_private_dirs
from jupyter_sched.schedulers.local.logs.sinks import FILE_MODE, LogSink
from jupyter_sched.schedulers.local.processes import detached
from jupyter_sched.schedulers.local.processes.groups import Group, process_start_time
from jupyter_sched.schedulers.local.processes.posix import FirstWrites
from jupyter_sched.schedulers.local.processes.procs import Process, Replica
from jupyter_sched.schedulers.local.record.state import ReplicaRecord
from jupyter_sched.schedulers.local.request.popen import PopenRequest, ReplicaParam
from jupyter_sched.schedulers.local.warm_starts.zygote import ZygotePool
from jupyter_sched.specs import InvalidAppError

EXIT_CODE_FILE = "exit_code"


def check_entrypoints(request: PopenRequest) -> None:
    """Every role's entrypoint must be an executable file (on PATH for a bare name): checked before any
    replica starts, so a typo never leaves half an app running."""
    for role_name, params in request.role_params.items():
        param = params[0]
        exe = param.args[0]
        path = param.replica_env.get("PATH")
        if "/" in exe:
            full = exe if os.path.isabs(exe) else os.path.join(param.cwd or os.getcwd(), exe)
            ok = os.path.isfile(full) and os.access(full, os.X_OK)
        else:
            ok = shutil.which(exe, path=path) is not None
        if not ok:
            raise InvalidAppError(
                f"role {role_name!r}.entrypoint",
                f"{exe!r} is not an executable file" + ("" if "/" in exe else " on PATH"),
                "Install it, fix the name, or give its absolute path (use 'sh' with '-c' for shell syntax)",
            )


def make_dirs(request: PopenRequest) -> None:
    """Creates every replica directory, 0700 (the replica may write its error file there at once). The
    app directory is always new, so whatever the log dir's own mode, no other user can read into it."""
    created = False
    try:
        make_private_dirs(os.path.dirname(request.log_dir))
        os.mkdir(request.log_dir, DIR_MODE)
        created = True
        for dirs in request.role_log_dirs.values():
            for d in dirs:
                make_private_dirs(d)
    except OSError as e:
        if created:
            shutil.rmtree(request.log_dir, ignore_errors=True)
        raise ValueError(
            f"log_dir: cannot create {request.log_dir!r} ({e.strerror})."
            " Set --cfg log_dir=<a writable directory>."
        ) from e


def spawn(
    param: ReplicaParam,
    rep_record: ReplicaRecord,
    detached: bool,
    on_done: Callable[[Replica], None],
    zygotes: Optional[ZygotePool] = None,
    owner_env: Optional[Mapping[str, str]] = None,
) -> Replica:
    """Starts one replica in its own session, without a shell, its output piped to the IO loop. Its
    environment is the owner's (``owner_env``, a copy of ``os.environ`` taken once per app: copying it
    per replica was a tenth of a 32-replica submit), then the request's env, then our launch additions
    (``process_env``). A replica planned to start warm is forked by one of ``zygotes`` (see ``zygote``),
    else exec'd."""
    env = param.process_env(owner_env)
    if detached:
        return _spawn_detached(param, env, rep_record, on_done)
    sinks = [LogSink(p) for p in (param.stdout, param.stderr, param.combined) if p]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    first_ready = FirstWrites([out_r, err_r])  # see posix: which pipe the replica writes to first
    try:
        forked = zygotes.spawn(param, env, out_w, err_w) if zygotes is not None else None
        proc: Process = forked or subprocess.Popen(
            param.args,
            env=env,
            cwd=param.cwd,
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
        )
    except BaseException:
        first_ready.close()
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    _record_start(rep_record, proc.pid)
    return Replica(
        proc=proc,
        out_fd=out_r,
        err_fd=err_r,
        stdout=sinks[0],
        stderr=sinks[1],
        combined=sinks[2],
        on_done=on_done,
        first_ready=first_ready,
    )


def _spawn_detached(
    param: ReplicaParam, env: Dict[str, str], rep_record: ReplicaRecord, on_done: Callable[[Replica], None]
) -> Replica:
    """``outlive_owner``: the replica writes straight to its log files (no pipe to this process, so it
    survives it) under a wrapper that records its exit code and end time (see ``detached``). The wrapper
    is run as a file, isolated (``-I``: only the standard library, not even its own directory), not with
    ``-m``: importing our package on the way took 0.15 s idle, 0.6 s on a busy machine, before the
    command started, all counted in the replica's time."""
    replica_dir = os.path.dirname(param.stdout or "")
    exit_file = os.path.join(replica_dir, EXIT_CODE_FILE)
    with _private(param.stdout) as out, _private(param.stderr) as err:
        proc = subprocess.Popen(
            [sys.executable, "-I", detached.__file__, exit_file, *param.args],
            env=env,
            cwd=param.cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
    _record_start(rep_record, proc.pid)
    sinks = [LogSink(p) for p in (param.stdout, param.stderr, param.combined) if p]
    return Replica(
        proc=proc,
        out_fd=-1,
        err_fd=-1,
        stdout=sinks[0],
        stderr=sinks[1],
        combined=sinks[2],
        on_done=on_done,
    )


def _record_start(rep_record: ReplicaRecord, pid: int) -> None:
    """The pid and when it started; :func:`record_start_times` adds the proof of identity."""
    rep_record.pid = pid
    rep_record.started = time.time()


def record_start_times(rep_records: List[ReplicaRecord]) -> None:
    """Each started replica's process start time, which proves later that a pid is still this replica.

    Called once every replica of an app has been spawned, before the app is recorded: the kernel answers
    ``/proc/PID/stat`` only once the process's exec has finished (about a millisecond), so reading it right
    after each spawn would wait for every replica's exec in turn, while here they have overlapped."""
    for rep_record in rep_records:
        if rep_record.pid:
            rep_record.pid_started = process_start_time(rep_record.pid)


def _private(path: Optional[str]) -> BinaryIO:
    """A log file opened for appending, created 0600."""
    if not path:
        return open(os.devnull, "ab")
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE), "ab")


def rollback(started: List[Replica], request: PopenRequest) -> None:
    """Kills the replicas already started and removes the app's directory: all or nothing."""
    for rep in started:
        Group(rep.pid).signal(signal.SIGKILL)
    for rep in started:
        rep.proc.wait()
        if rep.first_ready is not None:
            rep.first_ready.close()
        for fd in (rep.out_fd, rep.err_fd):
            if fd >= 0:
                os.close(fd)
        for sink in (rep.stdout, rep.stderr, rep.combined):
            sink.close()
    shutil.rmtree(request.log_dir, ignore_errors=True)

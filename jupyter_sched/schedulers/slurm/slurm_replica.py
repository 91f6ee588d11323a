"""Runs one replica of a Slurm app on its node and writes its output the way the local backend does.

Usage (the batch script of a slurm app runs it under ``srun``)::

    python3 slurm_replica.py REPLICA_DIR [-C DIR] [-e KEY=VALUE]... -- COMMAND [ARG]...

``-C DIR`` runs the command in DIR and fails (exit 1, the reason in the logs) when DIR is missing: ``srun
--chdir`` alone falls back to ``/tmp`` with a warning nobody reads.

The command's stdout and stderr go to ``REPLICA_DIR/{stdout,stderr,combined}.log`` as they are read, each
with an index file (``.idx``: one record per chunk, the file size after it and when it was read) so that
``log_iter`` can select lines by time. Files are opened in append mode, so a retried (requeued) job adds to
its replicas' logs rather than truncating them while someone is reading.

This file is copied into each app's job directory and run by whatever ``python3`` the compute node has: it
uses the standard library only and must not import jupyter_sched. Its name is part of that contract (the
batch script names it), so it keeps the ``slurm_`` prefix the other modules of this package dropped.

The wrapper passes SIGTERM/SIGINT/SIGHUP on to the command and keeps copying until the command has ended,
then exits with the command's status (re-raising a fatal signal), so Slurm records the command's outcome
as the step's state and exit code.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import sys
import time

INDEX_RECORD = struct.Struct("<Qd")  # same layout as the local backend's log index
_READ_SIZE = 1 << 16
_DRAIN_AFTER_EXIT = 2.0  # seconds to keep reading pipes held open by the command's orphans


class _Sink:
    """A log file plus its time index, both appended to."""

    def __init__(self, path: str) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        self.fd = os.open(path, flags, 0o600)  # what the replica prints is its owner's business
        self.index_fd = os.open(path[: -len(".log")] + ".idx", flags, 0o600)
        self.size = os.fstat(self.fd).st_size

    def write(self, data: bytes, now: float) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        self.size += len(data)
        os.write(self.index_fd, INDEX_RECORD.pack(self.size, now))


_USAGE = "usage: slurm_replica.py REPLICA_DIR [-C DIR] [-e KEY=VALUE]... -- COMMAND [ARG]..."


def _parse(argv: list[str]) -> tuple[str, str | None, dict[str, str], list[str]]:
    if len(argv) < 3 or "--" not in argv:
        raise SystemExit(_USAGE)
    replica_dir = argv[0]
    sep = argv.index("--")
    env: dict[str, str] = {}
    cwd = None
    opts = argv[1:sep]
    while opts:
        flag = opts.pop(0)
        if flag == "-C" and opts:
            cwd = opts.pop(0)
        elif flag == "-e" and opts and "=" in opts[0]:
            key, _, value = opts.pop(0).partition("=")
            env[key] = value
        else:
            raise SystemExit(f"slurm_replica.py: bad option {flag!r}; {_USAGE}")
    command = argv[sep + 1 :]
    if not command:
        raise SystemExit("slurm_replica.py: no command after --")
    return replica_dir, cwd, env, command


def main(argv: list[str]) -> int:
    replica_dir, cwd, extra_env, command = _parse(argv)
    os.makedirs(replica_dir, mode=0o700, exist_ok=True)
    out = _Sink(os.path.join(replica_dir, "stdout.log"))
    err = _Sink(os.path.join(replica_dir, "stderr.log"))
    combined = _Sink(os.path.join(replica_dir, "combined.log"))
    node = os.environ.get("SLURMD_NODENAME", "this node")

    def fail(msg: str, code: int) -> int:
        data = f"jupyter_sched: {msg}\n".encode()
        now = time.time()
        err.write(data, now)
        combined.write(data, now)
        return code

    if cwd is not None:
        try:
            os.chdir(cwd)
        except OSError as e:
            return fail(f"cannot run in {cwd!r} on {node}: {e.strerror or e}; set the run option cwd to a"
                        " directory every node sees", 1)  # fmt: skip
    env = dict(os.environ)
    env.update(extra_env)
    try:
        proc = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as e:
        return fail(f"cannot start {command[0]!r} on {node}: {e}", 126 if isinstance(e, PermissionError) else 127)

    def forward(signum: int, _frame: object) -> None:
        try:
            proc.send_signal(signum)
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)

    assert proc.stdout is not None and proc.stderr is not None
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    open_fds = set(sinks)
    exited_at = None
    while open_fds:
        if exited_at is None and proc.poll() is not None:
            exited_at = time.monotonic()
        if exited_at is not None and time.monotonic() - exited_at > _DRAIN_AFTER_EXIT:
            break  # orphans of the command still hold the pipes: stop waiting for them
        try:
            ready, _, _ = select.select(list(open_fds), [], [], 0.5)
        except InterruptedError:
            continue
        for fd in ready:
            data = os.read(fd, _READ_SIZE)
            if not data:
                open_fds.discard(fd)
                continue
            now = time.time()
            sinks[fd].write(data, now)
            combined.write(data, now)
    code = proc.wait()
    if code < 0:  # killed by a signal: die of the same one, so Slurm records it as such
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL and SIGSTOP cannot be caught, so they need no reset
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

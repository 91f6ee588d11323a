"""Runs one replica that must outlive its owner, and records its exit code beside its logs.

Usage: ``python -m jupyter_sched.schedulers.local.detached <exit_code_file> <argv...>``. The owner starts
this wrapper as the leader of a new process group with stdout/stderr already pointing at the log files.
It runs the command in the same group, ignores SIGTERM/SIGINT itself (a cancel signals the whole group, so
the command still gets them) and writes the command's exit status when it ends, so that a restarted kernel
can still tell SUCCEEDED from FAILED.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    exit_file, command = argv[0], argv[1:]
    try:
        proc = subprocess.Popen(command)
    except OSError as e:
        print(f"jupyter_sched: cannot start {command[0]!r}: {e}", file=sys.stderr)
        code = 127
    else:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = proc.wait()
    tmp = exit_file + ".tmp"
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(str(code))
    os.replace(tmp, exit_file)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Runs one replica that must outlive its owner, and records its exit code and end time beside its logs.

Usage: ``python -I .../detached.py <exit_code_file> <argv...>`` (run as a file: it imports only the standard
library, so it starts in milliseconds, see ``spawn``). The owner starts this wrapper as the leader of a new
process group with stdout/stderr already pointing at the log files. It runs the command in the same group,
ignores SIGTERM/SIGINT itself (a cancel signals the whole group, so the command still gets them) and, when
the command ends, writes its exit status and the time it ended (two lines: ``0`` then ``1795798509.24``),
so that a restarted kernel or the CLI can still tell SUCCEEDED from FAILED and how long it took once the
owner is gone: nobody else sees it end then, and a reader must not take the moment it reads for the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


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
    ended = time.time()
    tmp = exit_file + ".tmp"
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(f"{code}\n{ended!r}\n")
    os.replace(tmp, exit_file)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

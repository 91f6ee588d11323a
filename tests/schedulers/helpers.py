"""Small real programs the scheduler tests run as replicas (no mocks)."""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, Optional

from jupyter_sched.specs import AppDef, Role

PY = sys.executable


def py_role(code: str, name: str = "main", num_replicas: int = 1, **kwargs) -> Role:  # type: ignore[no-untyped-def]
    return Role(name, "unused", entrypoint=PY, args=["-c", code], num_replicas=num_replicas, **kwargs)


def py_app(code: str, name: str = "app", num_replicas: int = 1, **kwargs) -> AppDef:  # type: ignore[no-untyped-def]
    return AppDef(name, [py_role(code, num_replicas=num_replicas, **kwargs)])


def sh_app(script: str, name: str = "app", num_replicas: int = 1) -> AppDef:
    return AppDef(name, [Role("main", "unused", entrypoint="sh", args=["-c", script], num_replicas=num_replicas)])


def wait_until(predicate: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    """Polls ``predicate`` until true; fails (never passes silently) after ``timeout`` seconds (a bound for
    a loaded 2-core machine, not a timing assertion: what is waited for normally takes well under a second)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


def wait_for_file(path: str, timeout: float = 30.0) -> None:
    wait_until(lambda: os.path.exists(path), timeout, f"file {path}")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def handshake_code(lines: list[str], gate: Optional[str]) -> str:
    """Python that writes each item of ``lines`` then (if ``gate``) waits for that file to exist."""
    return (
        "import os, sys, time\n"
        f"for item in {lines!r}:\n"
        "    sys.stdout.write(item); sys.stdout.flush()\n"
        + (f"while not os.path.exists({gate!r}): time.sleep(0.005)\n" if gate else "")
    )

"""A program for the IO loop's guard test: many local apps start and end concurrently while every call the
loop thread makes is watched for one that waits on another thread or process.

    python loop_guard.py <log_dir> <workers> <apps per worker>

It prints one JSON line: ``blocking`` (each blocking call seen on the loop thread: what, and the stack that
made it) and ``wrong`` (apps that did not end as expected). The loop thread is found by its name; a
profile function (``threading.setprofile``) is installed in every thread the program starts and stays only
in the loop's.

What counts as blocking, on the loop thread:

* ``threading.Condition.wait`` (under ``Event.wait``, ``Thread.start``, ``queue.Queue``, ``Barrier``...),
  ``threading.Thread.join`` of a live thread, ``time.sleep``, an explicit ``acquire`` of a held lock;
* ``subprocess.Popen.wait``/``communicate`` on a process that has not exited, and starting a process
  (``Popen`` waits for the child's exec).

A ``with lock:`` raises no profile event, so contention on a lock taken that way is not seen here; the loop
only ever takes locks whose holders do nothing but update a list or dict under them (see ``local_procs``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Tuple

from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, AppState, Role

LOOP_THREAD = "jupyter_sched-local-io"
_PROBE = threading.Condition._is_owned.__code__  # type: ignore[attr-defined]
"""Tries a lock without blocking (``acquire(False)``), to tell whether it is held."""


def _exited(proc: subprocess.Popen) -> bool:
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True  # reaped already


class BlockingCalls:
    """Records each blocking call made on the loop thread, with the stack that made it."""

    def __init__(self) -> None:
        self.found: List[Dict[str, str]] = []
        self._checks: Dict[Any, Tuple[str, Callable[[Any], bool]]] = {
            threading.Condition.wait.__code__: ("Condition.wait", lambda f: True),
            threading.Thread.join.__code__: ("Thread.join", lambda f: f.f_locals["self"].is_alive()),
            subprocess.Popen.wait.__code__: ("Popen.wait", lambda f: not _exited(f.f_locals["self"])),
            subprocess.Popen.communicate.__code__: ("Popen.communicate", lambda f: not _exited(f.f_locals["self"])),
            subprocess.Popen.__init__.__code__: ("Popen (starting a process)", lambda f: True),
        }

    def install(self) -> None:
        threading.setprofile(self._first_event)

    def _first_event(self, frame: Any, event: str, arg: Any) -> None:
        if threading.current_thread().name != LOOP_THREAD:
            sys.setprofile(None)  # not the loop: this thread runs unobserved
            return
        sys.setprofile(self._event)
        self._event(frame, event, arg)

    def _event(self, frame: Any, event: str, arg: Any) -> None:
        what = ""
        if event == "call":
            check = self._checks.get(frame.f_code)
            if check is not None and check[1](frame):
                what = check[0]
        elif event == "c_call":
            if arg is time.sleep:
                what = "time.sleep"
            elif getattr(arg, "__name__", "") == "acquire" and frame.f_code is not _PROBE:
                lock: Any = getattr(arg, "__self__", None)
                if hasattr(lock, "locked") and lock.locked():
                    what = "acquire of a held lock"
        if what:
            stack = "".join(traceback.format_stack(frame if event == "c_call" else frame.f_back, limit=12))
            self.found.append({"what": what, "stack": stack})


def sh(name: str, script: str, n: int = 1) -> AppDef:
    return AppDef(name, [Role("main", "x", entrypoint="sh", args=["-c", script], num_replicas=n)])


def apps(python: str) -> List[Tuple[AppDef, Dict[str, Any], AppState, bool]]:
    """(app, its run options, the state it must end in, cancel it while it runs)."""
    sampled = "import time\nfor i in range(3):\n    print(i, flush=True); time.sleep(0.45)\n"
    greedy = "b = bytearray(256 << 20)"
    return [
        (AppDef("true", [Role("main", "x", entrypoint="true")]), {}, AppState.SUCCEEDED, False),
        (sh("both", "echo out; echo err >&2", 2), {}, AppState.SUCCEEDED, False),
        (AppDef("false", [Role("main", "x", entrypoint="false")]), {}, AppState.FAILED, False),
        (AppDef("sampled", [Role("main", "x", entrypoint=python, args=["-c", sampled])]), {}, AppState.SUCCEEDED,
         False),
        (sh("cancelled", "echo started; exec sleep 60"), {}, AppState.CANCELLED, True),
        (sh("short", "sleep 0.05; echo done", 3), {}, AppState.SUCCEEDED, False),
        (AppDef("limited", [Role("main", "x", entrypoint=python, args=["-c", greedy])]), {"memory_limit": "64m"},
         AppState.FAILED, False),
        (sh("detached", "echo away"), {"outlive_owner": True}, AppState.SUCCEEDED, False),
    ]


def main() -> None:
    log_dir, workers, per_worker = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    guard = BlockingCalls()
    guard.install()
    wrong: List[str] = []
    kinds = apps(sys.executable)
    with get_runner("guard", log_dir=log_dir) as runner:

        def work(w: int) -> None:
            for i in range(per_worker):
                app, cfg, expected, cancel = kinds[(w + i) % len(kinds)]
                handle = runner.run(app, "local_cwd", {"log_dir": log_dir, **cfg})
                if cancel:
                    time.sleep(0.05)
                    runner.cancel(handle)
                status = runner.wait(handle, wait_interval=1.0, timeout=120)
                if status is None or status.state != expected:
                    wrong.append(f"{app.name}: {status}")

        threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(json.dumps({"blocking": guard.found, "wrong": wrong}))


if __name__ == "__main__":
    main()

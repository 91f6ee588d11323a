"""The local backend's portable path really runs without Linux's epoll, pidfd and /proc (as on macOS):
those calls are removed in a child process, which then runs, follows, cancels and describes apps."""

from __future__ import annotations

import os
import subprocess
import textwrap

from ..helpers import PY

SCRIPT = textwrap.dedent(
    """
    import builtins, os, select, signal, sys, time
    del select.epoll                      # as on macOS: selectors falls back to poll/kqueue
    if hasattr(os, "pidfd_open"):
        del os.pidfd_open
    real_open = builtins.open
    def no_proc(path, *args, **kwargs):  # psutil reads /proc on Linux, as it reads sysctl on macOS
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if str(path).startswith("/proc") and not caller.startswith("psutil"):
            raise AssertionError(f"the portable path read {path}")
        return real_open(path, *args, **kwargs)
    builtins.open = no_proc
    from jupyter_sched.schedulers.local.processes import posix as local_platform
    assert local_platform.PORTABLE
    from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
    from jupyter_sched.specs import AppDef, Role
    s = create_cwd_scheduler("portable")
    log_dir = sys.argv[1]
    ok = s.submit(AppDef("ok", [Role("main", "x", entrypoint="sh", args=["-c", "echo out; echo err >&2"])]),
                  {"log_dir": log_dir})
    slow = s.submit(AppDef("slow", [Role("main", "x", entrypoint="sleep", args=["600"])]), {"log_dir": log_dir})
    items = list(s.log_iter(ok, "main", 0, should_tail=True))
    assert sorted(items) == ["err\\n", "out\\n"], items  # both; their order is promised on Linux only
    s.cancel(slow)
    while not s.describe(slow).state.is_terminal:
        time.sleep(0.01)
    fresh = create_cwd_scheduler("portable", log_dir=log_dir)   # another reader: identity via psutil
    rep = fresh.describe(slow).roles_statuses[0].replicas[0]
    print(s.describe(ok).state, fresh.describe(slow).state, rep.exit_code)
    """
)


def test_the_portable_path_needs_no_linux_only_call(log_dir: str) -> None:
    env = {**os.environ, "JUPYTER_SCHED_PORTABLE": "1"}
    proc = subprocess.run([PY, "-c", SCRIPT, log_dir], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["SUCCEEDED", "CANCELLED", "-15"]

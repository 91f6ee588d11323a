"""Usage of local replicas with real processes: live samples, totals kept after the end (seen from
another process too), the opt-in memory limit, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from jupyter_sched.schedulers.local.usage.limit import enforcement
from jupyter_sched.schedulers.local_scheduler import LocalScheduler, create_cwd_scheduler
from jupyter_sched.schedulers.usage_api import UsageMixin
from jupyter_sched.specs import AppDef, AppState, InvalidAppError, Role

from ..helpers import PY, py_app, wait_until
from ..usage_programs import MB, hog_code


@pytest.fixture
def sched():  # type: ignore[no-untyped-def]
    s = create_cwd_scheduler("test")
    yield s
    s.close()


def _replica(sched: LocalScheduler, app_id: str):  # type: ignore[no-untyped-def]
    return sched.describe(app_id).roles_statuses[0].replicas[0]


def test_a_replica_using_200mb_and_a_core_shows_it_live_and_keeps_its_peak(
    sched: LocalScheduler, log_dir: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(sched, UsageMixin)
    stop = str(tmp_path / "stop")
    app_id = sched.submit(py_app(hog_code(200, stop), name="hog"), {"log_dir": log_dir})
    seen = []

    def busy_and_big() -> bool:  # each at some sample: a loaded 2-core machine lends a spinner less now and then
        time.sleep(0.5)  # poll interval: each call asks the backend
        seen.extend(sched.usage(app_id))
        return any(s.rss_bytes >= 180 * MB for s in seen) and any(s.cpu_percent >= 50 for s in seen)
    wait_until(busy_and_big, 170, "a sample with >= 180 MB and >= 50% CPU")
    live = seen[-1]
    assert (live.role, live.replica, live.running) == ("main", 0, True)
    assert live.peak_rss_bytes >= live.rss_bytes and live.cpu_seconds > 0
    assert set(live.to_json()) == {
        "role", "replica", "cpu_percent", "cpu_seconds", "rss_bytes", "peak_rss_bytes", "mem_limit_bytes",
    }
    assert live.mem_limit_bytes is None  # no limit unless asked for

    open(stop, "w").close()
    wait_until(lambda: sched.describe(app_id).state.is_terminal, 60, "the hog to end")
    rep = _replica(sched, app_id)
    assert rep.state == AppState.SUCCEEDED
    assert rep.usage is not None and rep.usage.peak_rss_bytes >= 180 * MB
    assert rep.usage.cpu_seconds > 0 and rep.usage.wall_seconds >= rep.usage.cpu_seconds * 0.5
    [final] = sched.usage(app_id)
    assert not final.running and final.peak_rss_bytes == rep.usage.peak_rss_bytes

    # Another process (a kernel restart, the CLI) reads the totals from the record.
    script = (
        "import json, sys\n"
        "from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler\n"
        f"s = create_cwd_scheduler('test', log_dir={log_dir!r})\n"
        f"rep = s.describe({app_id!r}).roles_statuses[0].replicas[0]\n"
        "print(json.dumps(rep.usage.to_json()))\n"
    )
    out = subprocess.run([PY, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["peak_rss_bytes"] == rep.usage.peak_rss_bytes


def test_usage_covers_the_whole_process_tree(sched: LocalScheduler, log_dir: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    stop, ready = str(tmp_path / "stop"), str(tmp_path / "ready")
    child = hog_code(120, stop, ready)
    parent = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {child!r}])\n"
    app_id = sched.submit(py_app(parent, name="tree"), {"log_dir": log_dir})
    wait_until(lambda: os.path.exists(ready), 60, "the child to allocate")
    wait_until(lambda: sched.usage(app_id)[0].rss_bytes >= 120 * MB, 30, "the child's memory in the sample")
    open(stop, "w").close()
    wait_until(lambda: sched.describe(app_id).state.is_terminal, 60, "the app to end")
    assert _replica(sched, app_id).usage.peak_rss_bytes >= 120 * MB


def test_memory_limit_is_opt_in_and_a_replica_over_it_says_so(sched: LocalScheduler, log_dir: str) -> None:
    app_id = sched.submit(py_app(hog_code(200), name="over"), {"log_dir": log_dir, "memory_limit": "128m"})
    wait_until(lambda: sched.describe(app_id).state.is_terminal, 60, "the replica to fail at its limit")
    desc = sched.describe(app_id)
    rep = desc.roles_statuses[0].replicas[0]
    assert rep.state == AppState.FAILED
    assert rep.usage.mem_limit_bytes == 128 * MB
    assert enforcement() == "rlimit"  # this machine: no writable cgroup v2 memory controller
    assert rep.msg.startswith("failed: out of memory (limit 128 MiB, peak ")
    assert rep.msg.endswith(" in use: the limit also counts memory reserved but not used)")
    assert desc.msg.startswith("main[0]: failed: out of memory")

    # Under the limit, the same program runs; the limit reaches it in the environment.
    ok = sched.submit(
        py_app("import os; assert os.environ['JUPYTER_SCHED_MEMORY_LIMIT'] == str(512 << 20)\n"
               "b = bytearray(100 << 20)", name="under"),
        {"log_dir": log_dir, "memory_limit": "512m"},
    )
    wait_until(lambda: sched.describe(ok).state.is_terminal, 60, "the replica under its limit")
    assert sched.describe(ok).state == AppState.SUCCEEDED
    assert sched.describe(ok).msg == "<NONE>"


def test_bad_memory_limit_and_missing_entrypoint_fail_before_anything_starts(
    sched: LocalScheduler, log_dir: str
) -> None:
    with pytest.raises(ValueError, match=r"memory_limit='lots': give a positive size with a unit"):
        sched.submit_dryrun(py_app("pass"), {"log_dir": log_dir, "memory_limit": "lots"})
    app = AppDef("typo", [Role("main", "x", entrypoint="no-such-program-xyz")])
    with pytest.raises(InvalidAppError, match="no-such-program-xyz"):
        sched.submit(app, {"log_dir": log_dir, "memory_limit": "1g"})
    assert os.listdir(log_dir) == []


def test_usage_of_an_unknown_app_raises(sched: LocalScheduler) -> None:
    from jupyter_sched.specs import UnknownAppException

    with pytest.raises(UnknownAppException):
        sched.usage("nope-123")

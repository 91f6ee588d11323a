"""Warm starts (``zygote``): a replica forked from a zygote is the process a fresh interpreter would be.

Every test here runs on both paths: with the zygote (the default on Linux) and on the fallback, exec
(``JUPYTER_SCHED_ZYGOTE=0`` or ``JUPYTER_SCHED_PORTABLE=1``, which ``scripts/test.sh`` runs again). Where
they differ is said by :func:`warm`; the few tests of the zygote process itself (killed, closed) skip on
the fallback path, where there is none.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
from typing import Dict, List, Optional

import psutil
import pytest

from jupyter_sched.schedulers.local.warm_starts.zygote import WARM_START, ZYGOTE_ENV, disabled
from jupyter_sched.schedulers.local_scheduler import LocalScheduler, create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppState, Role

from ..helpers import PY, pid_alive, wait_until

WARM = not disabled()
"""True when this run forks warm-start replicas (the default on Linux)."""
SERVER = "zygote_server.py"

PROBE = textwrap.dedent(
    """
    import atexit, json, os, signal, sys, threading, time
    fd_dir = sorted(os.listdir("/proc/self/fd"))  # the listing's own descriptor is one of them, in both
    state = {
        "argv": sys.argv, "path": sys.path, "cwd": os.getcwd(), "name": __name__, "file": __file__,
        "spec": repr(__spec__), "loader": type(__loader__).__name__,
        "main": sys.modules["__main__"].__dict__ is globals(),
        "env": dict(os.environ), "umask": os.umask(0o022),
        "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "handlers": {s.name: repr(signal.getsignal(s)) for s in signal.Signals if s.name not in ("SIGKILL", "SIGSTOP")},
        "session_leader": os.getsid(0) == os.getpid(), "group_leader": os.getpgid(0) == os.getpid(),
        "fds": fd_dir, "stdin": os.readlink("/proc/self/fd/0"),
        "stdout": [sys.stdout.encoding, sys.stdout.errors, sys.stdout.line_buffering, sys.stdout.write_through,
                   type(sys.stdout.buffer).__name__],
        "stderr": [sys.stderr.encoding, sys.stderr.errors, sys.stderr.line_buffering, sys.stderr.write_through],
        "stdio_kept": sys.stdout is sys.__stdout__ and sys.stderr is sys.__stderr__,
        "parent": open(f"/proc/{os.getppid()}/cmdline", "rb").read().decode(errors="replace"),
    }
    print(json.dumps(state), flush=True)
    atexit.register(lambda: print("atexit ran", flush=True))
    def later():
        time.sleep(0.05)
        print("thread joined", flush=True)
    threading.Thread(target=later).start()
    sys.exit(3)
    """
)


def warm_app(script: str, env: Optional[Dict[str, str]] = None, warm_start: bool = True, name: str = "probe",
             args: Optional[List[str]] = None, num_replicas: int = 1) -> AppDef:  # fmt: skip
    metadata = {WARM_START: ["json"]} if warm_start else {}
    role = Role("main", "x", entrypoint=PY, args=[script, *(args or [])], env=dict(env or {}),
                num_replicas=num_replicas, metadata=metadata)  # fmt: skip
    return AppDef(name, [role])


@pytest.fixture
def sched():  # type: ignore[no-untyped-def]
    s = create_cwd_scheduler("test")
    yield s
    s.close()


@pytest.fixture
def probe(tmp_path) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return str(path)


def wait_done(sched: LocalScheduler, app_id: str):  # type: ignore[no-untyped-def]
    wait_until(lambda: sched.describe(app_id).state.is_terminal, what=f"{app_id} to finish")
    return sched.describe(app_id)


def start_note(sched: LocalScheduler, app: AppDef, cfg: Optional[dict] = None) -> str:  # type: ignore[type-arg]
    view = sched.submit_dryrun(app, cfg or {}).view()
    assert view is not None
    return dict(view.notes).get("replicas start", "")


def run_probe(sched: LocalScheduler, app: AppDef, log_dir: str) -> tuple:  # type: ignore[type-arg]
    app_id = sched.submit(app, {"log_dir": log_dir})
    desc = wait_done(sched, app_id)
    lines = list(sched.log_iter(app_id, "main", 0, streams=None))
    state = json.loads(lines[0].replace(app_id, "APP_ID"))
    return desc, state, lines[1:]


@pytest.mark.parametrize("unbuffered", ["x", ""])
def test_a_warm_replica_is_the_process_a_fresh_interpreter_would_be(
    sched: LocalScheduler, probe: str, log_dir: str, tmp_path, unbuffered: str  # type: ignore[no-untyped-def]
) -> None:
    env = {"PYTHONUNBUFFERED": unbuffered, "FROM_THE_ROLE": "yes"}
    cold_desc, cold, cold_tail = run_probe(sched, warm_app(probe, env, warm_start=False), log_dir)
    warm_desc, hot, hot_tail = run_probe(sched, warm_app(probe, env), log_dir)
    assert SERVER not in cold.pop("parent")
    assert (SERVER in hot.pop("parent")) == WARM, "forked by the zygote exactly when warm starts are on"
    assert hot == cold, "argv, sys.path, cwd, __main__, env, umask, signals, session, descriptors, stdio"
    assert cold["env"]["FROM_THE_ROLE"] == "yes" and cold["session_leader"] and cold["group_leader"]
    assert cold["stdout"][3] == bool(unbuffered), "PYTHONUNBUFFERED is honoured per replica"
    for desc, tail in ((cold_desc, cold_tail), (warm_desc, hot_tail)):
        assert sorted(tail) == ["atexit ran\n", "thread joined\n"], "non-daemon threads joined, atexit ran"
        assert desc.roles_statuses[0].replicas[0].exit_code == 3
        assert desc.state == AppState.FAILED


def test_an_uncaught_exception_prints_from_the_script_and_exits_1(
    sched: LocalScheduler, tmp_path, log_dir: str  # type: ignore[no-untyped-def]
) -> None:
    script = tmp_path / "boom.py"
    script.write_text("def f():\n    raise KeyError('boom')\nf()\n")
    app_id = sched.submit(warm_app(str(script)), {"log_dir": log_dir})
    desc = wait_done(sched, app_id)
    assert desc.roles_statuses[0].replicas[0].exit_code == 1
    err = "".join(sched.log_iter(app_id, "main", 0, streams="stderr"))  # type: ignore[arg-type]
    assert err.startswith("Traceback (most recent call last):\n") and "KeyError: 'boom'" in err
    assert f'File "{script}", line 3, in <module>' in err and SERVER not in err, "from the script's frame on"


def test_the_dry_run_says_how_each_replica_starts(sched: LocalScheduler, probe: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    note = start_note(sched, warm_app(probe))
    if WARM:
        assert note.startswith(f"forked from a warm {PY} (a zygote that has loaded json)")
    else:
        assert note.startswith(f"exec {PY} (a cold start: ") and disabled() in note
    assert start_note(sched, warm_app(probe, warm_start=False)) == "", "an ordinary role says nothing new"
    assert "start:" in repr(sched.submit_dryrun(warm_app(probe), {}))
    if not WARM:
        return
    cold = {
        "outlive_owner": start_note(sched, warm_app(probe), {"outlive_owner": True}),
        "memory_limit": start_note(sched, warm_app(probe), {"memory_limit": "1g"}),
        "PYTHONPATH": start_note(sched, warm_app(probe, {"PYTHONPATH": "/elsewhere"})),
        "LD_PRELOAD": start_note(sched, warm_app(probe, {"LD_PRELOAD": "libfoo.so"})),
        "is not this process's": start_note(sched, AppDef("x", [Role("main", "x", entrypoint="/usr/bin/python3",
                                             args=[probe], metadata={WARM_START: []})])),  # fmt: skip
        "SCRIPT.py": start_note(sched, warm_app("-c", args=["print(1)"])),
    }
    for reason, text in cold.items():
        assert text.startswith("exec ") and reason in text, (reason, text)
    monkeypatch.setenv(ZYGOTE_ENV, "0")
    assert f"a cold start: {ZYGOTE_ENV}=0" in start_note(sched, warm_app(probe))


def test_a_replica_the_zygote_cannot_serve_is_execd(sched: LocalScheduler, probe: str, log_dir: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    extra = str(tmp_path / "extra")
    _, state, _ = run_probe(sched, warm_app(probe, {"PYTHONPATH": extra}), log_dir)
    assert SERVER not in state["parent"]
    assert extra in state["path"], "the variable took effect at the interpreter's start"


def test_exit_statuses_signals_and_cancel(sched: LocalScheduler, tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "sleeper.py"
    script.write_text("import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    killed = sched.submit(warm_app(str(script), name="killed"), {"log_dir": log_dir})
    cancelled = sched.submit(warm_app(str(script), name="cancelled"), {"log_dir": log_dir})
    pid = sched.describe(killed).roles_statuses[0].replicas[0].pid
    wait_until(lambda: any(sched.log_iter(killed, "main", 0)), what="the replica to print")
    os.kill(pid, signal.SIGKILL)
    desc = wait_done(sched, killed)
    assert (desc.state, desc.roles_statuses[0].replicas[0].exit_code) == (AppState.FAILED, -signal.SIGKILL)
    wait_until(lambda: any(sched.log_iter(cancelled, "main", 0)), what="the replica to print")
    sched.cancel(cancelled)
    desc = wait_done(sched, cancelled)
    assert (desc.state, desc.roles_statuses[0].replicas[0].exit_code) == (AppState.CANCELLED, -signal.SIGTERM)


def test_a_cancel_right_after_submit_reaches_every_replica(tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "sleeper.py"
    script.write_text("import time\ntime.sleep(600)\n")
    for _ in range(4):  # a new scheduler each time: its zygote's first fork is its slowest
        sched = create_cwd_scheduler("test")
        try:  # the pid is answered only once the replica leads its own group, so the cancel reaches it
            app_id = sched.submit(warm_app(str(script)), {"log_dir": log_dir})
            sched.cancel(app_id)
            desc = wait_done(sched, app_id)
            assert (desc.state, desc.roles_statuses[0].replicas[0].exit_code) == (AppState.CANCELLED, -signal.SIGTERM)
        finally:
            sched.close()


def test_many_quick_replicas_each_report_their_own_exit(sched: LocalScheduler, tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "code.py"
    script.write_text("import os, sys\nsys.exit(int(os.environ['JUPYTER_SCHED_REPLICA_ID']) % 4)\n")
    app_id = sched.submit(warm_app(str(script), num_replicas=12), {"log_dir": log_dir})
    desc = wait_done(sched, app_id)
    assert [r.exit_code for r in desc.roles_statuses[0].replicas] == [k % 4 for k in range(12)]


def test_a_zygote_that_cannot_preload_leaves_its_replicas_to_exec(
    sched: LocalScheduler, tmp_path, log_dir: str, caplog  # type: ignore[no-untyped-def]
) -> None:
    script = tmp_path / "parent.py"
    script.write_text("import os\nprint(open(f'/proc/{os.getppid()}/cmdline').read())\n")
    app = warm_app(str(script))
    app.roles[0].metadata[WARM_START] = ["no_such_module_for_the_zygote"]
    with caplog.at_level("WARNING", logger="jupyter_sched"):
        for _ in range(2):
            app_id = sched.submit(app, {"log_dir": log_dir})
            assert wait_done(sched, app_id).state == AppState.SUCCEEDED
            assert SERVER not in "".join(sched.log_iter(app_id, "main", 0)), "exec'd: the owner is its parent"
    said = [r.getMessage() for r in caplog.records if "no_such_module_for_the_zygote" in r.getMessage()]
    assert len(said) == (1 if WARM else 0), "said once, then every replica is exec'd without trying again"


# -- the zygote process ------------------------------------------------------------------------------------

zygote_only = pytest.mark.skipif(not WARM, reason=f"no zygote on this path ({disabled()})")


def zygote_of(pid: int) -> int:
    parent = psutil.Process(pid).ppid()
    assert SERVER in " ".join(psutil.Process(parent).cmdline())
    return parent


@zygote_only
def test_a_killed_zygote_takes_its_replicas_and_the_next_replica_gets_a_new_one(
    sched: LocalScheduler, tmp_path, log_dir: str  # type: ignore[no-untyped-def]
) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(600)\n")
    app_id = sched.submit(warm_app(str(script)), {"log_dir": log_dir})
    pid = sched.describe(app_id).roles_statuses[0].replicas[0].pid
    zygote = zygote_of(pid)
    os.kill(zygote, signal.SIGKILL)
    desc = wait_done(sched, app_id)
    assert desc.roles_statuses[0].replicas[0].exit_code == -signal.SIGKILL
    assert not pid_alive(pid), "it died with its zygote (PR_SET_PDEATHSIG)"
    again = sched.submit(warm_app(str(script), name="again"), {"log_dir": log_dir})
    new_pid = sched.describe(again).roles_statuses[0].replicas[0].pid
    assert zygote_of(new_pid) != zygote
    sched.cancel(again)
    assert wait_done(sched, again).state == AppState.CANCELLED


def stopped(pid: int) -> bool:
    return psutil.Process(pid).status() == psutil.STATUS_STOPPED


@zygote_only
def test_a_stopped_zygote_is_retired_and_its_replicas_run_on(
    sched: LocalScheduler, tmp_path, log_dir: str  # type: ignore[no-untyped-def]
) -> None:
    """A zygote that stops answering (SIGSTOP) holds no submit hostage and takes no replica with it: the
    submit made meanwhile is exec'd and says so, the next one gets a new zygote, and the replicas the old
    one started are followed, cancelled and recorded by the owner without it.

    The zygote stays stopped from before the first submit below until every check has passed (each
    check asserts it is still in state T), which outlasts every timeout that plays a part (the 1 s answer
    timeout; the 30 s preload timeout is for the new zygote, which is not stopped). Before the fix, that
    submit waited 60 s, then the owner killed the zygote and both running jobs died with it (-9), and the
    cancelled job stayed RUNNING: this test failed on the zygote being gone when the submit returned."""
    gate = tmp_path / "gate"
    waiter = tmp_path / "waiter.py"
    waiter.write_text(
        f"import os, time\nprint('up', flush=True)\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
    )
    parent = tmp_path / "parent.py"
    parent.write_text("import os\nprint(os.getppid())\n")
    running = [sched.submit(warm_app(str(waiter), name=f"job{k}"), {"log_dir": log_dir}) for k in range(2)]
    victim = sched.submit(warm_app(str(waiter), name="victim"), {"log_dir": log_dir})
    pids = [sched.describe(a).roles_statuses[0].replicas[0].pid for a in [*running, victim]]
    zygote = zygote_of(pids[0])
    assert {zygote_of(p) for p in pids} == {zygote}
    for app_id in [*running, victim]:
        wait_until(lambda a=app_id: any(sched.log_iter(a, "main", 0)), what=f"{app_id} to start")
    os.kill(zygote, signal.SIGSTOP)
    try:
        wait_until(lambda: stopped(zygote), what="the zygote to stop")
        info = sched.submit_dryrun(warm_app(str(parent), name="meanwhile"), {"log_dir": log_dir})
        meanwhile = sched.schedule(info)
        assert stopped(zygote), "the submit returned while the zygote is still stopped"
        note = start_note_of(info)
        assert note.startswith(f"exec {PY} (fell back from a warm start: the zygote (pid {zygote}) did not answer")
        assert wait_done(sched, meanwhile).state == AppState.SUCCEEDED
        assert "".join(sched.log_iter(meanwhile, "main", 0)).strip() == str(os.getpid()), "exec'd by the owner"

        later = sched.submit(warm_app(str(parent), name="later"), {"log_dir": log_dir})
        assert stopped(zygote)
        assert wait_done(sched, later).state == AppState.SUCCEEDED
        new_zygote = int("".join(sched.log_iter(later, "main", 0)))
        assert new_zygote not in (zygote, os.getpid()), "forked by a new zygote"

        sched.cancel(victim)
        wait_until(lambda: sched.describe(victim).state == AppState.CANCELLED, what="the cancel to be recorded")
        assert stopped(zygote), "recorded by the owner, not by the zygote"
        assert sched.describe(victim).roles_statuses[0].replicas[0].exit_code == -signal.SIGTERM

        assert all(sched.describe(a).state == AppState.RUNNING for a in running), "they ran on"
        gate.write_text("")
        for app_id in running:
            desc = wait_done(sched, app_id)
            assert (desc.state, desc.roles_statuses[0].replicas[0].exit_code) == (AppState.SUCCEEDED, 0)
        # its replicas are gone: the stopped zygote is ended (it would never end by itself)
        wait_until(lambda: not pid_alive(zygote), what="the retired zygote to be killed once idle")
    finally:
        try:
            os.kill(zygote, signal.SIGCONT)
        except ProcessLookupError:
            pass


@zygote_only
def test_a_spawn_given_up_on_never_runs_when_the_zygote_resumes(
    sched: LocalScheduler, tmp_path, log_dir: str  # type: ignore[no-untyped-def]
) -> None:
    """The request a stopped zygote did not answer is still in its socket when it resumes, and it forks
    it then; by then the owner has exec'd that replica, so the late fork must run nothing (it waits for
    the owner's go, which never comes): the script runs once."""
    gate, marker = tmp_path / "gate", tmp_path / "ran"
    waiter = tmp_path / "waiter.py"  # keeps the zygote from being ended as idle
    waiter.write_text(
        f"import os, time\nprint('up', flush=True)\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
    )
    once = tmp_path / "once.py"
    once.write_text(f"import os\nwith open({str(marker)!r}, 'a') as f:\n    f.write(f'{{os.getpid()}}\\n')\n")
    keeper = sched.submit(warm_app(str(waiter), name="keeper"), {"log_dir": log_dir})
    keeper_pid = sched.describe(keeper).roles_statuses[0].replicas[0].pid
    zygote = zygote_of(keeper_pid)
    os.kill(zygote, signal.SIGSTOP)
    try:
        wait_until(lambda: stopped(zygote), what="the zygote to stop")
        app_id = sched.submit(warm_app(str(once), name="once"), {"log_dir": log_dir})
        assert wait_done(sched, app_id).state == AppState.SUCCEEDED
        replica_pid = sched.describe(app_id).roles_statuses[0].replicas[0].pid
    finally:
        os.kill(zygote, signal.SIGCONT)
    late = lambda: [c for c in psutil.Process(zygote).children() if c.pid != keeper_pid]  # noqa: E731
    wait_until(lambda: any(c.status() == psutil.STATUS_ZOMBIE for c in late()), what="the zygote's late fork to end")
    assert marker.read_text() == f"{replica_pid}\n", "run once, by the exec'd replica"
    gate.write_text("")
    assert wait_done(sched, keeper).state == AppState.SUCCEEDED
    wait_until(lambda: not pid_alive(zygote), what="the retired zygote to end once idle")


def start_note_of(info) -> str:  # type: ignore[no-untyped-def]
    view = info.view()
    assert view is not None
    return dict(view.notes).get("replicas start", "")


STOPPED_OWNER = textwrap.dedent(
    """
    import sys, time
    from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
    from jupyter_sched.schedulers.local.warm_starts.zygote import WARM_START
    from jupyter_sched.specs import AppDef, Role
    s = create_cwd_scheduler("test")
    app = AppDef("stuck", [Role("main", "x", entrypoint=sys.executable, args=[sys.argv[2]], metadata={WARM_START: []})])
    app_id = s.submit(app, {"log_dir": sys.argv[1]})
    pid = s.describe(app_id).roles_statuses[0].replicas[0].pid
    while not any(s.log_iter(app_id, "main", 0)):
        time.sleep(0.01)
    print(app_id, pid, flush=True)
    time.sleep(600)
    """
)


@zygote_only
def test_a_stopped_zygote_does_not_outlive_its_owner(tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    """A stopped zygote cannot see its owner go: the owner's reaper stops the replica, then kills it. Before
    the fix, it stayed (stopped) for ever."""
    script = tmp_path / "sleeper.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(600)\n")
    owner = subprocess.Popen([PY, "-c", STOPPED_OWNER, log_dir, str(script)], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    app_id, pid_text = owner.stdout.readline().split()
    pid = int(pid_text)
    zygote = zygote_of(pid)
    os.kill(zygote, signal.SIGSTOP)
    try:
        wait_until(lambda: stopped(zygote), what="the zygote to stop")
        owner.kill()
        owner.wait()
        wait_until(lambda: not pid_alive(pid), what="the replica to be stopped by the reaper")
        wait_until(lambda: not pid_alive(zygote), what="the stopped zygote to be killed")
    finally:
        try:
            os.kill(zygote, signal.SIGCONT)
        except ProcessLookupError:
            pass
    reader = create_cwd_scheduler("test", log_dir=log_dir)
    try:
        wait_until(lambda: "its replicas were stopped" in reader.describe(app_id).msg, what="the reaper's record")
    finally:
        reader.close()


@zygote_only
def test_closing_the_scheduler_ends_its_zygote(tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    go = tmp_path / "GO"
    script = tmp_path / "waits.py"  # runs until GO exists: its parent, the zygote, is found while it lives
    script.write_text(f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.05)\nprint('hi')\n")
    sched = create_cwd_scheduler("test")
    app_id = sched.submit(warm_app(str(script)), {"log_dir": log_dir})
    pid = sched.describe(app_id).roles_statuses[0].replicas[0].pid
    zygote = zygote_of(pid)
    go.touch()
    wait_done(sched, app_id)
    sched.close()
    wait_until(lambda: not pid_alive(zygote), what="the zygote to exit")


OWNER = textwrap.dedent(
    """
    import sys, time
    from jupyter_sched.schedulers.local.processes.reaper import ReaperClient
    from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
    from jupyter_sched.schedulers.local.warm_starts.zygote import WARM_START
    from jupyter_sched.specs import AppDef, Role
    s = create_cwd_scheduler("test")
    plain, stubborn = sys.argv[2], sys.argv[3]
    app = AppDef("orphan", [
        Role("plain", "x", entrypoint=sys.executable, args=[plain], metadata={WARM_START: []}),
        Role("stubborn", "x", entrypoint=sys.executable, args=[stubborn], metadata={WARM_START: []}),
    ])
    app_id = s.submit(app, {"log_dir": sys.argv[1]})
    pids = [r.pid for rs in s.describe(app_id).roles_statuses for r in rs.replicas]
    while not all(any(s.log_iter(app_id, role, 0)) for role in ("plain", "stubborn")):
        time.sleep(0.01)  # both are up (the stubborn one ignores SIGTERM from now on)
    print(app_id, ReaperClient.reaper_pid(), *pids, flush=True)
    time.sleep(600)
    """
)


def test_replicas_and_their_zygote_end_when_the_owner_is_sigkilled(tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    plain, stubborn = tmp_path / "plain.py", tmp_path / "stubborn.py"
    plain.write_text("import time\nprint('up', flush=True)\ntime.sleep(600)\n")
    stubborn.write_text(
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(600)\n"
    )
    owner = subprocess.Popen([PY, "-c", OWNER, log_dir, str(plain), str(stubborn)], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    app_id, _reaper, *pid_text = owner.stdout.readline().split()
    pids = [int(p) for p in pid_text]
    parents = {psutil.Process(p).ppid() for p in pids}
    assert (parents == {owner.pid}) != WARM, "forked by a zygote exactly when warm starts are on"
    zygotes = parents - {owner.pid}
    owner.kill()  # SIGKILL: no clean-up runs in the owner
    owner.wait()
    wait_until(lambda: not any(pid_alive(p) for p in pids), what="the replicas to end")
    wait_until(lambda: not any(pid_alive(z) for z in zygotes), what="the zygote to end with its owner")
    reader = create_cwd_scheduler("test", log_dir=log_dir)
    try:
        wait_until(lambda: "its replicas were stopped" in reader.describe(app_id).msg, what="the reaper's record")
        desc = reader.describe(app_id)
    finally:
        reader.close()
    codes = {rs.role: rs.replicas[0].exit_code for rs in desc.roles_statuses}
    assert codes == {"plain": -signal.SIGTERM, "stubborn": -signal.SIGKILL}


def test_a_fork_of_the_owner_does_not_use_its_zygote(sched: LocalScheduler, tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "pid.py"
    script.write_text("import os\nprint(open(f'/proc/{os.getppid()}/cmdline').read())\n")
    first = sched.submit(warm_app(str(script)), {"log_dir": log_dir})
    wait_done(sched, first)
    child = os.fork()
    if child == 0:  # the forked owner: its copy of the scheduler must start replicas without the parent's zygote
        code = 1
        signal.alarm(120)  # a bound, so that a fork that inherited a held lock fails instead of hanging
        try:
            s = create_cwd_scheduler("test")
            app_id = s.submit(warm_app(str(script), name="child"), {"log_dir": log_dir})
            while not s.describe(app_id).state.is_terminal:
                s.wait_for_change(app_id, 0.05)
            code = 0 if s.describe(app_id).state == AppState.SUCCEEDED else 2
            s.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    again = sched.submit(warm_app(str(script), name="again"), {"log_dir": log_dir})
    assert wait_done(sched, again).state == AppState.SUCCEEDED, "the parent's zygote still serves the parent"


STALE_OWNER = textwrap.dedent(
    """
    import json, os, sys, time
    from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
    from jupyter_sched.schedulers.local.warm_starts.zygote import WARM_START
    from jupyter_sched.specs import AppDef, Role
    log_dir, script, site_dir, extra = sys.argv[1:5]
    s = create_cwd_scheduler("test")
    def run(name):
        app = AppDef(name, [Role("main", "x", entrypoint=sys.executable, args=[script], metadata={WARM_START: []})])
        app_id = s.submit(app, {"log_dir": log_dir})
        while not s.describe(app_id).state.is_terminal:
            s.wait_for_change(app_id, 0.05)
        return json.loads("".join(s.log_iter(app_id, "main", 0)))
    before = run("before")
    with open(os.path.join(site_dir, "extra.pth"), "w") as f:  # an install: a new .pth file
        f.write(extra + "\\n")
    after = run("after")
    print(json.dumps([before, after]))
    s.close()
    """
)


@zygote_only
def test_a_package_installed_meanwhile_is_seen_by_the_next_replica(tmp_path, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site_dir = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    with open(os.path.join(site_dir, "ours.pth"), "w") as f:  # this venv sees the test's packages
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    script = tmp_path / "where.py"
    script.write_text("import json, os, sys\nprint(json.dumps([sys.path, os.getppid()]))\n")
    extra = str(tmp_path / "extra")
    os.mkdir(extra)
    out = subprocess.run([python, "-c", STALE_OWNER, log_dir, str(script), site_dir, extra],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    (path_before, zygote_before), (path_after, zygote_after) = json.loads(out.stdout)
    assert extra not in path_before and extra in path_after, "the new .pth file was read: a new zygote"
    assert zygote_before != zygote_after

"""The local backend under faults: a full disk, a broken IO loop, a dead reaper, hostile handles and records."""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import textwrap
import uuid

import pytest

from jupyter_sched.runner import get_runner
from jupyter_sched.schedulers.local.logs.sinks import LogSink
from jupyter_sched.schedulers.local.processes.reaper import ReaperClient
from jupyter_sched.schedulers.local_scheduler import LocalScheduler, create_cwd_scheduler
from jupyter_sched.specs import AppDef, AppState, MalformedAppHandleException, Role
from jupyter_sched.specs.status.handles import parse_safe_handle

from ..helpers import PY, pid_alive, py_app, sh_app, wait_until


@pytest.fixture
def sched():  # type: ignore[no-untyped-def]
    s = create_cwd_scheduler("test")
    yield s
    s.close()


def wait_done(sched: LocalScheduler, app_id: str, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    wait_until(lambda: sched.describe(app_id).state.is_terminal, timeout, f"{app_id} to finish")
    return sched.describe(app_id)


# -- a full disk ---------------------------------------------------------------------------------------------


def _tmpfs(path: str, size: str):  # type: ignore[no-untyped-def]
    """A tmpfs of ``size`` mounted for the test (we run as root; CI must be able to)."""
    os.mkdir(path)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True, text=True)
    if proc.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot mount a tmpfs in CI: {proc.stderr}")
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], check=False)


@pytest.fixture
def small_disk(tmp_path):  # type: ignore[no-untyped-def]
    yield from _tmpfs(str(tmp_path / "small"), "5m")


@pytest.fixture
def tiny_disk(tmp_path):  # type: ignore[no-untyped-def]
    yield from _tmpfs(str(tmp_path / "tiny"), "2m")


FLOOD = "import sys\nfor _ in range(320):\n    sys.stdout.write('x' * 65535 + '\\n')\nprint('done', flush=True)\n"


def test_a_full_disk_truncates_one_replicas_logs_and_nothing_else_stops(small_disk: str, log_dir: str) -> None:
    with get_runner("test") as runner:
        full = runner.run(py_app(FLOOD, name="flood"), "local_cwd", {"log_dir": small_disk})
        healthy = runner.run(
            py_app("import time\nfor i in range(50):\n    print(i, flush=True); time.sleep(0.01)", name="ok"),
            "local_cwd", {"log_dir": log_dir},
        )  # fmt: skip
        status = runner.wait(full, wait_interval=0.5, timeout=60)  # what `jupyter-sched run` waits on
        other = runner.wait(healthy, wait_interval=0.5, timeout=60)
        assert status is not None and status.state == AppState.SUCCEEDED  # the replica was drained, not blocked
        replica = status.roles[0].replicas[0]
        assert replica.exit_code == 0
        assert "logs truncated" in replica.msg and "No space left on device" in replica.msg
        assert "main[0]: logs truncated" in status.msg
        assert other is not None and other.state == AppState.SUCCEEDED
        assert list(runner.log_lines(healthy, "main", 0)) == [f"{i}\n" for i in range(50)]
        kept = "".join(runner.log_lines(full, "main", 0))
        assert 0 < len(kept) < 20 * 2**20 and set(kept) <= {"x", "\n"}  # what fit, and nothing else
    app_dir = os.path.join(small_disk, "test", full.rsplit("/", 1)[1])
    leftovers = [f for _, _, files in os.walk(small_disk) for f in files if f.endswith(".tmp")]
    assert leftovers == []
    with open(os.path.join(app_dir, "state.json")) as f:  # saved with the space set aside at the start
        saved = json.load(f)
    assert saved["state"] == "SUCCEEDED" and "logs truncated" in saved["replicas"][0]["msg"]


def _fill(path: str) -> None:
    """Fills the disk to the last byte."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def test_a_state_file_that_cannot_be_written_keeps_the_previous_one(small_disk: str, sched: LocalScheduler) -> None:
    app_id = sched.submit(py_app("import time; time.sleep(0.5)"), {"log_dir": small_disk})
    app_dir = os.path.join(small_disk, "test", app_id)
    with open(os.path.join(app_dir, "state.json")) as f:
        before = f.read()
    _fill(os.path.join(small_disk, "filler"))
    for reserve in ("state.reserve", "SUCCESS.reserve"):  # the room set aside for the final record is taken too
        os.remove(os.path.join(app_dir, reserve))
    _fill(os.path.join(small_disk, "filler2"))
    desc = wait_done(sched, app_id)
    assert desc.state == AppState.SUCCEEDED  # the owner still knows
    assert "could not save" in desc.msg and "state.json" in desc.msg
    with open(os.path.join(app_dir, "state.json")) as f:
        assert f.read() == before
    assert not [n for n in os.listdir(app_dir) if n.endswith(".tmp")]
    assert not os.path.exists(os.path.join(app_dir, "SUCCESS"))  # it never claims more than the record


def test_replicas_that_fill_the_disk_still_get_their_final_state_recorded(tiny_disk: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 22: two replicas write 5 MB each to a 2 MB log disk; the owner (``jupyter-sched run``) says
    SUCCEEDED, and so must ``state.json``, the SUCCESS file and any other process, however much the
    still-running log writers take after the disk filled."""
    cli = os.path.join(os.path.dirname(PY), "jupyter-sched")
    script = "head -c 5000000 /dev/zero | tr '\\0' y; sleep 1"
    proc = subprocess.run(
        [cli, "run", "--scheduler", "local_cwd", "--cfg", f"log_dir={tiny_disk}", "utils.sh", "--num_replicas", "2",
         script],
        cwd=str(tmp_path), capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    handle = proc.stdout.split(b"\n", 1)[0].decode()
    assert proc.stderr.rstrip().endswith(f"{handle}: SUCCEEDED".encode())  # what the owner says
    session, app_id = parse_safe_handle(handle)[1:]
    app_dir = os.path.join(tiny_disk, session, app_id)
    with open(os.path.join(app_dir, "state.json")) as f:
        saved = json.load(f)
    assert saved["state"] == "SUCCEEDED" and [r["exit_code"] for r in saved["replicas"]] == [0, 0]
    assert all("No space left on device" in r["msg"] for r in saved["replicas"])  # both hit the full disk
    with open(os.path.join(app_dir, "SUCCESS")) as f:
        assert json.load(f)["final_state"] == "SUCCEEDED"
    assert sorted(n for n in os.listdir(app_dir) if n.endswith((".reserve", ".tmp"))) == []
    reader = create_cwd_scheduler(session, log_dir=tiny_disk)  # another process's view, later
    try:
        desc = reader.describe(app_id)
        assert desc.state == AppState.SUCCEEDED and "owner" not in desc.msg
    finally:
        reader.close()


# -- the IO loop ---------------------------------------------------------------------------------------------


def test_an_error_in_the_io_loop_is_logged_and_the_loop_carries_on(
    sched: LocalScheduler, log_dir: str, monkeypatch, caplog  # type: ignore[no-untyped-def]
) -> None:
    real_write = LogSink.write

    def write(self: LogSink, chunk: bytes, now: float) -> bool:
        if b"boom" in chunk:  # a fault that a real disk cannot be made to produce on demand
            raise RuntimeError("unexpected")
        return real_write(self, chunk, now)

    monkeypatch.setattr(LogSink, "write", write)
    caplog.set_level(logging.WARNING, logger="jupyter_sched")
    bad = sched.submit(sh_app("echo boom; sleep 0.2; echo after"), {"log_dir": log_dir})
    good = sched.submit(sh_app("sleep 0.3; echo fine"), {"log_dir": log_dir})
    desc = wait_done(sched, bad)
    assert desc.state == AppState.SUCCEEDED
    assert "internal error in the IO loop" in desc.roles_statuses[0].replicas[0].msg
    assert "after\n" in list(sched.log_iter(bad, "main", 0))
    assert wait_done(sched, good).state == AppState.SUCCEEDED
    assert list(sched.log_iter(good, "main", 0)) == ["fine\n"]
    assert any("RuntimeError: unexpected" in (r.exc_text or "") for r in caplog.records)


def test_an_io_loop_that_cannot_go_on_fails_every_app_with_the_reason(
    sched: LocalScheduler, log_dir: str, caplog  # type: ignore[no-untyped-def]
) -> None:
    caplog.set_level(logging.ERROR, logger="jupyter_sched")
    app_id = sched.submit(sh_app("sleep 600"), {"log_dir": log_dir})
    loop = sched._loop
    wait_until(lambda: loop._thread is not None and len(loop._sel.get_map()) > 1, what="the loop to run")
    os.close(loop._sel.fileno())  # a real fault: the loop's epoll descriptor is gone
    loop.call_later(0, lambda: None)  # wake it so that it selects again
    desc = wait_done(sched, app_id)
    replica = desc.roles_statuses[0].replicas[0]
    assert desc.state == AppState.FAILED and replica.exit_code == -signal.SIGKILL
    assert "IO loop" in replica.msg and "IO loop" in desc.msg
    assert not pid_alive(replica.pid)
    assert any("IO loop stopped" in r.getMessage() for r in caplog.records)
    with pytest.raises(RuntimeError, match="IO loop stopped"):
        sched.submit(sh_app("true"), {"log_dir": log_dir})


def test_helper_threads_leave_signals_to_the_main_thread(sched: LocalScheduler, log_dir: str) -> None:
    """A SIGTERM taken by a helper thread would not wake a main thread in time.sleep: its handler (which
    stops the replicas) would wait for the sleep to end. So every thread of ours blocks such signals."""
    import threading

    app_id = sched.submit(sh_app("sleep 600"), {"log_dir": log_dir})
    ReaperClient.reaper_pid()
    wait_until(lambda: any(t.name == "jupyter_sched-local-io" for t in threading.enumerate()), what="the IO thread")
    ours = [t for t in threading.enumerate() if t.name.startswith("jupyter_sched-")]
    assert {t.name for t in ours} >= {"jupyter_sched-local-io", "jupyter_sched-reaper"}
    for thread in ours:
        with open(f"/proc/self/task/{thread.native_id}/status") as f:
            blocked = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            assert blocked & (1 << (sig - 1)), (thread.name, sig)
    sched.cancel(app_id)


# -- hostile handles and records -----------------------------------------------------------------------------


@pytest.fixture
def planted(tmp_path):  # type: ignore[no-untyped-def]
    """A state file outside the log dir naming a real, unrelated process and a file outside as its log."""
    victim = subprocess.Popen(["sleep", "600"], start_new_session=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours\n")
    evil = tmp_path / "x" / "evil" / "sh-abc"
    evil.mkdir(parents=True)
    record = {
        "app_id": "sh-abc", "name": "sh", "session": "evil", "app_dir": str(evil), "owner_pid": victim.pid,
        "submitted": 0.0, "roles": [{"name": "main"}],
        "replicas": [{"role": "main", "replica_id": 0, "pid": victim.pid, "stdout": str(secret),
                      "stderr": str(secret), "combined": str(secret)}],
    }  # fmt: skip
    (evil / "state.json").write_text(json.dumps(record))
    yield victim, record, secret
    victim.kill()
    victim.wait()


def test_a_pasted_handle_cannot_reach_outside_the_log_dir(planted, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    victim, _, _ = planted
    env = {**os.environ, "JUPYTER_SCHED_LOG_DIR": log_dir}
    handle = "local_cwd://../x/evil/sh-abc"  # <log_dir>/../x/evil/sh-abc is the planted record
    for verb in ("status", "cancel", "log", "describe"):
        proc = subprocess.run(
            [PY, "-m", "jupyter_sched", verb, handle], env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 2, (verb, proc.stdout, proc.stderr)  # a usage error
        assert "not yours" not in proc.stdout
        if verb != "log":  # `log` refuses it in its own parser, with its own words
            assert "session name '../x/evil'" in proc.stderr and "not allowed" in proc.stderr
    assert pid_alive(victim.pid)
    with pytest.raises(MalformedAppHandleException, match="session name"):
        get_runner("../../x")
    with get_runner("test") as runner:
        with pytest.raises(MalformedAppHandleException, match="app id"):
            runner.status("local_cwd://test/..")
    sched = create_cwd_scheduler("test", log_dir=log_dir)
    try:
        for bad in ("../x/evil/sh-abc", "/abs", "a\0b", ".."):
            with pytest.raises(ValueError, match="not allowed"):
                sched.describe(bad)
        with pytest.raises(ValueError, match="not allowed"):
            create_cwd_scheduler("../../x")
    finally:
        sched.close()


def test_a_record_planted_inside_the_log_dir_proves_nothing(planted, log_dir: str) -> None:  # type: ignore[no-untyped-def]
    victim, record, secret = planted
    app_dir = os.path.join(log_dir, "test", "sh-abc")
    os.makedirs(app_dir)
    with open(os.path.join(app_dir, "state.json"), "w") as f:
        json.dump({**record, "app_dir": "/somewhere/else"}, f)
    sched = create_cwd_scheduler("test", log_dir=log_dir)
    try:
        sched.cancel("sh-abc")  # the pid has no recorded start time: it is not signalled
        with pytest.raises(ValueError, match="names no combined log inside its directory"):
            list(sched.log_iter("sh-abc", "main", 0))
        assert os.path.exists(os.path.join(app_dir, "cancelled"))  # written where the record was found
        assert not os.path.exists("/somewhere/else")
    finally:
        sched.close()
    assert pid_alive(victim.pid)
    # a start time that is not the process's is refused as well
    with open(os.path.join(app_dir, "state.json"), "w") as f:
        rec = json.loads(json.dumps(record))
        rec["replicas"][0]["pid_started"] = 1
        json.dump(rec, f)
    os.remove(os.path.join(app_dir, "cancelled"))
    sched = create_cwd_scheduler("test", log_dir=log_dir)
    try:
        sched.cancel("sh-abc")
    finally:
        sched.close()
    assert pid_alive(victim.pid)


def test_unsafe_app_and_role_names_never_climb_out(sched: LocalScheduler, log_dir: str) -> None:
    app = AppDef("../up", [Role("../../r", "x", entrypoint="sh", args=["-c", "echo inside"])])
    app_id = sched.submit(app, {"log_dir": log_dir})
    assert parse_safe_handle(f"local_cwd://test/{app_id}").app_id == app_id
    wait_done(sched, app_id)
    app_dir = os.path.join(log_dir, "test", app_id)
    written = [os.path.join(root, f) for root, _, files in os.walk(log_dir) for f in files]
    assert written and all(f.startswith(app_dir + os.sep) for f in written)
    assert list(sched.log_iter(app_id, "../../r", 0)) == ["inside\n"]  # the role keeps its name


# -- files and modes -----------------------------------------------------------------------------------------


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("outlive", [False, True])
def test_logs_and_state_are_private(sched: LocalScheduler, log_dir: str, outlive: bool) -> None:
    base = os.path.join(log_dir, f"fresh-{uuid.uuid4().hex[:6]}")
    app_id = sched.submit(sh_app("echo secret; echo err >&2"), {"log_dir": base, "outlive_owner": outlive})
    wait_done(sched, app_id)
    app_dir = os.path.join(base, "test", app_id)
    replica_dirs = (os.path.join(app_dir, "main"), os.path.join(app_dir, "main", "0"))
    for d in (base, os.path.join(base, "test"), app_dir, *replica_dirs):
        assert _mode(d) == 0o700, d
    files = [os.path.join(root, f) for root, _, fs in os.walk(app_dir) for f in fs]
    assert any(f.endswith("stdout.log") for f in files) and any(f.endswith("state.json") for f in files)
    for f in files:
        try:
            assert _mode(f) & 0o077 == 0, f
        except FileNotFoundError:  # a temporary file renamed into place, or a reserve given back, meanwhile
            assert f.endswith((".tmp", ".reserve")), f


# -- the reaper ----------------------------------------------------------------------------------------------

OWNER = textwrap.dedent(
    """
    import sys, time
    from jupyter_sched.schedulers.local.processes.reaper import ReaperClient
    from jupyter_sched.schedulers.local_scheduler import create_cwd_scheduler
    from jupyter_sched.specs import AppDef, Role
    s = create_cwd_scheduler("test")
    app = AppDef("orphan", [
        Role("plain", "x", entrypoint="sleep", args=["600"]),
        Role("stubborn", "x", entrypoint="sh", args=["-c", "trap '' TERM; sleep 600"]),
    ])
    app_id = s.submit(app, {"log_dir": sys.argv[1]})
    pids = [r.pid for rs in s.describe(app_id).roles_statuses for r in rs.replicas]
    print(app_id, ReaperClient.reaper_pid(), *pids, flush=True)
    time.sleep(600)
    """
)


def test_the_reaper_starts_in_the_folder_the_package_is_imported_from(sched: LocalScheduler, log_dir: str) -> None:
    """``python -m`` imports from the working directory first, so the reaper starts in the folder that holds
    this copy of ``jupyter_sched/``: not in another checkout (whose reaper would speak another protocol), and
    not inside the package, where its sub-packages would stand for top-level modules. Its depth below the
    package changes whenever the reaper's module moves, so the folder must not be counted from there."""
    import jupyter_sched

    app_id = sched.submit(sh_app("sleep 60"), {"log_dir": log_dir})
    try:
        reaper = ReaperClient.reaper_pid()
        assert reaper is not None
        expected = os.path.dirname(os.path.dirname(os.path.abspath(jupyter_sched.__file__)))
        assert os.readlink(f"/proc/{reaper}/cwd") == expected
    finally:
        sched.cancel(app_id)


def _reapers_of(owner: int) -> list:  # type: ignore[type-arg]
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        if ppid == owner and b"jupyter_sched.schedulers.local.processes.reaper" in cmd:
            found.append(int(name))
    return found


def _start_owner(log_dir: str):  # type: ignore[no-untyped-def]
    proc = subprocess.Popen([PY, "-c", OWNER, log_dir], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    app_id, reaper, *pids = proc.stdout.readline().split()
    return proc, app_id, int(reaper), [int(p) for p in pids]


def _wait_recorded(log_dir: str, app_id: str):  # type: ignore[no-untyped-def]
    """The app's description once a reaper has recorded how its replicas ended."""
    sched = create_cwd_scheduler("test", log_dir=log_dir)
    try:
        wait_until(lambda: "its replicas were stopped" in sched.describe(app_id).msg, what="the reaper's record")
        return sched.describe(app_id)
    finally:
        sched.close()


def test_a_dead_reaper_is_replaced_and_the_new_one_ends_the_replicas(log_dir: str) -> None:
    proc, app_id, reaper, pids = _start_owner(log_dir)
    os.kill(reaper, signal.SIGKILL)
    wait_until(lambda: [p for p in _reapers_of(proc.pid) if p != reaper and pid_alive(p)], what="a new reaper")
    proc.kill()
    proc.wait()
    wait_until(lambda: not any(pid_alive(p) for p in pids), what="replicas of a SIGKILLed owner to die")
    desc = _wait_recorded(log_dir, app_id)
    codes = {rs.role: rs.replicas[0].exit_code for rs in desc.roles_statuses}
    assert codes == {"plain": -signal.SIGTERM, "stubborn": -signal.SIGKILL}
    assert desc.state == AppState.FAILED and "its replicas were stopped" in desc.msg


def test_replicas_left_by_a_dead_owner_and_reaper_are_stopped_by_the_next_reader(log_dir: str) -> None:
    proc, app_id, reaper, pids = _start_owner(log_dir)
    os.kill(proc.pid, signal.SIGSTOP)  # it cannot replace its reaper now
    os.kill(reaper, signal.SIGKILL)
    wait_until(lambda: not pid_alive(reaper), what="the reaper to die")
    proc.kill()
    proc.wait()
    assert all(pid_alive(p) for p in pids)  # orphans, for now
    desc = _wait_recorded(log_dir, app_id)  # the first describe finds the orphans and has them stopped
    wait_until(lambda: not any(pid_alive(p) for p in pids), what="the SIGKILLed replica to be gone")
    codes = {rs.role: rs.replicas[0].exit_code for rs in desc.roles_statuses}
    assert codes == {"plain": -signal.SIGTERM, "stubborn": -signal.SIGKILL}
    assert "owner process" in desc.msg


def test_a_log_dir_named_with_a_tab_and_a_newline_still_reaches_the_reaper(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log_dir = tmp_path / "odd\tname\nhere"  # the reaper's messages are lines: a path must not break one
    log_dir.mkdir()
    proc, app_id, _, pids = _start_owner(str(log_dir))
    proc.kill()
    proc.wait()
    wait_until(lambda: not any(pid_alive(p) for p in pids), what="replicas of a SIGKILLed owner to die")
    desc = _wait_recorded(str(log_dir), app_id)
    codes = {rs.role: rs.replicas[0].exit_code for rs in desc.roles_statuses}
    assert codes == {"plain": -signal.SIGTERM, "stubborn": -signal.SIGKILL}


def test_the_reaper_is_restarted_in_this_process_too(sched: LocalScheduler, log_dir: str) -> None:
    app_id = sched.submit(sh_app("sleep 600"), {"log_dir": log_dir})
    first = ReaperClient.reaper_pid()
    restarts = ReaperClient.restarts
    assert first is not None
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: ReaperClient.restarts > restarts and ReaperClient.reaper_pid() != first, what="a new reaper")
    sched.cancel(app_id)
    assert wait_done(sched, app_id).state == AppState.CANCELLED


# -- TorchX compatibility details ----------------------------------------------------------------------------


def test_replicas_get_the_roles_torchelastic_log_dir_and_their_error_file(sched: LocalScheduler, log_dir: str) -> None:
    app_id = sched.submit(
        py_app("import os; print(os.environ['PET_LOG_DIR']); print(os.environ['TORCHELASTIC_ERROR_FILE'])"),
        {"log_dir": log_dir},
    )
    wait_done(sched, app_id)
    pet, error_file = [line.strip() for line in sched.log_iter(app_id, "main", 0)]
    replica_dir = os.path.join(log_dir, "test", app_id, "main", "0")
    assert pet == os.path.join(log_dir, "test", app_id, "torchelastic", "main")  # where TorchX points torchrun
    assert os.path.dirname(error_file) == replica_dir


def test_describe_keeps_max_retries(sched: LocalScheduler, log_dir: str) -> None:
    app = AppDef("r", [Role("main", "x", entrypoint="true", max_retries=3, num_replicas=2)])
    app_id = sched.submit(app, {"log_dir": log_dir})
    wait_done(sched, app_id)
    for s in (sched, create_cwd_scheduler("test", log_dir=log_dir)):  # in memory, and read back from disk
        role = s.describe(app_id).roles[0]
        assert (role.name, role.max_retries, role.num_replicas, role.entrypoint) == ("main", 3, 2, "true")


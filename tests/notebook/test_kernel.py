"""A real ipykernel (this venv's, through a kernelspec in a temporary JUPYTER_PATH), driven over the protocol.

Interrupting a blocking ``%sched_run --wait`` detaches (the kernel interrupt signals the kernel's whole
process group; replicas live in their own sessions), and a kernel restart loses no job record: the next
kernel lists, reads and cancels the apps of the session again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from nbhelpers import wait_for

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

KERNEL_NAME = "jsched-test-python3"


@pytest.fixture
def kernel(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tuple[Any, Any]]:
    from jupyter_client.manager import KernelManager

    spec_dir = tmp_path / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "jupyter_sched test kernel",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    env = {
        **os.environ,
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "JUPYTER_SCHED_LOG_DIR": str(tmp_path / "state"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    env.pop("JUPYTER_SCHED_NONINTERACTIVE", None)
    km = KernelManager(kernel_name=KERNEL_NAME, transport="ipc", ip=str(tmp_path / "ipc"))
    km.start_kernel(env=env, cwd=str(tmp_path))
    assert km.kernel_spec.argv[0] == sys.executable  # this venv's ipykernel, not whatever is on PATH
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def execute(kc: Any, code: str, timeout: float = 60) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """Runs ``code``; returns the execute reply and the iopub messages it produced."""
    msgs: List[Dict[str, Any]] = []
    reply = kc.execute_interactive(code, output_hook=msgs.append, timeout=timeout)
    return reply, msgs


def stdout_of(msgs: List[Dict[str, Any]]) -> str:
    return "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")


def run_ok(kc: Any, code: str) -> str:
    reply, msgs = execute(kc, code)
    errors = [m["content"] for m in msgs if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "ok", errors
    return stdout_of(msgs)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_interrupt_during_wait_detaches_and_the_job_keeps_running(kernel: Tuple[Any, Any]) -> None:
    km, kc = kernel
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.refresh_interval = 0.1")
    msg_id = kc.execute('%sched_run --wait utils.sh "echo hello-from-the-job; sleep 60"')
    seen: List[Dict[str, Any]] = []

    def next_msg() -> Dict[str, Any]:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id:
            seen.append(msg)
        return msg

    def shown_and_updated() -> bool:
        next_msg()
        shown = any(m["msg_type"] == "display_data" for m in seen)
        updates = [
            str(m["content"]["data"].get("state", {}).get("value", "")) for m in seen if m["msg_type"] == "comm_msg"
        ]
        return shown and any("hello-from-the-job" in u for u in updates)

    # the live view is displayed, then the cell blocks while a thread updates the log pane
    wait_for(shown_and_updated, 60, "the view to be shown and its log pane to show the job's output")
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=30)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "Detached"
    while not (seen[-1]["msg_type"] == "status" and seen[-1]["content"]["execution_state"] == "idle"):
        next_msg()
    errors = [m["content"] for m in seen if m["msg_type"] == "error"]
    assert len(errors) == 1 and len(errors[0]["traceback"]) == 1
    assert errors[0]["traceback"][0].startswith("Interrupted: stopped waiting for")
    streams = [m["content"] for m in seen if m["msg_type"] == "stream"]
    # one plain message on stdout (not an error): the truth about the app; background threads print nothing
    assert [s["name"] for s in streams] == ["stdout"]
    text = streams[0]["text"]
    assert "Stopped waiting for" in text and "(RUNNING)" in text and "%sched_job" in text and "%sched_cancel" in text
    out = run_ok(kc, (
        "from jupyter_sched.notebook.extension import loaded\n"
        "job = list(loaded(get_ipython()).session.jobs.values())[-1]\n"
        "print(job.state, [r.pid for role in job.status.roles for r in role.replicas][0])"
    ))  # fmt: skip
    state, pid = out.split()
    assert state == "RUNNING" and alive(int(pid))
    run_ok(kc, "%config SchedMagics.interactive = False")
    assert "CANCELLED" in run_ok(kc, "%sched_cancel --wait")
    wait_for(lambda: not alive(int(pid)), 30, "the replica to end after %sched_cancel")


def test_restart_finds_the_apps_again(kernel: Tuple[Any, Any]) -> None:
    km, kc = kernel
    out = run_ok(kc, (
        "%load_ext jupyter_sched\n"
        "%config SchedMagics.interactive = False\n"
        "d = %sched_run --detach utils.sh 'echo hello-detached; sleep 60'\n"
        "b = %sched_run utils.sh 'echo hello-bound; sleep 60'\n"
        "import time; time.sleep(0.5)\n"
        "import os; print(d.handle, b.handle, d.status.roles[0].replicas[0].pid, os.getpid())"
    ))  # fmt: skip
    detached, bound, pid, kernel_pid = out.split()
    km.restart_kernel(now=False)  # as JupyterLab restarts it: the kernel is asked to shut down, and exits
    kc.wait_for_ready(timeout=60)
    run_ok(kc, "%load_ext jupyter_sched\n%config SchedMagics.interactive = False")

    def state_of(handle: str) -> str:
        return run_ok(kc, f"print(get_ipython().run_line_magic('sched_status', '{handle}').state)").strip()

    wait_for(lambda: state_of(bound) == "FAILED", 30, "the owner-bound app to end with its kernel")
    assert state_of(detached) == "RUNNING" and alive(int(pid))
    # nobody cancelled it: the kernel's exit ended it, and the new kernel says so (issue 26)
    reply, _ = execute(kc, f"b = %sched_job {bound.rsplit('/', 1)[1]}\nb.result()")
    assert reply["content"]["ename"] == "JobFailed", reply["content"]
    line = reply["content"]["traceback"][0]
    assert (
        f"sh/0 FAILED (exit code -15 (SIGTERM)): stopped when the kernel that launched it (process {kernel_pid})"
        " was restarted or shut down; launch with --detach to keep a job through a restart"
    ) in line, line
    listing = run_ok(kc, "%sched_list")
    rows = {line.split()[0]: line.split()[2] for line in listing.splitlines()[1:]}
    assert rows[detached] == "RUNNING" and rows[bound] == "FAILED"
    assert "hello-detached" in run_ok(kc, f"%sched_logs {detached.rsplit('/', 1)[1]} --snapshot")
    assert "hello-bound" in run_ok(kc, "%sched_logs sh --streams stdout")  # by name: the latest 'sh'
    run_ok(kc, "%config SchedMagics.interactive = True")
    reply, msgs = execute(kc, f"%sched_status {detached}")
    assert reply["content"]["status"] == "ok" and any(m["msg_type"] == "comm_open" for m in msgs)
    run_ok(kc, "%config SchedMagics.interactive = False")
    cancelled = run_ok(kc, f"%sched_cancel {detached} --wait")
    assert f"{detached.rsplit('/', 1)[1]} on local_cwd: CANCELLED" in cancelled
    wait_for(lambda: not alive(int(pid)), 30, "the detached replica to end after %sched_cancel")
    time.sleep(0)


def test_restart_finds_docker_apps_again(kernel: Tuple[Any, Any], docker_engine: None) -> None:
    """Docker apps are found again from their containers (the launch registry says to ask local_docker)."""
    import subprocess

    image = "jupyter-sched/busybox:local"
    if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode != 0:
        from tests.conftest import missing_engine

        missing_engine(image, "the image is missing: run `bash scripts/setup/images.sh`")
    from jupyter_sched.specs import random_id

    session = f"nbtest-{random_id()}"
    setup = (
        "%load_ext jupyter_sched\n%config SchedMagics.interactive = False\n"
        f"%config SchedMagics.session_name = '{session}'"
    )
    km, kc = kernel
    try:
        start = (
            f"j = %sched_run -s local_docker --cfg cancel_grace=1 utils.sh --image {image} 'echo from-docker; sleep 60'"
        )
        out = run_ok(kc, f"{setup}\n{start}\nprint(j.handle)")
        handle = out.split()[-1]
        assert handle.startswith(f"local_docker://{session}/")
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=60)
        run_ok(kc, setup)
        listing = run_ok(kc, "%sched_list")
        assert any(line.split()[0] == handle and line.split()[2] == "RUNNING" for line in listing.splitlines())
        app_id = handle.rsplit("/", 1)[1]
        wait_for(lambda: "from-docker" in run_ok(kc, f"%sched_logs {app_id} --snapshot"), 30, "the docker log")
        assert f"{app_id} on local_docker: CANCELLED" in run_ok(kc, f"%sched_cancel {app_id} --wait")
    finally:
        ids = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=jupyter_sched.session={session}"],
                             capture_output=True, text=True).stdout.split()  # fmt: skip
        if ids:
            subprocess.run(["docker", "rm", "-f", *ids], capture_output=True)


def test_a_sweeps_runs_stopped_by_a_restart_say_so_in_the_next_kernel(kernel: Tuple[Any, Any]) -> None:
    km, kc = kernel
    out = run_ok(kc, (
        "%load_ext jupyter_sched\n%config SchedMagics.interactive = False\nimport jupyter_sched, os, time\n"
        "def slow(k):\n    time.sleep(120)\n    return k\n"
        "sw = jupyter_sched.sweep(slow, {'k': [1, 2, 3]}, max_concurrent=2)\n"
        "while sw.counts().get('RUNNING', 0) < 2:\n    time.sleep(0.05)\n"
        "print(sw.name, os.getpid())"
    ))  # fmt: skip
    name, kernel_pid = out.split()
    km.restart_kernel(now=False)  # as JupyterLab restarts it: the kernel exits, and its local replicas with it
    kc.wait_for_ready(timeout=60)
    shown = run_ok(kc, (
        "%load_ext jupyter_sched\n%config SchedMagics.interactive = False\nimport jupyter_sched\n"
        f"sw = jupyter_sched.load_sweep({name!r})\nsw.wait(timeout=60)\nprint(sw.counts_text())\n"
        "print([r['error'] for r in sw.records()])"
    ))  # fmt: skip
    counts, errors = shown.strip().splitlines()
    assert counts == "1 CANCELLED, 2 FAILED", shown
    said = f"stopped when the kernel that launched it (process {kernel_pid}) was restarted or shut down"
    first, second, queued = eval(errors)
    assert said in (first or "") and said in (second or ""), f"the reason a job of that kernel gives: {errors}"
    assert queued == "was queued in an earlier kernel; never started"
    # and the session's list (%sched_list, Open) says the same of both, the sweep found again or not
    reasons = run_ok(kc, (
        "from jupyter_sched.notebook.extension import load\n"
        "print({r.reason for r in load(get_ipython()).session.list_jobs().rows if r.sweep})"
    ))  # fmt: skip
    assert [said in reason for reason in eval(reasons)] == [True, True], reasons

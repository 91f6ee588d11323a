"""The notebook flow in-process (real jobs, IPython's test shell): how a waited-for job ends, fail-fast,
``job.logs()`` bounds, ``%sched_job``, the call site of an assigned magic, and the ``%sched_list`` order,
buttons and Open."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from nbhelpers import py, wait_for

from jupyter_sched.frontend.job import Job, JobFailed
from jupyter_sched.specs import AppState

FAIL_ONE = "if [ \"$JUPYTER_SCHED_REPLICA_ID\" = 1 ]; then echo \"KeyError: 'y'\" >&2; exit 3; fi; sleep 60"


def test_wait_raises_job_failed_naming_the_replica_and_error(ip: Any, magics: Any) -> None:
    code = (
        "import sys\n"
        "if sys.argv[0] == '-c' and __import__('os').environ['JUPYTER_SCHED_REPLICA_ID'] == '1':\n"
        "    {}['y']\n"
    )
    with pytest.raises(JobFailed) as info:
        ip.run_line_magic("sched_run", f"--wait {py(code, '--num_replicas 2')}")
    failed = info.value
    assert failed.state == AppState.FAILED and isinstance(failed.job, Job)
    message = str(failed)
    assert message.startswith("python FAILED: python/1 FAILED (exit code 1): KeyError: 'y'")
    # the app by id and scheduler: JupyterLab would turn half of a handle into a dead link (issue 26)
    assert message.endswith(f" [{failed.job.app_id} on local_cwd]") and "://" not in message
    assert "\n" not in message
    assert failed._render_traceback_() == [f"\x1b[31mJobFailed\x1b[0m: {message}"]
    assert failed.job.wait().state == AppState.FAILED  # wait() returns the status, it does not raise
    with pytest.raises(JobFailed):
        failed.job.result()


def test_succeeded_and_self_cancelled_do_not_raise(ip: Any, magics: Any) -> None:
    job = ip.run_line_magic("sched_run", "--wait utils.sh 'echo fine'")
    assert job.result().state == AppState.SUCCEEDED
    job = ip.run_line_magic("sched_run", "utils.sh 'sleep 60'")
    job.cancel()
    assert job.result(timeout=30).state == AppState.CANCELLED  # this kernel asked for it: not a failure
    other = magics.session.runner
    job = ip.run_line_magic("sched_run", "utils.sh 'sleep 60'")
    other.cancel(job.handle)  # cancelled by someone else (the CLI, another kernel)
    with pytest.raises(JobFailed, match="CANCELLED: cancelled outside this wait"):
        job.result(timeout=30)


def test_fail_fast_stops_the_other_replicas(ip: Any, magics: Any) -> None:
    with pytest.raises(JobFailed) as info:
        ip.run_line_magic("sched_run", f"--wait --fail-fast utils.sh --num_replicas 3 {shlex.quote(FAIL_ONE)}")
    status = info.value.status
    states = {r.id: r.state for r in status.roles[0].replicas}
    assert status.state == AppState.FAILED and states[1] == AppState.FAILED
    assert states[0] != AppState.RUNNING and states[2] != AppState.RUNNING  # stopped, not left running
    assert "fail_fast" in status.msg and "the other replicas were stopped (--fail-fast)" in str(info.value)
    assert "sh/1 FAILED (exit code 3): KeyError: 'y'" in str(info.value)


def test_fail_fast_without_wait_is_watched(ip: Any, magics: Any) -> None:
    job = ip.run_line_magic("sched_run", f"--fail-fast utils.sh --num_replicas 2 {shlex.quote(FAIL_ONE)}")
    wait_for(lambda: job.state.is_terminal, 30, "the watcher to stop the app")
    assert job.status.state == AppState.FAILED


def test_default_lets_the_others_run_as_torchx(ip: Any, magics: Any) -> None:
    job = ip.run_line_magic("sched_run", f"utils.sh --num_replicas 2 {shlex.quote(FAIL_ONE)}")
    wait_for(lambda: job.status.roles[0].replicas[1].state == AppState.FAILED, 30, "replica 1 to fail")
    assert job.state == AppState.RUNNING  # TorchX: RUNNING until every replica has exited
    job.cancel()
    job.wait()


def test_logs_return_everything_or_say_what_they_left_out(ip: Any, magics: Any) -> None:
    job = ip.run_line_magic("sched_run", f"--wait {py('for i in range(12000): print(i)')}")
    lines = job.logs(streams="stdout")
    assert len(lines) == 12000 and lines[0] == "0" and lines[-1] == "11999" and lines.omitted == 0
    tail = job.logs(streams="stdout", tail=100)
    assert list(tail) == [str(i) for i in range(11900, 12000)] and tail.omitted == 11900 and tail.tail == 100
    assert repr(tail).endswith("# 11900 earlier lines omitted (tail=100)")


def test_sched_job_returns_the_job(ip: Any, magics: Any) -> None:
    job = ip.run_line_magic("sched_run", "utils.sh 'echo hi'")
    assert ip.run_line_magic("sched_job", job.handle) is job
    assert ip.run_line_magic("sched_job", job.app_id) is job
    fresh = Job(job.handle, magics.session.runner)
    assert fresh.wait().state == AppState.SUCCEEDED


def test_call_site_sees_assignment(ip: Any, magics: Any) -> None:
    from jupyter_sched.notebook.magics.callsite import magic_call_site

    seen = []
    ip.register_magic_function(lambda line: seen.append(magic_call_site()), "line", "jsched_probe")
    try:
        ip.run_cell("x = %jsched_probe")
        ip.run_cell("%jsched_probe")
        ip.run_cell("class A: pass\na = A()\na.b = %jsched_probe")
        ip.run_cell("def f():\n    y = %jsched_probe\nf()")
    finally:
        del ip.magics_manager.magics["line"]["jsched_probe"]
    assert [(s.global_name, s.assigned) for s in seen] == [("x", True), (None, False), (None, False), (None, True)]


def test_list_orders_running_first_newest_first_and_opens_rows(widgets: Any, recorder: Any, ip: Any) -> None:
    done = ip.run_line_magic("sched_run", "--wait utils.sh --name done-first 'echo a'")
    older = ip.run_line_magic("sched_run", "utils.sh --name run-older 'sleep 60'")
    wait_for(lambda: older.state == AppState.RUNNING, 30, "the older app to run")
    newer = ip.run_line_magic("sched_run", "utils.sh --name run-newer 'sleep 60'")
    wait_for(lambda: newer.state == AppState.RUNNING, 30, "the newer app to run")
    listing = ip.run_line_magic("sched_list", "")
    try:
        # app rows in the order shown (a sweep of an earlier test is one row of its own: not an app's)
        handles = [h for w in listing.body.children for h, r in listing.rows.items() if r.widget is w]
        assert handles.index(newer.handle) < handles.index(older.handle) < handles.index(done.handle)
        finished = listing.rows[done.handle]
        assert finished.button.layout.visibility == "hidden" and finished.button.disabled
        assert "took" in finished.html.value and "started" in finished.html.value
        running = listing.rows[newer.handle]
        assert running.button.layout.visibility == "visible" and "running" in running.html.value
        running.open.click()
        assert listing.opened == newer.handle and listing.detail.children[1] is newer.view().widget
        running.open.click()
        assert listing.detail.children == ()
        # a new app appears at the top of the running group; an ended one moves below the running ones
        newest = ip.run_line_magic("sched_run", "utils.sh --name run-newest 'sleep 60'")
        older.cancel()
        older.wait()
        listing.ticker.wake()

        def order() -> Any:
            return [h for w in listing.body.children for h, r in listing.rows.items() if r.widget is w]

        wait_for(lambda: order()[:2] == [newest.handle, newer.handle], 30, "the new app at the top")
        wait_for(lambda: order().index(older.handle) > order().index(newer.handle), 30, "the ended app to move")
    finally:
        listing.stop()
        for job in (older, newer):
            job.cancel()
        if "newest" in locals():
            newest.cancel()

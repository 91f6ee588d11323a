"""Runner over real local apps: handles, wait, status, cancel, describe, logs, list, unknown apps."""

from __future__ import annotations

import copy

import pytest

from jupyter_sched.runner import JOB_ID_ENV, Runner, get_runner
from jupyter_sched.specs import (
    AppDef,
    AppState,
    MalformedAppHandleException,
    Role,
    UnknownAppException,
    UnknownSchedulerException,
    parse_app_handle,
)


def _app(script: str, n: int = 1) -> AppDef:
    return AppDef("job", [Role("main", "x", entrypoint="sh", args=["-c", script], num_replicas=n)])


def test_run_wait_status_logs_and_job_id(runner: Runner, log_dir: str) -> None:
    app = _app(f"echo ${JOB_ID_ENV}; echo rank $JUPYTER_SCHED_REPLICA_ID", n=2)
    before = copy.deepcopy(app)
    handle = runner.run(app, "local_cwd", {"log_dir": log_dir})
    scheduler, session, app_id = parse_app_handle(handle)
    assert (scheduler, session) == ("local_cwd", "test")
    status = runner.wait(handle)
    assert status is not None and status.state == AppState.SUCCEEDED
    assert [r.id for r in status.roles[0].replicas] == [0, 1]
    assert list(runner.log_lines(handle, "main", 1)) == [f"{handle}\n", "rank 1\n"]
    assert app == before  # the job id went into a copy
    assert runner.describe(handle) == before  # the app as given, without the runner's variables
    assert handle in [r.app_handle for r in runner.list("local_cwd")]


def test_describe_returns_the_app_as_given_with_a_parent_run_id(runner: Runner, log_dir: str) -> None:
    app = _app("exit 0")
    app.roles[0].env["MINE"] = "1"
    info = runner.dryrun(app, "local_cwd", {"log_dir": log_dir}, parent_run_id="run-9")
    assert info.app is not None and info.app.roles[0].env["JUPYTER_SCHED_PARENT_RUN_ID"] == "run-9"
    handle = runner.schedule(info)
    described = runner.describe(handle)
    assert described == app and described is not app
    assert described.roles[0].env == {"MINE": "1"}
    runner.wait(handle)


def test_wait_timeout_and_cancel(runner: Runner, log_dir: str) -> None:
    handle = runner.run(_app("sleep 600"), "local_cwd", {"log_dir": log_dir})
    status = runner.wait(handle, timeout=0.05)
    assert status is not None and status.state == AppState.RUNNING
    runner.cancel(handle)
    final = runner.wait(handle)
    assert final is not None and final.state == AppState.CANCELLED
    runner.cancel(handle)  # already terminal: a no-op


def test_failed_app_raises_for_status(runner: Runner, log_dir: str) -> None:
    status = runner.wait(runner.run(_app("exit 4"), "local_cwd", {"log_dir": log_dir}))
    assert status is not None and status.state == AppState.FAILED
    assert status.roles[0].replicas[0].exit_code == 4
    with pytest.raises(Exception, match="did not succeed"):
        status.raise_for_status()


def test_unknown_apps_schedulers_and_handles(runner: Runner) -> None:
    assert runner.status("local_cwd://test/nope-123") is None
    assert runner.wait("local_cwd://test/nope-123") is None
    assert runner.describe("local_cwd://test/nope-123") is None
    with pytest.raises(UnknownAppException, match="nope-123"):
        runner.log_lines("local_cwd://test/nope-123", "main")
    with pytest.raises(UnknownSchedulerException, match="Use one of: local_cwd"):
        runner.status("kubernetes://test/x")
    with pytest.raises(MalformedAppHandleException):
        runner.status("not-a-handle")


def test_dryrun_cfg_from_str_and_schedule(runner: Runner, log_dir: str) -> None:
    cfg = runner.cfg_from_str("local_cwd", f"log_dir={log_dir},prepend_cwd=true")
    info = runner.dryrun(_app("echo hi"), "local_cwd", cfg)
    assert info.scheduler == "local_cwd" and info.cfg["prepend_cwd"] is True
    handle = runner.schedule(info)
    assert runner.wait(handle).state == AppState.SUCCEEDED  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="does not support workspaces"):
        runner.dryrun(_app("echo"), "local_cwd", workspace="/tmp")


def test_shared_root_is_each_schedulers_own(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Where a function job's files go, as each scheduler says: this machine's state dir for the local and
    docker backends, the shared job directory for Slurm (its ``job_dir``, else its root)."""
    from jupyter_sched.schedulers.common.state_dir import LOG_DIR_ENV, SLURM_DIR_ENV

    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "state"))
    monkeypatch.setenv(SLURM_DIR_ENV, str(tmp_path / "cluster"))
    with get_runner("roots") as fresh:  # created after the variables are set: the Slurm root is read then
        assert fresh.shared_root("local_cwd") == str(tmp_path / "state")
        assert fresh.shared_root("local_docker", {}) == str(tmp_path / "state")
        assert fresh.shared_root("slurm") == str(tmp_path / "cluster")
        assert fresh.shared_root("slurm", {"job_dir": "/shared/jobs"}) == "/shared/jobs"

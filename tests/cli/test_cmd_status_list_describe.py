"""``status``, ``list``, ``describe`` and ``cancel`` end to end, including their failure exits."""

from __future__ import annotations

import json
import time

import pytest
from cli_helpers import Cli  # type: ignore[import-not-found]

from jupyter_sched.frontend.jobs.rows import app_span, times
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppState

UNKNOWN = "local_cwd://default/nope-123"


def test_status_text_json_and_roles(cli: Cli) -> None:
    proc = cli("run", "--wait", "utils.sh", "--num_replicas", "2", "exit ${replica_id}")
    handle = proc.stdout.strip()
    text = cli("status", handle)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"{handle}:\nAppStatus:\n    State: FAILED\n")
    assert (
        "*sh[0]:SUCCEEDED (exitcode: 0)" in text.stdout
        and "sh[1]:FAILED (exitcode: 1)" in text.stdout
    )
    data = json.loads(cli("status", handle, "--json").stdout)
    assert data["app_handle"] == handle and data["state"] == "FAILED"
    assert data["structured_error_msg"] is None  # not the "<NONE>" placeholder
    assert [(r["id"], r["state"], r["exit_code"]) for r in data["roles"][0]["replicas"]] == [
        (0, "SUCCEEDED", 0),
        (1, "FAILED", 1),
    ]
    assert cli("status", handle, "--roles", "sh").returncode == 0
    bad = cli("status", handle, "--roles", "sh,ps")
    assert bad.returncode == 1 and "has no role 'ps'; its roles are: sh" in bad.stderr


def test_a_detached_job_keeps_its_end_time_after_its_launcher_exited(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job started with outlive_owner=true by a command that exits has no owner left to record its end, and
    every reader took the moment it read for it (a 41 s job read "took 16m10s", longer at each read). Its
    wrapper records the end: read 20 s after it ended, the CLI, the server's row and the notebook's pane say
    it took 5 s (the ±1 s covers the wrapper's own start, recorded within the replica's time)."""
    handle = cli.run_app("--cfg", "outlive_owner=true", "utils.sh", "sleep 5")  # that command has exited

    def replica() -> dict:
        data = json.loads(cli("status", "--json", handle).stdout)
        return dict(data["roles"][0]["replicas"][0], app_state=data["state"])

    deadline = time.monotonic() + 120
    while (first := replica())["app_state"] == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert first["app_state"] == "SUCCEEDED", first
    time.sleep(20)  # a later read: it read 20 s longer
    later = replica()
    assert (later["started"], later["finished"]) == (first["started"], first["finished"])
    assert abs(later["finished"] - later["started"] - 5) <= 1, later
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", cli.env["JUPYTER_SCHED_LOG_DIR"])
    with get_runner() as runner:  # what the Jupyter server and a kernel read
        status = runner.status(handle)
    assert status is not None and status.state == AppState.SUCCEEDED
    started, ended = times(status)  # the sidebar's "took" is the row's span, ended - started
    assert started == first["started"] and ended == first["finished"]
    span = app_span(status, time.time() + 3600)  # the notebook's status pane: an hour later, still the same
    assert span is not None and abs(span - 5) <= 1


def test_status_describe_cancel_of_an_unknown_app_fail_at_once(cli: Cli) -> None:
    for verb in ("status", "describe", "cancel"):
        proc = cli(verb, UNKNOWN)
        assert proc.returncode == 1, verb
        assert f"no app {UNKNOWN}: it was never submitted" in proc.stderr
        assert "local_cwd knows no apps in session 'default'" in proc.stderr
        other = cli(verb, "local_cwd://other/nope-123")
        assert other.returncode == 1 and other.stderr == (
            "jupyter-sched: error: no app local_cwd://other/nope-123: it was never submitted, or its records"
            " were removed. `jupyter-sched list` shows only session 'default'.\n"
        )
        malformed = cli(verb, "local_cwd:/x")
        assert malformed.returncode == 2 and "is not of the form" in malformed.stderr


def test_list_shows_apps_of_other_processes(cli: Cli) -> None:
    assert cli("list").stdout == "no apps on local_cwd (session 'default')\n"
    assert json.loads(cli("list", "--json").stdout) == []
    first = cli.run_app("utils.echo", "--name", "first")
    second = cli("run", "--wait", "utils.sh", "exit 1").stdout.strip()
    lines = cli("list", "-s", "local_cwd").stdout.splitlines()
    assert lines[0].split() == ["APP", "HANDLE", "STATE", "NAME"]
    assert sorted(line.split() for line in lines[1:]) == sorted(
        [[first, "SUCCEEDED", "first"], [second, "FAILED", "sh"]]
    )
    rows = json.loads(cli("list", "--json").stdout)
    assert {r["app_handle"]: (r["state"], r["name"]) for r in rows} == {
        first: ("SUCCEEDED", "first"),
        second: ("FAILED", "sh"),
    }
    bad = cli("list", "-s", "nope")
    assert (
        bad.returncode == 2
        and "unknown scheduler 'nope'; available: local_cwd, local_dir" in bad.stderr
    )


def test_describe(cli: Cli) -> None:
    handle = cli.run_app("utils.echo", "--msg", "described", "--num_replicas", "2")
    out = cli("describe", handle).stdout
    assert "roles:\n  - name: echo\n" in out and "    entrypoint: echo\n" in out
    assert "      - described\n" in out and "    num_replicas: 2\n" in out
    data = json.loads(cli("describe", handle, "--json").stdout)
    assert data["roles"][0]["args"] == ["described"]


def test_cancel_a_running_app_from_another_process(cli: Cli) -> None:
    runner = cli.popen("run", "utils.sh", "echo up; sleep 60")
    assert runner.stdout is not None and runner.stderr is not None
    handle = runner.stdout.readline().strip()
    for line in runner.stderr:
        if "sh/0 up" in line:
            break
    proc = cli("cancel", "--wait", handle)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{handle}: CANCELLED\n"
    assert (
        runner.wait(timeout=30) == 1
    )  # the run that owned it reports the cancelled app as a failure
    assert "State: CANCELLED" in runner.stderr.read()
    again = cli("cancel", handle)
    assert (
        again.returncode == 0
        and again.stdout == f"{handle} already ended (CANCELLED); nothing to cancel\n"
    )


def test_an_empty_session_means_default_for_every_verb(cli: Cli) -> None:
    """``local_cwd:///APP_ID`` is accepted by ``log`` (like TorchX); the other verbs take it too."""
    handle = cli.run_app("utils.echo", "--msg", "sessionless")
    short = handle.replace("://default/", ":///")
    status = cli("status", short)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith(f"{handle}:\nAppStatus:\n    State: SUCCEEDED")
    assert json.loads(cli("status", short, "--json").stdout)["app_handle"] == handle
    assert cli("describe", short).returncode == 0
    cancel = cli("cancel", short)
    assert cancel.stdout == f"{handle} already ended (SUCCEEDED); nothing to cancel\n"

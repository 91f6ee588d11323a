"""The jobs API of the server extension, against a real ``jupyter server`` and jobs launched with the real
CLI: the list, one job, a log snapshot and its live stream (lines and ``\\r`` frames as the panes show
them), cancel; and what it refuses: no login (403), a POST without its XSRF token (403), a malformed or
unsafe handle (400), an unknown job or replica (404), bad query arguments (400).
"""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from tests.server.conftest import Cli, JobsServer, quote

# prints a progress bar (\r frames), a coloured line, then waits for GO in its working directory
WAITING = (
    "for i in 1 2 3; do printf 'step %s/3\\r' $i; sleep 0.05; done; echo; printf '\\033[31mred\\033[0m <b>&amp;\\n';"
    " echo ready; while [ ! -e GO ]; do sleep 0.1; done; echo finished; echo to-stderr >&2"
)


def launch(cli: Cli, name: str, script: str, *extra: str) -> str:
    """A local job that outlives the CLI (``outlive_owner``): the CLI prints its handle and returns."""
    done = cli("run", "-s", "local_cwd", "--cfg", "outlive_owner=true", "utils.sh", "--name", name, *extra, script)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[0]


def row_of(body: Dict[str, Any], handle: str) -> Optional[Dict[str, Any]]:
    for entry in body["jobs"]:
        if entry["handle"] == handle:
            return entry
        for run in entry.get("runs", []):
            if run["handle"] == handle:
                return run
    return None


def test_a_cli_job_is_listed_described_logged_and_streamed(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "listed", WAITING)
    row = jobs_server.wait_for(lambda b: row_of(b, handle), f"{handle} in the list")
    assert row["scheduler"] == "local_cwd" and row["session"] == "default" and row["name"] == "listed"
    assert row["kind"] == "job" and row["sweep"] is None and row["notebook"] is None
    assert row["state"] in ("PENDING", "SUBMITTED", "RUNNING")

    # running jobs come first
    body = jobs_server.api("GET", "jobs?limit=500")
    states = [e["state"] for e in body["jobs"]]
    running = [s not in ("SUCCEEDED", "FAILED", "CANCELLED") for s in states]
    assert running == sorted(running, reverse=True), states

    path = quote(handle)
    jobs_server.wait_for(lambda b: (row_of(b, handle) or {}).get("state") == "RUNNING", "RUNNING")
    detail = jobs_server.api("GET", f"jobs/{path}")
    assert detail["handle"] == handle and detail["state"] == "RUNNING"
    (role,) = detail["status"]["roles"]
    assert role["role"] == "sh" and [r["id"] for r in role["replicas"]] == [0]
    assert role["replicas"][0]["pid"] and role["replicas"][0]["started"]
    assert detail["usage"] and detail["usage"][0]["role"] == "sh"

    # the snapshot: the \r frames are one line (the last frame), colours are inline styles, text is escaped
    snap = _until(lambda: _snapshot_with(jobs_server, path, "ready"), "the line 'ready'")
    assert snap["text"][:3] == ["step 3/3", "red <b>&amp;", "ready"], snap["text"]
    assert "color:#e75c58" in snap["html"][1] and "&lt;b&gt;&amp;amp;" in snap["html"][1]
    assert "<b>" not in "".join(snap["html"])
    assert snap["state"] == "RUNNING"

    # the stream starts with what is there, then follows until the log ends
    (Path(cli.cwd) / "GO").touch()
    events = jobs_server.events(f"jobs/{path}/logs/stream?role=sh&k=0")
    assert events and all(name == "log" for name, _ in events)
    assert events[0][1]["reset"] is True
    lines = [html for _, data in events for html in data["html"]]
    assert lines.index("step 3/3") < lines.index("ready") < lines.index("finished")
    assert events[-1][1]["ended"] is True and events[-1][1]["error"] is None
    assert events[-1][1]["total"] == len(lines)
    # a replica that outlives its owner has no combined log (its stderr is in its own file)
    err = jobs_server.api("GET", f"jobs/{path}/logs?role=sh&k=0&stream=stderr")
    assert err["text"] == ["to-stderr"] and err["stream"] == "stderr"

    final = until_state(jobs_server, handle, "SUCCEEDED")
    assert final["reason"] == "listed SUCCEEDED"
    assert final["started"] and final["ended"] and final["ended"] >= final["started"]


def until_state(server: JobsServer, handle: str, state: str, timeout: float = 60.0) -> Dict[str, Any]:
    """The job's row once the list shows it in ``state``."""
    return server.wait_for(lambda b: (row_of(b, handle) or {}).get("state") == state and row_of(b, handle),
                           f"{handle} {state}", timeout)  # fmt: skip


def _snapshot_with(server: JobsServer, path: str, needle: str) -> Optional[Dict[str, Any]]:
    snap = server.api("GET", f"jobs/{path}/logs?role=sh&k=0&lines=50")
    return snap if needle in snap["text"] else None


def _until(fn: Any, what: str, timeout: float = 60.0) -> Any:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout} s")


def test_a_failed_job_says_which_replica_and_its_exit_code(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "broken", 'if [ "$JUPYTER_SCHED_REPLICA_ID" = 1 ]; then exit 3; fi', "--num_replicas", "2")
    row = until_state(jobs_server, handle, "FAILED")
    assert row["reason"] == "broken FAILED: sh/1 exit code 3"
    assert row["replicas"] == 2 and row["replicas_running"] == 0 and not row["running"]


def test_cancel_stops_a_running_job(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "stopme", "echo up; sleep 600")
    jobs_server.wait_for(lambda b: (row_of(b, handle) or {}).get("state") == "RUNNING", "RUNNING")
    reply = jobs_server.api("POST", f"jobs/{quote(handle)}/cancel")
    assert reply["cancelled"] is True and reply["handle"] == handle
    row = until_state(jobs_server, handle, "CANCELLED")
    assert row["reason"] == "stopme CANCELLED"
    again = jobs_server.api("POST", f"jobs/{quote(handle)}/cancel")
    assert again["cancelled"] is False and "already ended (CANCELLED)" in again["message"]


def test_every_route_refuses_a_request_without_login(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "private", "echo secret-output")
    path = quote(handle)
    for method, route in [
        ("GET", "jobs"), ("GET", f"jobs/{path}"), ("GET", f"jobs/{path}/logs"),
        ("GET", f"jobs/{path}/logs/stream"), ("POST", f"jobs/{path}/cancel"), ("GET", "jobs/nonsense"),
    ]:  # fmt: skip
        reply = jobs_server.request(method, "jupyter-sched/api/" + route, token=False)
        assert reply.status in (401, 403), f"{method} {route}: {reply.status} {reply.body[:300]!r}"
        assert b"secret-output" not in reply.body and handle.encode() not in reply.body
    wrong = jobs_server.request("GET", "jupyter-sched/api/jobs", token=False, headers={"Authorization": "token nope"})
    assert wrong.status in (401, 403)


def test_a_browser_session_needs_the_xsrf_token_to_cancel(jobs_server: JobsServer, cli: Cli) -> None:
    """Logged in with a cookie (as a browser is), GETs work, but a POST without the ``_xsrf`` token is
    refused and the job keeps running; with it, the cancel goes through."""
    handle = launch(cli, "xsrf", "sleep 600")
    jobs_server.wait_for(lambda b: (row_of(b, handle) or {}).get("state") == "RUNNING", "RUNNING")
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(jobs_server.url(f"api/status?token={jobs_server.token}")).read()  # the login cookie
    opener.open(jobs_server.url("login")).read()  # a page: the _xsrf cookie
    opener.open(jobs_server.url("jupyter-sched/api/jobs")).read()
    xsrf = next((c.value for c in jar if c.name == "_xsrf"), None)
    assert xsrf, [c.name for c in jar]
    cancel = jobs_server.url(f"jupyter-sched/api/jobs/{quote(handle)}/cancel")
    with pytest.raises(urllib.error.HTTPError) as refused:
        opener.open(urllib.request.Request(cancel, method="POST", data=b""))
    assert refused.value.code == 403
    assert (row_of(jobs_server.api("GET", "jobs?limit=500"), handle) or {}).get("state") == "RUNNING"
    ok = opener.open(urllib.request.Request(cancel, method="POST", data=b"", headers={"X-XSRFToken": xsrf}))
    assert json.loads(ok.read())["cancelled"] is True


@pytest.mark.parametrize(
    "raw, needle",
    [
        ("nonsense", "is not of the form"),
        (quote("local_cwd://../escape"), "session name '..'"),
        (quote("local_cwd://default/..%2F..%2Fetc"), "app id '..%2F..%2Fetc'"),
        (quote("local_cwd://default/a\\b"), "app id"),
        (quote("no_such_scheduler://default/x-1"), "unknown scheduler 'no_such_scheduler'"),
    ],
)
def test_a_bad_handle_is_a_400_naming_the_problem(jobs_server: JobsServer, raw: str, needle: str) -> None:
    for route in (f"jobs/{raw}", f"jobs/{raw}/logs", f"jobs/{raw}/logs/stream"):
        reply = jobs_server.request("GET", "jupyter-sched/api/" + route)
        assert reply.status == 400, (route, reply.status, reply.body)
        assert needle in reply.json()["message"], reply.json()
    assert jobs_server.request("POST", f"jupyter-sched/api/jobs/{raw}/cancel").status == 400


def test_an_unknown_job_or_replica_is_a_404(jobs_server: JobsServer, cli: Cli) -> None:
    unknown = quote("local_cwd://default/never-b3k2x9q0d1xyz")
    routes = [("GET", f"jobs/{unknown}"), ("GET", f"jobs/{unknown}/logs"), ("POST", f"jobs/{unknown}/cancel")]
    for method, route in routes:
        reply = jobs_server.request(method, "jupyter-sched/api/" + route)
        assert reply.status == 404 and "never submitted" in reply.json()["message"], reply.body
    handle = launch(cli, "onereplica", "echo hi")
    path = quote(handle)
    jobs_server.wait_for(lambda b: row_of(b, handle), "listed")
    reply = jobs_server.request("GET", f"jupyter-sched/api/jobs/{path}/logs?role=nope")
    assert reply.status == 404 and "the job's roles are: sh" in reply.json()["message"]
    reply = jobs_server.request("GET", f"jupyter-sched/api/jobs/{path}/logs?role=sh&k=5")
    assert reply.status == 404 and "its replicas are: 0" in reply.json()["message"]
    for query, needle in [("k=x", "k='x'"), ("lines=0", "lines='0'"), ("stream=both", "stream='both'")]:
        reply = jobs_server.request("GET", f"jupyter-sched/api/jobs/{path}/logs?{query}")
        assert reply.status == 400 and needle in reply.json()["message"], reply.body


def test_the_list_is_paged_and_its_arguments_checked(jobs_server: JobsServer, cli: Cli) -> None:
    first, second = launch(cli, "paged", "true"), launch(cli, "paged", "true")
    jobs_server.wait_for(lambda b: row_of(b, first) and row_of(b, second), "both listed")
    body = jobs_server.api("GET", "jobs?limit=1")
    assert len(body["jobs"]) == 1 and body["total"] >= 2 and body["limit"] == 1
    rest = jobs_server.api("GET", "jobs?limit=1&offset=1")
    assert rest["jobs"][0]["handle"] != body["jobs"][0]["handle"]
    ended = jobs_server.api("GET", "jobs?state=ended&limit=500")
    assert all(e["state"] in ("SUCCEEDED", "FAILED", "CANCELLED") for e in ended["jobs"])
    for query, needle in [("limit=0", "limit=0"), ("limit=501", "limit=501"), ("offset=-1", "offset=-1"),
                          ("limit=x", "limit='x'"), ("state=DONE", "state='DONE'")]:  # fmt: skip
        reply = jobs_server.request("GET", f"jupyter-sched/api/jobs?{query}")
        assert reply.status == 400 and needle in reply.json()["message"], (query, reply.body)
    only = jobs_server.api("GET", "jobs?scheduler=local_dir&limit=500")
    assert all(e["scheduler"] == "local_dir" for e in only["jobs"])
    assert "local_cwd" in body["schedulers"] and "default" in body["sessions"]


def test_docker_and_slurm_jobs_are_listed_beside_local_ones(
    jobs_server: JobsServer, cli: Cli, docker_engine: None, slurm_cluster: Any, tmp_path: Path
) -> None:
    """The list reads every backend the CLI reads: a container of this user on the engine, and a Slurm
    job (a server started after the cluster fixture shares its job dir)."""
    from tests.schedulers.docker.fixtures import BUSYBOX
    from tests.server.conftest import start_server, stop_server

    done = cli("run", "-s", "local_docker", "utils.sh", "--name", "boxed", "--image", BUSYBOX, "echo in-a-box; sleep 2")
    assert done.returncode == 0, done.stdout + done.stderr
    boxed = done.stdout.strip().splitlines()[0]
    app_id = boxed.rsplit("/", 1)[1]
    try:
        row = until_state(jobs_server, boxed, "SUCCEEDED")
        assert row["scheduler"] == "local_docker" and row["name"] == "boxed" and row["reason"] == "boxed SUCCEEDED"
        snap = jobs_server.api("GET", f"jobs/{quote(boxed)}/logs?role=sh&k=0")
        assert snap["text"] == ["in-a-box"]
    finally:
        import subprocess

        ids = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=jupyter_sched.app-id={app_id}"],
                             capture_output=True, text=True).stdout.split()  # fmt: skip
        if ids:
            subprocess.run(["docker", "rm", "-f", "-v", *ids], capture_output=True)

    server = start_server(tmp_path / "slurm_server", log_name="jupyter-server-slurm.log")
    try:
        env_cli = Cli(dict(cli.env, JUPYTER_SCHED_LOG_DIR=str(server.log_dir)), cli.cwd, [])
        done = env_cli("run", "-s", "slurm", "utils.sh", "--name", "clustered", "echo on-a-node")
        assert done.returncode == 0, done.stdout + done.stderr
        clustered = done.stdout.strip().splitlines()[0]
        row = until_state(server, clustered, "SUCCEEDED", timeout=120)
        assert row["scheduler"] == "slurm" and row["name"] == "clustered"
        snap = server.api("GET", f"jobs/{quote(clustered)}/logs?role=sh&k=0")
        assert "on-a-node" in snap["text"]
    finally:
        stop_server(server)


def test_a_history_of_a_thousand_apps_gives_a_bounded_first_page(
    jobs_server: JobsServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,000 ended apps in another session: the first page is 50 entries, running first, and small; the
    listing is reused between clients (one refresh serves every poll of the interval)."""
    import time

    from jupyter_sched.runner import get_runner
    from jupyter_sched.specs import AppDef, Role

    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(jobs_server.log_dir))
    app = AppDef("old", [Role("main", image="", entrypoint="true", args=[])])
    with get_runner("history") as runner:
        handles = [runner.run(app, "local_cwd") for _ in range(1000)]
        for handle in handles:
            runner.wait(handle, wait_interval=1)
    live = launch(cli, "live", "sleep 600")
    started = time.monotonic()
    body = jobs_server.wait_for(lambda b: b["total"] == 1000 and b, "1,000 apps listed", timeout=120,
                                session="history", limit="50")  # fmt: skip
    print(f"first listing of 1,000 apps: {time.monotonic() - started:.2f} s")  # a measurement, not a check
    jobs_server.wait_for(lambda b: row_of(b, live), "the running app listed too")
    first = jobs_server.request("GET", "jupyter-sched/api/jobs")
    page = first.json()
    assert len(page["jobs"]) == 50 and page["total"] >= 1001 and page["limit"] == 50
    assert page["jobs"][0]["state"] == "RUNNING"  # running first, even among a thousand
    assert len(first.body) < 64_000, len(first.body)
    assert len(body["jobs"]) == 50 and all(r["session"] == "history" for r in body["jobs"])
    for _ in range(3):
        time.sleep(1.5)
        started = time.monotonic()
        again = jobs_server.api("GET", "jobs")
        print(f"GET jobs with 1,000 apps: {time.monotonic() - started:.3f} s (a refresh: {again['listed_in']} s)")
    jobs_server.api("POST", f"jobs/{quote(live)}/cancel")


def test_a_backend_that_cannot_answer_is_named_only_when_asked_for(tmp_path: Path) -> None:
    """No Docker engine at DOCKER_HOST: the default backends skip it quietly (local jobs still list); a
    server told to ask local_docker names why it cannot."""
    from tests.server.conftest import start_server, stop_server

    nowhere = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    quiet = start_server(tmp_path / "quiet", extra_env=nowhere, log_name="jupyter-server-quiet.log")
    try:
        body = quiet.api("GET", "jobs")
        assert not any("local_docker" in n for n in body["notices"]), body["notices"]
        assert "local_docker" not in body["schedulers"] and "local_cwd" in body["schedulers"]
    finally:
        stop_server(quiet)
    told = start_server(tmp_path / "told", extra_env=nowhere, log_name="jupyter-server-told.log",
                        argv=[f"--JobsServer.schedulers={n}" for n in ("local_cwd", "local_docker", "nosuch")])
    try:
        notices = told.api("GET", "jobs")["notices"]
        assert any(n.startswith("local_docker: ") for n in notices), notices
        assert "nosuch: not an installed scheduler (see `jupyter-sched builtins`)" in notices
    finally:
        stop_server(told)

"""The server side under a day's faults: a usage probe that waits once for many apps, a listing refreshed
behind the requests' backs, a backend that is down (503, one masked line, no traceback), a handle found only
under its own scheduler, and a secret of a failed job's error file shown nowhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from jupyter_sched.schedulers.local.record.describe import find_record
from jupyter_sched.schedulers.local.usage.meter import LocalMeter
from jupyter_sched.schedulers.local.usage.sampler import read_usage_file
from jupyter_sched.specs import parse_app_handle
from tests.server.conftest import Cli, JobsServer, quote, start_server, stop_server
from tests.server.test_api import launch, row_of


@pytest.fixture
def server_cli(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple]:
    """A server of the test's own (``argv`` and ``env`` from the ``server_args`` marker) and a CLI beside it."""
    marker = request.node.get_closest_marker("server_args")
    argv: List[str] = list(marker.kwargs.get("argv", [])) if marker else []
    env: Dict[str, str] = dict(marker.kwargs.get("env", {})) if marker else {}
    server = start_server(tmp_path / "server", extra_env=env, argv=argv,
                          log_name=f"jupyter-server-{request.node.name}.log")  # fmt: skip
    cli = Cli(dict(os.environ, JUPYTER_SCHED_LOG_DIR=str(server.log_dir), NO_COLOR="1"), tmp_path, [])
    try:
        yield server, cli
    finally:
        stop_server(server)
        for proc in cli.procs:
            proc.kill()


def test_usage_of_apps_another_process_owns_waits_once_and_is_remembered(jobs_server: JobsServer, cli: Cli) -> None:
    """Three running apps whose owner has exited: asking about them one by one waits for a first reading of
    each app once, not at every call; asking about all of them together waits once."""
    handles = [launch(cli, f"probed{i}", "sleep 600") for i in range(3)]
    records = []
    for handle in handles:
        parsed = parse_app_handle(handle)
        record = find_record([str(jobs_server.log_dir)], parsed.session_name, parsed.app_id)
        assert record is not None
        records.append(record)
    meter = LocalMeter()
    meter.probe.forget_after = 3600.0
    max_age = 3 * meter.sampler.interval + 1  # what the meter takes from a usage file its owner wrote
    deadline = time.monotonic() + 60
    while any(read_usage_file(r.app_dir, max_age) is not None for r in records):  # the CLIs wrote one, once
        assert time.monotonic() < deadline, "the exited owners' usage files are still fresh"
        time.sleep(0.2)
    try:
        for record in (records[0], records[1], records[0], records[1]):
            samples = meter.usage(record, owned=False)
            assert [s.running for s in samples] == [True], samples
        assert meter.probe.settles == 2  # one per app: the second calls found their readings kept
        together = meter.usage_many([(record, False) for record in records])
        assert [len(s) for s in together] == [1, 1, 1]
        assert meter.probe.settles == 3  # the third app's first reading; the other two were kept
        meter.usage_many([(record, False) for record in records])
        assert meter.probe.settles == 3
    finally:
        for handle in handles:
            jobs_server.api("POST", f"jobs/{quote(handle)}/cancel")


def slurmctld_pid() -> int:
    out = subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True, text=True)
    pids = [int(p) for p in out.stdout.split()]
    assert pids, "no slurmctld running (scripts/setup/slurm.sh starts one)"
    return pids[0]


@pytest.mark.server_args(argv=["--JobsServer.schedulers=local_cwd", "--JobsServer.schedulers=slurm",
                               "--JobsServer.refresh_interval=0.2", "--JobsServer.workers=1"])  # fmt: skip
def test_a_stuck_refresh_holds_no_request_back(slurm_cluster: Any, server_cli: tuple) -> None:
    """slurmctld stopped (SIGSTOP): the refresh that asks Slurm about the session's job hangs, and meanwhile
    the list answers with the previous listing, and a job's detail, logs and cancel answer, on a server with
    one worker thread."""
    server, cli = server_cli
    done = cli("run", "-s", "slurm", "utils.echo", "--msg", "on-slurm")
    assert done.returncode == 0, done.stdout + done.stderr
    on_slurm = done.stdout.strip().splitlines()[0]
    handle = launch(cli, "beside-a-stuck-slurm", "echo up; sleep 600")
    server.wait_for(lambda b: row_of(b, handle) and row_of(b, on_slurm), "both jobs listed")
    before = server.api("GET", "jobs")["generated"]
    pid = slurmctld_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        stopped_at = time.time()
        time.sleep(0.5)  # the listing is stale now: the next request starts a refresh that will hang
        first = server.api("GET", "jobs")
        assert first["generated"] < stopped_at and first["generated"] >= before  # the previous listing
        assert row_of(first, handle)["state"] == "RUNNING"
        detail = server.api("GET", f"jobs/{quote(handle)}")
        assert detail["state"] == "RUNNING"
        assert "up" in server.api("GET", f"jobs/{quote(handle)}/logs?role=sh&k=0")["text"]
        assert server.api("POST", f"jobs/{quote(handle)}/cancel")["cancelled"] is True
        again = server.api("GET", "jobs")
        # every answer above came while the refresh was still stuck on Slurm
        assert again["generated"] < stopped_at, "a refresh finished while slurmctld was stopped"
    finally:
        os.kill(pid, signal.SIGCONT)
    server.wait_for(lambda b: (row_of(b, handle) or {}).get("state") == "CANCELLED", "the cancel listed", timeout=120)


@pytest.mark.server_args(env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
def test_a_backend_that_is_down_is_a_503_with_the_clis_hint_and_no_traceback(server_cli: tuple, tmp_path: Path) -> None:
    """No Docker engine at DOCKER_HOST, no Slurm commands on PATH: every route about a job of theirs is a 503
    whose message is one line naming the backend and how to bring it up; the server logs no traceback."""
    server, _ = server_cli
    # a server whose PATH has no Slurm commands (the Docker one above has them): started for this test
    bare = dict(os.environ)
    bare["PATH"] = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                   if not os.path.exists(os.path.join(p, "squeue")))  # fmt: skip
    no_slurm = start_server(tmp_path / "no-slurm", extra_env={"PATH": bare["PATH"]},
                            log_name="jupyter-server-no-slurm.log")  # fmt: skip
    try:
        cases = [(server, "local_docker://default/train-abc123", "Docker engine", "docker.sh"),
                 (no_slurm, "slurm://default/12345", "not found", "slurm.sh")]  # fmt: skip
        for srv, handle, what, hint in cases:
            path = quote(handle)
            for method, route in (("GET", f"jobs/{path}"), ("GET", f"jobs/{path}/logs?role=x&k=0"),
                                  ("GET", f"jobs/{path}/logs/stream?role=x&k=0"), ("POST", f"jobs/{path}/cancel")):
                reply = srv.request(method, "jupyter-sched/api/" + route)
                assert reply.status == 503, (route, reply.status, reply.body[:300])
                body = reply.json()
                assert what in body["message"] and hint in body["message"], body
                assert "\n" not in body["message"] and reply.headers.get("Retry-After")
        for srv in (server, no_slurm):
            assert "Traceback" not in srv.log_text(), srv.log_text()[-3000:]
    finally:
        stop_server(no_slurm)


def test_a_handle_is_found_only_under_its_own_scheduler(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "cwd-only", "echo up; sleep 600")
    other = handle.replace("local_cwd://", "local_dir://", 1)
    path = quote(other)
    assert jobs_server.request("GET", f"jupyter-sched/api/jobs/{path}").status == 404
    assert jobs_server.request("GET", f"jupyter-sched/api/jobs/{path}/logs?role=sh&k=0").status == 404
    reply = jobs_server.request("POST", f"jupyter-sched/api/jobs/{path}/cancel")
    assert reply.status == 404, reply.body
    assert jobs_server.api("GET", f"jobs/{quote(handle)}")["state"] == "RUNNING"  # nothing was cancelled
    assert cli("status", other).returncode != 0  # the CLI finds it under its own scheduler only, too
    jobs_server.api("POST", f"jobs/{quote(handle)}/cancel")


SECRET = "sk-live-5ecret-do-not-show"
ERROR_FILE_WRITER = (
    "python3 -c \"import json, os; json.dump({'message': {'message': 'RuntimeError: WANDB_API_KEY="
    + SECRET + "', 'extraInfo': {'py_callstack': 'env WANDB_API_KEY=" + SECRET + "'}}},"
    " open(os.environ['TORCHELASTIC_ERROR_FILE'], 'w'))\"; echo 'HF_TOKEN=" + SECRET + "' >&2; exit 3"
)


def test_a_secret_in_a_failed_jobs_error_file_leaves_the_server_nowhere(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "leaky", ERROR_FILE_WRITER)
    row = jobs_server.wait_for(lambda b: (r := row_of(b, handle)) and r["state"] == "FAILED" and r, "FAILED")
    assert "WANDB_API_KEY" in row["reason"], row  # the reason is there, its value is not
    detail = jobs_server.request("GET", f"jupyter-sched/api/jobs/{quote(handle)}")
    listing = jobs_server.request("GET", "jupyter-sched/api/jobs?limit=500")
    for reply in (detail, listing):
        assert reply.status == 200
        assert SECRET not in reply.body.decode(), reply.body.decode()[:2000]
    for rep in (r for role in detail.json()["status"]["roles"] for r in role["replicas"]):
        if rep.get("structured_error_msg") not in (None, "", "<NONE>"):
            json.loads(rep["structured_error_msg"])  # masked, and still JSON

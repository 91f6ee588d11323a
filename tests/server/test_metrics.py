"""The server's side of live metrics, against a real server and a real function job on local_cwd that logs
with ``jupyter_sched.track``: the last values in the job's row of ``GET jobs``, and ``GET
jobs/<handle>/metrics`` (series downsampled keeping each bucket's min and max, a cursor that gives only new
records, a torn line skipped and counted, bad parameters and unknown jobs refused)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path
from typing import Any, Dict, List

import jsonschema

from jupyter_sched.frontend.jobs.schema import schema_for
from tests.server.conftest import Cli, JobsServer, quote
from tests.server.test_api import row_of

STEPS = 3000
MORE = 10
SPIKE, DIP = 1234, 2345
SUBMIT = """
import os, sys, time
import jupyter_sched

def train(steps, more, go, spike, dip):
    from jupyter_sched import track
    track.define_metric("loss", goal="min")
    for i in range(steps):
        acc = 50.0 if i == spike else i / steps
        loss = -5.0 if i == dip else 1.0 / (i + 1)
        track.log({"train/acc": acc, "loss": loss})
    track.flush()
    while not os.path.exists(go):
        time.sleep(0.05)
    for i in range(steps, steps + more):
        track.log({"train/acc": 1.0, "loss": float("nan") if i == steps else 0.5})
    track.flush()
    return "done"

job = jupyter_sched.submit(train, STEPS, MORE, GO, SPIKE, DIP, name="tracked")
print(job.handle, flush=True)
print(job.result(timeout=600), flush=True)
"""


def submit_tracked(cli: Cli, go: Path) -> str:
    """A function job that logs STEPS steps of two keys, waits for ``go``, then logs MORE steps; its handle."""
    script = cli.cwd / "submit_tracked.py"
    consts = f"STEPS, MORE, GO, SPIKE, DIP = {STEPS}, {MORE}, {str(go)!r}, {SPIKE}, {DIP}\n"
    script.write_text(consts + textwrap.dedent(SUBMIT))
    proc = subprocess.Popen([sys.executable, str(script)], env=cli.env, cwd=cli.cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)  # fmt: skip
    cli.procs.append(proc)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line.startswith("local_cwd://"), line + proc.stdout.read()
    return line


def check(payload: str, body: Any) -> None:
    jsonschema.validate(body, schema_for(payload), cls=jsonschema.Draft202012Validator)


def metrics(server: JobsServer, handle: str, **query: str) -> Dict[str, Any]:
    suffix = "?" + urllib.parse.urlencode(query) if query else ""
    body = server.api("GET", f"jobs/{quote(handle)}/metrics{suffix}")
    check("metrics", body)
    return body


def records_file(server: JobsServer, handle: str) -> Path:
    app_id = handle.rsplit("/", 1)[1]
    found = [p for p in server.log_dir.glob(f"**/{app_id}/metrics/*.jsonl") if not p.name.endswith(".tracker.jsonl")]
    assert len(found) == 1, found
    return found[0]


def values(series: List[Dict[str, Any]]) -> List[Any]:
    return [p["value"] for p in series]


def test_a_tracked_job_shows_its_last_values_and_its_series(jobs_server: JobsServer, cli: Cli) -> None:
    go = cli.cwd / "GO"
    handle = submit_tracked(cli, go)

    def logged(body: Dict[str, Any]) -> Any:
        row = row_of(body, handle)
        return row and row["metrics"] and all(m["step"] == STEPS - 1 for m in row["metrics"]) and (row, body)

    row, body = jobs_server.wait_for(logged, "both keys' last values in the row", timeout=240)
    check("page", body)
    # the key with a goal first, then the others alphabetically
    assert row["metrics"] == [
        {"key": "loss", "last": 1.0 / STEPS, "step": STEPS - 1, "best": -5.0, "goal": "min"},
        {"key": "train/acc", "last": (STEPS - 1) / STEPS, "step": STEPS - 1, "best": None, "goal": None},
    ]
    check("detail", jobs_server.api("GET", f"jobs/{quote(handle)}"))

    # every record, downsampled: at most max_points, first and last kept, the spike and the dip kept
    first = metrics(jobs_server, handle, max_points="100")
    assert (first["role"], first["replica"], first["skipped"], first["points"]) == (row_role(first), 0, 0, 2 * STEPS)
    assert first["replicas"] == [{"role": first["role"], "replica": 0}]
    assert sorted(first["series"]) == ["loss", "train/acc"]
    for key, series in first["series"].items():
        assert 4 <= len(series) <= 100, key
        assert (series[0]["step"], series[-1]["step"]) == (0, STEPS - 1)
        assert [p["step"] for p in series] == sorted(p["step"] for p in series)
    assert 50.0 in values(first["series"]["train/acc"]) and 0.0 in values(first["series"]["train/acc"])
    assert -5.0 in values(first["series"]["loss"]) and 1.0 in values(first["series"]["loss"])
    assert first["summary"]["loss"]["min"] == -5.0 and first["summary"]["loss"]["min_step"] == DIP
    assert first["summary"]["train/acc"]["max"] == 50.0 and first["summary"]["train/acc"]["count"] == STEPS
    default = metrics(jobs_server, handle, keys="loss")
    assert list(default["series"]) == ["loss"] and len(default["series"]["loss"]) == 1000
    assert list(default["summary"]) == ["loss"]

    # a torn line (a writer killed mid-line), then the job's last records: the cursor gives only those
    with records_file(jobs_server, handle).open("a") as f:
        f.write('{"v":1,"w":"x","seq":99999,"t":1.0,"step":5,"metr\n')
    go.touch()

    def ended(body: Dict[str, Any]) -> Any:
        r = row_of(body, handle)
        return r and r["state"] == "SUCCEEDED" and r

    row = jobs_server.wait_for(ended, "the job ended", timeout=240)
    assert row["metrics"][0] == {"key": "loss", "last": 0.5, "step": STEPS + MORE - 1, "best": -5.0, "goal": "min"}
    new = metrics(jobs_server, handle, since=first["cursor"], max_points="100")
    assert new["skipped"] == 1 and new["points"] == 2 * MORE
    assert [p["step"] for p in new["series"]["loss"]] == list(range(STEPS, STEPS + MORE))
    assert values(new["series"]["loss"]) == ["NaN"] + [0.5] * (MORE - 1)  # strict JSON: NaN as a string
    again = metrics(jobs_server, handle, since=new["cursor"])
    assert again["series"] == {} and again["points"] == 0 and again["skipped"] == 0
    everything = metrics(jobs_server, handle, max_points="5000")
    assert everything["skipped"] == 1 and len(everything["series"]["loss"]) == STEPS + MORE


def row_role(body: Dict[str, Any]) -> str:
    role = body["role"]
    assert isinstance(role, str) and role
    return role


def test_bad_parameters_are_refused_naming_the_parameter_and_the_fix(jobs_server: JobsServer, cli: Cli) -> None:
    done = cli("run", "-s", "local_cwd", "--cfg", "outlive_owner=true", "utils.sh", "--name", "quiet", "true")
    assert done.returncode == 0, done.stdout + done.stderr
    handle = done.stdout.strip().splitlines()[0]
    jobs_server.wait_for(lambda b: row_of(b, handle), f"{handle} listed")
    path = f"jupyter-sched/api/jobs/{quote(handle)}/metrics"
    cases = {
        "max_points=3": ("max_points='3'", "from 4 to 5000"),
        "max_points=5001": ("max_points='5001'", "from 4 to 5000"),
        "max_points=lots": ("max_points='lots'", "give a number of points"),
        "keys=loss,a%20b": ("'a b' is not a metric key", "A-Z a-z 0-9"),
        "since=garbage": ("since='garbage'", "give the cursor of a previous answer"),
        "since=m1.W10": ("since='m1.W10'", "give the cursor of a previous answer"),
        "k=-1": ("k='-1'", "give a replica number"),
        "role=nope": ("role='nope'", "the job's roles are"),
    }
    for query, (names, fix) in cases.items():
        reply = jobs_server.request("GET", f"{path}?{query}")
        assert reply.status in (400, 404), (query, reply.status, reply.body[:300])
        message = reply.json()["message"]
        assert names in message and fix in message, (query, message)
    assert jobs_server.request("GET", f"{path}?role=nope").status == 404
    # a job that logged nothing: no metrics, and an empty answer (not an error)
    quiet = jobs_server.api("GET", f"jobs/{quote(handle)}/metrics?keys=loss")
    check("metrics", quiet)
    assert quiet["series"] == {"loss": []} and quiet["summary"] == {} and quiet["replicas"] == []
    assert row_of(jobs_server.api("GET", "jobs?limit=500"), handle)["metrics"] is None  # type: ignore[index]


def test_unknown_and_hostile_handles(jobs_server: JobsServer) -> None:
    unknown = jobs_server.request("GET", f"jupyter-sched/api/jobs/{quote('local_cwd://default/nope-x1y2z3')}/metrics")
    assert unknown.status == 404 and "no job" in unknown.json()["message"]
    hostile = jobs_server.request("GET", f"jupyter-sched/api/jobs/{quote('local_cwd://../../etc')}/metrics")
    assert hostile.status == 400 and "bad job handle" in hostile.json()["message"]
    assert jobs_server.request("GET", "jupyter-sched/api/jobs/x/metrics", token=False).status == 403
    assert json.loads(json.dumps(unknown.json()))  # the error is JSON too

"""``GET jobs/<handle>/metrics/stream``: a real server follows a real function job's metrics live, as
server-sent events, each record once, and ends the stream after the job ended and its records were read."""

from __future__ import annotations

import json
import threading
import urllib.request
from typing import Any, List, Tuple

from tests.server.conftest import Cli, JobsServer, quote
from tests.server.test_api import row_of
from tests.server.test_metrics import MORE, STEPS, check, submit_tracked


def test_a_live_stream_sends_every_record_once_and_ends_with_the_job(jobs_server: JobsServer, cli: Cli) -> None:
    go = cli.cwd / "GO"
    handle = submit_tracked(cli, go)  # STEPS steps, then waits for GO, then MORE steps and returns
    jobs_server.wait_for(lambda b: (r := row_of(b, handle)) and r["metrics"] and r["metrics"][0]["step"] == STEPS - 1,
                         "the first records", timeout=240)  # fmt: skip
    got: List[Tuple[str, Any]] = []
    errors: List[BaseException] = []
    first = threading.Event()

    def follow() -> None:
        path = f"jupyter-sched/api/jobs/{quote(handle)}/metrics/stream?keys=loss&max_points=5000"
        req = urllib.request.Request(jobs_server.url(path), headers={"Authorization": f"token {jobs_server.token}"})
        try:
            with urllib.request.urlopen(req, timeout=240) as resp:
                assert resp.headers["Content-Type"].startswith("text/event-stream")
                event, data = "", []
                for raw in resp:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("event: "):
                        event = line[len("event: "):]
                    elif line.startswith("data: "):
                        data.append(line[len("data: "):])
                    elif not line and data:
                        got.append((event, json.loads("\n".join(data))))
                        event, data = "", []
                        first.set()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            first.set()

    reader = threading.Thread(target=follow)
    reader.start()
    assert first.wait(120), "a first event"
    assert got and got[0][1]["ended"] is False and got[0][1]["series"]["loss"][0]["step"] == 0
    go.touch()
    reader.join(300)
    assert not reader.is_alive() and not errors, errors
    assert got and {event for event, _ in got} == {"metrics"}
    bodies = [body for _, body in got]
    for body in bodies:
        check("metrics", {k: v for k, v in body.items() if k != "ended"})
    assert [b["ended"] for b in bodies] == [False] * (len(bodies) - 1) + [True]  # ends after the ended event
    assert bodies[-1]["state"] == "SUCCEEDED"
    steps = [p["step"] for body in bodies for p in body["series"].get("loss", [])]
    assert steps == list(range(STEPS + MORE)), "each record once, in order, none lost"
    assert bodies[-1]["summary"]["loss"]["count"] == STEPS + MORE


def test_the_stream_needs_the_login(jobs_server: JobsServer) -> None:
    path = f"jupyter-sched/api/jobs/{quote('local_cwd://default/nope-x1y2z3')}/metrics/stream"
    assert jobs_server.request("GET", path, token=False).status == 403
    assert jobs_server.request("GET", path).status == 404

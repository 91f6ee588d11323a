"""``GET jobs/ended?since=``: the jobs the server saw end since a cursor, against a real server and jobs run
with the real CLI. The notifications read it, so a job that starts and ends between two listings must be
told -- exactly once -- and a cursor that is not one is a 400 that says what to give.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any, Dict, List, Optional

import jsonschema

from jupyter_sched.frontend.jobs import schema
from jupyter_sched.frontend.jobs.rows import JobRow
from jupyter_sched.server.ended import RECALL_S, EndedJobs
from tests.server.conftest import Cli, JobsServer


def ended_since(server: JobsServer, cursor: str) -> Dict[str, Any]:
    return server.api("GET", "jobs/ended?" + urllib.parse.urlencode({"since": cursor}))  # type: ignore[no-any-return]


def fresh_listing(server: JobsServer) -> None:
    """Waits until the server has made a listing after now (each listing feeds the ends)."""
    now = time.time()
    server.wait_for(lambda body: body["generated"] > now + 0.01, "a listing made after now")


def test_a_job_that_starts_and_ends_between_two_listings_is_told_once(jobs_server: JobsServer, cli: Cli) -> None:
    first = jobs_server.api("GET", "jobs/ended")  # waits for the server's first listing
    assert first["jobs"] == [] and first["truncated"] is False and first["cursor"].isdigit()
    fresh_listing(jobs_server)
    # run in the foreground: the CLI returns once the job has ended, and nothing asked the server meanwhile,
    # so no listing saw it running -- diffing two listings would never tell it
    done = cli("run", "-s", "local_cwd", "--wait", "utils.sh", "--name", "blink", "sleep 0.5; exit 3")
    assert done.returncode != 0, done.stdout + done.stderr
    told: List[Dict[str, Any]] = []
    cursor = first["cursor"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(r["name"] == "blink" for r in told):
        answer = ended_since(jobs_server, cursor)
        jsonschema.validate(answer, schema.schema_for("ended"))
        assert int(answer["cursor"]) >= int(cursor)
        told += answer["jobs"]
        cursor = answer["cursor"]
        time.sleep(0.3)
    blinks = [r for r in told if r["name"] == "blink"]
    assert len(blinks) == 1, f"told {len(blinks)} times: {told}"
    row = blinks[0]
    assert row["state"] == "FAILED" and row["running"] is False
    assert row["reason"] == "blink FAILED: sh/0 exit code 3"
    # the listings that follow see it ended again: nothing new is told with the new cursor
    fresh_listing(jobs_server)
    fresh_listing(jobs_server)
    again = ended_since(jobs_server, cursor)
    assert again["jobs"] == [] and again["cursor"] == cursor
    # and an older cursor still tells it, once
    replay = ended_since(jobs_server, first["cursor"])
    assert [r["handle"] for r in replay["jobs"]].count(row["handle"]) == 1


def test_a_bad_cursor_is_a_400_naming_the_fix(jobs_server: JobsServer) -> None:
    for bad in ("yesterday", "-1", "1.5", "1" * 40):
        reply = jobs_server.request("GET", "jupyter-sched/api/jobs/ended?" + urllib.parse.urlencode({"since": bad}))
        assert reply.status == 400, (bad, reply.status, reply.body)
        message = reply.json()["message"]
        assert message.startswith("since=") and "give the cursor of a previous answer" in message, message


# -- the ring itself (pure): which ends a listing adds --------------------------------------------------


def a_row(handle: str, running: bool, ended: Optional[float] = None) -> JobRow:
    return JobRow(handle=handle, app_id=handle, name=handle, label=handle, scheduler="local_cwd", session="s",
                  state="RUNNING" if running else "FAILED", running=running, started=None, ended=ended, span=None,
                  seen=0.0, sweep=None, sweep_label=None, notebook=None, reason="", replicas=1,
                  replicas_running=int(running), usage=None, metrics=None)  # fmt: skip


def test_the_first_listing_tells_recent_ends_by_their_time_and_later_ones_once() -> None:
    start = 1_000_000.0
    ring = EndedJobs(started=start, size=3)
    cursor0, _, _ = ring.since(None)
    ring.observe([a_row("old", False, start - 2 * RECALL_S), a_row("down", False, start - 60),
                  a_row("fresh", False, start + 1), a_row("long", True)], now=start + 2)  # fmt: skip
    # a client of this server (cursor of its start) hears of the end after it; one of the server before
    # (cursor of an hour before) also of the end while the server was down; nobody of the old one
    assert [r.handle for r in ring.since(cursor0)[1]] == ["fresh"]
    assert [r.handle for r in ring.since(int((start - 3600) * 1000))[1]] == ["down", "fresh"]
    now, _, _ = ring.since(cursor0)
    ring.observe([a_row("long", False, start + 3), a_row("fresh", False, start + 1),
                  a_row("blink", False, start + 3)], now=start + 4)  # fmt: skip
    cursor, told, truncated = ring.since(now)
    assert sorted(r.handle for r in told) == ["blink", "long"] and not truncated and cursor > now
    ring.observe([a_row("long", False, start + 3), a_row("blink", False, start + 3)], now=start + 5)
    assert ring.since(cursor)[1] == []
    ring.observe([a_row("x1", False), a_row("x2", False)], now=start + 6)  # the ring (3) drops the oldest
    assert ring.since(cursor0)[2] is True and ring.since(cursor)[2] is False

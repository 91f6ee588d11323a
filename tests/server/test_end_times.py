"""A detached job's times as the Jobs sidebar gets them from a real server.

A job started with ``outlive_owner=true`` by a ``jupyter-sched run`` that returns has no owner left to record
its end; the server took the moment it first asked for it (a 41 s job read "took 16m10s" in the sidebar).
"""

from __future__ import annotations

import json
import time

from tests.server.conftest import Cli, JobsServer, quote
from tests.server.test_api import launch, row_of


def test_a_detached_job_first_read_long_after_it_ended_took_its_own_time(jobs_server: JobsServer, cli: Cli) -> None:
    handle = launch(cli, "five", "sleep 5")  # that command has returned: nobody owns the job now
    deadline = time.monotonic() + 120
    while (state := json.loads(cli("status", "--json", handle).stdout)["state"]) == "RUNNING":
        assert time.monotonic() < deadline, "the 5 s job did not end in 120 s"
        time.sleep(0.2)
    assert state == "SUCCEEDED"
    time.sleep(20)  # the server first asks 20 s after the end: it read 20 s longer than the job ran
    row = jobs_server.wait_for(lambda b: row_of(b, handle), f"{handle} in the list")
    assert row["state"] == "SUCCEEDED" and row["started"] and row["ended"], row
    assert abs(row["ended"] - row["started"] - 5) <= 1, row  # the ±1 s: the wrapper's start, within the replica
    detail = jobs_server.api("GET", f"jobs/{quote(handle)}")  # the job's view
    assert (detail["started"], detail["ended"]) == (row["started"], row["ended"]), detail

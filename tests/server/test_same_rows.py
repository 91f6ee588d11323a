"""The notebook's ``%sched_list``, ``jupyter-sched list --json`` and the server give the same rows for the same
apps: real apps on local_cwd (one succeeded, one failed with a reason on stderr, a sweep of two runs), listed
by a real server, the real CLI and a notebook session in this process. Before the one model, the three said
different things of the same failed app (the CLI: no times, no reason), ordered apps not started yet
differently, and spelled a sweep's state twice.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, Dict, List

from jupyter_sched.notebook.kernel.session import Session
from jupyter_sched.notebook.panes.list_pane import rows_text
from tests.server.conftest import Cli, JobsServer
from tests.server.test_api import launch

SWEEP = "same-b3k2x9q0d1xyz"
APART = ("seen",)
"""When each lister first saw an app that no notebook launched: each process has its own first sight."""


def comparable(rows: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {r["handle"]: {k: v for k, v in r.items() if k not in APART} for r in rows}


def test_the_three_front_ends_list_the_same_rows(jobs_server: JobsServer, cli: Cli) -> None:
    handles = [
        launch(cli, "fine", "echo fine"),
        launch(cli, "broken", "echo 'error: loss is NaN' >&2; exit 3"),
        launch(cli, f"{SWEEP}-000", "true"),
        launch(cli, f"{SWEEP}-001", "exit 1"),
    ]

    def server_rows(body: Dict[str, Any]) -> Any:
        flat = [run for e in body["jobs"] for run in (e["runs"] if e["kind"] == "sweep" else [e])]
        mine = [r for r in flat if r["handle"] in handles]
        return len(mine) == len(handles) and all(not r["running"] for r in mine) and mine

    served = jobs_server.wait_for(server_rows, "every job ended", scheduler="local_cwd", limit="500")
    listed = cli("list", "-s", "local_cwd", "--json")
    assert listed.returncode == 0, listed.stderr
    from_cli = [{k: v for k, v in r.items() if k != "app_handle"} for r in json.loads(listed.stdout)]
    config = SimpleNamespace(session_name="default", log_dir=str(jobs_server.log_dir), default_scheduler="local_cwd",
                             list_schedulers=[], interactive=False)  # fmt: skip
    listing = Session(config).list_jobs(["local_cwd"])
    from_notebook = [r.to_json() for r in listing.rows]

    assert comparable(from_cli) == comparable(from_notebook) == comparable(served)
    broken = comparable(served)[handles[1]]
    assert broken["reason"] == "broken FAILED: sh/0 error: loss is NaN" and broken["span"] is not None
    # the CLI lists in the model's order, and %sched_list's text shows the sweep as the server does
    starts = [r["started"] for r in from_cli if r["handle"] in handles]
    assert starts == sorted(starts, reverse=True)
    text = rows_text(listing.rows, listing.notices, limit=None)
    sweep_line = next(line for line in text.splitlines() if line.startswith(f"sweep {SWEEP}"))
    assert "2 runs:" in sweep_line and " FAILED " in sweep_line

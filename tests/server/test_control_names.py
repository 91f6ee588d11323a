"""A job and a role named with control and bidirectional characters (U+202E reverses what follows it, ESC
drives a terminal), through a real server: the role's log is found under its exact name, as the job view
asks for it (``encodeURIComponent`` in a query), and the names reach the browser as they are (the
extension shows them escaped: tests/e2e/test_notifications.py)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.parse

from tests.server.conftest import Cli, JobsServer, quote

ROLE = "tr\u202eain\x1b"
NAME = "na\u202eme"
SUBMIT = f"""
from jupyter_sched.runner import get_runner
from jupyter_sched.specs import AppDef, Role
with get_runner("default") as runner:
    role = Role({ROLE!r}, image="", entrypoint="sh", args=["-c", "echo said-by-the-role"])
    print(runner.run(AppDef({NAME!r}, [role]), "local_cwd", cfg={{"outlive_owner": True}}))
"""


def test_a_role_named_with_control_characters_has_its_log_followed(jobs_server: JobsServer, cli: Cli) -> None:
    done = subprocess.run([sys.executable, "-c", SUBMIT], env=cli.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    handle = done.stdout.strip().splitlines()[-1]
    deadline = time.monotonic() + 60
    while True:
        detail = jobs_server.api("GET", "jobs/" + quote(handle))
        if not detail["running"]:
            break
        assert time.monotonic() < deadline, detail
        time.sleep(0.2)
    assert [r["role"] for r in detail["status"]["roles"]] == [ROLE]
    query = urllib.parse.urlencode({"role": ROLE, "k": "0"}, quote_via=urllib.parse.quote)
    snap = jobs_server.api("GET", f"jobs/{quote(handle)}/logs?{query}")
    assert "said-by-the-role" in "".join(snap["text"]), snap
    events = jobs_server.events(f"jobs/{quote(handle)}/logs/stream?{query}")
    assert any("said-by-the-role" in "".join(data["html"]) for _, data in events), events

"""One failed job reads the same in every front end (issue 32).

A detached job (``--detach``: ``outlive_owner=true``, as the notebook launches it) writes
``error: loss is NaN`` on stderr and exits 3. Its kernel pane and the notebook's saved records, ``JobFailed``,
``jupyter-sched status``, and the Jupyter server's row and detail must all say why in the same words. The
server used to say only "exit code 3": it had the status, not the stderr the pane had read from the log it
follows. JupyterLab's sidebar, job view, notification and saved record show the server's ``reason`` as
sent (``labextension/src/sidebar.ts``, ``jobview.ts``, ``index.ts``), so the detail's ``reason`` is what
they show.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.server.conftest import Cli, JobsServer, quote
from tests.server.test_api import until_state

NAN = "import sys; print('step 1'); print('error: loss is NaN', file=sys.stderr); sys.exit(3)"
REASON = "error: loss is NaN"
LINE = f"python/0 FAILED (exit code 3): {REASON}"


def test_a_failed_detached_job_gives_one_reason_everywhere(
    jobs_server: JobsServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = cli("run", "-s", "local_cwd", "--cfg", "outlive_owner=true", "utils.python", "--name", "nan", "-c", NAN)
    assert done.returncode == 0, done.stdout + done.stderr
    handle = done.stdout.strip().splitlines()[0]

    # the server: its row in the list, and the job's detail (what JupyterLab's views and record show)
    row = until_state(jobs_server, handle, "FAILED")
    assert row["reason"] == f"nan FAILED: python/0 {REASON}", row
    detail = jobs_server.api("GET", f"jobs/{quote(handle)}")
    assert detail["reason"] == row["reason"], detail

    # the command line
    status = cli("status", handle)
    assert status.returncode == 0, status.stderr
    assert f"Why it failed: {LINE}" in status.stdout, status.stdout
    as_json = cli("status", handle, "--json")
    assert json.loads(as_json.stdout)["reason"] == LINE, as_json.stdout

    # the notebook's side, in this process, against the server's log dir: JobFailed, the kernel pane and
    # the records a cell keeps (the live view frozen, and a job shown after it ended)
    monkeypatch.setenv("JUPYTER_SCHED_LOG_DIR", str(jobs_server.log_dir))
    from jupyter_sched.frontend.job import Job, JobFailed
    from jupyter_sched.notebook.panes.job_view import JobRecord, live_view
    from jupyter_sched.runner import get_runner

    with get_runner() as runner:
        job = Job(handle, runner)
        with pytest.raises(JobFailed) as failed:
            job.result(timeout=60)
        assert str(failed.value).startswith(f"nan FAILED: {LINE} ["), str(failed.value)

        view = live_view(job)
        try:
            _until(lambda: view.final, "the job view's end")
            assert LINE in view.status_pane.static_html(), view.status_pane.static_html()
            kept = view.record_bundle()
            assert LINE in kept["text/plain"] and LINE in kept["text/html"], kept["text/plain"]
        finally:
            view.stop()
        shown_after = JobRecord(Job(handle, runner))
        shown_after.poll()
        record = shown_after.record_bundle()
        assert LINE in record["text/plain"] and LINE in record["text/html"], record["text/plain"]


def _until(fn: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not fn():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.1)

"""What a user notices in the job view: the first failure in the header while the app still runs, why a
replica failed (exit code and signal, its last stderr lines), Cancel only while there is something to
cancel, the buttons in one row, elapsed time that ticks, and each replica's full log one click away.
Real local jobs; widget messages recorded by the ``recorder`` fixture (no front end)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from nbhelpers import py, wait_for

from jupyter_sched.frontend.job import Job
from jupyter_sched.specs import AppState

FAIL_ONE = (
    "import os, sys, time\n"
    "k = int(os.environ['JUPYTER_SCHED_REPLICA_ID'])\n"
    "print(f'rank {k} up', flush=True)\n"
    "if k == 1:\n"
    "    print('about to fail', file=sys.stderr, flush=True)\n"
    "    {}['y']\n"
    "time.sleep(60)\n"
)


def launch(ip: Any, line: str) -> Job:
    job = ip.run_line_magic("sched_run", line)
    assert isinstance(job, Job)
    return job


def test_first_failure_is_in_the_header_while_the_app_runs(widgets: Any, recorder: Any, ip: Any) -> None:
    job = launch(ip, py(FAIL_ONE, "--num_replicas 2"))
    view = job.view()
    pane = view.status_pane
    try:
        wait_for(lambda: "python/1 FAILED (exit code 1): KeyError: &#x27;y&#x27;" in pane.html.value, 60,
                 "the failure in the header")
        header = pane.html.value.split("<table", 1)[0]
        assert "RUNNING" in header and "python/1 FAILED" in header  # the app still runs
        # why, once: the traceback is in the log pane right below, so the status pane does not repeat it
        wait_for(lambda: "Traceback" in view.log_pane.html.value, 30, "the traceback in the logs")
        assert "Traceback" not in pane.html.value
        assert pane.cancel_button.layout.display != "none" and not pane.cancel_button.disabled
    finally:
        job.cancel()
    assert job.wait(timeout=30).state in (AppState.CANCELLED, AppState.FAILED)
    wait_for(lambda: pane.ticker is not None and not pane.ticker.alive, 30, "the status pane to stop")
    assert pane.cancel_button.layout.display == "none"  # nothing left to cancel
    assert "-15 (SIGTERM)" in pane.html.value or "(128+SIG" in pane.html.value  # the signal, by name


def test_buttons_in_one_row_and_elapsed_ticks(widgets: Any, recorder: Any, ip: Any, tmp_path: Path,
                                              monkeypatch: Any) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)  # where "Save logs" writes
    job = launch(ip, "utils.sh 'sleep 30'")
    view = job.view()
    try:
        row = view.widget.children[0].children[1]
        assert view.status_pane.cancel_button in row.children and view.log_pane.follow in row.children
        assert view.save_button in row.children
        comm_id = view.status_pane.html.comm.comm_id
        wait_for(lambda: len(set(recorder.state_values(comm_id, "value"))) >= 3, 30, "the elapsed time to tick")
        # "Save logs" of a running app: the links on a line of their own, saying when the files were written
        assert view.saved_links not in row.children and view.saved_links.layout.display == "none"
        view.save_button.click()
        assert view.saved_links.layout.display == "" and view.widget.children[0].children[2] is view.saved_links
        assert re.search(r"full logs as of \d\d:\d\d:\d\d \(the app was still running; save again for more\)",
                         view.saved_links.value)
        assert "full logs as of" in view.record_bundle(time.time())["text/html"]
    finally:
        job.cancel()
        job.wait(timeout=30)


def test_save_logs_writes_every_line_and_links_the_files(widgets: Any, recorder: Any, ip: Any, tmp_path: Path,
                                                         monkeypatch: Any) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    job = launch(
        ip, "--wait " + py("import sys\nfor i in range(20000): print('line', i)\nprint('err', file=sys.stderr)")
    )
    view = job.view()
    wait_for(view.log_pane.done.is_set, 60, "the log pane")
    assert "earlier lines not shown" in view.log_pane.html.value  # the pane keeps a tail
    view.save_button.click()
    path = tmp_path / "jsched-logs" / job.app_id / "python-0.log"
    text = path.read_text()
    assert text.count("\n") == 20001 and "line 0\n" in text and "line 19999\n" in text and "err\n" in text
    assert f'href="jsched-logs/{job.app_id}/python-0.log"' in view.saved_links.value
    assert "20,001 lines" in view.saved_links.value and "full logs: " in view.saved_links.value  # ended: no "as of"
    assert f"jsched-logs/{job.app_id}/python-0.log" in view.record_bundle()["text/html"]  # kept in the record
    assert os.path.getsize(path) > 0


def test_a_quiet_stream_keeps_following_through_a_flood_on_the_other(widgets: Any, recorder: Any, ip: Any) -> None:
    """The stderr follower of a replica flooding stdout wakes at every write; it must not die (the pane
    showed "stderr: OverflowError" after 200,000 lines, and later stderr output would have been lost)."""
    job = launch(ip, py("import sys\nfor i in range(200000): print('line', i)\nprint('late', file=sys.stderr)"))
    view = job.view()
    wait_for(view.log_pane.done.is_set, 120, "the log pane")
    mux = view.log_pane.mux
    assert mux.notices == []
    # every line the pane keeps of the replica, whatever order the two followers delivered them in (a flood
    # on stdout may arrive after "late": a window of the newest rows could miss it)
    rows, _ = mux.rows("python/0", mux.total("python/0"))
    assert [line.text for i, line in rows if mux.sources[i].is_stderr] == ["late"]


def test_following_a_quiet_stream_survives_a_flood_on_the_other(ip: Any, magics: Any) -> None:
    """What the pane's stderr follower does, without the pane: it waits for output while stdout floods,
    waking at each write; its back-off once grew without bound (OverflowError after ~1,750 wakes), which
    ended the follower and lost whatever the replica wrote on stderr afterwards."""
    from jupyter_sched.schedulers.api import Stream

    job = launch(
        ip, "--quiet " + py("import sys\nfor i in range(200000): print('line', i)\nprint('late', file=sys.stderr)")
    )
    items = list(job.runner.log_lines(job.handle, "python", 0, should_tail=True, streams=Stream("stderr")))
    assert items == ["late\n"]

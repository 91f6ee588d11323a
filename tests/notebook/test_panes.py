"""The widget panes, driven by real local jobs, with every comm message recorded (no front end needed).

Traffic is asserted by counting messages, never by timing: a flood of 100,000 lines must cost a handful of
updates (at most one per refresh tick, each of bounded size), not one per line.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from IPython.utils.capture import capture_output
from nbhelpers import py, wait_for

from jupyter_sched.frontend.job import Job
from jupyter_sched.frontend.logview.log_model import Source
from jupyter_sched.notebook.displays.job_display import display_of
from jupyter_sched.notebook.displays.record import JOB_MIME, View
from jupyter_sched.notebook.kernel import live
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.panes.job_view import mimebundle
from jupyter_sched.notebook.panes.list_pane import ListPane
from jupyter_sched.notebook.panes.log_model import HtmlLogMux
from jupyter_sched.notebook.panes.log_pane import LogPane
from jupyter_sched.specs import AppState

FLOOD = 100_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def launch(ip: Any, line: str) -> Job:
    job = ip.run_line_magic("sched_run", line)
    assert isinstance(job, Job)
    return job


def shown(job: Job) -> Any:
    """Displays the job (as a cell would) and returns its view once its log pane has finished (a job that
    has already ended displays its record only; its view is made all the same, to test the panes)."""
    bundle = mimebundle(job)
    assert WIDGET_VIEW in bundle or job.last_status.is_terminal()
    view = job.view()
    wait_for(view.log_pane.done.is_set, 120, "the log pane to finish")
    wait_for(lambda: not view.status_pane.ticker or not view.status_pane.ticker.alive, 60, "the status pane")
    return view


# -- traffic -------------------------------------------------------------------------------------------------
def test_flood_fed_by_hand_is_one_update_per_tick(recorder: Any) -> None:
    settings = PaneSettings(tail_lines=400, keep_lines=5000, max_line_chars=4000)
    pane = LogPane(HtmlLogMux([Source("w", 0, "stdout")], settings.keep_lines, settings.max_line_chars), settings)
    comm_id = pane.html.comm.comm_id
    before = len(recorder.updates(comm_id))
    for i in range(FLOOD):
        pane._on_item(0, f"line {i}\n")
        assert pane.mux.backlog(0)[0] <= 4 * settings.keep_lines + 1  # memory stays bounded
    assert len(recorder.updates(comm_id)) == before  # nothing is sent until a tick
    pane._tick()
    pane._tick()  # nothing new: nothing sent
    updates = recorder.updates(comm_id)[before:]
    assert len(updates) == 1
    value = updates[0]["data"]["state"]["value"]
    assert "100,000 lines" in value and "99,600 earlier lines not shown" in value
    assert value.count("\n") == 399 and "line 99999" in value and "line 99599<" not in value
    assert updates[0]["bytes"] < 40_000
    assert len(pane.mux._terms[0].lines) <= settings.keep_lines


def test_long_coloured_lines_are_bounded_in_bytes_not_just_lines(recorder: Any) -> None:
    """Lines of 4,000 characters, each character in its own colour, are ~150 KB of HTML each (400 of them
    ~57 MB per update): the pane renders newest-first up to a byte budget and counts the rest as not shown."""
    settings = PaneSettings(tail_lines=400, keep_lines=5000, max_line_chars=4000)
    pane = LogPane(HtmlLogMux([Source("w", 0, "stdout")], settings.keep_lines, settings.max_line_chars), settings)
    rainbow = "".join(f"\x1b[3{i % 8}m#" for i in range(4000)) + "\x1b[0m"
    for i in range(40):
        pane._on_item(0, f"{i:03d}{rainbow}\n")
    before = len(recorder.updates(pane.html.comm.comm_id))
    pane._tick()
    (update,) = recorder.updates(pane.html.comm.comm_id)[before:]
    value = update["data"]["state"]["value"]
    assert update["bytes"] < 2 * settings.max_update_chars
    shown = value.split("<pre", 1)[1].count("\n") + 1
    assert 1 <= shown < 40 and "039<span" in value  # the newest line is always there
    assert f"{40 - shown:,} earlier lines not shown" in value


def test_flood_from_a_real_job_sends_a_bounded_number_of_updates(ip: Any, widgets: Any, recorder: Any) -> None:
    widgets.refresh_interval = 0.25
    code = f"import sys\nw = sys.stdout.write\nfor i in range({FLOOD}): w(f'line {{i}}\\n')\n"
    job = launch(ip, py(code))
    view = shown(job)
    pane = view.log_pane
    log_updates = recorder.updates(pane.html.comm.comm_id)
    ticks = pane.ticker.ticks
    assert 1 <= len(log_updates) <= ticks + 2  # at most one message per refresh tick (+ the final render)
    assert len(log_updates) <= 100  # 100,000 lines, not 100,000 messages
    assert max(m["bytes"] for m in log_updates) < 60_000
    final = pane.html.value
    assert f"{FLOOD:,} lines" in final and f"line {FLOOD - 1}" in final
    status_updates = recorder.updates(view.status_pane.html.comm.comm_id)
    assert len(status_updates) <= view.status_pane.ticker.ticks + 2
    assert "SUCCEEDED" in view.status_pane.html.value
    every = sum(1 for m in recorder.messages if m["msg_type"] == "comm_msg")
    assert every < 250
    assert not any(len(t.lines) > widgets.keep_lines for t in pane.mux._terms)


# -- rendering ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def colourful(ip: Any) -> Job:
    from jupyter_sched.notebook.extension import load

    magics = load(ip)
    magics.interactive = False
    code = (
        "import os, sys, time\n"
        "k = os.environ['JUPYTER_SCHED_REPLICA_ID']\n"
        "print(f'<script>alert({k})</script> & done')\n"
        "for p in range(0, 101, 25):\n"
        "    print(f'\\rprogress {p:3d}%', end='', flush=True); time.sleep(0.02)\n"
        "print()\n"
        "print('\\x1b[1;32mgreen\\x1b[0m plain')\n"
        "print(f'oops {k}', file=sys.stderr)\n"
    )
    job = ip.run_line_magic("sched_run", "--wait " + py(code, "--num_replicas 2"))
    assert job.last_status.state == AppState.SUCCEEDED
    return job


def test_log_pane_escapes_colours_and_resolves_progress_bars(widgets: Any, recorder: Any, colourful: Job) -> None:
    display_of(colourful).view = None  # a fresh view in widget mode
    view = shown(colourful)
    value = view.log_pane.html.value
    assert "<script>" not in value and "&lt;script&gt;alert(0)&lt;/script&gt; &amp; done" in value
    assert value.count("progress") == 2 and "progress 100%" in value  # one line per replica, in place
    assert '<span style="color:#00a250;font-weight:bold">green</span> plain' in value
    assert "python/1 ! </span>oops 1" in value and "rgba(231,92,88" in value  # stderr marked
    assert "8 lines" in value and "ended" in value
    for update in recorder.updates(view.log_pane.html.comm.comm_id):
        assert "<script>" not in update["data"]["state"].get("value", "")


def test_log_pane_replica_selector_and_pause(widgets: Any, recorder: Any, colourful: Job) -> None:
    display_of(colourful).view = None
    pane = shown(colourful).log_pane
    assert pane.selector.options == ("all", "python/0", "python/1")
    pane.selector.value = "python/1"
    assert "oops 1" in pane.html.value and "oops 0" not in pane.html.value
    body = pane.html.value.split("<pre", 1)[1]
    assert (pane.follow.description, pane.follow.icon) == ("Pause", "pause")  # the label says what a click does
    pane.follow.click()
    assert "paused" in pane.html.value and pane.html.value.split("<pre", 1)[1] == body
    assert (pane.follow.description, pane.follow.icon) == ("Follow", "play")
    pane.selector.value = "all"
    assert pane.html.value.split("<pre", 1)[1] == body  # paused: the lines stay as they were
    pane.follow.click()
    assert "oops 0" in pane.html.value and "paused" not in pane.html.value


def test_job_bundle_has_widget_and_fallbacks(widgets: Any, recorder: Any, ip: Any) -> None:
    job = launch(ip, "utils.sh 'sleep 30'")
    bundle = mimebundle(job)
    assert set(bundle) == {WIDGET_VIEW, "text/plain", "text/html", JOB_MIME}
    assert bundle[JOB_MIME]["handle"] == job.handle and bundle[JOB_MIME]["state"] == "RUNNING"
    assert bundle[JOB_MIME]["final"] is False and bundle[JOB_MIME]["as_of"]  # the record says when it was true
    head = bundle["text/plain"].splitlines()[0]
    assert "RUNNING" in head and "(as of " in head  # a state in a record says when it was true
    assert "<i>as of " in bundle["text/html"]
    assert f"%sched_status {job.handle}" in bundle["text/plain"]
    assert set(mimebundle(job, include=["text/plain"])) == {"text/plain"}
    assert WIDGET_VIEW not in mimebundle(job, exclude=[WIDGET_VIEW])
    job.cancel()
    job.wait(timeout=30)


def test_status_pane_cancel_asks_to_confirm(widgets: Any, recorder: Any, ip: Any) -> None:
    job = launch(ip, "utils.sh 'echo started; sleep 30'")
    mimebundle(job)
    status = job.view().status_pane
    assert "RUNNING" in status.html.value and not status.cancel_button.disabled
    status.cancel_button.click()
    assert status.cancel_button.description == "Confirm cancel?" and job.state == AppState.RUNNING
    status.cancel_button.click()
    assert job.wait(timeout=30).state == AppState.CANCELLED
    wait_for(lambda: not status.ticker.alive, 30, "the status pane to stop")
    assert "CANCELLED" in status.html.value and status.cancel_button.disabled
    assert status.cancel_button.description == "Cancel"
    stopped_at = len(recorder.updates(status.html.comm.comm_id))
    status._tick()  # a terminal pane renders the same thing: nothing is sent
    assert len(recorder.updates(status.html.comm.comm_id)) == stopped_at


def test_wait_in_widget_mode_displays_the_live_view_then_a_summary(widgets: Any, recorder: Any, ip: Any) -> None:
    with capture_output() as cap:
        job = launch(ip, "--wait utils.sh 'sleep 1; echo shown'")
    assert WIDGET_VIEW in cap.outputs[0].data and job.last_status.state == AppState.SUCCEEDED
    assert mimebundle(job)["text/plain"] == job.summary()  # once: the view is already on screen
    record = mimebundle(job)  # the job has ended: the record, no widget needed
    assert WIDGET_VIEW not in record and record["text/plain"].startswith(job.summary())
    assert "shown" in record["text/plain"] and "SUCCEEDED" in record["text/html"]


def test_status_logs_and_list_magics_in_widget_mode(widgets: Any, recorder: Any, ip: Any, colourful: Job) -> None:
    status = ip.run_line_magic("sched_status", colourful.handle)
    assert isinstance(status, View) and "SUCCEEDED" in status.pane.html.value
    assert set(status._repr_mimebundle_()) == {"text/plain", "text/html"}  # ended: static, no widget
    snap = ip.run_line_magic("sched_logs", f"{colourful.handle} --snapshot -n 3")
    assert isinstance(snap, View) and "snapshot" in snap.pane.html.value
    assert snap.text.splitlines()[-1] == "python/1 ! oops 1"
    live_view = ip.run_line_magic("sched_logs", f"{colourful.handle} python -r 0")
    wait_for(live_view.pane.done.is_set, 30, "the log pane")
    assert "oops 0" in live_view.pane.html.value and "python/1" not in live_view.pane.html.value
    assert ip.run_line_magic("sched_logs", f"{colourful.handle} -f") is None  # blocks until the end
    listing = ip.run_line_magic("sched_list", "")
    assert isinstance(listing, ListPane) and colourful.handle in listing.rows
    assert "SUCCEEDED" in listing.rows[colourful.handle].html.value
    assert listing.rows[colourful.handle].button.disabled


def test_list_pane_cancel_button(widgets: Any, recorder: Any, ip: Any) -> None:
    job = launch(ip, "utils.sh 'sleep 30'")
    listing = ip.run_line_magic("sched_list", "")
    row = listing.rows[job.handle]
    assert "RUNNING" in row.html.value and listing.ticker is not None
    row.button.click()
    assert row.button.description == "Confirm?" and job.state == AppState.RUNNING
    row.button.click()
    assert job.wait(timeout=30).state == AppState.CANCELLED
    wait_for(lambda: "CANCELLED" in row.html.value, 30, "the row to show CANCELLED")
    assert row.button.disabled
    listing.stop()


def test_unload_stops_the_panes_but_not_the_job(ip: Any, widgets: Any, recorder: Any) -> None:
    """Tickers stop at once, and so does every follower, the silent stderr one included (stopping closes its
    log iterator, which wakes it), while the job runs on; after unload nothing touches a widget."""
    from jupyter_sched.notebook.extension import load, unload

    job = launch(ip, py("import time\nfor i in range(600):\n    print(i, flush=True); time.sleep(0.05)\n"))
    mimebundle(job)
    ip.run_line_magic("sched_list", "")
    pane = job.view().log_pane
    assert any(isinstance(t, live.Ticker) for t in live.live_threads())
    unload(ip)
    try:
        wait_for(lambda: not any(isinstance(t, live.Ticker) for t in live.live_threads()), 30, "tickers to stop")
        assert any(s.stream == "stderr" for s in pane.mux.sources)  # silent: only a close can end its follow
        wait_for(lambda: not any(f.alive for f in pane.followers), 30, "every follower to stop")
        assert not live.live_threads()
        sent = len(recorder.messages)
        assert job.state == AppState.RUNNING
        job.cancel()
        assert job.wait(timeout=30).state == AppState.CANCELLED
        # the local backend's own (its usage sampler ends by itself after an idle second)
        scheduler_threads = ("jupyter_sched-local-io", "jupyter_sched-reaper", "jupyter_sched-usage")
        # the portable path's per-replica waitpid threads ("jupyter_sched-wait") end once the replica is
        # reaped, which may be just after job.wait() has seen the end: they must end, not be gone already
        ours = lambda: [t for t in threading.enumerate()  # noqa: E731
                        if t.name.startswith("jupyter_sched-") and t.name not in scheduler_threads]  # fmt: skip
        wait_for(lambda: not ours(), 30, "every thread of ours but the scheduler's to end")
        assert len(recorder.messages) == sent
    finally:
        load(ip)


def test_docker_job_view(ip: Any, widgets: Any, recorder: Any, docker_engine: None) -> None:
    import subprocess

    from tests.conftest import missing_engine

    image = "jupyter-sched/busybox:local"
    if subprocess.run(["docker", "image", "inspect", image], capture_output=True).returncode != 0:
        missing_engine(image, "the image is missing: run `bash scripts/setup/images.sh`")
    job = launch(
        ip,
        f"-s local_docker utils.sh --image {image} --num_replicas 2 'echo out-$JUPYTER_SCHED_REPLICA_ID; echo err >&2'",
    )
    try:
        view = shown(job)
        status, log = view.status_pane.html.value, view.log_pane.html.value
        assert "SUCCEEDED" in status and f"{job.app_id}-sh-1" in status  # the container name, as the host
        assert "sh/0 | </span>out-0" in log and "sh/1 ! </span>err" in log
    finally:
        subprocess.run(["docker", "rm", "-f", f"{job.app_id}-sh-0", f"{job.app_id}-sh-1"], capture_output=True)


def test_slurm_job_view(ip: Any, widgets: Any, recorder: Any, slurm_cluster: Any) -> None:
    """The same panes over a job on the real Slurm cluster: per-replica states, node names, both logs."""
    job = launch(
        ip,
        "-s slurm utils.sh --num_replicas 2"
        " 'printf \"step 1\\rstep 2\\n\"; echo rank-$JUPYTER_SCHED_REPLICA_ID; echo warn >&2'",
    )
    view = shown(job)
    status, log = view.status_pane.html.value, view.log_pane.html.value
    assert "SUCCEEDED" in status and job.handle.startswith("slurm://")
    assert status.count("node") >= 2  # each replica's row names the node it ran on
    assert "sh/0 | </span>rank-0" in log and "sh/1 | </span>rank-1" in log and "sh/1 ! </span>warn" in log
    assert "step 2" in log and "step 1" not in log  # the \r frame was redrawn in place

"""The status pane with usage, driven by a real local job of many replicas, every comm message recorded:
per-replica usage columns and the chart appear, the totals and the chart's last frame stay after the end,
and the pane sends at
most one update per tick however many replicas there are (counted, not timed)."""

from __future__ import annotations

from typing import Any

from nbhelpers import py, wait_for

from jupyter_sched.frontend.job import Job
from jupyter_sched.notebook.panes.job_view import mimebundle

REPLICAS = 24


def test_usage_in_the_status_pane_with_bounded_traffic(ip: Any, widgets: Any, recorder: Any, tmp_path) -> None:  # type: ignore[no-untyped-def]
    stop = tmp_path / "stop"
    code = (
        "import os, time\nb = bytearray(20 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
        f"while not os.path.exists({str(stop)!r}): time.sleep(0.05)\n"
    )
    job = ip.run_line_magic("sched_run", py(code, f"--num_replicas {REPLICAS}"))
    assert isinstance(job, Job)
    mimebundle(job)
    pane = job.view().status_pane
    comm_id = pane.html.comm.comm_id
    wait_for(lambda: "jsched-usage-chart" in pane.html.value and pane.html.value.count("MiB") > REPLICAS, 120,
             "usage columns for every replica and a chart")
    value = pane.html.value
    assert ">CPU %<" in value and ">peak<" in value
    assert f"python/{REPLICAS - 1}" in value and f"python[{REPLICAS - 1}]" not in value  # one spelling
    ticks_before, sent_before = pane.ticker.ticks, len(recorder.updates(comm_id))
    wait_for(lambda: pane.ticker.ticks >= ticks_before + 5, 60, "five more ticks")
    ticks, sent = pane.ticker.ticks - ticks_before, len(recorder.updates(comm_id)) - sent_before
    assert sent <= ticks + 1, (sent, ticks)  # one HTML update per tick at most, for 24 replicas
    stop.write_text("")
    assert job.wait(timeout=120).state.is_terminal
    wait_for(lambda: not pane.ticker.alive, 60, "the pane's final tick")
    final = pane.html.value  # the live rows give way to the kept totals; the chart stays, as its last frame
    assert "peak memory" in final and f"python/{REPLICAS - 1}" in final and "jsched-usage-chart" in final
    assert ">CPU %<" not in final
    record = job.view().record_bundle()["text/html"]  # the cell's record is the pane frozen: chart included
    assert "jsched-usage-chart" in record and "peak memory" in record

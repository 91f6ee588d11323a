"""The job view's Metrics section, driven by real jobs that log with ``jupyter_sched.track``: a local_cwd
script of two replicas in the in-process shell (every comm message recorded) charts its loss live, rank 0
first with a replica picker, sends nothing while nothing new is logged, and its record keeps the charts; a
function job run headless (nbclient, as ``nbconvert --execute``) keeps them in the saved notebook."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, List

import nbformat
from nbhelpers import py, run_headless, wait_for  # type: ignore[import-not-found]

from jupyter_sched.frontend.job import Job
from jupyter_sched.notebook.panes.job_view import mimebundle


def chart_texts(html: str, key: str) -> List[str]:
    """The labels of ``key``'s chart, decoded from its <img> (an image survives JupyterLab's sanitizer)."""
    found = re.search(r'<img class="jsched-metric-chart" src="data:image/svg\+xml;base64,([^"]+)"[^>]*'
                      rf'data-key="{re.escape(key)}"', html)  # fmt: skip
    assert found, f"no chart of {key} in the HTML"
    root = ET.fromstring(base64.b64decode(found.group(1)).decode())
    return [el.text or "" for el in root.iter() if el.tag.endswith("text")]


def test_the_pane_charts_each_replica_live_and_the_record_keeps_it(ip: Any, widgets: Any, recorder: Any,
                                                                   tmp_path: Path) -> None:  # fmt: skip
    stop = tmp_path / "stop"
    code = (
        "import os, time\nfrom jupyter_sched import track\ntrack.define_metric('loss', goal='min')\n"
        "k = int(os.environ['JUPYTER_SCHED_REPLICA_ID'])\n"
        "for i in range(20):\n    track.log({'loss': (k + 1) / (i + 1)})\n"
        f"track.flush()\nwhile not os.path.exists({str(stop)!r}): time.sleep(0.05)\n"
    )
    job = ip.run_line_magic("sched_run", py(code, "--num_replicas 2"))
    assert isinstance(job, Job)
    mimebundle(job)
    pane = job.view().metrics
    wait_for(lambda: "jsched-metric-chart" in pane.charts.value and "last 0.05 @ 19" in chart_texts(
        pane.charts.value, "loss"), 120, "replica 0's chart of its 20 steps")  # fmt: skip
    labels = chart_texts(pane.charts.value, "loss")
    assert "loss" in labels and "last 0.05 @ 19" in labels and "min 0.05 @ 19" in labels
    wait_for(lambda: len(pane.picker.options) == 2, 60, "both replicas in the picker")
    assert pane.picker.value == ("python", 0) and pane.title.value.endswith("<b>metrics</b> of</div>")  # rank 0
    assert pane.picker.layout.display != "none" and pane.widget.layout.display != "none"
    # nothing new is logged: the section sends nothing, tick after tick
    comm_id = pane.charts.comm.comm_id
    ticks, sent = pane.ticker.ticks, len(recorder.updates(comm_id))
    wait_for(lambda: pane.ticker.ticks >= ticks + 4, 60, "four more ticks")
    assert len(recorder.updates(comm_id)) == sent
    pane.picker.value = ("python", 1)  # as a pick in the front end sets it
    assert "last 0.1 @ 19" in chart_texts(pane.charts.value, "loss")
    stop.write_text("")
    status = job.wait(timeout=120)
    assert status is not None and status.is_terminal()
    bundle = job.view().record_bundle()
    assert "last 0.1 @ 19" in chart_texts(bundle["text/html"], "loss")
    assert "loss: last 0.1 @ 19, min 0.1 @ 19" in bundle["text/plain"]


def test_a_saved_notebook_keeps_the_charts(tmp_path: Path) -> None:
    cells = [
        "%load_ext jupyter_sched\nimport jupyter_sched",
        "def train(steps):\n    from jupyter_sched import track\n    track.define_metric('loss', goal='min')\n"
        "    for i in range(steps):\n        track.log({'loss': 1.0 / (i + 1), 'acc': i / steps})\n    return steps\n"
        "job = jupyter_sched.submit(train, 50)\njob.result(timeout=180)\njob",
    ]
    saved = nbformat.read(str(run_headless(cells, tmp_path)), as_version=4)
    html = "".join(str(o.get("data", {}).get("text/html", "")) for o in saved.cells[1].outputs)
    assert "last 0.02 @ 49" in chart_texts(html, "loss") and "min 0.02 @ 49" in chart_texts(html, "loss")
    assert "last 0.98 @ 49" in chart_texts(html, "acc")

"""The job pane's Metrics section, as a person sees it in JupyterLab.

A script of two replicas logs a loss with ``jupyter_sched.track`` from a notebook; the pane shows a chart of
replica 0's loss (an SVG image with its last and best values) and a replica picker, live; after the job
ends, the cell's record keeps the chart. Screenshots: artifacts/screenshots/metrics-pane-*.png (light and
dark).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from jupyter_sched.specs import random_id
from tests.e2e.conftest import Lab, LabServer

PANE_TIMEOUT = 120_000  # ms: upper bounds for what must become visible on a shared machine


def test_the_metrics_section_charts_the_loss_live_and_the_record_keeps_it(
    lab: Lab, lab_server: LabServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    stop = tmp_path / f"stop-{tag}"
    script = tmp_path / "train.py"
    script.write_text(
        "import math, os, time\nfrom jupyter_sched import track\ntrack.define_metric('loss', goal='min')\n"
        "k = int(os.environ['JUPYTER_SCHED_REPLICA_ID'])\n"
        "for i in range(200):\n"
        "    track.log({'loss': (k + 1) * math.exp(-i / 40) + 0.05 * math.sin(i), 'val/acc': 1 - math.exp(-i / 60)})\n"
        f"track.flush()\nwhile not os.path.exists({str(stop)!r}): time.sleep(0.05)\n"
    )
    notebook = lab_server.write_notebook(
        f"metrics-{tag}.ipynb",
        [
            "%load_ext jupyter_sched",
            f"job = %sched_run utils.python --name metrics-{tag} --num_replicas 2 --script {script}\njob",
        ],
    )
    lab.open(notebook)
    try:
        lab.run_all()
        section = lab.cell(1).locator(".jsched-job > .jsched-metrics")
        expect(section).to_be_visible(timeout=PANE_TIMEOUT)
        chart = section.locator('img.jsched-metric-chart[alt^="loss:"]')
        alt = re.compile(r"^loss: 200 points over steps 0 to 199")
        expect(chart).to_have_attribute("alt", alt, timeout=PANE_TIMEOUT)
        svg = base64.b64decode(chart.get_attribute("src").split(",", 1)[1]).decode()  # type: ignore[union-attr]
        assert ">loss<" in svg and ">last " in svg and ">min " in svg
        expect(section.locator('img.jsched-metric-chart[alt^="val/acc:"]')).to_be_visible()
        expect(section.locator("select")).to_be_visible(timeout=PANE_TIMEOUT)  # two replicas: the picker
        box = chart.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 100
        assert all(shot.stat().st_size > 0 for shot in lab.screenshot_themes(section, "metrics-pane"))
        lab.screenshot(lab.cell(1).locator(".jsched-job"), "metrics-pane-job")  # between the status and the logs
        assert not lab.page_problems()
    finally:
        stop.write_text("")
    output = lab.cell(1).locator(".jp-OutputArea")
    record = output.locator('.jsched-record img.jsched-metric-chart[alt^="loss:"]')
    expect(record).to_be_visible(timeout=PANE_TIMEOUT)  # the record keeps the chart once the app ended
    lab.screenshot_themes(output.locator(".jsched-record .jsched-metrics"), "metrics-pane-ended")

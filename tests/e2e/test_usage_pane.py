"""The status pane's usage columns and chart, as a person sees them in JupyterLab.

A job of two replicas that each hold 200 MB and spin runs from a notebook; the pane shows per-replica
CPU % and memory now/peak columns and the chart (an SVG image: axes, a limit line when there is a limit);
after the job ends the cell's record shows each replica's totals and the chart's last frame. Screenshots:
artifacts/screenshots/usage-pane-*.png (light and dark).
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

from jupyter_sched.specs import random_id
from tests.e2e.conftest import Lab, LabServer

PANE_TIMEOUT = 120_000  # ms: upper bounds for what must become visible on a shared machine


def test_usage_columns_and_chart_render(lab: Lab, lab_server: LabServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    stop = tmp_path / f"stop-{tag}"
    script = tmp_path / "hog.py"
    script.write_text(
        "import os\nb = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
        f"while not os.path.exists({str(stop)!r}): pass\n"
    )
    notebook = lab_server.write_notebook(
        f"usage-{tag}.ipynb",
        [
            "%load_ext jupyter_sched",
            f"job = %sched_run utils.python --name usage-{tag} --num_replicas 2 --script {script}\njob",
        ],
    )
    lab.open(notebook)
    try:
        lab.run_all()
        pane = lab.cell(1).locator(".jsched-job > .jsched-status")
        expect(pane).to_be_visible(timeout=PANE_TIMEOUT)
        chart = pane.locator("img.jsched-usage-chart")
        expect(chart).to_be_visible(timeout=PANE_TIMEOUT)
        usage = pane.locator(".jsched-usage table")
        expect(usage.locator("thead th")).to_have_text(["replica", "CPU %", "memory", "peak", "limit"])
        expect(usage.locator("tbody tr")).to_have_count(2)
        # the 200 MB are resident, and the chart holds a few seconds of readings
        expect(usage.locator("tbody tr").first).to_contain_text(re.compile(r"2\d\d(\.\d)? MiB"), timeout=PANE_TIMEOUT)
        expect(chart).to_have_attribute("alt", re.compile(r"CPU and memory over ([3-9]|\d\d+) s"), timeout=PANE_TIMEOUT)
        svg = base64.b64decode(chart.get_attribute("src").split(",", 1)[1]).decode()  # type: ignore[union-attr]
        assert svg.count("<polyline") == 2 and ">CPU %<" in svg and ">memory<" in svg
        box = chart.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 20
        shots = lab.screenshot_themes(pane, "usage-pane")
        assert all(shot.stat().st_size > 0 for shot in shots)
        assert not lab.page_problems()
    finally:
        stop.write_text("")
    # Once ended, the cell keeps a record of the app with each replica's totals (peak memory, CPU, wall).
    output = lab.cell(1).locator(".jp-OutputArea")
    expect(output).to_contain_text("peak memory", timeout=PANE_TIMEOUT)
    expect(output).to_contain_text("python/1")
    assert "MiB" in output.inner_text() and "python[1]" not in output.inner_text()
    assert output.inner_text().count("peak memory") == 1  # one record; the cell's last line is one summary line
    expect(output.locator(".jsched-record img.jsched-usage-chart")).to_be_visible()  # the chart's last frame
    lab.screenshot_themes(output, "usage-pane-ended")
    assert os.path.exists(stop)

"""Metrics in JupyterLab, in a real browser: a ``local_cwd`` job that logs with ``jupyter_sched.track`` shows a
sparkline of its main metric (its last value beside it, the key in its tooltip) in its Jobs sidebar row, and
its job view charts every key (axes, the last value, the best by goal), both following the job while it runs
by asking the server only for the records written since their last answer (``since=``, the cursor).
Screenshots (light and dark): artifacts/screenshots/metrics-sidebar-*.png (the row while it runs, the
sidebar after), metrics-job-view-*.png (the view, its charts).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator, List
from urllib.parse import parse_qs, urlparse

import pytest

from tests.e2e.conftest import Lab, LabServer
from tests.e2e.test_jobs_sidebar import launch, row, wait_state

# 40 steps (val/acc NaN at step 20), then (once the test says GO) 20 more: the second part must reach both
# views while they follow them
TRAIN = """\
import time
from pathlib import Path

from jupyter_sched import track

track.define_metric("loss", goal="min")
for step in range(40):
    track.log({"loss": 1.0 / (step + 1), "val/acc": float("nan") if step == 20 else step / 60})
track.flush()
while not Path("GO").exists():
    time.sleep(0.05)
for step in range(40, 60):
    track.log({"loss": 1.0 / (step + 1), "val/acc": step / 60})
track.flush()
"""


@pytest.fixture
def jobs(lab: Lab, lab_server: LabServer) -> Iterator[Lab]:
    """JupyterLab with no notebook open and the Jobs sidebar shown (as in test_jobs_sidebar.py)."""
    page = lab.page
    page.goto(lab_server.url(f"lab?reset&token={lab_server.token}"))
    page.wait_for_function("() => window.jupyterapp !== undefined && window.jupyterapp.shell !== undefined",
                           timeout=60_000)  # fmt: skip
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()
    page.locator(".jsl-sidebar").wait_for(state="visible")
    yield lab
    lab.set_theme(False)


def metric_requests(seen: List[str], handle: str) -> List[dict]:
    """The query of each ``GET jobs/<handle>/metrics`` the page sent, in order."""
    out = []
    for url in seen:
        parsed = urlparse(url)
        if parsed.path.endswith("/metrics") and handle in parsed.path.replace("%3A", ":").replace("%2F", "/"):
            out.append({k: v[0] for k, v in parse_qs(parsed.query).items()})
    return out


def wait_text(page: Any, selector: str, text: str, timeout: float = 60_000) -> None:
    page.wait_for_function(
        "([s, t]) => { const e = document.querySelector(s); return !!e && e.textContent.includes(t); }",
        arg=[selector, text],
        timeout=timeout,
    )


@pytest.fixture
def released(tmp_path: Path) -> Iterator[None]:
    """The job's GO file made at the end whatever happened: a failed test leaves no job waiting for it."""
    yield
    (tmp_path / "GO").touch()


def test_a_job_that_logs_metrics_has_a_sparkline_and_charts(jobs: Lab, lab_server: LabServer, tmp_path: Path,
                                                            released: None) -> None:  # fmt: skip
    page = jobs.page
    seen: List[str] = []
    page.on("request", lambda request: seen.append(request.url))
    (tmp_path / "train.py").write_text(TRAIN)
    handle = launch(lab_server, tmp_path, "train-metrics", f"{sys.executable} train.py")
    wait_state(page, handle, "RUNNING")
    spark = row(page, handle).locator(".jsl-row-spark")
    spark_sel = f'.jsl-sidebar .jsl-row[data-handle="{handle}"] .jsl-row-spark'

    # the main metric (the key with a goal) with its last value, and a line of the 40 points so far
    page.wait_for_function(
        "(s) => { const e = document.querySelector(s); return !!e && !e.hidden && e.dataset.points === '40'; }",
        arg=spark_sel, timeout=60_000,
    )  # fmt: skip
    assert spark.get_attribute("data-key") == "loss"
    assert spark.locator(".jsl-spark-key").inner_text() == "loss"
    assert spark.locator(".jsl-spark-value").inner_text() == "0.025"  # 1/40
    assert spark.get_attribute("title") == "loss: last 0.025 at step 39, best 0.025 (min)"
    assert spark.locator("svg polyline.jsl-spark-line").count() == 1
    assert len(spark.locator("svg polyline").get_attribute("points").split()) == 40
    jobs.screenshot_themes(row(page, handle), "metrics-sidebar-row")  # running: its Cancel beside the name

    # the job view: a chart per key, the goal's key first, with its last and best values and axes
    row(page, handle).click()
    view = page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"]')
    view.locator(".jsl-metrics .jsl-chart").first.wait_for()
    chart_sel = f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"] .jsl-chart[data-key="loss"] .jsl-chart-facts'
    wait_text(page, chart_sel, "last 0.025 at step 39")
    keys = view.locator(".jsl-chart").evaluate_all("cs => cs.map(c => c.dataset.key)")
    assert keys == ["loss", "val/acc"], keys
    loss = view.locator('.jsl-chart[data-key="loss"]')
    assert loss.locator(".jsl-chart-key").inner_text() == "loss"
    assert "best 0.025 (min) at step 39" in loss.locator(".jsl-chart-facts").inner_text()
    ticks = loss.locator("text.jsl-chart-tick").evaluate_all("ts => ts.map(t => t.textContent)")
    assert "0" in ticks and "39" in ticks, ticks  # the x axis: first and last step
    assert len(loss.locator("polyline.jsl-chart-line").get_attribute("points").split()) == 40
    # a NaN is no point: it breaks the line (steps 0-19 and 21-39)
    acc_lines = view.locator('.jsl-chart[data-key="val/acc"] polyline.jsl-chart-line')
    assert [len(p.split()) for p in acc_lines.evaluate_all("ps => ps.map(p => p.getAttribute('points'))")] == [20, 19]

    # the rest of the run reaches both while they follow it, read from their cursors
    (tmp_path / "GO").touch()
    wait_state(page, handle, "SUCCEEDED")
    wait_text(page, chart_sel, "last 0.0166667 at step 59")
    assert "best 0.0166667 (min) at step 59" in loss.locator(".jsl-chart-facts").inner_text()
    page.wait_for_function(  # 1/60 in four significant digits; all six in the tooltip
        "(s) => document.querySelector(s).textContent === '0.01667'", arg=spark_sel + " .jsl-spark-value",
        timeout=60_000,
    )  # fmt: skip
    assert spark.get_attribute("title") == "loss: last 0.0166667 at step 59, best 0.0166667 (min)"
    # 60 points cut to the sparkline's 50, keeping the ends and each bucket's min and max
    page.wait_for_function("(s) => document.querySelector(s).dataset.points === '50'", arg=spark_sel,
                           timeout=60_000)  # fmt: skip
    page.wait_for_function(
        "(s) => { const p = document.querySelector(s + ' polyline'); return !!p && p.getAttribute('points')"
        ".trim().split(/\\s+/).length === 60; }",
        arg=f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"] .jsl-chart[data-key="loss"]', timeout=60_000,
    )  # fmt: skip

    asked = metric_requests(seen, handle)
    sidebar_asks = [q for q in asked if q.get("keys") == "loss"]
    view_asks = [q for q in asked if "keys" not in q]
    assert sidebar_asks and all(q["max_points"] == "50" for q in sidebar_asks), sidebar_asks
    assert "since" not in sidebar_asks[0] and all("since" in q for q in sidebar_asks[1:]), sidebar_asks
    assert len(sidebar_asks) >= 2, sidebar_asks  # it asked again once the summary moved, from its cursor
    assert view_asks and "since" not in view_asks[0] and all("since" in q for q in view_asks[1:]), view_asks

    page.add_style_tag(content=".Toastify { display: none !important; }")  # the end's notification, over the view
    jobs.screenshot_themes(page.locator(".jsl-sidebar"), "metrics-sidebar")
    jobs.screenshot_themes(view, "metrics-job-view")
    jobs.screenshot_themes(view.locator(".jsl-metrics"), "metrics-job-view-charts")
    assert not jobs.page_problems()

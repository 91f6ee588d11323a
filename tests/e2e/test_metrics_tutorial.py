"""notebooks/metrics.ipynb in JupyterLab, run top to bottom as a reader would, checked for what they see.

The training job's pane charts its loss and accuracy (and its record keeps the charts once it ended), the
sweep's table shows the runs early stopping stopped with their reasons, and the Jobs sidebar shows a
sparkline of each job's loss. nbval (tests/notebooks) compares the notebook's text; this is its picture.
Screenshots (light and dark): artifacts/screenshots/metrics-tutorial-{pane,sweep,sidebar}-*.png; with
JSCHED_UPDATE_DOCS_IMG=1 they are copied to docs/img/, where docs/metrics.md's Tutorial section shows them.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from tests.e2e.conftest import REPO, SCREENSHOTS, Lab

TIMEOUT = 240_000  # ms: the whole notebook takes about a minute on 2 shared cores; generous upper bounds
STOPPED_RUNS = 6  # the grid runs from the largest rate down: the two first runs finish, the six others lose


def keep_for_docs(shots: list) -> None:
    if os.environ.get("JSCHED_UPDATE_DOCS_IMG"):
        for shot in shots:
            shutil.copyfile(shot, REPO / "docs" / "img" / shot.name)


def sidebar_shots(lab: Lab) -> list:
    """The sidebar from its header to its last row (not the empty height below), light and dark."""
    top = lab.page.locator(".jsl-sidebar").bounding_box()
    rows = lab.page.locator(".jsl-sidebar .jsl-list").bounding_box()
    assert top is not None and rows is not None
    clip = {"x": top["x"], "y": top["y"], "width": top["width"], "height": rows["y"] + rows["height"] - top["y"] + 8}
    shots = []
    for dark in (False, True):
        lab.set_theme(dark)
        shots.append(SCREENSHOTS / f"metrics-tutorial-sidebar-{'dark' if dark else 'light'}.png")
        lab.page.screenshot(path=str(shots[-1]), clip=clip)
    lab.set_theme(False)
    return shots


@pytest.mark.torch
def test_the_metrics_tutorial_charts_the_training_and_marks_the_stopped_runs(lab: Lab, torch_installed: None) -> None:
    from playwright.sync_api import expect

    lab.open("metrics.ipynb")
    lab.run_all()
    job_out = lab.cell(lab.cell_index_containing("jupyter_sched.submit(train")).locator(".jp-OutputArea")
    # Live: the pane's Metrics section appears while the job runs (it ends in about ten seconds).
    expect(job_out.locator(".jsched-job .jsched-metrics").first).to_be_visible(timeout=TIMEOUT)
    lab.wait_all_done(timeout=TIMEOUT)

    loss = job_out.locator('.jsched-record img.jsched-metric-chart[alt^="loss:"]')
    expect(loss).to_have_attribute("alt", re.compile(r"^loss: 40 points over steps 0 to 39"))
    expect(job_out.locator('.jsched-record img.jsched-metric-chart[alt^="val/acc:"]')).to_be_visible()
    shots = lab.screenshot_themes(job_out.locator(".jsched-record").first, "metrics-tutorial-pane")

    sweep_out = lab.cell(lab.cell_index_containing("jupyter_sched.sweep(train")).locator(".jp-OutputArea")
    view = sweep_out.locator(".jsched-sweep").first
    expect(view).to_contain_text("8 SUCCEEDED")
    reasons = re.findall(r"stopped at step \d+: loss \S+ worse than the median", view.inner_text())
    assert len(reasons) == STOPPED_RUNS, view.inner_text()
    shots += lab.screenshot_themes(view, "metrics-tutorial-sweep")

    page = lab.page
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()
    sidebar = page.locator(".jsl-sidebar")
    sidebar.wait_for(state="visible")
    sidebar.locator(".jsl-filter-notebook input").check()  # this notebook's jobs: the job and the sweep
    expect(sidebar.locator(".jsl-list > *")).to_have_count(2, timeout=60_000)
    sidebar.locator('.jsl-sweep-head[data-handle^="sweep:train-sweep-"]').click()
    expect(sidebar.locator(".jsl-sweep .jsl-run")).to_have_count(8, timeout=60_000)
    # Each of the nine rows has a sparkline of its loss (the first key with a goal)
    expect(sidebar.locator(".jsl-row-spark")).to_have_count(9, timeout=60_000)
    assert set(sidebar.locator(".jsl-row-spark .jsl-spark-key").all_inner_texts()) == {"loss"}
    shots += sidebar_shots(lab)
    assert not lab.page_problems()
    keep_for_docs(shots)

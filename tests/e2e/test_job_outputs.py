"""Job outputs outlive their kernel, in a real JupyterLab in Chromium.

- A notebook saved while its job runs, its kernel shut down, then reopened: the job's cell shows the job
  as the Jupyter server knows it (no "model not found"), and its final state once it ends.
- A kernel restart during a job: the pane says its kernel restarted and shows the job's final state
  from the server, not a frozen "RUNNING … following".

Each job waits for a file the test creates, so the order of events is the test's, not the clock's.
Screenshots: artifacts/screenshots/outputs-*.png.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_sched.specs import random_id
from tests.e2e.conftest import JS_PANEL, Lab, LabServer

TIMEOUT = 60_000  # ms: upper bounds for what must become visible on a shared machine, not timings
JOB_MIME = "application/vnd.jupyter-sched.job+json"


def output(lab: Lab, index: int) -> Any:
    return lab.cell(index).locator(".jp-Cell-outputArea")


def saved_outputs(path: Path) -> Any:
    return [o for cell in json.loads(path.read_text())["cells"] for o in cell.get("outputs", [])]


def test_a_job_saved_mid_run_shows_its_final_state_after_its_kernel_is_gone(
    lab: Lab, lab_server: LabServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    go = tmp_path / "GO"
    name = f"midrun-{tag}"
    notebook = lab_server.write_notebook(f"outlive-{tag}.ipynb", [
        "%load_ext jupyter_sched",
        f"job = %sched_run --detach utils.sh --name {name} 'echo started; while [ ! -e {go} ]; do sleep 0.2; done;"
        " echo finished'\njob",
    ])  # fmt: skip
    lab.open(notebook)
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    pane = output(lab, 1).locator(".jsched-status").first
    expect(pane.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)

    # save mid-run: the file has the widget, the launch-time record, and which job it is
    path = lab_server.root_dir / notebook
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    outputs = saved_outputs(path)
    job_outputs = [o for o in outputs if JOB_MIME in o.get("data", {})]
    assert len(job_outputs) == 1, [(o.get("output_type"), sorted(o.get("data", o))) for o in outputs]
    job_output = job_outputs[0]
    info = job_output["data"][JOB_MIME]
    handle = info["handle"]
    assert info["state"] == "RUNNING" and info["final"] is False and f"/{name}-" in handle
    assert "application/vnd.jupyter.widget-view+json" in job_output["data"]

    # the kernel is shut down: the open pane says so and follows the job from the server
    lab_server.shutdown_kernels()
    view = output(lab, 1).locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-note")).to_contain_text("The kernel that drew this pane is gone", timeout=TIMEOUT)
    expect(view.locator(".jsl-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)

    # reopened (with a new kernel that never knew the widget): the server's view, never "model not found"
    lab.open(notebook)
    view = output(lab, 1).locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_contain_text("started", timeout=TIMEOUT)
    expect(view.locator(".jsl-note")).to_contain_text("saved RUNNING")
    lab.screenshot(output(lab, 1), "outputs-reopened-running")
    go.touch()
    expect(view.locator(".jsl-pill").first).to_have_text("SUCCEEDED", timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_contain_text("finished", timeout=TIMEOUT)
    expect(view.locator(".jsl-log-foot")).to_contain_text("end of log", timeout=TIMEOUT)
    lab.screenshot(output(lab, 1), "outputs-reopened-final")
    assert "model not found" not in lab.page.inner_text("body")
    assert lab.page_problems() == []


def test_a_pane_whose_kernel_restarted_says_so_and_shows_the_final_state(
    lab: Lab, lab_server: LabServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    notebook = lab_server.write_notebook(f"restarted-{tag}.ipynb", [
        "%load_ext jupyter_sched",
        f"%sched_run utils.sh --name bound-{tag} 'echo bound-to-its-kernel; sleep 600'",
    ])  # fmt: skip
    lab.open(notebook)
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    pane = output(lab, 1).locator(".jsched-status").first
    expect(pane.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    lab.restart_kernel()
    view = output(lab, 1).locator(".jsl-job-view")
    expect(view.locator(".jsl-note")).to_contain_text("The kernel that drew this pane restarted", timeout=TIMEOUT)
    # the replica ended with the kernel that owned it: the final state, not a frozen RUNNING
    expect(view.locator(".jsl-pill").first).to_have_text("CANCELLED", timeout=TIMEOUT)
    expect(view.locator(".jsl-log-foot")).to_contain_text("end of log", timeout=TIMEOUT)
    assert output(lab, 1).locator(".jsched-status").count() == 0  # the old pane is gone
    lab.screenshot(output(lab, 1), "outputs-restarted")
    assert lab.page_problems() == []

"""Job outputs outlive their kernel, in a real JupyterLab in Chromium.

- A notebook saved while its job runs, its kernel shut down, then reopened: the job's cell shows the job
  as the Jupyter server knows it (no "model not found"), and its final state once it ends.
- A kernel restart during a job: the pane says its kernel restarted and shows the job's final state
  from the server, not a frozen "RUNNING … following".

Each job waits for a file the test creates, so the order of events is the test's, not the clock's.
Screenshots (light and dark): artifacts/screenshots/outputs-*.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.specs import random_id
from tests.e2e.conftest import JOB_MIME, JS_PANEL, Lab, LabServer

TIMEOUT = 60_000  # ms: upper bounds for what must become visible on a shared machine, not timings


def output(lab: Lab, index: int) -> Any:
    return lab.cell(index).locator(".jp-Cell-outputArea")


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
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    outputs = lab_server.saved_outputs(notebook)
    job_outputs = [o for o in outputs if JOB_MIME in o.get("data", {})]
    assert len(job_outputs) == 1, [(o.get("output_type"), sorted(o.get("data", o))) for o in outputs]
    job_output = job_outputs[0]
    info = job_output["data"][JOB_MIME]
    handle = info["handle"]
    assert info["state"] == "RUNNING" and info["final"] is False and f"/{name}-" in handle
    assert "application/vnd.jupyter.widget-view+json" in job_output["data"]

    # the notebook's kernel is shut down (as Kernel > Shut Down Kernel does): the open pane says so and
    # follows the job from the server
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).sessionContext.shutdown(); }}")
    view = output(lab, 1).locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-note")).to_contain_text("The kernel that drew this pane was shut down", timeout=TIMEOUT)
    expect(view.locator(".jsl-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)

    # reopened (with a new kernel that never knew the widget): the server's view, never "model not found"
    lab.open(notebook)
    view = output(lab, 1).locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_contain_text("started", timeout=TIMEOUT)
    expect(view.locator(".jsl-note")).to_contain_text("saved RUNNING")
    lab.screenshot_themes(output(lab, 1), "outputs-reopened-running")

    # the Jobs sidebar's "This notebook": the jobs launched from this notebook, and only those
    lab.page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()
    sidebar = lab.page.locator(".jsl-sidebar")
    sidebar.locator(".jsl-filter-notebook input").check()
    expect(sidebar.locator(f'.jsl-row[data-handle="{handle}"]')).to_have_count(1, timeout=TIMEOUT)
    expect(sidebar.locator(".jsl-list > .jsl-row")).to_have_count(1, timeout=TIMEOUT)
    sidebar.locator(".jsl-filter-notebook input").uncheck()
    lab.page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()  # closed again
    go.touch()
    # once ended, the output becomes the job's final record in the notebook: a save keeps the final state
    record = output(lab, 1).locator(".jsched-record")
    expect(record).to_contain_text("SUCCEEDED", timeout=TIMEOUT)
    expect(record).to_contain_text("finished")
    lab.screenshot_themes(output(lab, 1), "outputs-reopened-final")
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    (final,) = lab_server.saved_job_outputs(notebook)
    assert final["data"][JOB_MIME]["final"] is True and final["data"][JOB_MIME]["state"] == "SUCCEEDED"
    assert "application/vnd.jupyter.widget-view+json" not in final["data"]
    assert "finished" in "".join(final["data"]["text/html"]) and "SUCCEEDED" in "".join(final["data"]["text/plain"])
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
    # the replica ended with the kernel that owned it: its final state from the server, said why, kept
    # in the notebook as the cell's record; not a frozen RUNNING
    record = output(lab, 1).locator(".jsched-record")
    expect(record).to_contain_text("The kernel that drew this pane restarted", timeout=TIMEOUT)
    expect(record).to_contain_text("FAILED")  # nobody cancelled it: its owner, the kernel, exited
    expect(record).to_contain_text("stopped when the kernel that launched it")
    expect(record).to_contain_text("bound-to-its-kernel")
    assert output(lab, 1).locator(".jsched-status").count() == 0  # the old pane is gone
    assert "following" not in output(lab, 1).inner_text()
    lab.screenshot_themes(output(lab, 1), "outputs-restarted")
    assert lab.page_problems() == []


def test_a_reload_beside_the_running_kernel_keeps_the_live_pane(lab: Lab, lab_server: LabServer,
                                                                tmp_path: Path) -> None:  # fmt: skip
    """The browser reloads while the kernel that drew the pane still runs: the pane is the live widget again
    (its kernel holds the model), not the server's view; when the job ends, the output keeps its final
    state (the issue's "saved as RUNNING")."""
    from playwright.sync_api import expect

    tag = random_id()[:6]
    go = tmp_path / "GO"
    notebook = lab_server.write_notebook(f"reload-{tag}.ipynb", [
        "%load_ext jupyter_sched",
        f"job = %sched_run utils.sh --name reload-{tag} 'echo up; while [ ! -e {go} ]; do sleep 0.2; done'\njob",
    ])  # fmt: skip
    lab.open(notebook)
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    expect(output(lab, 1).locator(".jsched-status .jsched-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    lab.page.goto(lab_server.url(f"lab/tree/{notebook}?token={lab_server.token}"))  # the same workspace: its kernel
    panel = f"({JS_PANEL})"
    lab.page.wait_for_function(f"() => !!{panel} && !!{panel}.content && {panel}.content.widgets.length === 2",
                               timeout=TIMEOUT)  # fmt: skip
    pane = output(lab, 1).locator(".jsched-status .jsched-pill").first
    expect(pane).to_have_text("RUNNING", timeout=TIMEOUT)
    assert output(lab, 1).locator(".jsl-job-view").count() == 0
    # the kernel's final record cannot reach this page (it never saw the display id): JupyterLab writes
    # the final record, so the file does not keep the launch-time RUNNING
    go.touch()
    record = output(lab, 1).locator(".jsched-record")
    expect(record).to_contain_text("SUCCEEDED", timeout=TIMEOUT)
    expect(record).to_contain_text("recorded by JupyterLab from the Jupyter server")
    expect(record).to_contain_text("up")
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    (final,) = lab_server.saved_job_outputs(notebook)
    assert final["data"][JOB_MIME]["final"] is True and final["data"][JOB_MIME]["state"] == "SUCCEEDED"
    assert "application/vnd.jupyter.widget-view+json" not in final["data"]
    assert lab.page_problems() == []

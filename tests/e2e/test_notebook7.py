"""jupyter_sched in Notebook 7 (the ``notebook`` package), in Chromium, on a server of its own.

- The Jobs panel: closed by default, opened from View > Left Sidebar > Show Jobs; a job launched from the
  CLI appears in it (found by ``data-handle``); a row opens the job's live view in the panel below the
  page (Notebook 7 keeps one document per page in its main area); Cancel (with its confirm) stops the job
  and a notification says so.
- The command palette's *Show Jobs* opens the panel; a notification's *Open* opens the ended job's view
  below the page.
- Job outputs outlive their kernel: a notebook saved while its job runs, its kernel shut down, reopened on
  its own page: the job's cell shows the job as the Jupyter server knows it (no "model not found"), its
  "Open below" button opens the job's view below the notebook, and the cell shows the final state, which
  a save keeps.

Screenshots (light and dark): artifacts/screenshots/notebook7-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from jupyter_sched.specs import random_id
from tests.e2e.conftest import JOB_MIME, JS_PANEL, Lab, LabServer, page_on
from tests.e2e.test_jobs_sidebar import launch

TIMEOUT = 60_000  # ms: upper bounds for what must become visible on a shared machine, not timings


@pytest.fixture
def nb7(browser_context: Any, notebook7_server: LabServer, request: pytest.FixtureRequest) -> Iterator[Lab]:
    with page_on(browser_context, notebook7_server, request) as helper:
        yield helper
        helper.set_theme(False)


def open_tree(nb7: Lab, server: LabServer) -> Any:
    """Notebook 7's file browser page, its application restored; returns the page."""
    page = nb7.page
    page.goto(server.url(f"tree?token={server.token}"))
    page.wait_for_function("() => window.jupyterapp !== undefined && window.jupyterapp.name === 'Jupyter Notebook'",
                           timeout=TIMEOUT)  # fmt: skip
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    return page


def show_jobs(nb7: Lab) -> Any:
    """Opens the Jobs panel as a person does in Notebook 7: View > Left Sidebar > Show Jobs."""
    page = nb7.page
    sidebar = page.locator(".jsl-sidebar")
    assert not sidebar.is_visible()  # Notebook 7's side panels start closed
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^View$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Left Sidebar")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Show Jobs$")).click()
    sidebar.wait_for(state="visible")
    return sidebar


def test_a_cli_job_appears_in_the_jobs_panel_opens_below_and_is_cancelled(
    nb7: Lab, notebook7_server: LabServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page = open_tree(nb7, notebook7_server)
    sidebar = show_jobs(nb7)
    tag = random_id()[:6]
    handle = launch(notebook7_server, tmp_path, f"nb7-{tag}", "echo 'training...'; sleep 600")
    row = sidebar.locator(f'.jsl-row[data-handle="{handle}"]')
    expect(row).to_have_attribute("data-state", "RUNNING", timeout=TIMEOUT)
    expect(row).to_contain_text(f"nb7-{tag}")
    expect(row).to_contain_text("local_cwd")

    row.click()
    # the page's main area keeps the file browser; the job's live view opens in the panel below it
    view = page.locator(f'#jp-down-stack .jsl-job-panel .jsl-job-view[data-handle="{handle}"]')
    expect(view).to_be_visible(timeout=TIMEOUT)
    expect(view.locator(".jsl-replicas tr[data-replica='sh/0']")).to_have_count(1, timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_contain_text("training...", timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_be_in_viewport()  # the panel opens tall enough to show it
    expect(page.locator("#main-panel .jp-FileBrowser, #main-panel .jp-TreePanel").first).to_be_visible()
    nb7.screenshot_themes(page.locator("#main"), "notebook7-jobs")

    row.locator(".jsl-row-cancel").click()
    page.locator(".jp-Dialog button", has_text="Cancel job").click()
    expect(row).to_have_attribute("data-state", "CANCELLED", timeout=TIMEOUT)
    expect(page.locator(".Toastify__toast", has_text=f"nb7-{tag} CANCELLED")).to_have_count(1, timeout=TIMEOUT)
    expect(view.locator(".jsl-pill", has_text="CANCELLED").first).to_be_visible(timeout=TIMEOUT)
    assert nb7.page_problems() == []


def test_the_command_palette_shows_the_jobs_and_a_notification_opens_its_job_below(
    nb7: Lab, notebook7_server: LabServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page = open_tree(nb7, notebook7_server)
    sidebar = page.locator(".jsl-sidebar")
    assert not sidebar.is_visible()
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^View$")).click()  # Notebook 7's palette: a modal
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Activate Command Palette")).click()
    palette = page.locator(".jp-ModalCommandPalette")
    palette.locator("input").fill("Show Jobs")
    palette.locator('.lm-CommandPalette-item[data-command="jupyter-sched:show-jobs"]').click()  # ours
    expect(sidebar).to_be_visible(timeout=TIMEOUT)

    tag = random_id()[:6]
    handle = launch(notebook7_server, tmp_path, f"nb7n-{tag}", "while [ ! -e GO ]; do sleep 0.1; done; exit 3")
    expect(sidebar.locator(f'.jsl-row[data-handle="{handle}"]')).to_have_attribute("data-state", "RUNNING",
                                                                                   timeout=TIMEOUT)  # fmt: skip
    (tmp_path / "GO").touch()  # seen running, so its end is news
    toast = page.locator(".Toastify__toast", has_text=f"nb7n-{tag} FAILED: sh/0 exit code 3")
    expect(toast).to_be_visible(timeout=TIMEOUT)
    toast.get_by_role("button", name=re.compile("Open")).click()
    view = page.locator(f'#jp-down-stack .jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-reason")).to_contain_text(f"nb7n-{tag} FAILED: sh/0 exit code 3", timeout=TIMEOUT)
    expect(view).to_be_in_viewport()
    assert nb7.page_problems() == []


def test_a_job_saved_mid_run_shows_its_state_from_the_server_after_its_kernel_is_gone(
    nb7: Lab, notebook7_server: LabServer, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    go = tmp_path / "GO"
    name = f"nb7run-{tag}"
    notebook = notebook7_server.write_notebook(f"nb7-outlive-{tag}.ipynb", [
        "%load_ext jupyter_sched",
        f"job = %sched_run --detach utils.sh --name {name} 'echo started; while [ ! -e {go} ]; do sleep 0.2; done;"
        " echo finished'\njob",
    ])  # fmt: skip
    nb7.open(notebook)
    assert nb7.page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    nb7.run_all()
    nb7.wait_all_done(timeout=120_000)
    output = nb7.cell(1).locator(".jp-Cell-outputArea")
    expect(output.locator(".jsched-status .jsched-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)

    nb7.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    (saved,) = notebook7_server.saved_job_outputs(notebook)
    handle = saved["data"][JOB_MIME]["handle"]
    assert saved["data"][JOB_MIME]["state"] == "RUNNING" and f"/{name}-" in handle
    nb7.page.evaluate(f"async () => {{ await ({JS_PANEL}).sessionContext.shutdown(); }}")
    view = output.locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-note")).to_contain_text("The kernel that drew this pane was shut down", timeout=TIMEOUT)

    # reopened on its own page, with a new kernel that never knew the widget: the server's view
    nb7.open(notebook)
    output = nb7.cell(1).locator(".jp-Cell-outputArea")
    view = output.locator(f'.jsl-job-view[data-handle="{handle}"]')
    expect(view.locator(".jsl-pill").first).to_have_text("RUNNING", timeout=TIMEOUT)
    expect(view.locator(".jsl-log")).to_contain_text("started", timeout=TIMEOUT)
    expect(view.locator(".jsl-note")).to_contain_text("saved RUNNING")
    nb7.screenshot_themes(output, "notebook7-outputs-reopened-running")
    # the output's button opens the job's own view below the notebook, which stays in the main area
    view.locator("button.jsl-open", has_text="Open below").click()
    below = nb7.page.locator(f'#jp-down-stack .jsl-job-view[data-handle="{handle}"]')
    expect(below.locator(".jsl-log")).to_contain_text("started", timeout=TIMEOUT)
    expect(below.locator(".jsl-log")).to_be_in_viewport()
    assert nb7.page.evaluate(f"() => ({JS_PANEL}).context.path") == notebook

    # the Jobs panel beside this notebook: "This notebook" lists its job, and only it
    sidebar = show_jobs(nb7)
    sidebar.locator(".jsl-filter-notebook input").check()
    expect(sidebar.locator(f'.jsl-row[data-handle="{handle}"]')).to_have_count(1, timeout=TIMEOUT)
    expect(sidebar.locator(".jsl-list > .jsl-row")).to_have_count(1, timeout=TIMEOUT)
    nb7.screenshot_themes(nb7.page.locator("#main"), "notebook7-notebook-jobs")

    go.touch()
    record = output.locator(".jsched-record")
    expect(record).to_contain_text("SUCCEEDED", timeout=TIMEOUT)
    expect(record).to_contain_text("finished")
    expect(record).to_contain_text("recorded by Jupyter Notebook from the Jupyter server")
    nb7.screenshot_themes(output, "notebook7-outputs-reopened-final")
    nb7.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    (final,) = notebook7_server.saved_job_outputs(notebook)
    assert final["data"][JOB_MIME]["final"] is True and final["data"][JOB_MIME]["state"] == "SUCCEEDED"
    assert "application/vnd.jupyter.widget-view+json" not in final["data"]
    assert "model not found" not in nb7.page.inner_text("body")
    assert nb7.page_problems() == []

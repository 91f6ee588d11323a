"""The Jobs sidebar in a real JupyterLab in Chromium, with no kernel at all: jobs launched from the CLI
appear (found by ``data-handle``), a row opens the job's live view, Cancel (with its confirm) stops a job,
and a notification says how a job ended. Screenshots (light and dark, but the notification's):
artifacts/screenshots/jobs-*.png.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from jupyter_sched.notebook.panes.theme import STATE_COLORS
from tests.e2e.conftest import Lab, LabServer

SCRIPT = str(Path(sys.executable).parent / "jupyter-sched")


@pytest.fixture
def jobs(lab: Lab, lab_server: LabServer) -> Iterator[Lab]:
    """JupyterLab with no notebook open and the Jobs sidebar shown."""
    page = lab.page
    page.goto(lab_server.url(f"lab?reset&token={lab_server.token}"))
    page.wait_for_function("() => window.jupyterapp !== undefined && window.jupyterapp.shell !== undefined",
                           timeout=60_000)  # fmt: skip
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()  # the Jobs tab
    page.locator(".jsl-sidebar").wait_for(state="visible")
    yield lab
    lab.set_theme(False)


def cli(server: LabServer, cwd: Path, *args: str) -> str:
    """Runs ``jupyter-sched`` against the lab server's log dir; a local job outlives the command."""
    env = dict(os.environ, JUPYTER_SCHED_LOG_DIR=str(server.sched_log_dir), NO_COLOR="1")
    done = subprocess.run([SCRIPT, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip().splitlines()[0]


def launch(server: LabServer, cwd: Path, name: str, script: str) -> str:
    return cli(server, cwd, "run", "-s", "local_cwd", "--cfg", "outlive_owner=true", "utils.sh", "--name", name, script)


def row(page: Any, handle: str) -> Any:
    return page.locator(f'.jsl-sidebar .jsl-row[data-handle="{handle}"]')


def css_rgb(hex_color: str) -> str:
    """``#00a250`` as a computed style says it: ``rgb(0, 162, 80)``."""
    return "rgb({}, {}, {})".format(*(int(hex_color[i : i + 2], 16) for i in (1, 3, 5)))


def wait_state(page: Any, handle: str, state: str, timeout: float = 60_000) -> None:
    page.locator(f'.jsl-sidebar .jsl-row[data-handle="{handle}"][data-state="{state}"]').wait_for(
        timeout=timeout
    )


def test_a_cli_job_appears_opens_and_is_cancelled_from_the_sidebar(jobs: Lab, lab_server: LabServer,
                                                                 tmp_path: Path) -> None:  # fmt: skip
    page = jobs.page
    done = launch(lab_server, tmp_path, "prepare", "printf 'loading 50%%\\r'; echo 'loading 100%'; echo ready")
    epochs = "for i in 1 2 3; do printf 'epoch %s/3\\r' $i; sleep 0.2; done; echo"
    handle = launch(lab_server, tmp_path, "train", f"{epochs}; echo 'training...'; sleep 600")
    wait_state(page, handle, "RUNNING")
    wait_state(page, done, "SUCCEEDED")
    # running first (the engine is shared: other running jobs of this user may be listed too)
    order = page.evaluate(
        "() => Array.from(document.querySelectorAll('.jsl-sidebar .jsl-list > *'))"
        ".map(e => [e.dataset.handle, (e.dataset.state || e.querySelector('[data-state]').dataset.state)])"
    )
    ended = [state in ("SUCCEEDED", "FAILED", "CANCELLED") for _, state in order]
    assert ended == sorted(ended), order
    assert [h for h, state in order if state == "RUNNING"].count(handle) == 1, order
    assert "train" in row(page, handle).inner_text() and "local_cwd" in row(page, handle).inner_text()

    row(page, handle).click()
    view = page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"]')
    view.wait_for()
    view.locator(".jsl-replicas tr[data-replica='sh/0']").wait_for()
    page.wait_for_function(
        "(h) => { const v = document.querySelector(`.jsl-job-panel .jsl-job-view[data-handle=\"${h}\"] .jsl-log`);"
        " return !!v && v.textContent.includes('training...'); }",
        arg=handle, timeout=30_000,
    )  # fmt: skip
    log = view.locator(".jsl-log").inner_text()
    assert log.splitlines()[:2] == ["epoch 3/3", "training..."], log  # \r frames: one line, the last frame
    failed = launch(lab_server, tmp_path, "evaluate", "echo 'loading checkpoint'; echo 'KeyError: step' >&2; exit 2")
    wait_state(page, failed, "FAILED")
    # the backend filter: only local_cwd jobs (the engine's and the cluster's are this user's too)
    page.locator(".jsl-sidebar select[title='backend']").select_option("local_cwd")
    page.wait_for_function(
        "() => { const subs = Array.from(document.querySelectorAll('.jsl-sidebar .jsl-list .jsl-row-sub'));"
        " return subs.length > 0 && subs.every(s => s.textContent.includes('local_cwd')); }",
        timeout=30_000,
    )
    jobs.screenshot_themes(page.locator(".jp-LabShell"), "jobs-sidebar")
    for h, state in ((done, "SUCCEEDED"), (failed, "FAILED"), (handle, "RUNNING")):  # as the panes show them
        style = row(page, h).locator(".jsl-pill").first.evaluate(
            "e => { const s = getComputedStyle(e); return [s.color, s.borderTopColor]; }"
        )
        assert style == [css_rgb(STATE_COLORS[state])] * 2, (state, style)

    row(page, handle).locator(".jsl-row-cancel").click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator("button", has_text="Keep running").click()
    dialog.wait_for(state="detached")
    assert row(page, handle).get_attribute("data-state") == "RUNNING"
    row(page, handle).locator(".jsl-row-cancel").click()
    dialog.locator("button", has_text="Cancel job").click()
    wait_state(page, handle, "CANCELLED")
    toast = page.locator(".Toastify__toast", has_text="train CANCELLED")
    toast.wait_for(timeout=30_000)
    view.locator(".jsl-pill", has_text="CANCELLED").first.wait_for()
    assert not jobs.page_problems()


def test_a_notification_says_how_a_job_ended(jobs: Lab, lab_server: LabServer, tmp_path: Path) -> None:
    page = jobs.page
    script = "while [ ! -e GO ]; do sleep 0.1; done; echo 'error: loss is NaN' >&2; exit 3"
    handle = launch(lab_server, tmp_path, "trainer", script)
    wait_state(page, handle, "RUNNING")  # seen running, so its end is news
    (tmp_path / "GO").touch()
    # why, as the job's kernel pane would say it: its last stderr line, not "exit code 3" (issue 32)
    toast = page.locator(".Toastify__toast", has_text="trainer FAILED: sh/0 error: loss is NaN")
    toast.wait_for(timeout=60_000)
    jobs.screenshot(toast, "jobs-notification")
    toast.get_by_role("button", name=re.compile("Open")).click()
    page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"] .jsl-reason',
                 has_text="trainer FAILED: sh/0 error: loss is NaN").wait_for()  # fmt: skip


def test_a_sweep_is_one_row_with_its_counts(jobs: Lab, lab_server: LabServer, tmp_path: Path) -> None:
    """A sweep launched from a notebook: one collapsible row with its counts, its runs inside, one
    notification when its last run ends; and the notebook's jobs under "This notebook"."""
    from playwright.sync_api import expect

    from jupyter_sched.specs import random_id

    tag = random_id()[:6]
    go = tmp_path / "GO"
    notebook = lab_server.write_notebook(f"sweep-{tag}.ipynb", [
        "import jupyter_sched\n"
        "def square(x: int) -> int:\n"
        "    import os, time\n"
        f"    while not os.path.exists({str(go)!r}):\n"
        "        time.sleep(0.1)\n"
        "    if x == 3:\n"
        "        raise ValueError('three')\n"
        "    return x * x\n"
        f"sweep = jupyter_sched.sweep(square, {{'x': [1, 2, 3]}}, max_concurrent=3, name='sq{tag}')\n"
        "sweep.name",
    ])  # fmt: skip
    jobs.open(notebook)
    jobs.run_all()
    jobs.wait_all_done(timeout=180_000)
    shown = re.search(rf"'(sq{tag}-[a-z0-9]+)'", jobs.output_text(0))
    assert shown, jobs.output_text(0)
    sweep_name = shown.group(1)
    page = jobs.page
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="jupyter-sched-jobs"]').click()
    head = page.locator(f'.jsl-sidebar .jsl-sweep-head[data-handle="sweep:{sweep_name}"]')
    expect(head).to_have_attribute("data-state", "RUNNING", timeout=60_000)
    expect(head).to_contain_text("3 running")
    go.touch()
    toast = page.locator(".Toastify__toast", has_text=f"sweep sq{tag} ended: ")
    expect(toast).to_have_count(1, timeout=60_000)
    expect(toast).to_contain_text("2 SUCCEEDED")
    expect(toast).to_contain_text("1 FAILED")
    expect(head).to_have_attribute("data-state", "FAILED", timeout=60_000)
    expect(head).to_contain_text("sweep of 3")
    expect(head).to_contain_text("2 succeeded")
    expect(head).to_contain_text("1 failed")
    runs = page.locator(f'.jsl-sidebar .jsl-sweep[data-sweep="{sweep_name}"] .jsl-run')
    expect(runs).to_have_count(0)  # collapsed
    head.click()
    expect(runs).to_have_count(3, timeout=30_000)
    for i in range(3):
        expect(runs.filter(has_text=f"run {i:03d}")).to_have_count(1)
        expect(page.locator(f'.jsl-sidebar .jsl-run[data-handle*="/{sweep_name}-{i:03d}-"]')).to_have_count(1)
    page.locator(".jsl-sidebar .jsl-filter-notebook input").check()
    expect(page.locator(".jsl-sidebar .jsl-list > *")).to_have_count(1, timeout=30_000)  # this notebook: the sweep
    jobs.screenshot_themes(page.locator(".jsl-sidebar"), "jobs-sweep")
    page.locator(".jsl-sidebar .jsl-filter-notebook input").uncheck()


def test_the_api_refuses_a_request_without_login(lab_server: LabServer) -> None:
    """The server JupyterLab runs on: its jobs API answers nothing without the server's login."""
    import urllib.error
    import urllib.request

    for path in ("jupyter-sched/api/jobs", "jupyter-sched/api/jobs/local_cwd%3A%2F%2Fdefault%2Fx-1/logs"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(lab_server.url(path), timeout=10)
        assert refused.value.code in (401, 403), path
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(
            lab_server.url("jupyter-sched/api/jobs/local_cwd%3A%2F%2Fdefault%2Fx-1/cancel"), method="POST", data=b""
        ), timeout=10)  # fmt: skip
    assert refused.value.code in (401, 403)
    assert lab_server.api("GET", "jupyter-sched/api/jobs?limit=1")["limit"] == 1  # with the token: answered

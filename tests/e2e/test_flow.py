"""The notebook flow in JupyterLab, checked for what a person sees (screenshots: artifacts/screenshots/flow-*.png).

- A Cancel click in the pane of a cell blocked in ``%sched_run --wait`` asks "Confirm cancel?" and the
  second click ends the job CANCELLED within the grace period + 1 s, while the cell still runs.
- Run All stops at a failed ``--wait``: one line names the failed replica and its error; later cells
  do not run.
- ``%sched_list`` shows running apps first, newest first, with start time and age; Cancel only on running
  rows; Open shows the app's live view under the list. ``job = %sched_run ...`` shows the panes.
"""

from __future__ import annotations

import re
import time
from typing import Any, List

from jupyter_sched.specs import random_id
from tests.e2e.conftest import JS_PANEL, Lab, LabServer

PANE_TIMEOUT = 60_000  # ms: upper bounds for visible state on a shared machine, not timings
GRACE = 3.0


def cell_output(lab: Lab, index: int) -> Any:
    return lab.cell(index).locator(".jp-Cell-outputArea")


def executed(lab: Lab, index: int) -> bool:
    return bool(lab.page.evaluate(f"(i) => {JS_PANEL}.content.widgets[i].model.executionCount !== null", index))


def test_cancel_click_during_wait_ends_the_job(lab: Lab, lab_server: LabServer) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    notebook = lab_server.write_notebook(
        f"flow-cancel-{tag}.ipynb",
        [
            "%load_ext jupyter_sched",
            f"job = %sched_run --wait --cfg cancel_grace={GRACE:g} utils.sh --name wait-{tag}"
            " 'echo flow-e2e: waiting; sleep 300'",
            "print('after the wait:', job.state)",
        ],
    )
    lab.open(notebook)
    lab.run_all()
    out = cell_output(lab, 1)
    status = out.locator(".jsched-status").first
    expect(status.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
    expect(out.locator("pre.jsched-log-text")).to_contain_text("flow-e2e: waiting", timeout=PANE_TIMEOUT)
    assert not executed(lab, 1), "the cell should still be waiting"
    status.locator("button", has_text="Cancel").click()
    confirm = status.locator("button", has_text="Confirm cancel?")
    expect(confirm).to_be_visible(timeout=10_000)  # handled while the cell is blocked
    assert not executed(lab, 1)
    lab.screenshot(status, "flow-cancel-confirm")
    confirm.click()
    clicked = time.monotonic()
    # the bound of the issue, as an event-driven wait: CANCELLED shown within grace + 1 s of the click
    expect(status.locator(".jsched-pill").first).to_have_text("CANCELLED", timeout=(GRACE + 1) * 1000)
    print(f"confirm click -> CANCELLED shown in {time.monotonic() - clicked:.2f} s (grace {GRACE:g} s)")
    lab.wait_all_done(timeout=PANE_TIMEOUT)
    expect(cell_output(lab, 2)).to_contain_text("after the wait: CANCELLED")
    lab.screenshot(out, "flow-cancel-done")
    assert lab.page_problems() == []


def test_run_all_stops_at_a_failed_wait(lab: Lab, lab_server: LabServer) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    notebook = lab_server.write_notebook(
        f"flow-fail-{tag}.ipynb",
        [
            "%load_ext jupyter_sched",
            f"%sched_run --wait utils.python --name fail-{tag} -c \"import time; time.sleep(0.5); d = dict(); d['y']\"",
            "print('this cell must not run')",
        ],
    )
    lab.open(notebook)
    lab.run_all()
    lab.page.wait_for_function(
        f"""() => {{
            const w = {JS_PANEL};
            const k = w.sessionContext.session && w.sessionContext.session.kernel;
            return k && k.status === 'idle' && w.content.widgets[1].model.executionCount !== null;
        }}""",
        timeout=PANE_TIMEOUT,
        polling=250,
    )
    error = cell_output(lab, 1).locator("[data-mime-type='application/vnd.jupyter.stderr']")
    expect(error).to_have_count(1)
    text = error.inner_text().strip()
    pattern = (
        rf"JobFailed: fail-{tag} FAILED: python/0 FAILED \(exit code 1\): KeyError: 'y'"
        rf" \[fail-{tag}-\w+ on local_cwd\]"
    )
    assert re.fullmatch(pattern, text), text
    assert error.locator("a[href]").count() == 0  # no handle for JupyterLab to half-link (issue 26)
    time.sleep(1)  # a later cell that did run would have its count by now
    assert not executed(lab, 2) and "must not run" not in cell_output(lab, 2).inner_text()
    lab.screenshot_themes(lab.cell(1), "flow-failed-wait")
    assert lab.page_problems() == []


def test_list_sorts_and_opens_rows(lab: Lab, lab_server: LabServer) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    notebook = lab_server.write_notebook(
        f"flow-list-{tag}.ipynb",
        [
            "%load_ext jupyter_sched",
            f"%sched_run --wait utils.sh --name done-{tag} 'echo done'",
            f"older = %sched_run utils.sh --name older-{tag} 'sleep 300'",
            "import time; time.sleep(1.5)",
            f"newer = %sched_run utils.sh --name newer-{tag} 'sleep 300'",
            "import time; time.sleep(1.5)\n%sched_list",
        ],
    )
    lab.open(notebook)
    lab.run_all()
    try:
        lab.wait_all_done(timeout=PANE_TIMEOUT * 2)
        # job = %sched_run ... shows its panes in that cell
        expect(cell_output(lab, 2).locator(".jsched-status")).to_have_count(1)
        listing = cell_output(lab, 5).locator(".jsched-list")
        rows = listing.locator(".jsched-list-row")
        older_pill = rows.filter(has_text=f"older-{tag}").locator(".jsched-pill")
        expect(older_pill).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
        names: List[str] = [
            n for n in (re.search(rf"(done|older|newer)-{tag}", t) for t in rows.all_inner_texts()) if n
        ]  # type: ignore[misc]
        assert [n.group(1) for n in names] == ["newer", "older", "done"], rows.all_inner_texts()
        done_row = rows.filter(has_text=f"done-{tag}")
        expect(done_row).to_contain_text("took")
        expect(done_row.locator("button", has_text="Cancel")).to_be_hidden()
        newer_row = rows.filter(has_text=f"newer-{tag}")
        expect(newer_row).to_contain_text("running")
        expect(newer_row.locator("button", has_text="Cancel")).to_be_visible()
        newer_row.locator("button", has_text="Open").click()
        opened = listing.locator(".jsched-status")
        expect(opened).to_have_count(1, timeout=PANE_TIMEOUT)
        expect(opened).to_contain_text(f"newer-{tag}")
        expect(opened.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
        lab.screenshot(listing, "flow-list-opened")
    finally:
        cleanup = lab.append_and_run("older.cancel(); newer.cancel(); older.wait(); newer.wait()")
        lab.wait_executed(cleanup, PANE_TIMEOUT)
    assert lab.page_problems() == []


def test_interrupt_says_the_truth_and_keeps_the_job(lab: Lab, lab_server: LabServer) -> None:
    from playwright.sync_api import expect

    tag = random_id()[:6]
    notebook = lab_server.write_notebook(
        f"flow-interrupt-{tag}.ipynb",
        [
            "%load_ext jupyter_sched",
            f"job = %sched_run --wait utils.sh --name intr-{tag} 'echo flow-e2e: long; sleep 300'",
        ],
    )
    lab.open(notebook)
    lab.run_all()
    out = cell_output(lab, 1)
    expect(out.locator("pre.jsched-log-text")).to_contain_text("flow-e2e: long", timeout=PANE_TIMEOUT)
    lab.command("notebook:interrupt-kernel")
    lab.wait_executed(1, PANE_TIMEOUT)
    plain = out.locator("[data-mime-type='application/vnd.jupyter.stdout']")
    expect(plain).to_contain_text("Stopped waiting for", timeout=PANE_TIMEOUT)
    expect(plain).to_contain_text("restarting or shutting down the kernel ends its replicas")
    expect(plain).to_contain_text(re.compile(rf"job = %sched_job intr-{tag}-\w+ "))
    error = out.locator("[data-mime-type='application/vnd.jupyter.stderr']")
    expect(error).to_have_count(1)
    message = error.inner_text().strip()
    assert message.startswith("Interrupted: stopped waiting for") and "\n" not in message
    assert out.locator("a[href]").count() == 0, out.locator("a[href]").all_inner_texts()  # nothing half-linked
    lab.screenshot_themes(out, "flow-interrupt")
    check = lab.append_and_run("print(job.state); job.cancel(); job.wait().state")
    expect(cell_output(lab, check)).to_contain_text("RUNNING", timeout=PANE_TIMEOUT)
    expect(cell_output(lab, check)).to_contain_text("CANCELLED", timeout=PANE_TIMEOUT)
    assert lab.page_problems() == []

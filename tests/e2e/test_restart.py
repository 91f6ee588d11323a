"""A kernel restart in JupyterLab loses no job record, checked for what a person sees in the browser.

Before the restart the notebook runs a short job to the end, starts a long one with ``--detach`` (the
local run option ``outlive_owner=true``) and a long one bound to the kernel. The kernel is then restarted
from the Kernel menu, and the new kernel finds the apps again: ``%sched_list`` lists them with their states
(the bound one ended with its kernel), ``%sched_logs`` shows the finished app's output, and
``%sched_status`` re-attaches to the detached app, whose Cancel button ends it. Screenshots of the
re-attached panes go to artifacts/screenshots/restart-*.png.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from jupyter_sched.specs import random_id
from tests.e2e.conftest import Lab, LabServer

PANE_TIMEOUT = 60_000  # ms: the machine is shared; these are upper bounds for visible state, not timings


def cell_output(lab: Lab, index: int) -> Any:
    return lab.cell(index).locator(".jp-Cell-outputArea")


def handle_in(status: Any) -> str:
    """The app handle a status pane offers for re-attaching (its "re-attach: %sched_status ..." hint)."""
    match = re.search(r"re-attach: %sched_status (\S+)", status.inner_text())
    assert match, f"the status pane shows no re-attach hint: {status.inner_text()!r}"
    return match.group(1)


def replica_pid(status: Any) -> int:
    """The "pid / host" cell of the pane's first replica row."""
    headers = status.locator("table thead th").all_inner_texts()
    cells = status.locator("table tbody tr").first.locator("td").all_inner_texts()
    return int(cells[headers.index("pid / host")])


def process_ended(pid: int) -> bool:
    """No such process, or only a zombie left for its (re)parent to reap."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.fixture
def replica_pids() -> Iterator[List[int]]:
    """Where the test puts the pids of its long replicas; any still running at the end is killed."""
    pids: List[int] = []
    yield pids
    for pid in pids:
        if not process_ended(pid):
            try:
                os.killpg(pid, signal.SIGKILL)  # the replica leads its own process group
            except ProcessLookupError:
                pass


def test_restart_finds_the_apps_again(lab: Lab, lab_server: LabServer, replica_pids: List[int]) -> None:
    # Imported after the fixtures ran: without Playwright they fail under CI (a module import would skip).
    from playwright.sync_api import expect

    tag = random_id()[:6]
    short_name, long_name, bound_name = f"short-{tag}", f"outlive-{tag}", f"bound-{tag}"
    notebook = lab_server.write_notebook(
        f"restart-{tag}.ipynb",
        [
            "import os\nbefore_restart = os.getpid()\nbefore_restart",
            "%load_ext jupyter_sched",
            f"%sched_run --wait utils.sh --name {short_name}"
            " 'echo restart-e2e: first line; echo restart-e2e: second line'",
            f"%sched_run --detach utils.sh --name {long_name} 'echo restart-e2e: outliving the kernel; sleep 300'",
            f"%sched_run utils.sh --name {bound_name} 'echo restart-e2e: bound to the kernel; sleep 300'",
        ],
    )
    lab.open(notebook)
    lab.run_all()
    lab.wait_all_done(timeout=120_000)

    # (1) Before the restart: the short app ended SUCCEEDED, the long one and an owner-bound one run.
    old_pid = int(cell_output(lab, 0).locator(".jp-OutputArea-output").inner_text())
    short_status = cell_output(lab, 2).locator(".jsched-status").first
    expect(short_status.locator(".jsched-pill").first).to_have_text("SUCCEEDED", timeout=PANE_TIMEOUT)
    long_out = cell_output(lab, 3)
    long_status = long_out.locator(".jsched-status").first
    expect(long_status.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
    expect(long_out.locator("pre.jsched-log-text")).to_contain_text("outliving the kernel", timeout=PANE_TIMEOUT)
    short_handle, long_handle = handle_in(short_status), handle_in(long_status)
    assert f"/{short_name}-" in short_handle and f"/{long_name}-" in long_handle, (short_handle, long_handle)
    bound_status = cell_output(lab, 4).locator(".jsched-status").first
    expect(bound_status.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
    bound_handle = handle_in(bound_status)
    long_pid, bound_pid = replica_pid(long_status), replica_pid(bound_status)
    replica_pids.extend([long_pid, bound_pid])

    # (2) Restart from the Kernel menu, confirming the dialog: a new kernel process, nothing defined.
    lab.restart_kernel()
    probe = lab.append_and_run("import os\nos.getpid(), 'before_restart' in dir()")
    new_pid_out = cell_output(lab, probe).locator(".jp-OutputArea-output")
    shown = re.compile(r"^\((\d+), (True|False)\)$")
    expect(new_pid_out).to_have_text(shown, timeout=PANE_TIMEOUT)
    new_pid, kept = shown.match(new_pid_out.inner_text().strip()).groups()  # type: ignore[union-attr]
    assert int(new_pid) != old_pid and kept == "False", f"kernel {old_pid} -> {new_pid}: it was not restarted"
    assert not process_ended(long_pid), "the --detach replica ended with the kernel it was meant to outlive"

    # (3) The new kernel lists the apps with their states; the owner-bound one ended with its kernel.
    load = lab.append_and_run("%load_ext jupyter_sched")
    lab.wait_executed(load)
    assert not cell_output(lab, load).locator(".jp-OutputArea-output").count(), cell_output(lab, load).inner_text()
    listing = cell_output(lab, lab.append_and_run("%sched_list")).locator(".jsched-list")
    short_row = listing.locator(".widget-hbox", has_text=short_handle)
    long_row = listing.locator(".widget-hbox", has_text=long_handle)
    expect(short_row.locator(".jsched-pill")).to_have_text("SUCCEEDED", timeout=PANE_TIMEOUT)
    expect(long_row.locator(".jsched-pill")).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
    bound_row = listing.locator(".widget-hbox", has_text=bound_handle)
    # nobody cancelled it: the kernel's restart (its owner's exit) ended it, and it says so
    expect(bound_row.locator(".jsched-pill")).to_have_text("FAILED", timeout=PANE_TIMEOUT)
    assert process_ended(bound_pid), f"the owner-bound replica (pid {bound_pid}) outlived its kernel"
    bound_out = cell_output(lab, lab.append_and_run(f"%sched_status {bound_handle}"))
    expect(bound_out.locator(".jsched-failure")).to_have_text(
        re.compile(rf"sh/0 FAILED \(exit code -15 \(SIGTERM\)\): stopped when the kernel that launched it \(process"
                   rf" {old_pid}\) was restarted or shut down; launch with --detach to keep a job through a restart"),
        timeout=PANE_TIMEOUT,
    )
    lab.screenshot_themes(bound_out, "restart-bound-ended")
    expect(short_row.locator("button", has_text="Cancel")).to_be_disabled()
    expect(long_row.locator("button", has_text="Cancel")).to_be_enabled()
    expect(short_row).to_contain_text(short_name)
    expect(long_row).to_contain_text(long_name)
    lab.screenshot(listing, "restart-list")

    # (4) The finished app's logs are read again from disk.
    logs = cell_output(lab, lab.append_and_run(f"%sched_logs {short_handle}")).locator(".jsched-log")
    text = logs.locator("pre.jsched-log-text")
    expect(text).to_contain_text("restart-e2e: first line", timeout=PANE_TIMEOUT)
    expect(text).to_contain_text("restart-e2e: second line")
    expect(logs.locator(".jsched-log-header")).to_contain_text("ended", timeout=PANE_TIMEOUT)
    lab.screenshot(logs, "restart-logs")

    # (5) Re-attach to the app that outlived the kernel, and cancel it with its pane's button.
    status_out = cell_output(lab, lab.append_and_run(f"%sched_status {long_handle}"))
    status = status_out.locator(".jsched-status")
    expect(status.locator(".jsched-pill").first).to_have_text("RUNNING", timeout=PANE_TIMEOUT)
    assert replica_pid(status) == long_pid, "the re-attached pane shows another process than the one started"
    lab.screenshot_themes(status, "restart-status-running")
    status.locator("button", has_text="Cancel").click()
    confirm = status.locator("button", has_text="Confirm cancel?")
    expect(confirm).to_be_visible(timeout=10_000)
    confirm.click()
    expect(status.locator(".jsched-pill").first).to_have_text("CANCELLED", timeout=PANE_TIMEOUT)
    # The ended pane became its record in place: static, and nothing left to cancel.
    expect(status_out.locator(".jsched-record")).to_have_count(1, timeout=PANE_TIMEOUT)
    expect(status_out.locator("button", has_text="Cancel")).to_have_count(0)
    lab.screenshot_themes(status, "restart-status-cancelled")
    # The live list follows: the long app's row ends CANCELLED too, and the process is gone.
    expect(long_row.locator(".jsched-pill")).to_have_text("CANCELLED", timeout=PANE_TIMEOUT)
    expect(long_row.locator("button", has_text="Cancel")).to_be_disabled()
    assert process_ended(long_pid), f"pid {long_pid} still runs after the pane showed CANCELLED"

    assert lab.page_problems() == []
    assert lab_server.log_problems() == []
    assert not lab.page.locator("text=Error displaying widget").count()

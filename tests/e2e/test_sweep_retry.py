"""A sweep's failed run retried in JupyterLab (issue 35, point 6): the cell calling ``retry_failed()`` shows
one line, not a second live table, and the run's panes shown under the table follow the run from its failed
attempt to the new one (live while it runs), as its row does."""

from __future__ import annotations

import re

from tests.e2e.conftest import Lab

# run 1 fails until the file 'fixed' exists; its retry then holds until 'done' exists, so its new panes are live
CELLS = [
    "%load_ext jupyter_sched\nimport jupyter_sched, os, time",
    "def train(lr: float):\n"
    "    if lr > 1.5 and not os.path.exists('fixed'):\n"
    "        raise ValueError('lr too high')\n"
    "    while lr > 1.5 and not os.path.exists('done'):\n"
    "        time.sleep(0.1)\n"
    "    return {'loss': round(1 / lr, 3)}\n"
    "sw = jupyter_sched.sweep(train, {'lr': [0.5, 2.0]}, max_concurrent=2)\nsw",
]


def test_retry_failed_is_one_line_and_the_shown_panes_follow_the_run(lab: Lab) -> None:
    lab.open(lab.server.write_notebook("sweep_retry.ipynb", CELLS))
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    view = lab.cell(1).locator(".jsched-sweep").first
    view.wait_for(timeout=60_000)
    lab.page.wait_for_function(
        "(el) => el.innerText.includes('1 FAILED, 1 SUCCEEDED')", arg=view.element_handle(), timeout=60_000
    )
    # the failed run's own panes, under the table
    view.locator(".widget-dropdown", has_text="run").locator("select").select_option(index=1)
    view.locator("button", has_text="Show panes").click()
    failed_line = view.get_by_text(re.compile(r"^run 1: \S+ on local_cwd"))
    failed_line.wait_for(timeout=30_000)
    failed_app = failed_line.inner_text().split()[2]
    view.locator(".jsched-job").filter(has_text="FAILED").first.wait_for(timeout=30_000)
    # the cause fixed, the failed run retried: one line in the retry's cell, no second table
    (lab.server.root_dir / "fixed").touch()
    index = lab.append_and_run("sw.retry_failed()")
    lab.wait_executed(index)
    shown = lab.output_text(index).strip().splitlines()  # the output's prompt ("[3]:"), then what the cell shows
    assert len(shown) == 2 and re.fullmatch(r"\[\d+\]:", shown[0]), shown
    assert re.fullmatch(r"sweep \S+: retrying 1 run: #1 \(lr=2\.0\) \(the sweep's table shows them; .*\)", shown[1])
    assert lab.cell(index).locator(".jsched-sweep").count() == 0, "no second copy of the live table"
    # the panes follow the run to its new attempt, live while it runs, as its row does
    view.get_by_text(re.compile(r"^run 1 \(attempt 2\): \S+ on local_cwd")).wait_for(timeout=60_000)
    view.locator(".jsched-job").filter(has_text="RUNNING").first.wait_for(timeout=60_000)
    assert failed_app not in view.inner_text(), "the failed attempt's panes are gone"
    lab.screenshot_themes(view, "sweep-retried-run-panes")
    (lab.server.root_dir / "done").touch()
    # the ended sweep's display is replaced by its final one (the view re-rendered): look the cell up again
    lab.cell(1).locator(".jp-OutputArea").filter(has_text="2 SUCCEEDED").first.wait_for(timeout=60_000)
    assert lab.page_problems() == []

"""A sweep's table in JupyterLab: live rows, sorting by a result column, Cancel all (asked, then confirmed);
after the end the controls stay (sort again, open a run's panes) and the cell's saved record is the table as sorted."""

from __future__ import annotations

import re

from tests.e2e.conftest import JS_PANEL, Lab

CELLS = [
    "%load_ext jupyter_sched\nimport jupyter_sched, time",
    "def train(lr: float, slow: bool = False):\n"
    "    time.sleep(120 if slow else 0.2)\n"
    "    return {'loss': round(1 / lr, 3), 'lr_seen': lr}\n"
    "grid = [{'lr': 0.5}, {'lr': 2.0}, {'lr': 1.0}, {'lr': 4.0, 'slow': True}]\n"
    "sw = jupyter_sched.sweep(train, grid, max_concurrent=3)\nsw",
]


def test_a_sweep_table_sorts_cancels_and_ends_as_a_record(lab: Lab) -> None:
    lab.open(lab.server.write_notebook("sweep.ipynb", CELLS))
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    out = lab.cell(1).locator(".jp-OutputArea")
    view = out.locator(".jsched-sweep").first
    view.wait_for(timeout=60_000)
    table = view.locator("table")
    # three fast runs end, the slow one keeps running; sorted by loss, the run without one comes last
    table.filter(has_text="RUNNING").wait_for(timeout=60_000)
    # the table is re-rendered on each update: look it up inside the view's (lasting) element every time
    lab.page.wait_for_function(
        "(el) => (el.querySelector('table').innerText.match(/SUCCEEDED/g) || []).length === 3",
        arg=view.element_handle(), timeout=60_000,
    )  # fmt: skip
    view.locator(".widget-dropdown", has_text="sort by").locator("select").select_option(label="loss")
    lab.page.wait_for_function(
        """(el) => { const rows = [...el.querySelectorAll('table tbody tr')].map(r => r.cells[0].innerText);
                     return rows.join(',') === '1,2,0,3'; }""",
        arg=view.element_handle(), timeout=30_000,
    )  # fmt: skip
    view.locator(".widget-dropdown", has_text="run").locator("select").select_option(index=1)
    view.locator("button", has_text="Show panes").click()
    view.locator(".jsched-job").filter(has_text="SUCCEEDED").first.wait_for(timeout=30_000)  # run 1's own panes
    lab.screenshot(view, "sweep-live")
    # Cancel all asks first, as a job's Cancel does: the first click changes the button for 4 s, and nothing
    # is cancelled unless a second click comes in that time
    cancel_all = view.locator("button", has_text=re.compile(r"^\s*Cancel all\s*$"))  # not the ask's "…cancel all?"
    confirm = view.locator("button", has_text="Confirm cancel all?")
    cancel_all.click()
    confirm.wait_for(timeout=30_000)
    lab.screenshot(view.locator(".widget-hbox").first, "sweep-cancel-all-confirm")
    cancel_all.wait_for(timeout=30_000)  # not confirmed: the button asks no more
    assert "RUNNING" in view.locator("table").first.inner_text()  # and nothing was cancelled
    cancel_all.click()
    confirm.click()  # at once: the screenshot above may take longer than the ask lasts
    lab.page.wait_for_function(
        "(el) => el.innerText.includes('3 SUCCEEDED') && el.innerText.includes('1 CANCELLED')",
        arg=view.element_handle(), timeout=60_000,
    )  # fmt: skip
    # the ended sweep keeps its controls: sort descending, then open a run's panes
    assert view.locator("button", has_text="Cancel all").is_disabled()
    view.locator(".widget-checkbox", has_text="descending").locator("input").check()
    lab.page.wait_for_function(
        """(el) => { const table = el.querySelector('table');  // the sweep's; run 1's panes are below it
                     const rows = [...table.querySelectorAll('tbody tr')].map(r => r.cells[0].innerText);
                     return rows.join(',') === '0,2,1,3'; }""",
        arg=view.element_handle(), timeout=30_000,
    )  # fmt: skip
    view.locator(".widget-dropdown", has_text="run").locator("select").select_option(index=2)
    view.locator("button", has_text="Show panes").click()
    # run 2's own panes (its record: it ended), under a line naming it by id (JupyterLab half-links handles)
    view.get_by_text(re.compile(r"run 2: \S+ on local_cwd")).wait_for(timeout=30_000)
    view.locator(".jsched-record.jsched-job").filter(has_text="SUCCEEDED").first.wait_for(timeout=30_000)
    lab.screenshot(view, "sweep-ended")
    # what the notebook saves: the record beside the widget, final and sorted as shown
    saved = lab.page.wait_for_function(
        f"""() => {{
            const outs = {JS_PANEL}.content.widgets[1].model.outputs.toJSON();
            const text = outs.map(o => (o.data && o.data['text/plain']) || '').join('\\n');
            return text.includes('sorted by loss (descending)') ? text : null;
        }}""",
        timeout=30_000,
    ).json_value()
    assert "3 SUCCEEDED, 1 CANCELLED" in saved or "1 CANCELLED, 3 SUCCEEDED" in saved
    assert "as of" not in saved
    rows = [line.split()[0] for line in saved.splitlines() if line[:1].isdigit()]
    assert rows == ["0", "2", "1", "3"], saved
    assert lab.page_problems() == []

"""Sweep outputs outlive their kernel, as job outputs do (issue 35, point 2), in a real JupyterLab in Chromium.

A notebook with two sweeps: one that ended before the save (its output keeps the table's controls, a widget,
beside its final record) and one whose runs wait for a file the test creates (they outlive their kernel:
``outlive_owner``). Saved mid-run, the kernel shut down, the notebook reopened with a new kernel that never
knew either widget:

- neither output says "Error displaying widget: model not found";
- the ended sweep shows its saved final table;
- the running sweep shows its runs live from the Jupyter server (its state, each run's), and once they end,
  its final table, written into the notebook (a save keeps it, the widget dropped).

The same in Notebook 7. Screenshots (light and dark): artifacts/screenshots/outputs-sweep-*.png and
notebook7-outputs-sweep-*.png.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from jupyter_sched.specs import random_id
from tests.e2e.conftest import JS_PANEL, Lab, LabServer
from tests.e2e.test_notebook7 import nb7  # noqa: F401 - the Notebook 7 page fixture

SWEEP_MIME = "application/vnd.jupyter-sched.sweep+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TIMEOUT = 60_000  # ms: upper bounds for what must become visible on a shared machine, not timings


def cells(gate: Path, tag: str) -> List[str]:
    return [
        "%load_ext jupyter_sched\nimport jupyter_sched",
        "def quick(x):\n    return {'loss': x / 10}\n"
        f"done = jupyter_sched.sweep(quick, {{'x': [1, 2]}}, name='quick{tag}')\ndone.wait(timeout=120)\ndone",
        "def gated(x):\n    import os, time\n"
        f"    while not os.path.exists({str(gate)!r}):\n        time.sleep(0.1)\n"
        "    if x == 2:\n        raise ValueError('x=2 is bad')\n    return {'loss': x / 10}\n"
        f"held = jupyter_sched.sweep(gated, {{'x': [1, 2, 3]}}, max_concurrent=3, name='held{tag}',\n"
        "                            cfg={'outlive_owner': True})\nheld",
    ]


def output(lab: Lab, index: int) -> Any:
    return lab.cell(index).locator(".jp-Cell-outputArea")


def sweep_outputs(server: LabServer, notebook: str) -> Dict[str, Dict[str, Any]]:
    """The saved outputs that say which sweep they show, by the sweep's label."""
    found = {}
    for out in server.saved_outputs(notebook):
        info = out.get("data", {}).get(SWEEP_MIME)
        if info:
            found[info["label"]] = out
    return found


RUNS_RUNNING = "(el) => ((el.querySelector('table') || {}).innerText || '').match(/RUNNING/g)?.length === 3"
"""All three runs RUNNING in the live table. The table is read afresh from the sweep's view each time: the view
redraws it as a new element, so a handle to the table itself would go on reading the first one it drew."""


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Path]:
    """The file the held runs wait for; made at teardown too, so a failed test leaves no run waiting (the
    runs outlive their kernel on purpose)."""
    path = tmp_path / "GO"
    yield path
    path.touch()


def test_a_sweep_saved_mid_run_shows_its_runs_from_the_server_then_its_final_table(
    lab: Lab, lab_server: LabServer, gate: Path
) -> None:  # fmt: skip
    from playwright.sync_api import expect

    tag = random_id()[:5]
    notebook = lab_server.write_notebook(f"sweep-outlive-{tag}.ipynb", cells(gate, tag))
    lab.open(notebook)
    lab.run_all()
    lab.wait_all_done(timeout=120_000)
    lab.page.wait_for_function(RUNS_RUNNING, arg=output(lab, 2).locator(".jsched-sweep").first.element_handle(),
                               timeout=TIMEOUT)  # fmt: skip

    # save mid-run: each sweep output says which sweep it shows; the running one beside its widget
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    saved = sweep_outputs(lab_server, notebook)
    ended, held = saved[f"quick{tag}"], saved[f"held{tag}"]
    assert ended["data"][SWEEP_MIME]["final"] is True and ended["data"][SWEEP_MIME]["state"] == "SUCCEEDED"
    info = held["data"][SWEEP_MIME]
    assert (info["final"], info["state"], info["runs"]) == (False, "RUNNING", 3) and WIDGET_MIME in held["data"]
    name = info["sweep"]
    # the copy a colleague would send: a cell added, which no signature of this server vouches for
    data = json.loads((lab_server.root_dir / notebook).read_text())
    data["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": "from a colleague"})
    sent = f"sweep-sent-{tag}.ipynb"
    (lab_server.root_dir / sent).write_text(json.dumps(data))

    # the kernel is shut down: the open table says so and shows the sweep from the server
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).sessionContext.shutdown(); }}")
    view = output(lab, 2).locator(f'.jsl-sweep-view[data-sweep="{name}"]')
    expect(view.locator(".jsl-note")).to_contain_text("The kernel that drew this table was shut down",
                                                      timeout=TIMEOUT)  # fmt: skip

    # reopened with a new kernel that never knew either widget
    lab.open(notebook)
    view = output(lab, 2).locator(f'.jsl-sweep-view[data-sweep="{name}"]')
    expect(view.locator(".jsl-note")).to_contain_text("Live from the Jupyter server", timeout=TIMEOUT)
    expect(view.locator(".jsl-note")).to_contain_text("saved RUNNING")
    rows = view.locator("tbody tr")
    expect(rows).to_have_count(3, timeout=TIMEOUT)
    expect(rows.locator(".jsched-pill", has_text="RUNNING")).to_have_count(3, timeout=TIMEOUT)
    assert rows.first.inner_text().startswith("run 000")
    # the sweep that had ended: its saved final table (and nothing asked of a kernel)
    expect(output(lab, 1)).to_contain_text("SUCCEEDED", timeout=TIMEOUT)
    expect(output(lab, 1)).to_contain_text("loss")
    assert output(lab, 1).locator(".jsl-sweep-view").count() == 0
    assert "model not found" not in lab.page.inner_text("body")
    lab.screenshot_themes(output(lab, 2), "outputs-sweep-reopened-running")
    lab.screenshot_themes(output(lab, 1), "outputs-sweep-reopened-ended")

    # a run's row opens its job view
    rows.first.click()
    lab.page.locator(".jsl-job-panel .jsl-job-view").first.wait_for(timeout=TIMEOUT)
    lab.page.evaluate("""() => {  // closed again, the notebook current again
        const shell = window.jupyterapp.shell;
        const views = Array.from(shell.widgets('main')).filter(w => w.hasClass('jsl-job-panel'));
        views.forEach(w => w.close());
        const nb = Array.from(shell.widgets('main')).find(w => w.context && w.context.path.endsWith('.ipynb'));
        shell.activateById(nb.id);
    }""")
    lab.page.wait_for_function(f"() => !!({JS_PANEL}).content && !!({JS_PANEL}).context", timeout=TIMEOUT)

    gate.touch()
    # once every run has ended, the output becomes the sweep's final table, written by JupyterLab
    final = output(lab, 2).locator(".jsched-sweep-final")
    expect(final).to_contain_text("recorded by JupyterLab from the Jupyter server", timeout=TIMEOUT)
    expect(final.locator(".jsched-pill", has_text="FAILED").first).to_be_visible()
    expect(final).to_contain_text("2 succeeded · 1 failed")
    expect(final).to_contain_text("x=2 is bad")
    lab.screenshot_themes(output(lab, 2), "outputs-sweep-reopened-final")
    lab.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    after = sweep_outputs(lab_server, notebook)[f"held{tag}"]
    assert after["data"][SWEEP_MIME]["final"] is True and after["data"][SWEEP_MIME]["state"] == "FAILED"
    assert WIDGET_MIME not in after["data"]
    text = "".join(after["data"]["text/plain"])
    assert "run 002" in text and "recorded by JupyterLab" in text and "as saved:" in text, text
    assert "model not found" not in lab.page.inner_text("body")
    assert lab.page_problems() == []

    # untrusted, the copy's running sweep shows the table saved in the file and how to follow it live
    lab.open(sent)
    hint = output(lab, 3).locator(".jsl-untrusted-text")
    expect(hint).to_contain_text("This notebook is not trusted: below is the sweep as it was saved (RUNNING as of",
                                 timeout=TIMEOUT)  # fmt: skip
    expect(output(lab, 3).locator(".jsched-record.jsched-sweep")).to_contain_text("3 runs")
    assert output(lab, 3).locator(".jsl-sweep-view").count() == 0
    assert "model not found" not in lab.page.inner_text("body")
    lab_server.shutdown_kernels()


def test_notebook7_shows_a_reopened_sweep_from_the_server_then_its_final_table(
    nb7: Lab, notebook7_server: LabServer, gate: Path  # noqa: F811
) -> None:  # fmt: skip
    """The same renderer in Notebook 7: the running sweep from the server, then its final table, which says
    Jupyter Notebook wrote it."""
    from playwright.sync_api import expect

    tag = random_id()[:5]
    notebook = notebook7_server.write_notebook(f"nb7-sweep-outlive-{tag}.ipynb", cells(gate, tag))
    nb7.open(notebook)
    assert nb7.page.evaluate("() => window.jupyterapp.name") == "Jupyter Notebook"
    nb7.run_all()
    nb7.wait_all_done(timeout=120_000)
    nb7.page.wait_for_function(RUNS_RUNNING, arg=output(nb7, 2).locator(".jsched-sweep").first.element_handle(),
                               timeout=TIMEOUT)  # fmt: skip
    nb7.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    name = sweep_outputs(notebook7_server, notebook)[f"held{tag}"]["data"][SWEEP_MIME]["sweep"]
    nb7.page.evaluate(f"async () => {{ await ({JS_PANEL}).sessionContext.shutdown(); }}")

    nb7.open(notebook)
    view = output(nb7, 2).locator(f'.jsl-sweep-view[data-sweep="{name}"]')
    expect(view.locator(".jsl-note")).to_contain_text("Live from the Jupyter server", timeout=TIMEOUT)
    expect(view.locator("tbody tr .jsched-pill", has_text="RUNNING")).to_have_count(3, timeout=TIMEOUT)
    expect(output(nb7, 1)).to_contain_text("SUCCEEDED", timeout=TIMEOUT)
    assert "model not found" not in nb7.page.inner_text("body")
    nb7.screenshot_themes(output(nb7, 2), "notebook7-outputs-sweep-reopened-running")

    gate.touch()
    final = output(nb7, 2).locator(".jsched-sweep-final")
    expect(final).to_contain_text("recorded by Jupyter Notebook from the Jupyter server", timeout=TIMEOUT)
    expect(final).to_contain_text("2 succeeded · 1 failed")
    nb7.screenshot_themes(output(nb7, 2), "notebook7-outputs-sweep-reopened-final")
    nb7.page.evaluate(f"async () => {{ await ({JS_PANEL}).context.save(); }}")
    after = sweep_outputs(notebook7_server, notebook)[f"held{tag}"]
    assert after["data"][SWEEP_MIME]["final"] is True and WIDGET_MIME not in after["data"]
    assert "model not found" not in nb7.page.inner_text("body")
    assert nb7.page_problems() == []
    notebook7_server.shutdown_kernels()

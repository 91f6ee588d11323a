"""A notebook run headless (nbclient, no environment variable), saved without widget state, opened in
JupyterLab with no kernel: every job cell shows its final state and its logs, read from the saved
``text/html`` alone (no widget manager, no kernel). Screenshots: artifacts/screenshots/saved-*.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.e2e.conftest import JS_PANEL, Lab, LabServer
from tests.notebook.nbhelpers import RECORD_CELLS, run_headless

NO_KERNEL = "jsched-no-such-kernel"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_headless(RECORD_CELLS, tmp_path_factory.mktemp("saved"))


@pytest.fixture
def reopened(lab: Lab, lab_server: LabServer, saved: Path) -> Iterator[Lab]:
    """The saved notebook in JupyterLab, its kernelspec naming no installed kernel, "No Kernel" chosen."""
    data = json.loads(saved.read_text())
    data["metadata"]["kernelspec"] = {"name": NO_KERNEL, "display_name": "gone", "language": NO_KERNEL}
    data["metadata"].pop("language_info", None)
    target = lab_server.root_dir / "saved-headless.ipynb"
    target.write_text(json.dumps(data))
    page = lab.page
    page.goto(lab_server.url(f"lab/tree/{target.name}?reset&token={lab_server.token}"))
    try:
        _settle(page)
    except Exception:
        page.screenshot(path="/tmp/nbt/settle.png")
        raise
    yield lab
    target.unlink()


def _settle(page: Any) -> None:
    page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
    page.wait_for_function(
        f"() => !!{JS_PANEL} && !!{JS_PANEL}.content && {JS_PANEL}.content.widgets.length === {len(RECORD_CELLS)}",
        timeout=60_000,
    )
    page.wait_for_function(  # the session settles: a "select kernel" dialog, or no kernel
        f"() => !!document.querySelector('.jp-Dialog') || {JS_PANEL}.sessionContext.isReady",
        timeout=60_000,
    )
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        dialog.locator("button", has_text=re.compile("No Kernel|Cancel")).first.click()
        dialog.wait_for(state="detached")
    page.wait_for_function(
        f"() => !({JS_PANEL}.sessionContext.session && {JS_PANEL}.sessionContext.session.kernel)",
        timeout=60_000,
    )


def test_every_job_cell_shows_its_final_state_and_logs(reopened: Lab) -> None:
    lab = reopened
    assert lab.page.evaluate(f"() => !({JS_PANEL}.sessionContext.session)")  # no kernel at all
    expect = {
        1: ["waited", "SUCCEEDED", "hello-waited", "green", "step 3/3", "to-stderr"],
        2: ["later", "SUCCEEDED", "background-done"],
        5: ["broken", "FAILED", "python/0 FAILED (exit code 1): KeyError: 'y'"],
        6: ["hello-waited"],
        7: ["waited", "SUCCEEDED"],
        8: ["cost $A and $B \\(x\\)"],
        9: ["GREETING=$A and $B", "MATH=\\(x\\)"],
    }
    for index, needles in expect.items():
        text = lab.output_text(index)
        for needle in needles:
            assert needle in text, f"cell {index} does not show {needle!r}:\n{text}"
        assert "as of" not in text.split("\n", 1)[0]
    assert "step 1/3" not in lab.output_text(1)
    green = lab.cell(1).locator("span", has_text="green").first
    assert green.evaluate("e => getComputedStyle(e).color") == "rgb(0, 162, 80)"
    for index in (8, 9):
        assert lab.cell(index).locator("mjx-container, .MathJax").count() == 0  # nothing typeset
    assert not lab.page_problems()
    for index, name in ((1, "saved-waited"), (2, "saved-background"), (5, "saved-failed"), (8, "saved-dollars"),
                        (9, "saved-dryrun-dollars")):
        lab.screenshot_themes(lab.cell(index), name)


def test_maths_looking_text_stays_literal_in_a_live_kernel(lab: Lab, lab_server: LabServer) -> None:
    """Trusted outputs of a running kernel are typeset too: the env block and the live panes stay text."""
    name = lab_server.write_notebook(
        "dollars-live.ipynb", ["%load_ext jupyter_sched", RECORD_CELLS[9], RECORD_CELLS[8]]
    )
    lab.open(name)
    lab.command("notebook:run-all-cells")
    lab.wait_all_done()
    lab.page.wait_for_timeout(1500)  # MathJax typesets asynchronously after the output is attached
    dryrun, job = lab.output_text(1), lab.output_text(2)
    assert "GREETING=$A and $B" in dryrun and "MATH=\\(x\\)" in dryrun, dryrun
    assert "cost $A and $B \\(x\\)" in job, job
    for index in (1, 2):
        assert lab.cell(index).locator("mjx-container, .MathJax").count() == 0
    lab.screenshot(lab.cell(1), "live-dryrun-dollars")
    assert not lab.page_problems()
    lab_server.shutdown_kernels()

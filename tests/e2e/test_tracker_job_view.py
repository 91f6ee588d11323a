"""TorchX's tracker API in JupyterLab, in a real browser: a ``local_cwd`` job written for
``app_run_from_env()`` shows its metadata (``key = value``) and artifacts (``name → path``) in its job view,
as text (markup in a value stays text), masked, following the job while it runs. Screenshots (light and
dark): artifacts/screenshots/tracker-job-view-*.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Lab, LabServer
from tests.e2e.test_jobs_sidebar import launch, row, wait_state
from tests.e2e.test_metrics_sidebar import jobs, wait_text  # noqa: F401 - the fixture

pytest.importorskip("torchx", reason="needs TorchX (the [torchx] extra)")

SECRET = "sk-abcdef0123456789"
TRACKED = f"""\
import time
from pathlib import Path

from torchx.tracker import app_run_from_env

run = app_run_from_env()
run.add_metadata(lr=0.1, optimizer="adam", epochs=3)
while not Path("GO").exists():
    time.sleep(0.05)
run.add_metadata(lr=0.01, WANDB_API_KEY={SECRET!r}, note="<b>bold</b>")
run.add_artifact("model", "/out/model.pt", {{"acc": 0.9}})
"""


def test_the_job_view_shows_what_the_job_told_torchx_tracker(jobs: Lab, lab_server: LabServer,  # noqa: F811
                                                             tmp_path: Path) -> None:  # fmt: skip
    page = jobs.page
    (tmp_path / "tracked.py").write_text(TRACKED)
    handle = launch(lab_server, tmp_path, "tracked", f"{sys.executable} tracked.py")
    wait_state(page, handle, "RUNNING")
    row(page, handle).click()
    view = page.locator(f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"]')
    block_sel = f'.jsl-job-panel .jsl-job-view[data-handle="{handle}"] .jsl-tracker'
    wait_text(page, block_sel, "lr = 0.1")  # while it runs
    block = view.locator(".jsl-tracker")
    assert block.locator(".jsl-tracker-title").inner_text() == "tracker"
    (tmp_path / "GO").touch()
    wait_state(page, handle, "SUCCEEDED")
    wait_text(page, block_sel, "model → /out/model.pt")
    lines = block.locator(".jsl-tracker-line").evaluate_all("ls => ls.map(l => l.textContent)")
    assert lines == ["lr = 0.01", "optimizer = adam", "epochs = 3", "WANDB_API_KEY = ********",
                     "note = <b>bold</b>", "model → /out/model.pt"], lines  # fmt: skip
    assert block.locator("b").count() == 0  # the job's text is text
    assert SECRET not in view.inner_text()
    page.add_style_tag(content=".Toastify { display: none !important; }")  # the end's notification
    jobs.screenshot_themes(block, "tracker-job-view")
    assert not jobs.page_problems()

"""The job view's tracker block, driven by real local_cwd jobs written for TorchX's tracker API
(``app_run_from_env()``): the live pane shows the metadata as ``key = value`` and the artifacts as
``name → path`` once the job adds them (refreshed by the Metrics section's ticker), escaped and masked, and
the cell's record keeps the block in HTML and text; a saved notebook (a real kernel run headless, as
``nbconvert --execute``) keeps it too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbhelpers import py, run_headless, wait_for  # type: ignore[import-not-found]

from jupyter_sched.frontend.job import Job
from jupyter_sched.notebook.panes.job_view import mimebundle

pytest.importorskip("torchx", reason="needs TorchX (the [torchx] extra)")
pytestmark = pytest.mark.torchx

SECRET = "sk-abcdef0123456789"


def test_the_pane_shows_the_trackers_block_live_and_the_record_keeps_it(ip: Any, widgets: Any,
                                                                        tmp_path: Path) -> None:  # fmt: skip
    go, stop = tmp_path / "go", tmp_path / "stop"
    code = (
        "import os, time\nfrom torchx.tracker import app_run_from_env\nrun = app_run_from_env()\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.05)\n"
        f"run.add_metadata(lr=0.1, optimizer='adam')\nrun.add_metadata(lr=0.01, WANDB_API_KEY={SECRET!r}, "
        "note='<img src=x onerror=alert(1)>')\nrun.add_artifact('model', '/out/model.pt', {'acc': 0.9})\n"
        f"while not os.path.exists({str(stop)!r}): time.sleep(0.05)\n"
    )
    job = ip.run_line_magic("sched_run", py(code))
    assert isinstance(job, Job)
    mimebundle(job)
    pane = job.view().metrics
    wait_for(lambda: job.fetch_status() is not None and job.fetch_status().state.name == "RUNNING", 120, "running")
    assert "jsched-tracker" not in pane.charts.value and pane.widget.layout.display == "none"  # nothing yet
    go.write_text("")
    wait_for(lambda: "jsched-tracker" in pane.charts.value and "/out/model.pt" in pane.charts.value, 120,
             "the tracker block in the live pane")  # fmt: skip
    html = pane.charts.value
    assert '<span style="opacity:0.8">lr</span> = <code>0.01</code>' in html and "0.1<" not in html
    assert '<span style="opacity:0.8">model</span> &rarr; <code>/out/model.pt</code>' in html
    assert "optimizer</span> = <code>adam</code>" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html  # the job's text, escaped
    assert SECRET not in html and "WANDB_API_KEY</span> = <code>********</code>" in html
    assert pane.widget.layout.display != "none" and pane.ticker is not None  # the section's ticker, no other
    stop.write_text("")
    status = job.wait(timeout=120)
    assert status is not None and status.is_terminal()
    bundle = job.view().record_bundle()
    assert '<span style="opacity:0.8">lr</span> = <code>0.01</code>' in bundle["text/html"]
    assert "<img src=x" not in bundle["text/html"] and SECRET not in bundle["text/html"]
    lines = bundle["text/plain"].splitlines()
    block = lines[lines.index("tracker:"):]
    assert block[:6] == ["tracker:", "  lr = 0.01", "  optimizer = adam", "  WANDB_API_KEY = ********",
                         "  note = <img src=x onerror=alert(1)>", "  model → /out/model.pt"]  # fmt: skip


def test_a_saved_notebook_keeps_the_tracker_block(tmp_path: Path) -> None:
    tracked = (
        "from torchx.tracker import app_run_from_env; run = app_run_from_env(); "
        "run.add_metadata(lr=0.01, epochs=3); run.add_artifact('model', '/out/model.pt')"
    )
    cells = [
        "%load_ext jupyter_sched\nimport jupyter_sched",
        f"job = %sched_run --wait {py(tracked)}\njob",
    ]
    saved = nbformat.read(str(run_headless(cells, tmp_path)), as_version=4)
    outputs = saved.cells[1].outputs
    html = "".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    plain = "".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert '<span style="opacity:0.8">lr</span> = <code>0.01</code>' in html, outputs
    assert "&rarr; <code>/out/model.pt</code>" in html
    assert "tracker:\n  lr = 0.01\n  epochs = 3\n  model → /out/model.pt" in plain

"""A notebook run headless keeps what the panes showed: real kernels through nbclient (what ``nbconvert
--execute`` and papermill use), no environment variable, saved without widget state, read back as saved,
through ``nbconvert --to html`` and ``--to markdown``.

Each job cell's stored output must hold the final state and the logs in ``text/html`` and
``text/plain`` and no widget view (which a reader without the kernel's widget state cannot show); a
background job that ends two cells later has its first cell's output updated in place.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
KERNEL_NAME = "jsched-record-python3"

CELLS = [
    "%load_ext jupyter_sched",
    # 1: a job that ends while its cell waits
    "%sched_run --wait utils.sh --name waited 'echo hello-waited; printf \"\\033[32mgreen\\033[0m\\n\";"
    " for i in 1 2 3; do printf \"\\rstep $i/3\"; sleep 0.2; done; echo; echo to-stderr >&2'",
    # 2: a background job that ends two cells later
    "%sched_run utils.sh --name later 'sleep 3; echo background-done'",
    "x = 1",
    "import time; time.sleep(5)",
    # 5: a failing job: the reason is in the record
    "%sched_run --wait utils.python --name broken -c \"import sys; print('before'); d = {}; d['y']\"",
    # 6: magics on ended apps: static output
    "%sched_logs waited",
    "%sched_status waited",
    # 8: maths-looking text stays literal text
    "%sched_run --wait utils.python --name dollars -c \"d, b = chr(36), chr(92); print(f'cost {d}A and {d}B {b}(x{b})')\"",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    from nbclient import NotebookClient

    base = tmp_path_factory.mktemp("record")
    spec_dir = base / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "jupyter_sched record test", "language": "python"}  # fmt: skip
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    env = {
        "JUPYTER_PATH": str(base / "jupyter"),
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTER_SCHED_LOG_DIR": str(base / "state"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    saved = {k: os.environ.get(k) for k in [*env, "JUPYTER_SCHED_NONINTERACTIVE"]}
    os.environ.update(env)
    os.environ.pop("JUPYTER_SCHED_NONINTERACTIVE", None)  # headless needs no variable
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "t", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    try:
        NotebookClient(nb, timeout=180, kernel_name=KERNEL_NAME, allow_errors=True, store_widget_state=False,
                       resources={"metadata": {"path": str(base)}}).execute()  # fmt: skip
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    path = base / "saved.ipynb"
    nbformat.write(nb, str(path))
    return {"nb": nbformat.read(str(path), as_version=4), "path": path}


def displays(nb: Any, index: int) -> List[Dict[str, Any]]:
    return [o for o in nb.cells[index].outputs if o.output_type in ("display_data", "execute_result")]


def record_of(nb: Any, index: int) -> Dict[str, Any]:
    """The one display of a job cell that holds a record."""
    found = [o for o in displays(nb, index) if "jsched-record" in o.data.get("text/html", "")]
    assert found, f"cell {index} has no record: {nb.cells[index].outputs}"
    return found[0].data


def test_saved_notebook_has_no_widget_views_left(executed: Dict[str, Any]) -> None:
    nb = executed["nb"]
    for i in range(len(nb.cells)):
        for out in displays(nb, i):
            assert WIDGET_VIEW not in out.data, f"cell {i} still needs a widget manager: {out.data.keys()}"
    assert "widgets" not in nb.metadata


def test_waited_job_keeps_its_final_state_and_logs(executed: Dict[str, Any]) -> None:
    data = record_of(executed["nb"], 1)
    text, html = data["text/plain"], data["text/html"]
    assert text.startswith("waited SUCCEEDED: local_cwd://") and "as of" not in text
    assert "hello-waited" in text and "step 3/3" in text and "step 1/3" not in text  # \r resolved
    assert "sh/0 ! to-stderr" in text or "to-stderr" in text
    assert "SUCCEEDED" in html and "hello-waited" in html and "step 3/3" in html
    assert '<span style="color:#00a250">green</span>' in html  # colours as inline styles
    assert "<script" not in html and "class=\"jp-" not in html


def test_background_job_ending_two_cells_later_updates_its_first_cell(executed: Dict[str, Any]) -> None:
    data = record_of(executed["nb"], 2)
    assert data["text/plain"].startswith("later SUCCEEDED: ")
    assert "background-done" in data["text/plain"] and "background-done" in data["text/html"]


def test_failed_replica_says_why(executed: Dict[str, Any]) -> None:
    data = record_of(executed["nb"], 5)
    text, html = data["text/plain"], data["text/html"]
    assert text.startswith("broken FAILED: ")
    assert "python/0 FAILED (exit code 1): KeyError: 'y'" in text
    assert "python/0 FAILED:" in html and "KeyError: &#x27;y&#x27;" in html and "exit code 1" in html


def test_magics_on_ended_apps_are_static(executed: Dict[str, Any]) -> None:
    nb = executed["nb"]
    logs = record_of(nb, 6)
    assert "hello-waited" in logs["text/plain"] and "hello-waited" in logs["text/html"]
    status = record_of(nb, 7)
    assert "waited SUCCEEDED" in status["text/plain"] and "SUCCEEDED" in status["text/html"]


def test_dollars_are_not_typeset(executed: Dict[str, Any]) -> None:
    html = record_of(executed["nb"], 8)["text/html"]
    assert "tex2jax_ignore" in html.split(">", 1)[0]  # the record's root: MathJax skips it
    plain = re.sub(r"<[^>]+>", "", html)
    assert "cost $A and $B \\(x\\)" in plain.replace("&#x27;", "'")


@pytest.mark.parametrize("to", ["html", "markdown"])
def test_nbconvert_shows_the_records(executed: Dict[str, Any], to: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", to, "--output-dir", str(tmp_path), str(executed["path"])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = next(tmp_path.glob("saved.*")).read_text()
    for needle in ("waited SUCCEEDED", "hello-waited", "step 3/3", "background-done", "KeyError"):
        assert needle in re.sub(r"<[^>]+>", "", out).replace("&#x27;", "'").replace("SUCCEEDED</span>", "SUCCEEDED"), needle
    assert "Error displaying widget" not in out

"""A notebook run headless keeps what the panes showed: real kernels through nbclient (what ``nbconvert
--execute`` and papermill use), no environment variable, saved without widget state, read back as saved,
through ``nbconvert --to html`` and ``--to markdown``.

Each job cell's stored output must hold the final state and the logs in ``text/html`` and
``text/plain`` and no widget view (which a reader without the kernel's widget state cannot show); a
background job that ends two cells later has its first cell's output updated in place.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from nbhelpers import RECORD_CELLS as CELLS
from nbhelpers import run_headless

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"



@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    base = tmp_path_factory.mktemp("record")
    path = run_headless(CELLS, base)
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
    assert "python/0 FAILED (exit code 1): KeyError: &#x27;y&#x27;" in html
    # the traceback once: in the log tail, not again in the failure block above it (issue 26)
    assert html.count("Traceback (most recent call last)") == 1
    assert text.count("Traceback (most recent call last)") == 1


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
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", to, "--output-dir", str(tmp_path),
         str(executed["path"])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = next(tmp_path.glob("saved.*")).read_text()
    for needle in ("waited SUCCEEDED", "hello-waited", "step 3/3", "background-done", "KeyError"):
        text = re.sub(r"<[^>]+>", "", out).replace("&#x27;", "'").replace("SUCCEEDED</span>", "SUCCEEDED")
        assert needle in text, needle
    assert "Error displaying widget" not in out

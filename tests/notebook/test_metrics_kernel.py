"""``%sched_metrics`` in a real kernel (nbclient, as ``nbconvert --execute`` runs a notebook): a notebook
function logs with ``jupyter_sched.track`` as a job on local_cwd, and the magic shows its summary as an HTML
table with a text twin, the same numbers ``jupyter-sched metrics`` prints."""

from __future__ import annotations

import re
from typing import Any, Dict, List

import nbformat
import pytest
from nbhelpers import run_headless  # type: ignore[import-not-found]

CELLS = [
    "%load_ext jupyter_sched\nimport jupyter_sched",
    # 1: a notebook function that logs 50 steps of two keys, waited for
    "def train(steps):\n"
    "    from jupyter_sched import track\n"
    "    track.define_metric('loss', goal='min')\n"
    "    for i in range(steps):\n"
    "        track.log({'loss': 1.0 / (i + 1), 'acc': i / steps})\n"
    "    return steps\n"
    "job = jupyter_sched.submit(train, 50)\n"
    "print('RESULT', job.result(timeout=180))",
    # 2: the table
    "%sched_metrics job",
    # 3: one key's records as CSV
    "%sched_metrics job --key loss --format csv",
    # 4: a key no metric can have
    "%sched_metrics job --key 'bad key'",
    # 5: a job that logged nothing
    "def quiet():\n    return 1\nq = jupyter_sched.submit(quiet)\nq.result(timeout=180)\n%sched_metrics q",
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return nbformat.read(str(run_headless(CELLS, tmp_path_factory.mktemp("metrics_kernel"))), as_version=4)


def _data(cell: Any, mime: str) -> List[str]:
    outs: List[Dict[str, Any]] = cell.get("outputs", [])
    return [str(o["data"][mime]) for o in outs if mime in o.get("data", {})]


def _text(cell: Any) -> str:
    outs: List[Dict[str, Any]] = cell.get("outputs", [])
    return "".join(o.get("text", "") + o.get("evalue", "") for o in outs)


def test_the_magic_shows_the_summary_as_html_with_a_text_twin(saved: Any) -> None:
    assert "RESULT 50" in _text(saved.cells[1])
    html, plain = _data(saved.cells[2], "text/html"), _data(saved.cells[2], "text/plain")
    assert len(html) == 1 and len(plain) == 1, saved.cells[2].outputs
    cells = re.findall(r"<t[dh](?: [^>]*)?>(.*?)</t[dh]>", html[0])
    assert cells[:9] == ["ROLE", "REPLICA", "KEY", "LAST", "MIN", "MAX", "COUNT", "STEP", "GOAL"]
    rows = [cells[i : i + 9] for i in range(9, len(cells), 9)]
    assert ["train", "0", "loss", "0.02", "0.02", "1", "50", "49", "min"] in rows
    assert ["train", "0", "acc", "0.98", "0", "0.98", "50", "49", "-"] in rows
    lines = plain[0].splitlines()
    assert lines[0].startswith("metrics of train-") and lines[0].endswith(" on local_cwd")
    assert [line.split() for line in lines[2:]] == sorted(rows), "the text twin has the same rows"


def test_csv_prints_the_records_and_bad_input_names_the_key(saved: Any) -> None:
    lines = _text(saved.cells[3]).splitlines()
    assert lines[0] == "step,t,key,value,role,replica" and len(lines) == 51
    assert lines[-1].startswith("49,") and lines[-1].endswith(",loss,0.02,train,0")
    error = _text(saved.cells[4])
    assert "metric 'bad key' cannot exist" in error and "train/loss" in error


def test_a_job_without_metrics_says_so(saved: Any) -> None:
    plain = _data(saved.cells[5], "text/plain")
    assert plain and "no metrics (nothing was logged with jupyter_sched.track)" in plain[-1]

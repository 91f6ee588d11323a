"""A secret in a failed job's error file is nowhere in the saved notebook (issue 31 point 3, issue 33 point 4).

Real kernels through nbclient (as ``nbconvert --execute`` and papermill run a notebook): each job copies an
error file the test wrote (so the secret is in no cell's source and no argument) into
``TORCHELASTIC_ERROR_FILE`` and fails. The record its cell keeps (the failure reason, the status table), the
``JobFailed`` error, ``%sched_status``, ``%sched_describe`` and an ``AppStatus`` shown as a cell's value must
show the error masked, and the saved ``.ipynb`` must not hold the secret anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nbhelpers import run_headless

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

KEY = "Zq7S3cretQx9"
ERRORS = {
    "kv": json.dumps({"message": {"message": f"RuntimeError: WANDB_API_KEY={KEY} was refused", "errorCode": 3}}),
    "json_key": json.dumps({"WANDB_API_KEY": KEY, "message": "login failed"}),
    "dict_repr": json.dumps({"message": f"login failed with {{'WANDB_API_KEY': '{KEY}'}}"}),
    "list_value": json.dumps({"api_keys": [KEY], "message": "login failed"}, indent=2),
}


def test_a_secret_in_an_error_file_is_not_in_the_saved_notebook(tmp_path: Path) -> None:
    cells = ["%load_ext jupyter_sched"]
    for name, content in ERRORS.items():
        (tmp_path / f"{name}.json").write_text(content)
        job = f"leak_{name}"
        cells += [
            f"%sched_run --wait utils.sh --name {job} 'cp {name}.json \"$TORCHELASTIC_ERROR_FILE\"; exit 3'",
            f"%sched_status {job}",
            f"%sched_describe {job}",
            f"_job = %sched_job {job}\n_job.status",
        ]
    path = run_headless(cells, tmp_path)
    saved = path.read_text()
    nb = nbformat.read(str(path), as_version=4)
    failed = [o for c in nb.cells for o in c.outputs if o.output_type == "error"]
    assert len(failed) == len(ERRORS), [o.get("evalue") for o in failed]  # each --wait raised JobFailed
    assert [o.evalue.split(": ", 2)[-1].split(" [")[0] for o in failed] == [
        "RuntimeError: WANDB_API_KEY=******** was refused", "login failed",
        "login failed with {'WANDB_API_KEY': '********'}", "login failed",
    ]  # fmt: skip
    assert KEY not in saved
    assert saved.count("********") >= 3 * len(ERRORS)  # the errors were shown, masked, not dropped

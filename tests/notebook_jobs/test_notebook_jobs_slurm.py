"""Notebooks run as jobs on the real Slurm cluster: the snapshot, the output notebook and the progress
record go through the shared job directory, and the kernel runs on the node (this single-host cluster's
nodes are processes here, so /proc shows whether a kernel is left)."""

from __future__ import annotations

import json
import os

import pytest

import jupyter_sched
from jupyter_sched.functions import FunctionError
from jupyter_sched.specs import AppState
from tests.notebook_jobs.test_notebook_jobs import kernels_of, outputs_text, read, until, write


def test_parameters_in_recorded_values_out_and_a_failing_cell_named(slurm_cluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(
        str(tmp_path / "node.ipynb"),
        "import jupyter_sched, os\n"
        "jupyter_sched.record('on', {'lr': lr, 'slurm': bool(os.environ.get('SLURM_JOB_ID'))})",
        "assert epochs < 5, 'too many epochs'",
    )
    job = jupyter_sched.submit(jupyter_sched.Notebook(path), lr=0.5, scheduler="slurm")
    assert job.job_dir.startswith(slurm_cluster.job_root)
    assert job.result(timeout=300) == {"on": {"lr": 0.5, "slurm": True}}
    assert read(job.output_path)["metadata"]["papermill"]["parameters"] == {"lr": 0.5}

    failing = jupyter_sched.submit(jupyter_sched.Notebook(path), epochs=9, scheduler="slurm")
    with pytest.raises(FunctionError) as info:
        failing.result(timeout=300)
    assert info.value.message == "cell 5 (In [4]) raised AssertionError: too many epochs"
    assert read(failing.output_path)["cells"][4]["metadata"]["papermill"]["status"] == "failed"


def test_cancel_on_slurm_stops_the_kernel_and_keeps_the_partial_output(slurm_cluster, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(
        str(tmp_path / "slow.ipynb"),
        "import time\nfor i in range(900):\n    print('tick', i, flush=True)\n    time.sleep(0.2)",
    )
    job = jupyter_sched.submit(jupyter_sched.Notebook(path), scheduler="slurm")
    until(lambda: "tick 3" in outputs_text(job.output_path, 3), "output mid-cell", 300)
    kernels = until(lambda: kernels_of(job.job_dir), "the job's kernel is seen")
    job.cancel()
    assert job.wait(timeout=120).state == AppState.CANCELLED
    until(lambda: not kernels_of(job.job_dir) and not any(os.path.exists(f"/proc/{p}") for p in kernels),
          "no kernel left", deadline=60)  # fmt: skip
    assert "tick 3" in json.dumps(read(job.output_path)["cells"][3]["outputs"])

"""Notebooks run as jobs on local_docker, for real: the kernel starts inside a container of
jupyter-sched/python:local (which scripts/setup/images.sh gives nbclient, ipykernel and jupyter_sched's
requirements, and labels), importing the host's jupyter_sched, which the job mounts read-only. An image
without them is refused at the dry run, naming what it lacks and the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import jupyter_sched
from jupyter_sched.functions import IncompatibleImageError
from jupyter_sched.functions.calls.images import image_versions, notebook_modules_missing

IMAGE = "jupyter-sched/python:local"
pytestmark = pytest.mark.usefixtures("docker_engine")
PARAMS = "lr = 0.1  # learning rate\ntag = 'a'\n"


def write(folder: Path) -> str:
    cells = [
        new_code_cell(PARAMS, metadata={"tags": ["parameters"]}),
        new_code_cell(
            "import os, platform, jupyter_sched\n"
            "jupyter_sched.record('where', {'python': platform.python_version(),"
            " 'container': os.path.exists('/.dockerenv'), 'package': os.path.dirname(jupyter_sched.__file__)})\n"
            "jupyter_sched.record('score', lr * 2)\nprint('ran with', lr, tag)"
        ),
    ]
    path = folder / "train.ipynb"
    nbformat.write(new_notebook(cells=cells), str(path))
    return str(path)


def test_the_test_image_is_labelled_as_having_the_notebook_packages() -> None:
    assert notebook_modules_missing(IMAGE) == [], "scripts/setup/images.sh adds them and sets jupyter-sched.notebooks"


def test_a_notebook_runs_in_a_container_with_its_parameters_and_records(tmp_path: Path) -> None:
    path = write(tmp_path)
    notebook = jupyter_sched.Notebook(path)
    job = jupyter_sched.submit(notebook, lr=0.5, tag="docker", scheduler="local_docker", image=IMAGE)
    got = job.result(timeout=240)
    assert got["score"] == 1.0
    versions = image_versions(IMAGE)
    assert versions is not None
    package = "/opt/jupyter_sched_host/jupyter_sched"  # the host's package, mounted: not a copy in the image
    assert got["where"] == {"python": versions[0], "container": True, "package": package}
    executed = nbformat.read(str(job.output_path), as_version=4)
    assert executed.cells[1].source == "# Parameters\nlr = 0.5\ntag = 'docker'\n"
    assert "ran with 0.5 docker" in json.dumps(executed.cells[2].outputs)
    assert job.notebook_progress()["state"] == "completed"


def test_the_command_line_runs_a_notebook_on_local_docker(tmp_path: Path) -> None:
    path = write(tmp_path)
    env = {**os.environ, "JUPYTER_SCHED_LOG_DIR": str(tmp_path / "state")}
    script = str(Path(sys.executable).parent / "jupyter-sched")
    proc = subprocess.run(
        [script, "notebook", "-s", "local_docker", "--log", path, "-p", "lr", "3", "--image", IMAGE],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("local_docker://default/train-"), proc.stdout
    assert "ran with 3 a" in proc.stderr, proc.stderr


def test_an_image_without_nbclient_is_refused_at_the_dry_run_naming_the_fix(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tag = built(
        f'FROM {IMAGE}\nLABEL jupyter-sched.notebooks=""\n'
        "RUN rm -rf /usr/local/lib/python3*/dist-packages/nbclient /usr/local/lib/python3*/dist-packages/ipykernel\n"
    )
    path = write(tmp_path)
    with pytest.raises(IncompatibleImageError) as info:
        jupyter_sched.submit(jupyter_sched.Notebook(path), scheduler="local_docker", image=tag)
    message = str(info.value)
    assert "lacks nbclient, ipykernel" in message and "jupyter-sched/python:local" in message, message
    assert "pip install 'jupyter_sched[notebooks]'" in message
    # the command line's dry run says the same, as a usage error, and launches nothing
    env = {**os.environ, "JUPYTER_SCHED_LOG_DIR": str(tmp_path / "state")}
    script = str(Path(sys.executable).parent / "jupyter-sched")
    proc = subprocess.run([script, "notebook", "-s", "local_docker", "--dryrun", path, "--image", tag],
                          capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 2 and "lacks nbclient, ipykernel" in proc.stderr, proc.stderr
    probes = subprocess.run(["docker", "ps", "-aq", "--filter", "label=jupyter-sched.probe"], capture_output=True,
                            text=True)  # fmt: skip
    assert probes.stdout.strip() == "", "the probe container was removed"

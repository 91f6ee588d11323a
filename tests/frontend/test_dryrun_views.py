"""Each built-in backend describes its request through ``dryrun_view()``, and the notebook's dry run shows
what the command line's does: the Slurm batch script included, each block with a copy button, secrets
masked, and maths-looking text kept inside the classes MathJax skips."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.components import materialize
from jupyter_sched.notebook.displays.dryrun_repr import dryrun_html, dryrun_text
from jupyter_sched.runner import Runner

ARGS = ["--num_replicas", "2", "--env", "A=$x$ and $y$,HF_TOKEN=abc123", "echo \\(hi\\)"]


def _info(runner: Runner, scheduler: str) -> Any:
    return runner.dryrun(materialize("utils.sh", ARGS), scheduler, {})


def test_local_view_is_bound_to_its_owner_and_runs_here(runner: Runner) -> None:
    view = _info(runner, "local_cwd").view()
    assert view.bound_to_owner and [p.label for p in view.replicas] == ["sh/0", "sh/1"]
    plan = view.replicas[0]
    assert plan.on_this_host and plan.image is None and plan.argv == ["sh", "-c", "echo \\(hi\\)"]
    assert plan.env["HF_TOKEN"] == "abc123" and any(x.endswith("stdout.log") for x in plan.logs)
    outliving = runner.dryrun(materialize("utils.sh", ARGS), "local_cwd", {"outlive_owner": True}).view()
    assert not outliving.bound_to_owner


def test_docker_view_has_the_image_and_the_docker_run_line(runner: Runner, docker_engine: None) -> None:
    view = _info(runner, "local_docker").view()
    plan = view.replicas[1]
    assert not view.bound_to_owner and not plan.on_this_host and plan.image
    assert plan.launch is not None and plan.launch[0] == "docker run" and plan.name in plan.launch[1]
    assert plan.limits["memory"] == "1024m"
    python = runner.dryrun(materialize("utils.python", ["-c", "print(1)"]), "local_docker", {}).view()
    assert python.replicas[0].argv[0] == "python3"  # the image's interpreter, not this one


def test_slurm_notebook_dry_run_shows_the_batch_script_with_copy_buttons(runner: Runner, slurm_cluster: Any) -> None:
    info = _info(runner, "slurm")
    view = info.view()
    assert [t for t, _ in view.sections] == ["batch script"] and view.sections[0][1] == info.request.script
    assert dict(view.notes)["submit"].startswith("sbatch --parsable")
    html, text = dryrun_html(info), dryrun_text(info)
    assert "abc123" not in html and "abc123" not in text
    assert "<b>batch script</b>" in html and "#SBATCH" in html and "  batch script:\n    #!/bin/bash" in text
    # argv and env of each replica, and the script: each a <pre> with a copy button before it
    assert html.count('onclick="navigator.clipboard.writeText(this.nextElementSibling.textContent)') == 5
    assert 'class="jsched-dryrun tex2jax_ignore mathjax_ignore"' in html


@pytest.mark.parametrize("scheduler", ["local_cwd", "local_dir"])
def test_components_read_the_view_to_use_this_interpreter(runner: Runner, scheduler: str, tmp_path: Any) -> None:
    """``utils.python`` runs ``python3`` in an image, and this interpreter where the view says a replica runs
    on this machine."""
    import sys

    args = ["--image", str(tmp_path), "-c", "print(1)"] if scheduler == "local_dir" else ["-c", "print(1)"]
    info = runner.dryrun(materialize("utils.python", args), scheduler, {})
    assert info.view().replicas[0].argv[0] == sys.executable

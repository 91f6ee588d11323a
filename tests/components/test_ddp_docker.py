"""dist.ddp (torchrun) run for real on local_docker: two containers of jupyter-sched/torch:local meet at the
c10d rendezvous on rank 0's container across the docker network, and do a gloo all_reduce."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from jupyter_sched.specs import AppState, random_id

TORCH_IMAGE = "jupyter-sched/torch:local"  # built by scripts/setup/images.sh from the venv's torch

ALL_REDUCE = """
import socket, sys, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum={t.item()} host={socket.gethostname()} argv={sys.argv[1:]}",
      flush=True)
dist.destroy_process_group()
"""
RESULT = re.compile(r"^\[default0\]:rank (\d)/2 sum=3\.0 host=(\S+) argv=\['x', '--y'\]$", re.M)


@pytest.fixture
def docker_runner(docker_session_runner: Any) -> Iterator[Any]:
    how = "`bash scripts/setup/torch.sh`, then `bash scripts/setup/images.sh torch`"
    with docker_session_runner(TORCH_IMAGE, how) as runner:
        yield runner


@pytest.mark.torch
def test_two_containers_meet_at_the_rank0_container(docker_runner: Any, tmp_path: Path) -> None:
    (tmp_path / "allreduce.py").write_text(ALL_REDUCE)
    args = ["--image", TORCH_IMAGE, "-j", "2x1", "--mounts", f"type=bind,src={tmp_path},dst=/job,readonly",
            "--script", "/job/allreduce.py", "x", "--y"]  # fmt: skip
    handle = docker_runner.run_component("dist.ddp", args, "local_docker")
    status = docker_runner.wait(handle, wait_interval=0.5)
    assert status is not None
    logs = {k: "".join(docker_runner.log_lines(handle, "allreduce", k)) for k in range(2)}
    assert status.state == AppState.SUCCEEDED, (status, logs)
    assert [r.state for r in status.roles[0].replicas] == [AppState.SUCCEEDED] * 2
    # Each container's torchrun ran one worker, which printed one result (torchrun prefixes it with the
    # local rank, "[default0]:"; the other lines are torch's warnings). c10d picks which node is rank 0.
    results = {k: [m.groups() for m in RESULT.finditer(text)] for k, text in logs.items()}
    assert all(len(results[k]) == 1 for k in (0, 1)), logs
    (rank_a, host_a), (rank_b, host_b) = results[0][0], results[1][0]
    assert {rank_a, rank_b} == {"0", "1"} and host_a != host_b, logs


@pytest.mark.torch
def test_ddp_as_torchx_code_calls_it_runs_in_the_default_image_from_a_fsspec_workspace(docker_runner: Any) -> None:
    """TorchX-style code: ``ddp(script=..., j="2x1")`` with no image, submitted with a ``memory://``
    workspace. The default image is this machine's torch image (images/site), and the workspace is built
    on top of it, so the script runs from the image's working directory in both containers."""
    import fsspec

    from jupyter_sched.components.dist import ddp
    from jupyter_sched.components.images import TORCH_IMAGE as DEFAULT_TORCH_IMAGE
    from jupyter_sched.schedulers import get_scheduler_factories

    assert DEFAULT_TORCH_IMAGE == TORCH_IMAGE  # scripts/setup/images.sh installed images/site
    workspace = f"memory://ddp-{random_id()}/"
    with fsspec.open(workspace + "main.py", "wt") as f:
        f.write(ALL_REDUCE)
    app = ddp("x", "--y", script="main.py", j="2x1")
    assert app.roles[0].image == TORCH_IMAGE
    scheduler = get_scheduler_factories()["local_docker"](docker_runner.session_name)
    app_id = scheduler.submit(app, cfg={}, workspace=workspace)
    handle = f"local_docker://{docker_runner.session_name}/{app_id}"
    try:
        status = docker_runner.wait(handle, wait_interval=0.5)
        logs = {k: "".join(docker_runner.log_lines(handle, "main", k)) for k in range(2)}
    finally:
        scheduler.cleanup(app_id, force=True)  # its containers and the image built from the workspace
    assert status is not None and status.state == AppState.SUCCEEDED, (status, logs)
    ranks = sorted(m.group(1) for text in logs.values() for m in RESULT.finditer(text))
    assert ranks == ["0", "1"], logs

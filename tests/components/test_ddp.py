"""dist.ddp (torchrun) run for real on local_cwd: one node of two processes and two nodes of one, each
doing a gloo all_reduce; and the shape of the app it builds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

from jupyter_sched.components import ComponentArgError, materialize
from jupyter_sched.components.dist import ddp, free_port

RunLocal = Any  # the run_local fixture of conftest.py

ALL_REDUCE = """
import sys, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum={t.item()} argv={sys.argv[1:]}", flush=True)
dist.destroy_process_group()
"""


def results(logs: Dict[Tuple[str, int], str]) -> Dict[int, list]:  # type: ignore[type-arg]
    """The all_reduce lines of each node (torchrun prefixes each with the local rank, ``[default0]:``)."""
    return {
        k: sorted(line.split("]:", 1)[1] for line in text.splitlines() if "sum=" in line)
        for (_, k), text in logs.items()
    }


@pytest.fixture
def script(tmp_path: Path, torch_installed: None) -> Path:
    path = tmp_path / "allreduce.py"
    path.write_text(ALL_REDUCE)
    return path


@pytest.mark.torch
def test_one_node_of_two_processes(run_local: RunLocal, script: Path) -> None:
    handle, status, logs = run_local("dist.ddp", ["-j", "1x2", "--script", str(script), "a", "--b"])
    assert status.state.name == "SUCCEEDED", logs
    assert "allreduce" in handle  # the app is named after the script
    assert results(logs) == {0: ["rank 0/2 sum=3.0 argv=['a', '--b']", "rank 1/2 sum=3.0 argv=['a', '--b']"]}


@pytest.mark.torch
def test_two_nodes_meet_at_the_rank0_host(run_local: RunLocal, script: Path) -> None:
    port = str(free_port())
    _, status, logs = run_local("dist.ddp", ["-j", "2x1", "--rdzv_port", port, "--script", str(script)])
    assert status.state.name == "SUCCEEDED", logs
    assert sorted(sum(results(logs).values(), [])) == ["rank 0/2 sum=3.0 argv=[]", "rank 1/2 sum=3.0 argv=[]"]
    assert set(results(logs)) == {0, 1}  # one torchrun per replica


def test_the_app_shape() -> None:
    app = materialize("dist.ddp", ["--image", "img", "--script", "train/test.py", "--lr", "1"])
    role = app.roles[0]
    assert (app.name, role.name, role.num_replicas, role.entrypoint, role.image) == ("test", "test", 1, "sh", "img")
    launcher = role.args[3:]
    assert launcher[:3] == ["python3", "-m", "torch.distributed.run"]
    assert launcher[-3:] == ["train/test.py", "--lr", "1"]
    assert "localhost:0" in launcher and "--nproc_per_node" in launcher  # one node: any free port
    assert launcher[launcher.index("--nproc_per_node") + 1] == "2" and role.resource.cpu == 2
    assert role.env["TORCHX_TRACKING_EXPERIMENT_NAME"] == "default-experiment"

    multi = materialize("dist.ddp", ["-j", "1:3x4", "--rdzv_port", "1234", "--rdzv_backend", "static",
                                     "--name", "exp/", "--debug", "-m", "pkg.trainer"])  # fmt: skip
    role = multi.roles[0]
    assert (multi.name, role.name, role.min_replicas, role.num_replicas) == ("trainer", "trainer", 1, 3)
    assert "@rank0_host:1234" in role.args and role.port_map == {"c10d": 1234}
    assert role.args[role.args.index("--nnodes") + 1] == "1:3"
    assert role.args[role.args.index("--node_rank") + 1] == "${replica_id}"
    assert role.args[-2:] == ["-m", "pkg.trainer"]
    assert role.env["TORCHX_TRACKING_EXPERIMENT_NAME"] == "exp"
    assert role.env["TORCH_DISTRIBUTED_DEBUG"] == "DETAIL"
    assert ddp(script="a.py", name="run1", j="3").name == "run1"


@pytest.mark.parametrize(
    "args, problem",
    [
        (["-j", "2"], "give exactly one of --script FILE or -m MODULE"),
        (["-j", "2x", "--script", "a.py"], "-j must be NPROCS, NNODESxNPROCS or MIN:MAXxNPROCS"),
        (["-j", "3:2x1", "--script", "a.py"], "need 0 <= MIN <= MAX"),
        (["--rdzv_port", "0", "--script", "a.py"], "--rdzv_port must be between 1 and 65535"),
    ],
)
def test_errors(args: list, problem: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ComponentArgError, match=problem.replace("(", r"\(")):
        materialize("dist.ddp", args)


def test_python_is_this_interpreter_only_on_local(runner: Any, log_dir: str) -> None:
    info = runner.dryrun_component("dist.ddp", ["--script", "t.py"], "local_cwd", {"log_dir": log_dir})
    assert info.request.role_params["t"][0].args[4] == sys.executable
    assert info.app.roles[0].args[3] == "python3"

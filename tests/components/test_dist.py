"""dist.spmd run for real on local_cwd: the env each replica sees, and a real multi-process rendezvous."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from jupyter_sched.components import ComponentArgError, materialize
from jupyter_sched.components.dist import free_port
from jupyter_sched.specs import AppState

RunLocal = Any  # the run_local fixture of conftest.py

# Rank 0 listens on MASTER_ADDR:MASTER_PORT and sums the ranks the others send it: a collective that only
# works if every replica got a distinct RANK, the same WORLD_SIZE and the address of rank 0.
RENDEZVOUS = """
import os, socket, sys, time
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if rank == 0:
    server = socket.create_server((addr, port))
    total = 0
    for _ in range(world - 1):
        conn, _ = server.accept()
        with conn:
            total += int(conn.recv(16))
    print(f"sum={total} world={world} argv={sys.argv[1:]}")
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection((addr, port)) as conn:
                conn.sendall(str(rank).encode())
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    print(f"rank {rank} sent")
"""

DDP = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum={t.item()}")
dist.destroy_process_group()
"""


def test_each_replica_gets_its_rank_world_size_and_rank0_address(run_local: RunLocal) -> None:
    port = free_port()
    show = 'echo "$RANK $GROUP_RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT"'
    _, status, logs = run_local(
        "dist.spmd", ["--num_replicas", "3", "--master_port", str(port), "sh", "-c", show]
    )
    assert status.state == AppState.SUCCEEDED
    assert logs == {("spmd", k): f"{k} {k} 3 0 1 localhost {port}\n" for k in range(3)}


def test_a_script_rendezvous_across_replicas(run_local: RunLocal, tmp_path: Path) -> None:
    script = tmp_path / "rendezvous.py"
    script.write_text(RENDEZVOUS)
    _, status, logs = run_local(
        "dist.spmd", ["--num_replicas", "4", "--script", str(script), "a", "--b"]
    )
    assert status.state == AppState.SUCCEEDED, logs
    assert logs[("rendezvous", 0)] == "sum=6 world=4 argv=['a', '--b']\n"  # 1 + 2 + 3
    assert all(logs[("rendezvous", k)] == f"rank {k} sent\n" for k in (1, 2, 3))


def test_a_module_with_a_user_master_addr(
    run_local: RunLocal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rdv_module.py").write_text(RENDEZVOUS)
    monkeypatch.chdir(
        tmp_path
    )  # local_cwd runs replicas in the current directory, so -m finds the module
    _, status, logs = run_local(
        "dist.spmd", ["--num_replicas", "2", "--env", "MASTER_ADDR=127.0.0.1", "-m", "rdv_module"]
    )
    assert status.state == AppState.SUCCEEDED, logs
    assert logs[("rdv_module", 0)] == "sum=1 world=2 argv=[]\n"


@pytest.mark.torch
def test_pytorch_ddp_on_gloo(run_local: RunLocal, tmp_path: Path, torch_installed: None) -> None:
    script = tmp_path / "ddp.py"
    script.write_text(DDP)
    _, status, logs = run_local("dist.spmd", ["--num_replicas", "2", "--script", str(script)])
    assert status.state == AppState.SUCCEEDED, logs
    # the combined log may also hold torch's own warnings (e.g. numpy missing) on stderr
    assert {key: text.splitlines()[-1] for key, text in logs.items()} == {
        ("ddp", 0): "rank 0/2 sum=3.0",
        ("ddp", 1): "rank 1/2 sum=3.0",
    }


def test_the_app_shape() -> None:
    app = materialize(
        "dist.spmd",
        ["--num_replicas", "2", "--master_port", "29500", "--script", "train.py", "--lr", "1"],
    )
    role = app.roles[0]
    assert (app.name, role.name, role.num_replicas, role.entrypoint) == ("train", "train", 2, "sh")
    assert role.args[0] == "-c" and role.args[2:] == ["spmd", "python3", "train.py", "--lr", "1"]
    assert role.env["RANK"] == "${replica_id}" and role.env["MASTER_PORT"] == "29500"
    assert "${rank0_env}" in role.args[1]  # the scheduler names the env var holding the rank-0 host


def test_errors() -> None:
    from jupyter_sched.components.dist import spmd

    with pytest.raises(
        ComponentArgError,
        match=r"dist.spmd: give the command to run, or --script FILE, or -m MODULE",
    ):
        materialize("dist.spmd", ["--num_replicas", "2"])
    with pytest.raises(ComponentArgError, match=r"--master_port must be between 1 and 65535"):
        materialize("dist.spmd", ["--master_port", "70000", "true"])
    with pytest.raises(ValueError, match=r"give either --script or -m, not both"):
        spmd(script="a.py", m="b")


def test_python_is_this_interpreter_only_on_local(runner: Any, log_dir: str) -> None:
    info = runner.dryrun_component(
        "dist.spmd", ["--script", "t.py"], "local_cwd", {"log_dir": log_dir}
    )
    assert info.request.role_params["t"][0].args[4] == sys.executable
    assert info.app.roles[0].args[3] == "python3"  # the AppDef itself keeps the image's interpreter


PYTHON_IMAGE = "jupyter-sched/python:local"  # built by scripts/setup/images.sh


@pytest.fixture
def docker_runner(docker_session_runner: Any) -> Iterator[Any]:
    with docker_session_runner(PYTHON_IMAGE, "`bash scripts/setup/images.sh`") as runner:
        yield runner


def test_the_same_job_runs_unchanged_on_local_docker(docker_runner: Any, tmp_path: Path) -> None:
    """The rendezvous of test_a_script_rendezvous_across_replicas, with one container per replica."""
    (tmp_path / "rendezvous.py").write_text(RENDEZVOUS)
    args = ["--image", PYTHON_IMAGE, "--num_replicas", "3", "--mounts", f"type=bind,src={tmp_path},dst=/job",
            "--script", "/job/rendezvous.py", "x"]  # fmt: skip
    handle = docker_runner.run_component("dist.spmd", args, "local_docker")
    status = docker_runner.wait(handle, wait_interval=0.5)
    logs = {k: "".join(docker_runner.log_lines(handle, "rendezvous", k)) for k in range(3)}
    assert status.state == AppState.SUCCEEDED, (status, logs)
    assert logs[0] == "sum=3 world=3 argv=['x']\n"
    assert logs[1] == "rank 1 sent\n" and logs[2] == "rank 2 sent\n"

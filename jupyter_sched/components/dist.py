"""Built-in distributed components: ``dist.spmd``.

``dist.spmd`` runs N replicas of one command, each told its place in the job through the environment
variables PyTorch's ``init_process_group(init_method="env://")`` reads, so a multi-process job (e.g. DDP on
gloo) runs unchanged on ``local_cwd`` (N processes on this machine) and ``local_docker`` (N containers).
"""

from __future__ import annotations

import os
import socket
from typing import Dict, List, Optional

from jupyter_sched.components._common import DEFAULT_IMAGE, PYTHON, common_args, make_app
from jupyter_sched.components.builder import rest_after
from jupyter_sched.specs import AppDef, macros

DEFAULT_PORT_ENV = "MASTER_PORT"

# The replica's argv is: sh -c PRELUDE spmd COMMAND...  ($0 is "spmd", "$@" the command). The prelude
# reads the rank-0 host from the env var the scheduler names (the ${rank0_env} macro) and execs the command,
# so the command itself needs no shell. $$ is a literal $ for the macro substitution.
PRELUDE = (
    'export MASTER_ADDR="$${MASTER_ADDR:-$${' + macros.rank0_env + ':-localhost}}"; exec "$$@"'
)
_COMMAND_AT = 4  # index of the command in the replica's argv: sh, -c, PRELUDE, spmd, COMMAND...


@rest_after("script", "m")
@common_args
def spmd(
    *args: str,
    script: Optional[str] = None,
    m: Optional[str] = None,
    master_port: Optional[int] = None,
    name: Optional[str] = None,
    image: str = DEFAULT_IMAGE,
    num_replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    h: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    mounts: Optional[List[str]] = None,
) -> AppDef:
    """Runs N replicas of one command as a distributed job (RANK, WORLD_SIZE, MASTER_ADDR... in the env).

    Each replica gets RANK and GROUP_RANK (0..N-1), WORLD_SIZE (N), LOCAL_RANK (0) and LOCAL_WORLD_SIZE (1):
    every replica is one process on its own "node". MASTER_ADDR is the host of replica 0 (localhost on
    local_cwd, replica 0's container on local_docker) and MASTER_PORT a port for rank 0 to listen on, so
    ``torch.distributed.init_process_group("gloo")`` works with no arguments. Give the command as the rest
    of the line, or a Python script (--script) or module (-m) to run with the rest as its arguments (put
    this component's flags before them, as with ``python -m``). On the
    local schedulers Python is the interpreter jupyter_sched runs under. With GPUs on local_cwd, add
    ``--cfg auto_set_cuda_visible_devices=true`` so that each replica sees its own GPU.

    Args:
        args: the command to run (or, with --script or -m, the arguments of the script or module)
        script: a Python script to run in every replica
        m: a Python module to run in every replica, as python -m
        master_port: the port rank 0 listens on (default: a port that is free on this machine now)
    """
    if script is not None and m is not None:
        raise ValueError("give either --script or -m, not both")
    if script is not None:
        command, default_name = (
            [PYTHON, script, *args],
            os.path.splitext(os.path.basename(script))[0],
        )
    elif m is not None:
        command, default_name = [PYTHON, "-m", m, *args], m.rsplit(".", 1)[-1]
    elif args:
        command, default_name = list(args), "spmd"
    else:
        raise ValueError("give the command to run, or --script FILE, or -m MODULE")
    port = master_port if master_port is not None else free_port()
    if not 0 < port < 65536:
        raise ValueError(f"--master_port must be between 1 and 65535 (got {port})")
    base_env = {
        "RANK": macros.replica_id,
        "GROUP_RANK": macros.replica_id,
        "WORLD_SIZE": str(num_replicas),
        "LOCAL_RANK": "0",
        "LOCAL_WORLD_SIZE": "1",
        "MASTER_PORT": str(port),
        "PYTHONUNBUFFERED": "1",
    }
    app_name = name or _clean(default_name)
    return make_app(
        app_name, app_name, "sh", ["-c", PRELUDE, "spmd", *command], image=image,
        num_replicas=num_replicas, cpu=cpu, gpu=gpu, memMB=memMB, h=h, env=env, max_retries=max_retries,
        mounts=mounts, base_env=base_env, python_arg=_COMMAND_AT if command[0] == PYTHON else None,
    )  # fmt: skip


def free_port() -> int:
    """A TCP port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def _clean(text: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in text).lstrip("_.-")
    return cleaned or "spmd"

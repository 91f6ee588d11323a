"""Built-in distributed components: ``dist.spmd`` and ``dist.ddp``.

``dist.spmd`` runs N replicas of one command, each told its place in the job through the environment
variables PyTorch's ``init_process_group(init_method="env://")`` reads, so a multi-process job (e.g. DDP on
gloo) runs unchanged on ``local_cwd`` (N processes on this machine) and ``local_docker`` (N containers).
``dist.ddp`` is TorchX's launcher of the same name: each replica (node) runs PyTorch's own launcher,
``python -m torch.distributed.run`` (torchrun), which starts the processes of that node and gives them
their ranks through a rendezvous, so the image must have torch.
"""

from __future__ import annotations

import os
import socket
from typing import Dict, List, Optional

from jupyter_sched.components._common import PYTHON, common_args, make_app
from jupyter_sched.components._torchrun import (
    DEBUG_ENV,
    LAUNCH_PRELUDE,
    RANK0_HOST,
    experiment_and_run,
    nnodes_arg,
    parse_j,
    role_name,
)
from jupyter_sched.components.builder import rest_after
from jupyter_sched.components.images import DEFAULT_IMAGE, TORCH_IMAGE
from jupyter_sched.specs import AppDef, macros

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


@rest_after("script", "m")
def ddp(
    *script_args: str,
    script: Optional[str] = None,
    m: Optional[str] = None,
    image: str = TORCH_IMAGE,
    name: str = "/",
    h: Optional[str] = None,
    cpu: int = 2,
    gpu: int = 0,
    memMB: int = 1024,  # noqa: N803
    j: str = "1x2",
    env: Optional[Dict[str, str]] = None,
    max_retries: int = 0,
    rdzv_port: int = 29500,
    rdzv_backend: str = "c10d",
    mounts: Optional[List[str]] = None,
    debug: bool = False,
    tee: int = 3,
) -> AppDef:
    """Runs a PyTorch script or module on NODES x PROCS processes with torchrun (``-j 2x4``).

    Each replica is a node that runs ``python -m torch.distributed.run``, which starts PROCS processes
    and sets their RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, so
    ``torch.distributed.init_process_group()`` works with no arguments. Nodes meet at a rendezvous
    (``--rdzv_backend``, c10d by default) hosted on rank 0's host at ``--rdzv_port``; a single-node job
    uses a free port of its own instead. The app and its role are named after the script or module
    (``--script train.py``: ``train``). As with ``python -m``, the rest of the line after ``--script FILE``
    or ``-m MODULE`` goes to the program. On the local schedulers Python is the interpreter jupyter_sched
    runs under; in an image it is ``python3``, which must have torch.

    Args:
        script_args: the arguments of the script or module
        script: a Python script to run in every process
        m: a Python module to run in every process, as python -m
        image: the image to run in, with torch (ignored by local_cwd, which runs in the current directory)
        name: EXPERIMENT/RUN, EXPERIMENT/, /RUN or RUN; the app is named RUN (default: after the script or
            module), and EXPERIMENT (default: default-experiment) is in TORCHX_TRACKING_EXPERIMENT_NAME
        h: a named resource such as cpu.small or gpu.large; overrides cpu, gpu and memMB
        cpu: CPUs per node (enforced by docker and slurm, not locally)
        gpu: GPUs per node (PROCS should not exceed it on GPU hosts)
        memMB: memory per node in MB
        j: [MIN:]NODESxPROCS or PROCS: nodes (an elastic range with MIN) and processes per node
        env: environment variables, e.g. A=1,B=2 (repeat the flag to add more); LOGLEVEL defaults to WARNING
        max_retries: how many times a failed node is restarted (by backends that support retries)
        rdzv_port: the port of the rendezvous on rank 0's host (multi-node jobs only)
        rdzv_backend: torchrun's rendezvous backend: c10d, static or etcd (multi-node jobs only)
        mounts: mounts, e.g. type=bind,src=/data,dst=/data[,readonly] or type=volume,src=NAME,dst=/path
        debug: sets PyTorch's debugging variables (detailed distributed checks, C++ stack traces...)
        tee: which streams torchrun also copies to its log files: 0 none, 1 stdout, 2 stderr, 3 both
    """
    if (script is None) == (m is None):
        raise ValueError("give exactly one of --script FILE or -m MODULE")
    min_nodes, max_nodes, nproc = parse_j(j)
    if not 0 < rdzv_port < 65536:
        raise ValueError(f"--rdzv_port must be between 1 and 65535 (got {rdzv_port})")
    endpoint = "localhost:0" if max_nodes == 1 else f"{RANK0_HOST}:{rdzv_port}"
    launcher = [
        PYTHON, "-m", "torch.distributed.run", "--rdzv_backend", rdzv_backend, "--rdzv_endpoint", endpoint,
        "--rdzv_id", macros.app_id, "--nnodes", nnodes_arg(min_nodes, max_nodes),
        "--nproc_per_node", str(nproc), "--tee", str(tee),
    ]  # fmt: skip
    if rdzv_backend == "static":
        launcher += ["--node_rank", macros.replica_id]
    launcher += [script] if script is not None else ["-m", str(m)]
    experiment, run = experiment_and_run(name, script, m)
    base_env = {
        "TORCHX_TRACKING_EXPERIMENT_NAME": experiment,
        "LOGLEVEL": os.environ.get("LOGLEVEL", "WARNING"),
        "PYTHONUNBUFFERED": "1",
        **(DEBUG_ENV if debug else {}),
    }
    app = make_app(
        _clean(run), role_name(script, m), "sh", ["-c", LAUNCH_PRELUDE, "ddp", *launcher, *script_args],
        image=image, num_replicas=max_nodes, cpu=cpu, gpu=gpu, memMB=memMB, h=h, env=env,
        max_retries=max_retries, mounts=mounts, base_env=base_env, python_arg=_COMMAND_AT,
    )  # fmt: skip
    app.roles[0].min_replicas = min_nodes if min_nodes != max_nodes else None
    app.roles[0].port_map = {"c10d": rdzv_port}
    return app


def free_port() -> int:
    """A TCP port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def _clean(text: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in text).lstrip("_.-")
    return cleaned or "spmd"

"""What ``dist.ddp`` needs to launch PyTorch's ``torch.distributed.run`` (torchrun): the ``-j`` layout,
the experiment/run name, and the shell prelude that points the rendezvous at the rank-0 host.

The prelude exists because the rank-0 host is only known when a replica starts (the scheduler puts it in
the env var the ``${rank0_env}`` macro names), yet the launcher's argv must stay a list so that the local
schedulers can swap ``python3`` for this interpreter at a known position (see ``PythonRole``).
"""

from __future__ import annotations

import os
import re
from typing import Dict, Optional, Tuple

from jupyter_sched.specs import macros

RANK0_HOST = "@rank0_host"
"""Placeholder for the rank-0 host in an argument (``@rank0_host:29500``); the prelude replaces it."""

# argv: sh -c LAUNCH_PRELUDE ddp ARGS...  Each argument starting with @rank0_host gets the host (localhost if the
# scheduler sets none), then ARGS is exec'd. $$ is a literal $ for the macro substitution.
LAUNCH_PRELUDE = (
    'h="$${' + macros.rank0_env + ':-localhost}"; '
    'for a do shift; case "$$a" in ' + RANK0_HOST + '*) a="$$h$${a#' + RANK0_HOST + '}";; esac; '
    'set -- "$$@" "$$a"; done; exec "$$@"'
)

DEBUG_ENV: Dict[str, str] = {
    "CUDA_LAUNCH_BLOCKING": "1",
    "NCCL_DESYNC_DEBUG": "1",
    "TORCH_DISTRIBUTED_DEBUG": "DETAIL",
    "TORCH_SHOW_CPP_STACKTRACES": "1",
}
"""What ``--debug`` sets: synchronous CUDA, collective desync reports, detailed c10d checks, C++ stacks."""

DEFAULT_EXPERIMENT = "default-experiment"

_J = re.compile(r"^(?:(?:(\d+):)?(\d+)x)?(\d+)$")


def parse_j(j: str) -> Tuple[int, int, int]:
    """``-j`` as ``(min_nodes, max_nodes, procs_per_node)``: ``4`` is one node of 4 processes, ``2x4`` two
    nodes of 4, ``1:2x4`` one to two nodes (elastic) of 4."""
    match = _J.match(j.strip())
    if match is None:
        raise ValueError(f"-j must be NPROCS, NNODESxNPROCS or MIN:MAXxNPROCS, e.g. 4, 2x4 or 1:2x4 (got {j!r})")
    lo, hi, nproc = match.groups()
    max_nodes = int(hi) if hi is not None else 1
    min_nodes = int(lo) if lo is not None else max_nodes
    if not 0 <= min_nodes <= max_nodes or max_nodes < 1 or int(nproc) < 1:
        raise ValueError(f"-j {j}: need 0 <= MIN <= MAX, at least 1 node and 1 process per node")
    return min_nodes, max_nodes, int(nproc)


def nnodes_arg(min_nodes: int, max_nodes: int) -> str:
    """torchrun's ``--nnodes``: ``N`` or ``MIN:MAX``."""
    return str(max_nodes) if min_nodes == max_nodes else f"{min_nodes}:{max_nodes}"


def role_name(script: Optional[str], m: Optional[str]) -> str:
    """The script's file name without extension, or the module's last part."""
    if script:
        return os.path.splitext(os.path.basename(script))[0] or "ddp"
    return (m or "ddp").rpartition(".")[2] or "ddp"


def experiment_and_run(name: str, script: Optional[str], m: Optional[str]) -> Tuple[str, str]:
    """``--name`` as ``(experiment, run)``: ``exp/run``, ``exp/`` (run named after the script or module),
    ``/run`` or ``run`` (the default experiment), ``/`` (both defaults)."""
    experiment, sep, run = name.rpartition("/") if "/" in name else ("", "", name)
    return experiment or DEFAULT_EXPERIMENT, run or role_name(script, m)

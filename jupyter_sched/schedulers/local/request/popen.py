"""The local backend's request: what each replica's ``Popen`` gets, and how a dry run prints it.

A replica's variables come in two parts. ``env`` is exactly what TorchX's local scheduler puts in its
request (the role's env, ``TORCHX_RANK0_HOST``, ``TORCHELASTIC_ERROR_FILE``, ``PET_LOG_DIR`` and
``CUDA_VISIBLE_DEVICES`` when GPUs are assigned), so code that reads or builds a TorchX request sees the same
thing. ``launch_env`` holds what we add when the process starts (the composed PATH, ``PYTHONUNBUFFERED``,
``JUPYTER_SCHED_*``); it wins over ``env``, and both go on top of the owner's environment. A dry run prints
both, each under its own heading, so it still shows every variable the process gets.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

from jupyter_sched.specs import AppDef, DryRunView, ReplicaPlan
from jupyter_sched.specs.request.dryrun import LAUNCH_ENV_HEADING


@dataclass
class ReplicaParam:
    """What one replica's ``Popen`` gets (fields in TorchX's order, so ``ReplicaParam(args, env, stdout,
    stderr, combined, cwd)`` works). ``env`` is TorchX's request env; ``launch_env`` our additions, applied
    over it when the process starts (see the module docstring and :meth:`process_env`)."""

    args: List[str]
    env: Dict[str, str]
    stdout: Optional[str] = None
    stderr: Optional[str] = None
    combined: Optional[str] = None
    cwd: Optional[str] = None
    launch_env: Dict[str, str] = field(default_factory=dict)
    warm_start: Optional[List[str]] = None
    """What a warm interpreter preloads for this replica, if it is to be forked from one (see
    ``zygote``); None: it is started with exec."""
    start_note: str = ""
    """How it starts, for the dry run ("" for an ordinary command, which is exec'd)."""

    @property
    def replica_env(self) -> Dict[str, str]:
        """Every variable this replica sets over the owner's environment: ``env``, then ``launch_env``."""
        return {**self.env, **self.launch_env}

    def process_env(self, owner: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        """The whole environment the process starts with: the owner's (``os.environ`` by default), then
        :attr:`replica_env`."""
        env = dict(os.environ if owner is None else owner)
        env.update(self.replica_env)
        return env

    @property
    def command_line(self) -> str:
        """The argv as a copyable shell line (quoted; it is *not* run through a shell)."""
        return shlex.join(self.args)


@dataclass
class PopenRequest:
    """Everything needed to start every replica of an app."""

    app_id: str
    log_dir: str
    role_params: Dict[str, List[ReplicaParam]]
    role_log_dirs: Dict[str, List[str]]
    cancel_grace: float = 10.0
    outlive_owner: bool = False

    def dryrun_view(self) -> DryRunView:
        """The request in neutral terms (see ``specs.dryrun``): replicas run here, without an image."""
        plans = [
            ReplicaPlan(role=role, replica_id=k, argv=p.args, env=dict(p.env), launch_env=dict(p.launch_env),
                        cwd=p.cwd, on_this_host=True,
                        logs=[x for x in (p.stdout, p.stderr, p.combined) if x])  # fmt: skip
            for role, params in self.role_params.items()
            for k, p in enumerate(params)
        ]
        notes = []
        for role, params in self.role_params.items():
            starts = sorted({p.start_note for p in params if p.start_note})
            if starts:
                label = "replicas start" if len(self.role_params) == 1 else f"{role} replicas start"
                notes.append((label, "; ".join(starts)))
        return DryRunView(plans, bound_to_owner=not self.outlive_owner, notes=notes)


def format_request(request: PopenRequest) -> str:
    """A readable rendering of the request: per replica its argv, cwd, env (the request's, then what is
    added at launch and wins over it) and log files."""
    out = [f"PopenRequest(app_id={request.app_id})", f"  log_dir: {request.log_dir}"]
    for role, params in request.role_params.items():
        out.append(f"  role {role}: {len(params)} replica(s)")
        for k, p in enumerate(params):
            out.append(f"    [{k}] argv: {p.command_line}")
            out.append(f"        cwd:  {p.cwd}")
            if p.start_note:
                out.append(f"        start: {p.start_note}")
            for key in sorted(p.env):
                out.append(f"        env:  {key}={p.env[key]}")
            if p.launch_env:
                out.append(f"        {LAUNCH_ENV_HEADING}:")
                out.extend(f"              {key}={p.launch_env[key]}" for key in sorted(p.launch_env))
            out.append(f"        logs: {request.role_log_dirs[role][k]}/{{stdout,stderr,combined}}.log")
    return "\n".join(out)


ENV_CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
"""The variable ``auto_set_cuda_visible_devices`` sets in a GPU replica's env (TorchX's public name)."""


def assign_gpus(app: AppDef, role_params: Dict[str, List[ReplicaParam]]) -> None:
    """Gives each replica of a GPU role its own consecutive block of devices, if there are enough."""
    wanted = sum(r.num_replicas * max(r.resource.gpu, 0) for r in app.roles)
    available = gpu_count()
    if wanted == 0:
        return
    if available < wanted:
        warnings.warn(
            f"auto_set_cuda_visible_devices: {wanted} GPUs requested but {available} found;"
            " CUDA_VISIBLE_DEVICES was not set",
            stacklevel=3,
        )
        return
    nxt = 0
    for role in app.roles:
        if role.resource.gpu <= 0:
            continue
        for param in role_params[role.name]:
            ids = range(nxt, nxt + role.resource.gpu)
            param.env[ENV_CUDA_VISIBLE_DEVICES] = ",".join(str(i) for i in ids)
            nxt += role.resource.gpu


def gpu_count() -> int:
    """GPUs listed by ``nvidia-smi -L``; 0 when it is missing or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return 0
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.strip().startswith("GPU"))

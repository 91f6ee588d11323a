"""Building a local app's request from an AppDef and its run options: per replica its argv, environment,
working directory and log files (nothing starts here; ``spawn`` starts what this describes).

Each replica's ``env`` is what TorchX's request holds (role env, ``TORCHX_RANK0_HOST``, the torchelastic
paths, ``CUDA_VISIBLE_DEVICES``); our own variables go to its ``launch_env`` (see ``request``)."""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Sequence

from jupyter_sched.schedulers.local.request.images import ImageProvider
from jupyter_sched.schedulers.local.request.popen import PopenRequest, ReplicaParam, assign_gpus
from jupyter_sched.specs import AppDef, CfgVal, macros, make_unique
from jupyter_sched.specs.output.names import safe_name

RANK0_ENV = "TORCHX_RANK0_HOST"
"""Rank 0's host, under TorchX's name so code written for TorchX finds it (``${rank0_env}`` names it)."""
ERROR_FILE_ENV = "TORCHELASTIC_ERROR_FILE"
APP_ID_ENV = "JUPYTER_SCHED_APP_ID"
"""The app's id, in every replica's environment (and so its children's): how a reaper finds a replica whose
pid it never learnt (``local_reaper``)."""
METRICS_DIR_ENV = "JUPYTER_SCHED_METRICS_DIR"
"""The app's metrics directory, ``<app dir>/metrics``, where ``jupyter_sched.track`` writes each replica's
records (the name is ``jupyter_sched.track.layout``'s)."""
PET_LOG_DIR_ENV = "PET_LOG_DIR"
"""Set, as TorchX does, to ``<app log dir>/torchelastic/<role>``: torchelastic (``torchrun``) writes its
agents' logs there, each run in its own subdirectory, so the replicas of a role share it."""


def build_request(
    app: AppDef,
    cfg: Mapping[str, CfgVal],
    provider: ImageProvider,
    base: str,
    session_name: str,
    extra_paths: Sequence[str] = (),
    app_id: Optional[str] = None,
) -> PopenRequest:
    """The request for ``app`` under ``<base>/<session_name>/<app_id>``; names become safe directory names.
    ``app_id`` is the scheduler's unique id for the app (made from the app's name when not given)."""
    app_id = app_id or make_unique(safe_name(app.name))
    app_dir = os.path.join(base, session_name, app_id)
    role_params: Dict[str, List[ReplicaParam]] = {}
    role_log_dirs: Dict[str, List[str]] = {}
    for role in app.roles:
        img_root = provider.fetch_role(role)
        cwd = provider.get_cwd(role.image) or os.getcwd()
        params, dirs = [], []
        for k in range(role.num_replicas):
            values = macros.Values(img_root=img_root, app_id=app_id, replica_id=str(k), rank0_env=RANK0_ENV)
            replica_role = values.apply(role)
            replica_dir = os.path.join(app_dir, safe_name(role.name, "role"), str(k))
            param = provider.get_replica_param(
                img_root,
                replica_role,
                stdout=os.path.join(replica_dir, "stdout.log"),
                stderr=os.path.join(replica_dir, "stderr.log"),
                combined=os.path.join(replica_dir, "combined.log"),
            )
            param.cwd = param.cwd or cwd
            env = param.env
            env[RANK0_ENV] = "localhost"
            env.setdefault(ERROR_FILE_ENV, os.path.join(replica_dir, "error.json"))
            env.setdefault(PET_LOG_DIR_ENV, os.path.join(app_dir, "torchelastic", safe_name(role.name, "role")))
            param.launch_env.update(launch_env(env, extra_paths, role.env.get("PATH"), cwd, cfg))
            param.launch_env.update(
                {
                    APP_ID_ENV: app_id,
                    "JUPYTER_SCHED_ROLE_NAME": role.name,
                    "JUPYTER_SCHED_REPLICA_ID": str(k),
                    METRICS_DIR_ENV: os.path.join(app_dir, "metrics"),
                }
            )
            params.append(param)
            dirs.append(replica_dir)
        role_params[role.name] = params
        role_log_dirs[role.name] = dirs
    if cfg.get("auto_set_cuda_visible_devices"):
        assign_gpus(app, role_params)
    return PopenRequest(
        app_id=app_id,
        log_dir=app_dir,
        role_params=role_params,
        role_log_dirs=role_log_dirs,
        cancel_grace=float(cfg.get("cancel_grace") or 0.0),  # type: ignore[arg-type]
        outlive_owner=bool(cfg.get("outlive_owner")),
    )


def launch_env(
    env: Mapping[str, str],
    extra_paths: Sequence[str],
    role_path: Optional[str],
    cwd: str,
    cfg: Mapping[str, CfgVal],
) -> Dict[str, str]:
    """The replica-independent part of what we add at launch: the composed PATH (which replaces the role's
    own, already part of it) and ``PYTHONUNBUFFERED`` unless the role sets it (the role's value wins)."""
    out = {"PATH": compose_path(extra_paths, role_path, cwd, bool(cfg.get("prepend_cwd")))}
    if "PYTHONUNBUFFERED" not in env:
        out["PYTHONUNBUFFERED"] = "x"
    return out


def compose_path(extra_paths: Sequence[str], role_path: Optional[str], cwd: str, prepend_cwd: bool) -> str:
    """``extra_paths`` and the role's PATH come first, then the owner's PATH; the working directory is
    prepended with ``prepend_cwd`` and appended otherwise (as the option's help says)."""
    parts = [*extra_paths]
    if role_path:
        parts.append(role_path)
    if prepend_cwd:
        parts.insert(0, cwd)
    parts.append(os.environ.get("PATH", os.defpath))
    if not prepend_cwd:
        parts.append(cwd)
    return os.pathsep.join(p for p in parts if p)

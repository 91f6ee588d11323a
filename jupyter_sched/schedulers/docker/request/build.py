"""AppDef -> :class:`DockerJob`: one container per replica, with its name, labels, env, mounts and limits.

Pure (no engine, no docker import). The rules:

* container ``name`` and ``hostname``: ``{app_id[-30:]}-{role}-{k}``, at most 63 characters;
* labels ``jupyter_sched.*``: version, app id and name, session, role name and index, replica id, cancel grace,
  and the app's metrics directory on this machine with its owner's ``uid:gid`` (mounted when created);
* ``kwargs["environment"]`` is exactly TorchX's, lowest to highest: ``copy_env`` matches, cfg ``env``, the
  role's env, then ``TORCHX_RANK0_HOST`` (rank 0's container name); so code written for TorchX reads the
  same variables and a request compares equal to TorchX's. Our additions are a rule of ``DockerContainer``,
  applied when the container is created (``PYTHONUNBUFFERED=1`` under all of those, and
  ``JUPYTER_SCHED_{APP_ID,ROLE_NAME,REPLICA_ID,IMAGE}`` from the labels and image over them); the dry run
  shows both parts. Macros are applied per replica (``img_root`` is
  empty, ``rank0_env`` names ``TORCHX_RANK0_HOST``);
* command: ``[entrypoint, *args]`` as docker's CMD (an image ENTRYPOINT still applies);
* bind and volume mounts as engine mount dicts, device mounts as ``src:dst:perm``;
* ``cpu`` -> ``nano_cpus``, ``memMB`` -> memory limit and ``/dev/shm`` size, ``gpu`` -> a device request,
  ``resource.devices`` -> more device mounts (``devices``), ``max_retries`` -> an ``on-failure``
  restart policy. Not mapped: ``port_map``, ``min_replicas``, ``retry_policy`` (docker restarts only the
  failed replica).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.schedulers.docker.labels import (
    LABEL_APP_ID,
    LABEL_APP_NAME,
    LABEL_CANCEL_GRACE,
    LABEL_METRICS_DIR,
    LABEL_METRICS_OWNER,
    LABEL_OWNER,
    LABEL_REPLICA_ID,
    LABEL_REPLICAS,
    LABEL_ROLE_INDEX,
    LABEL_ROLE_NAME,
    LABEL_SESSION,
    LABEL_VERSION,
    LABEL_WORKSPACE,
    owner_name,
    package_version,
)
from jupyter_sched.schedulers.docker.request.devices import device_mounts
from jupyter_sched.schedulers.docker.request.job import DEFAULT_NETWORK, PULL_POLICIES, DockerContainer, DockerJob
from jupyter_sched.schedulers.docker.request.preflight import files_left_behind
from jupyter_sched.specs import (
    AppDef,
    BindMount,
    CfgVal,
    DeviceMount,
    InvalidRunConfigException,
    Role,
    VolumeMount,
    macros,
)
from jupyter_sched.specs.output.names import safe_name

RANK0_ENV = "TORCHX_RANK0_HOST"  # TorchX's name, which ${rank0_env} names: code written for TorchX reads it
_MAX_HOSTNAME = 63


class DockerSubmitError(RuntimeError):
    """A replica could not be created or started; nothing of the app was left behind."""


def build_job(
    app: AppDef, cfg: Mapping[str, CfgVal], session_name: str, app_id: str, metrics_dir: Optional[str] = None
) -> DockerJob:
    """The containers of app ``app_id`` (the scheduler makes it unique) under the resolved run options
    ``cfg`` (pure: nothing is started). ``metrics_dir``: the app's metrics directory on this machine, which
    every container gets bind-mounted (see ``DockerContainer.scheduler_mounts``); None: no mount."""
    owner = owner_name()
    metrics_labels = (
        {LABEL_METRICS_DIR: metrics_dir, LABEL_METRICS_OWNER: f"{os.getuid()}:{os.getgid()}"} if metrics_dir else {}
    )
    pull = str(cfg.get("pull") or "missing")
    if pull not in PULL_POLICIES:
        raise InvalidRunConfigException(f"pull={pull!r} must be one of {', '.join(PULL_POLICIES)}", "pull", cfg)
    grace_cfg = cfg.get("cancel_grace")
    grace = float(grace_cfg) if isinstance(grace_cfg, (int, float, str)) else 10.0
    if grace < 0:
        raise InvalidRunConfigException(f"cancel_grace={grace} must be 0 or more seconds", "cancel_grace", cfg)
    network = str(cfg.get("network") or DEFAULT_NETWORK)
    base_env: Dict[str, str] = {}
    for pattern in cfg.get("copy_env") or []:  # type: ignore[union-attr]
        base_env.update({k: v for k, v in os.environ.items() if fnmatch.fnmatchcase(k, pattern)})
    base_env.update(cfg.get("env") or {})  # type: ignore[arg-type]
    names = container_names(app_id, app.roles)
    notes: List[str] = []
    replicas_label = json.dumps([[role.name, role.num_replicas] for role in app.roles], separators=(",", ":"))
    rank0 = names[(0, 0)]
    containers = []
    for ri, role in enumerate(app.roles):
        devices, device_notes = device_mounts(role.resource.devices, role.name)
        notes += device_notes + files_left_behind(role, workspace_repo=str(cfg.get("image_repo") or ""))
        for k in range(role.num_replicas):
            values = macros.Values(img_root="", app_id=app_id, replica_id=str(k), rank0_env=RANK0_ENV)
            replica = values.apply(role)
            env = {**base_env, **replica.env, RANK0_ENV: rank0}
            labels = {
                LABEL_VERSION: package_version(),
                LABEL_APP_ID: app_id,
                LABEL_APP_NAME: app.name,
                LABEL_SESSION: session_name,
                LABEL_OWNER: owner,
                LABEL_ROLE_NAME: role.name,
                LABEL_ROLE_INDEX: str(ri),
                LABEL_REPLICA_ID: str(k),
                LABEL_CANCEL_GRACE: f"{grace:g}",
                LABEL_REPLICAS: replicas_label,
                **metrics_labels,
            }
            kwargs: Dict[str, Any] = {
                "name": names[(ri, k)],
                "hostname": names[(ri, k)],
                "network": network,
                "labels": labels,
                "environment": env,
            }
            kwargs.update(mount_kwargs(replica, extra_devices=devices))
            kwargs.update(resource_kwargs(replica))
            if role.max_retries > 0:
                kwargs["restart_policy"] = {"Name": "on-failure", "MaximumRetryCount": role.max_retries}
            if cfg.get("privileged"):
                kwargs["privileged"] = True
            command = [replica.entrypoint, *replica.args]
            containers.append(DockerContainer(role.image, command, kwargs))
    workspaces = {
        role.image: str(role.metadata[LABEL_WORKSPACE]) for role in app.roles if role.metadata.get(LABEL_WORKSPACE)
    }
    return DockerJob(app_id, containers, network=network, pull=pull, notes=notes, workspaces=workspaces)


def container_names(app_id: str, roles: List[Role]) -> Dict[Tuple[int, int], str]:
    """``{app_id[-30:]}-{role}-{k}`` per replica, at most 63 characters (a valid hostname), starting with
    a letter or digit; falls back to ``{app}-r{role index}-{k}`` if truncation made two names equal."""
    app_part = re.sub(r"^[^A-Za-z0-9]+", "", app_id[-30:]) or "app"
    names: Dict[Tuple[int, int], str] = {}
    for ri, role in enumerate(roles):
        for k in range(role.num_replicas):
            suffix = f"-{k}"
            budget = max(1, _MAX_HOSTNAME - len(app_part) - 1 - len(suffix))
            names[(ri, k)] = f"{app_part}-{safe_name(role.name, 'role')[:budget]}{suffix}"
    if len(set(names.values())) < len(names):
        names = {(ri, k): f"{app_part}-r{ri}-{k}" for (ri, k) in names}
    return names


def mount_kwargs(role: Role, extra_devices: Sequence[DeviceMount] = ()) -> Dict[str, Any]:
    """The engine's ``mounts`` and ``devices`` for the role's mounts, then ``extra_devices`` (from its
    ``resource.devices``; the role itself is not changed)."""
    mounts: List[Dict[str, Any]] = []
    devices: List[str] = []
    for mount in [*role.mounts, *extra_devices]:
        if isinstance(mount, BindMount):
            mounts.append(
                {
                    "Target": mount.dst_path,
                    "Source": os.path.abspath(mount.src_path),
                    "Type": "bind",
                    "ReadOnly": mount.read_only,
                }
            )
        elif isinstance(mount, VolumeMount):
            mounts.append(
                {"Target": mount.dst_path, "Source": mount.src, "Type": "volume", "ReadOnly": mount.read_only}
            )
        elif isinstance(mount, DeviceMount):
            devices.append(f"{mount.src_path}:{mount.dst_path}:{mount.permissions}")
        else:
            raise TypeError(
                f"role {role.name!r}: unsupported mount {mount!r}; use BindMount, VolumeMount or DeviceMount"
            )
    out: Dict[str, Any] = {}
    if mounts:
        out["mounts"] = mounts
    if devices:
        out["devices"] = devices
    return out


def resource_kwargs(role: Role) -> Dict[str, Any]:
    res = role.resource
    out: Dict[str, Any] = {}
    if res.cpu > 0:
        out["nano_cpus"] = int(res.cpu * 1e9)
    if res.memMB > 0:
        out["mem_limit"] = f"{res.memMB}m"
        out["shm_size"] = f"{res.memMB}m"  # as large as the memory: PyTorch data loaders use /dev/shm
    if res.gpu > 0:
        out["device_requests"] = [{"count": res.gpu, "capabilities": [["compute", "utility"]]}]
    return out


def check_host_paths(job: DockerJob) -> None:
    """Bind sources and devices must exist before anything starts (docker would fail half-way)."""
    for c in job.containers:
        for mount in c.kwargs.get("mounts") or []:
            if mount.get("Type") == "bind" and not os.path.exists(mount["Source"]):
                raise DockerSubmitError(
                    f"replica {c.role}[{c.replica_id}] of app {job.app_id}: the bind mount source"
                    f" {mount['Source']!r} (-> {mount['Target']}) does not exist on this machine. Create it"
                    f" (mkdir -p {mount['Source']}) or fix src= in the mount; nothing was started"
                )
        for device in c.kwargs.get("devices") or []:
            src = device.split(":", 1)[0]
            if not os.path.exists(src):
                raise DockerSubmitError(
                    f"replica {c.role}[{c.replica_id}] of app {job.app_id}: device {src!r} does not exist on"
                    " this machine; fix src= in the device mount; nothing was started"
                )


def images_of(job: DockerJob) -> Dict[str, str]:
    """image -> "role a, role b" (who needs it), in first-use order."""
    users: Dict[str, List[str]] = {}
    for c in job.containers:
        roles = users.setdefault(c.image, [])
        if c.role not in roles:
            roles.append(c.role)
    return {image: "role " + ", role ".join(roles) for image, roles in users.items()}

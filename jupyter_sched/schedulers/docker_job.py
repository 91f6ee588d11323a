"""The docker backend's request: one :class:`DockerContainer` per replica, gathered in a :class:`DockerJob`.

Pure data (no docker import): ``DockerContainer.kwargs`` are exactly the keyword arguments of the docker
SDK's ``client.containers.create(image, command, **kwargs)``, with plain JSON-able values (mounts and
device requests are the dicts the engine API takes), so a role's ``pre_proc`` hook can edit them. Their
``environment`` is exactly what TorchX puts there; ``default_env`` and ``scheduler_env`` (ours) are merged
in when the container is created (``env``), and every rendering shows the merged environment. The
request renders three ways: ``repr`` (readable, per container, one row per value: control characters are
shown as escapes), ``docker_run_command()`` (a shell-quoted ``docker run`` line to reproduce a replica by
hand) and ``to_json()`` (for the notebook's rich display).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from jupyter_sched.specs.dryrun import DryRunView, ReplicaPlan

LABEL_PREFIX = "jupyter_sched."
LABEL_VERSION = "jupyter_sched.version"
LABEL_APP_ID = "jupyter_sched.app-id"
LABEL_APP_NAME = "jupyter_sched.app-name"
LABEL_SESSION = "jupyter_sched.session"
LABEL_OWNER = "jupyter_sched.owner"
"""The user who submitted the app: a Docker engine is shared by its users, so a session's ``list`` shows
only its own user's apps (``default`` is everyone's default session name)."""
LABEL_ROLE_NAME = "jupyter_sched.role-name"
LABEL_ROLE_INDEX = "jupyter_sched.role-index"
LABEL_REPLICA_ID = "jupyter_sched.replica-id"
LABEL_CANCEL_GRACE = "jupyter_sched.cancel-grace"
LABEL_REPLICAS = "jupyter_sched.replicas"
"""On every replica: the app's roles and replica counts as JSON ``[[role, n], ...]``, so ``describe`` can
name a replica whose container was removed (``docker rm``) instead of losing it silently."""
LABEL_CANCELLED_AT = "jupyter_sched.cancelled-at"
"""Only on an app's cancel record (see ``docker_scheduler``): when the app was cancelled."""
LABEL_WORKSPACE = "jupyter_sched.workspace"
"""On images built from a workspace: the directory or fsspec URL they were built from (and the same key in
the metadata of a role whose image it is, so the request can say so)."""

DEFAULT_NETWORK = "jupyter_sched"


def owner_name() -> str:
    """This process's user, as ``LABEL_OWNER`` records it (the login name, else the numeric uid)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name for this uid (a container's arbitrary uid)
        return str(os.getuid())
LOCAL_WORKSPACE_REPO = "jupyter-sched/workspace"
"""The repository of workspace images built here (``docker_workspace``): they hold the workspace's files."""


def package_version() -> str:
    """jupyter_sched's version, for the ``LABEL_VERSION`` of containers, networks and images (imported
    late: the package imports its backends)."""
    from jupyter_sched import __version__

    return __version__

PULL_POLICIES = ("never", "missing", "always")
ENV_LEGEND = "env: kwargs['environment'], as TorchX sets it; env+: added or replaced when the container is created"

# kwargs rendered as `docker run` flags; anything else shows up in a trailing comment
_SIMPLE_FLAGS = {
    "user": "--user",
    "working_dir": "--workdir",
    "entrypoint": "--entrypoint",
    "mem_limit": "--memory",
    "shm_size": "--shm-size",
}


@dataclass
class DockerContainer:
    """One replica: its image, its command (docker's CMD) and the SDK ``containers.create`` kwargs."""

    image: str
    command: List[str]
    kwargs: Dict[str, Any] = field(default_factory=dict)
    default_env: Dict[str, str] = field(default_factory=dict)
    """Set in the container when it is created, unless ``kwargs["environment"]`` names the variable too
    (``PYTHONUNBUFFERED=1``: a role's own value wins)."""
    scheduler_env: Dict[str, str] = field(default_factory=dict)
    """Set in the container when it is created, over ``kwargs["environment"]`` (``JUPYTER_SCHED_APP_ID``
    and the like). Both stay out of ``kwargs["environment"]``, which holds exactly what TorchX puts there."""

    # -- read-only views of the common kwargs ---------------------------------------------------------
    @property
    def name(self) -> str:
        return str(self.kwargs.get("name", ""))

    @property
    def labels(self) -> Dict[str, str]:
        return dict(self.kwargs.get("labels") or {})

    @property
    def env(self) -> Dict[str, str]:
        """The environment the container gets: ``default_env``, then ``kwargs["environment"]`` over it,
        then ``scheduler_env`` over both."""
        return {**self.default_env, **(self.kwargs.get("environment") or {}), **self.scheduler_env}

    def create_kwargs(self) -> Dict[str, Any]:
        """``kwargs`` as ``containers.create`` receives them: the ``environment`` is :attr:`env`."""
        return {**self.kwargs, "environment": self.env}

    def added_env(self) -> Dict[str, str]:
        """What creating the container adds to or changes in ``kwargs["environment"]``."""
        requested = self.kwargs.get("environment") or {}
        return {k: v for k, v in self.env.items() if k not in requested or requested[k] != v}

    @property
    def role(self) -> str:
        return self.labels.get(LABEL_ROLE_NAME, "")

    @property
    def replica_id(self) -> int:
        return int(self.labels.get(LABEL_REPLICA_ID, "0"))

    @property
    def network(self) -> Optional[str]:
        return self.kwargs.get("network")

    def docker_run_command(self, multiline: bool = False) -> str:
        """The equivalent ``docker run`` command line, shell-quoted (``multiline`` adds ``\\`` breaks).

        kwargs without a ``docker run`` flag are listed in a trailing ``#`` comment.
        """
        kw = self.kwargs
        groups: List[List[str]] = [["docker", "run", "--detach"]]
        for key, flag in (("name", "--name"), ("hostname", "--hostname"), ("network", "--network")):
            if kw.get(key):
                groups.append([flag, str(kw[key])])
        for key, value in (kw.get("labels") or {}).items():
            groups.append(["--label", f"{key}={value}"])
        for key, value in self.env.items():
            groups.append(["--env", f"{key}={value}"])
        for mount in kw.get("mounts") or []:
            groups.append(["--mount", _mount_flag(mount)])
        for device in kw.get("devices") or []:
            groups.append(["--device", device])
        if kw.get("nano_cpus"):
            groups.append(["--cpus", _fmt_cpus(kw["nano_cpus"])])
        for key, flag in _SIMPLE_FLAGS.items():
            if kw.get(key) is not None:
                value = kw[key]
                groups.append([flag, " ".join(value) if isinstance(value, list) else str(value)])
        for request in kw.get("device_requests") or []:
            groups.append(["--gpus", _gpus_flag(request)])
        policy = kw.get("restart_policy")
        if policy and policy.get("Name"):
            retries = policy.get("MaximumRetryCount")
            groups.append(["--restart", f"{policy['Name']}:{retries}" if retries else policy["Name"]])
        if kw.get("privileged"):
            groups.append(["--privileged"])
        groups.append([self.image, *self.command])
        known = {"name", "hostname", "network", "labels", "environment", "mounts", "devices", "nano_cpus",
                 "device_requests", "restart_policy", "privileged", *_SIMPLE_FLAGS}  # fmt: skip
        rest = {k: v for k, v in kw.items() if k not in known and v is not None}
        sep = " \\\n    " if multiline else " "
        line = sep.join(shlex.join(g) for g in groups)
        if rest:
            line += "  # not shown as flags: " + json.dumps(rest, default=str, sort_keys=True)
        return line

    def to_json(self) -> Dict[str, Any]:
        kw = self.kwargs
        policy = kw.get("restart_policy") or {}
        gpus = _gpus(kw)
        return {
            "name": self.name,
            "role": self.role,
            "replica_id": self.replica_id,
            "image": self.image,
            "command": list(self.command),
            "env": self.env,
            "default_env": dict(self.default_env),
            "scheduler_env": dict(self.scheduler_env),
            "labels": self.labels,
            "network": self.network,
            "hostname": kw.get("hostname"),
            "mounts": [dict(m) for m in kw.get("mounts") or []],
            "devices": list(kw.get("devices") or []),
            "cpus": kw["nano_cpus"] / 1e9 if kw.get("nano_cpus") else None,
            "memory": kw.get("mem_limit"),
            "shm_size": kw.get("shm_size"),
            "gpus": int(gpus) if gpus.isdigit() else gpus or None,  # a number, "all" or None
            "restart_policy": dict(policy) if policy else None,
            "privileged": bool(kw.get("privileged")),
            "docker_run": self.docker_run_command(),
            "kwargs": json.loads(json.dumps(self.kwargs, default=str)),
        }

    def __repr__(self) -> str:
        return "\n".join(_format_container(self))


@dataclass
class DockerJob:
    """Every container of one app, plus what ``schedule`` needs to run them."""

    app_id: str
    containers: List[DockerContainer]
    network: str = DEFAULT_NETWORK
    pull: str = "missing"
    notes: List[str] = field(default_factory=list)
    """What would likely go wrong in the containers, found while building the request (see ``warnings``)."""
    workspaces: Dict[str, str] = field(default_factory=dict)
    """Image -> the workspace (directory or URL) it was built from, for the images built from one."""

    def warnings(self) -> List[str]:
        """Problems the dry run can see before anything runs, in words that say the fix: a script that is
        a file here but in neither the image nor a mount, a resource device with no mapping."""
        return list(self.notes)

    def docker_run_command(self, multiline: bool = False) -> List[str]:
        """One ``docker run`` command line per container, in order."""
        return [c.docker_run_command(multiline) for c in self.containers]

    def docker_script(self) -> str:
        """A shell script that reproduces the app by hand: create the network, then run each replica."""
        head = f"docker network create {shlex.quote(self.network)} 2>/dev/null || true"
        return "\n".join([head, *self.docker_run_command(multiline=True)]) + "\n"

    def to_json(self) -> Dict[str, Any]:
        return {
            "app_id": self.app_id,
            "network": self.network,
            "pull": self.pull,
            "containers": [c.to_json() for c in self.containers],
            "warnings": self.warnings(),
            "workspaces": dict(self.workspaces),
        }

    def dryrun_view(self) -> DryRunView:
        """The request in neutral terms (see ``specs.dryrun``): one plan per container."""
        added = sorted({k for c in self.containers for k in c.added_env()})
        text = f"{', '.join(added)} are set when each container is created; kwargs['environment'] holds the rest"
        notes = [("env", text)] if added else []
        notes += [("workspace", f"{image} was built from workspace {url}") for image, url in self.workspaces.items()]
        return DryRunView([_plan(c) for c in self.containers], notes=notes, warnings=self.warnings())

    def __repr__(self) -> str:
        out = [f"DockerJob(app_id={self.app_id}, network={self.network}, pull={self.pull})"]
        if any(c.added_env() for c in self.containers):
            out.append(f"  ({ENV_LEGEND})")
        out.extend(f"  workspace: {image} was built from {_one_line(url)}" for image, url in self.workspaces.items())
        for container in self.containers:
            out.extend("  " + line for line in _format_container(container))
        return "\n".join(out)

    __str__ = __repr__


def _plan(c: DockerContainer) -> ReplicaPlan:
    data = c.to_json()
    limits = {key: str(data[key]) for key in ("cpus", "memory", "shm_size", "gpus") if data.get(key)}
    if c.kwargs.get("devices"):
        limits["devices"] = ", ".join(c.kwargs["devices"])
    if data.get("restart_policy"):
        limits["restart"] = str(data["restart_policy"].get("Name"))
    if data.get("privileged"):
        limits["privileged"] = "true"
    mounts = [
        f"{m.get('Type')} {m.get('Source') or ''} -> {m.get('Target')}{' (ro)' if m.get('ReadOnly') else ''}"
        for m in c.kwargs.get("mounts") or []
    ]
    return ReplicaPlan(
        role=c.role, replica_id=c.replica_id, argv=c.command, env=c.env, cwd=c.kwargs.get("working_dir"),
        image=c.image, mounts=mounts, limits=limits, name=c.name, launch=("docker run", c.docker_run_command()),
    )  # fmt: skip


def _format_container(c: DockerContainer) -> List[str]:
    kw = c.kwargs
    out = [f"container {c.name} (role {c.role}, replica {c.replica_id})"]

    def row(key: str, value: str) -> None:
        out.append(f"  {key + ':' if key else '':<9} {_one_line(value)}")

    row("image", c.image)
    row("command", shlex.join(c.command))
    env = kw.get("environment") or {}
    added = c.added_env()
    for i, (key, value) in enumerate(env.items()):
        row("env" if i == 0 else "", f"{key}={value}" + ("  (replaced, see env+)" if key in added else ""))
    for i, (key, value) in enumerate(added.items()):  # not in kwargs["environment"]: added at create time
        row("env+" if i == 0 else "", f"{key}={value}")
    for i, mount in enumerate(kw.get("mounts") or []):
        ro = " (readonly)" if mount.get("ReadOnly") else ""
        row("mounts" if i == 0 else "", f"{mount.get('Type')} {mount.get('Source')} -> {mount.get('Target')}{ro}")
    for i, device in enumerate(kw.get("devices") or []):
        row("devices" if i == 0 else "", device)
    limits = []
    if kw.get("nano_cpus"):
        limits.append(f"cpus={_fmt_cpus(kw['nano_cpus'])}")
    if kw.get("mem_limit"):
        limits.append(f"memory={kw['mem_limit']}")
    if kw.get("shm_size"):
        limits.append(f"shm={kw['shm_size']}")
    gpus = _gpus(kw)
    if gpus:
        limits.append(f"gpus={gpus}")
    row("limits", " ".join(limits) or "none")
    policy = kw.get("restart_policy")
    if policy and policy.get("Name"):
        row("restart", f"{policy['Name']} (max {policy.get('MaximumRetryCount', 0)} retries)")
    else:
        row("restart", "no")
    row("network", f"{kw.get('network')} (hostname {kw.get('hostname')})")
    if kw.get("privileged"):
        row("flags", "privileged")
    return out


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _one_line(text: str) -> str:
    """``text`` with control characters as backslash escapes, so that a value with a newline stays on its
    row of the readable repr (``docker_run_command`` keeps the real characters, quoted for the shell)."""
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def _fmt_cpus(nano: int) -> str:
    return f"{nano / 1e9:g}"


def _csv_field(value: str) -> str:
    if any(ch in value for ch in ',"\n'):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow([value])
        return buf.getvalue()
    return value


def _mount_flag(mount: Dict[str, Any]) -> str:
    parts = [f"type={mount.get('Type', 'bind')}"]
    if mount.get("Source"):
        parts.append(_csv_field(f"source={mount['Source']}"))
    parts.append(_csv_field(f"target={mount.get('Target')}"))
    if mount.get("ReadOnly"):
        parts.append("readonly")
    return ",".join(parts)


def _gpus(kw: Dict[str, Any]) -> str:
    """How many GPUs the device requests ask for: a number, ``all`` (count -1) or "" (none). A request is
    the SDK's ``DeviceRequest`` (``Count``, as TorchX builds it) or our plain dict (``count``)."""
    counts = [int(r.get("count", r.get("Count", -1))) for r in kw.get("device_requests") or []]
    return "all" if -1 in counts else str(sum(counts) or "")


def _gpus_flag(request: Dict[str, Any]) -> str:
    count = request.get("count", request.get("Count", -1))
    caps = request.get("capabilities", request.get("Capabilities")) or []
    text = "all" if count == -1 else f"count={count}"
    flat = sorted({c for group in caps for c in group})
    if flat:
        text += "," + _csv_field("capabilities=" + ",".join(flat))
    return text

"""The docker request shown to people: the readable ``repr``, the JSON of the notebook's rich display, and
the neutral dry-run view (``specs.dryrun``).

``DockerContainer`` and ``DockerJob`` (``job``, the data) render through these functions. The
readable form is one row per value, with control characters shown as escapes so a value with a newline
stays on its row. Like TorchX's, it shows the request's own fields (image, command, kwargs), so two requests
with the same fields print the same; its first lines state the rule by which creating a container adds to
``kwargs["environment"]``. The JSON, the neutral view and the ``docker run`` line (from ``run_line``)
show each container's merged environment, value by value.
Pure: no docker import, no I/O.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import TYPE_CHECKING, Any, Dict, List

from jupyter_sched.schedulers.docker.run_line import fmt_cpus, gpus_of
from jupyter_sched.specs.dryrun import DryRunView, ReplicaPlan

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.docker.job import DockerContainer, DockerJob

ENV_LEGEND = (
    "env: kwargs['environment'], as TorchX sets it. Creating a container adds PYTHONUNBUFFERED=1 unless env\n"
    "sets it, and sets JUPYTER_SCHED_APP_ID, _ROLE_NAME, _REPLICA_ID (from its labels) and _IMAGE over env;\n"
    "docker_run_command() (the docker run lines of the dry runs) and to_json() show each value"
)


def container_json(c: "DockerContainer") -> Dict[str, Any]:
    """One container for the notebook's rich display: the request's values, named, and the ``docker run`` line."""
    kw = c.kwargs
    policy = kw.get("restart_policy") or {}
    gpus = gpus_of(kw)
    return {
        "name": c.name,
        "role": c.role,
        "replica_id": c.replica_id,
        "image": c.image,
        "command": list(c.command),
        "env": c.env,
        "default_env": dict(c.default_env),
        "scheduler_env": dict(c.scheduler_env),
        "labels": c.labels,
        "network": c.network,
        "hostname": kw.get("hostname"),
        "mounts": [dict(m) for m in kw.get("mounts") or []],
        "devices": list(kw.get("devices") or []),
        "cpus": kw["nano_cpus"] / 1e9 if kw.get("nano_cpus") else None,
        "memory": kw.get("mem_limit"),
        "shm_size": kw.get("shm_size"),
        "gpus": int(gpus) if gpus.isdigit() else gpus or None,  # a number, "all" or None
        "restart_policy": dict(policy) if policy else None,
        "privileged": bool(kw.get("privileged")),
        "docker_run": c.docker_run_command(),
        "kwargs": json.loads(json.dumps(c.kwargs, default=str)),
    }


def job_json(job: "DockerJob") -> Dict[str, Any]:
    return {
        "app_id": job.app_id,
        "network": job.network,
        "pull": job.pull,
        "containers": [c.to_json() for c in job.containers],
        "warnings": job.warnings(),
        "workspaces": dict(job.workspaces),
    }


def job_dryrun_view(job: "DockerJob") -> DryRunView:
    """The request in neutral terms (see ``specs.dryrun``): one plan per container, its ``env`` the request's
    ``kwargs["environment"]`` and its ``launch_env`` what creating the container adds or replaces."""
    notes = [("workspace", f"{image} was built from workspace {url}") for image, url in job.workspaces.items()]
    return DryRunView([replica_plan(c) for c in job.containers], notes=notes, warnings=job.warnings())


def replica_plan(c: "DockerContainer") -> ReplicaPlan:
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
        role=c.role, replica_id=c.replica_id, argv=c.command, env=dict(c.kwargs.get("environment") or {}),
        launch_env=c.added_env(), cwd=c.kwargs.get("working_dir"), image=c.image, mounts=mounts, limits=limits,
        name=c.name, launch=("docker run", c.docker_run_command(multiline=True)),  # one flag a line: to read
    )  # fmt: skip


def job_text(job: "DockerJob") -> str:
    """The readable ``repr`` of a job: its settings, the env legend if needed, then each container indented."""
    out = [f"DockerJob(app_id={job.app_id}, network={job.network}, pull={job.pull})"]
    out.extend(f"  # {line}" for line in ENV_LEGEND.splitlines())
    out.extend(f"  workspace: {image} was built from {one_line(url)}" for image, url in job.workspaces.items())
    for container in job.containers:
        out.extend("  " + line for line in container_lines(container))
    return "\n".join(out)


def container_lines(c: "DockerContainer") -> List[str]:
    """The readable ``repr`` of a container, one row per value."""
    kw = c.kwargs
    named = c.role and not c.name.endswith(f"-{c.role}-{c.replica_id}")  # a name that does not show it
    out = [f"container {c.name}" + (f" (role {c.role}, replica {c.replica_id})" if named else "")]

    def row(key: str, value: str) -> None:
        out.append(f"  {key + ':' if key else '':<9} {one_line(value)}")

    row("image", c.image)
    row("command", shlex.join(c.command))
    env = kw.get("environment") or {}
    replaced = c.scheduler_env
    for i, (key, value) in enumerate(env.items()):
        note = "  (replaced when created)" if key in replaced and replaced[key] != value else ""
        row("env" if i == 0 else "", f"{key}={value}{note}")
    for i, mount in enumerate(kw.get("mounts") or []):
        ro = " (readonly)" if mount.get("ReadOnly") else ""
        row("mounts" if i == 0 else "", f"{mount.get('Type')} {mount.get('Source')} -> {mount.get('Target')}{ro}")
    for i, device in enumerate(kw.get("devices") or []):
        row("devices" if i == 0 else "", device)
    limits = []
    if kw.get("nano_cpus"):
        limits.append(f"cpus={fmt_cpus(kw['nano_cpus'])}")
    if kw.get("mem_limit"):
        limits.append(f"memory={kw['mem_limit']}")
    if kw.get("shm_size"):
        limits.append(f"shm={kw['shm_size']}")
    gpus = gpus_of(kw)
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


def one_line(text: str) -> str:
    """``text`` with control characters as backslash escapes, so that a value with a newline stays on its
    row of the readable repr (``docker_run_command`` keeps the real characters, quoted for the shell)."""
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group(), f"\\x{ord(m.group()):02x}"), text)

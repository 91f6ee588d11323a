"""The docker request shown to people: the readable ``repr``, the JSON of the notebook's rich display, and
the neutral dry-run view (``specs.dryrun``).

``DockerContainer`` and ``DockerJob`` (``job``, the data) render through these functions. The
readable form is one row per value, with control characters shown as escapes so a value with a newline
stays on its row. Like TorchX's, it shows the request's own fields (image, command, kwargs), so two requests
with the same fields print the same; its first lines state the rule by which creating a container adds to
``kwargs["environment"]``. The JSON, the neutral view and the ``docker run`` line show each container's
merged environment, value by value.

**The ``docker run`` line.** A replica's request as the command line that reproduces it by hand
(``DockerContainer.docker_run_command()``, ``DockerJob.docker_script()``). The line is shell-quoted and keeps
every value's real characters (a newline stays a newline, quoted); the kwargs that ``docker run`` has no flag
for are listed in a trailing ``#`` comment, so nothing of the request is lost.

Pure: no docker import, no I/O; it reads the containers' plain kwargs only.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from typing import TYPE_CHECKING, Any, Dict, List

from jupyter_sched.specs.request.dryrun import DryRunView, ReplicaPlan

if TYPE_CHECKING:  # pragma: no cover
    # type-only cycle: the request's data classes (job) render themselves through these functions, as rich
    # keeps one model and separate renderers; the data holds no rendering code, and the renderers are typed
    # by the data they render (job imports this module at run time, this module never imports job).
    from jupyter_sched.schedulers.docker.request.job import DockerContainer, DockerJob  # type-only cycle: see above

ENV_LEGEND = (
    "env: kwargs['environment'], as TorchX sets it. Creating a container adds PYTHONUNBUFFERED=1 unless env\n"
    "sets it, and sets JUPYTER_SCHED_APP_ID, _ROLE_NAME, _REPLICA_ID (from its labels), _IMAGE and, with a\n"
    "metrics directory, _METRICS_DIR and _METRICS_OWNER over env, and mounts the metrics directory (shown\n"
    "as 'added when created'); docker_run_command() (the docker run lines of the dry runs) and to_json() show\n"
    "each value"
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
        "scheduler_mounts": c.scheduler_mounts,
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
    ] + [f"{m['Type']} {m['Source']} -> {m['Target']} (metrics, added when created)" for m in c.scheduler_mounts]
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
    own = kw.get("mounts") or []
    for i, mount in enumerate([*own, *c.scheduler_mounts]):
        note = " (readonly)" if mount.get("ReadOnly") else ""
        note += " (added when created)" if i >= len(own) else ""
        row("mounts" if i == 0 else "", f"{mount.get('Type')} {mount.get('Source')} -> {mount.get('Target')}{note}")
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


# -- the docker run line ----------------------------------------------------------------------------------

SIMPLE_FLAGS = {
    "user": "--user",
    "working_dir": "--workdir",
    "entrypoint": "--entrypoint",
    "mem_limit": "--memory",
    "shm_size": "--shm-size",
}
"""kwargs rendered as ``docker run`` flags of the same value; anything else not handled below shows up in
the trailing comment."""


def docker_run_command(container: DockerContainer, multiline: bool = False) -> str:
    """The equivalent ``docker run`` command line, shell-quoted (``multiline`` adds ``\\`` breaks)."""
    kw = container.kwargs
    groups: List[List[str]] = [["docker", "run", "--detach"]]
    for key, flag in (("name", "--name"), ("hostname", "--hostname"), ("network", "--network")):
        if kw.get(key):
            groups.append([flag, str(kw[key])])
    for key, value in (kw.get("labels") or {}).items():
        groups.append(["--label", f"{key}={value}"])
    for key, value in container.env.items():
        groups.append(["--env", f"{key}={value}"])
    for mount in container.create_kwargs().get("mounts") or []:
        groups.append(["--mount", mount_flag(mount)])
    for device in kw.get("devices") or []:
        groups.append(["--device", device])
    if kw.get("nano_cpus"):
        groups.append(["--cpus", fmt_cpus(kw["nano_cpus"])])
    for key, flag in SIMPLE_FLAGS.items():
        if kw.get(key) is not None:
            value = kw[key]
            groups.append([flag, " ".join(value) if isinstance(value, list) else str(value)])
    for request in kw.get("device_requests") or []:
        groups.append(["--gpus", gpus_flag(request)])
    policy = kw.get("restart_policy")
    if policy and policy.get("Name"):
        retries = policy.get("MaximumRetryCount")
        groups.append(["--restart", f"{policy['Name']}:{retries}" if retries else policy["Name"]])
    if kw.get("privileged"):
        groups.append(["--privileged"])
    groups.append([container.image, *container.command])
    known = {"name", "hostname", "network", "labels", "environment", "mounts", "devices", "nano_cpus",
             "device_requests", "restart_policy", "privileged", *SIMPLE_FLAGS}  # fmt: skip
    rest = {k: v for k, v in kw.items() if k not in known and v is not None}
    sep = " \\\n    " if multiline else " "
    line = sep.join(shlex.join(g) for g in groups)
    if rest:
        line += "  # not shown as flags: " + json.dumps(rest, default=str, sort_keys=True)
    return line


def fmt_cpus(nano: int) -> str:
    """``nano_cpus`` as ``docker run --cpus`` takes it (``1.5``)."""
    return f"{nano / 1e9:g}"


def gpus_of(kw: Dict[str, Any]) -> str:
    """How many GPUs the device requests ask for: a number, ``all`` (count -1) or "" (none). A request is
    the SDK's ``DeviceRequest`` (``Count``, as TorchX builds it) or our plain dict (``count``)."""
    counts = [int(r.get("count", r.get("Count", -1))) for r in kw.get("device_requests") or []]
    return "all" if -1 in counts else str(sum(counts) or "")


def _csv_field(value: str) -> str:
    if any(ch in value for ch in ',"\n'):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow([value])
        return buf.getvalue()
    return value


def mount_flag(mount: Dict[str, Any]) -> str:
    """An engine mount dict as the value of ``--mount`` (fields CSV-quoted when they need it)."""
    parts = [f"type={mount.get('Type', 'bind')}"]
    if mount.get("Source"):
        parts.append(_csv_field(f"source={mount['Source']}"))
    parts.append(_csv_field(f"target={mount.get('Target')}"))
    if mount.get("ReadOnly"):
        parts.append("readonly")
    return ",".join(parts)


def gpus_flag(request: Dict[str, Any]) -> str:
    """A device request as the value of ``--gpus`` (``all`` or ``count=N``, then its capabilities)."""
    count = request.get("count", request.get("Count", -1))
    caps = request.get("capabilities", request.get("Capabilities")) or []
    text = "all" if count == -1 else f"count={count}"
    flat = sorted({c for group in caps for c in group})
    if flat:
        text += "," + _csv_field("capabilities=" + ",".join(flat))
    return text

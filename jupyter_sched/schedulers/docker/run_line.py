"""A replica's request as the ``docker run`` command line that reproduces it by hand.

``DockerContainer.docker_run_command()`` and ``DockerJob.docker_script()`` render through here. The line is
shell-quoted and keeps every value's real characters (a newline stays a newline, quoted); the kwargs that
``docker run`` has no flag for are listed in a trailing ``#`` comment, so nothing of the request is lost.
Pure (no docker import): it reads the container's plain kwargs only. The value formatters (CPUs, GPUs) are
public because the readable views (``views``) show the same numbers.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.schedulers.docker.job import DockerContainer

SIMPLE_FLAGS = {
    "user": "--user",
    "working_dir": "--workdir",
    "entrypoint": "--entrypoint",
    "mem_limit": "--memory",
    "shm_size": "--shm-size",
}
"""kwargs rendered as ``docker run`` flags of the same value; anything else not handled below shows up in
the trailing comment."""


def docker_run_command(container: "DockerContainer", multiline: bool = False) -> str:
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
    for mount in kw.get("mounts") or []:
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

"""The docker backend's request: one :class:`DockerContainer` per replica, gathered in a :class:`DockerJob`.

Pure data (no docker import): ``DockerContainer`` holds TorchX's three fields: the image, the command and
``kwargs``, exactly the keyword arguments of the docker SDK's ``client.containers.create(image, command,
**kwargs)``, with plain JSON-able values (mounts and device requests are the dicts the engine API takes), so
a role's ``pre_proc`` hook can edit them. Their ``environment`` is exactly what TorchX puts there. What we add
when a container is created is a rule, not more data: ``PYTHONUNBUFFERED=1`` under the request's own
environment (``default_env``), and the replica's identity over it (``scheduler_env``: its app, role and
replica from its labels, and its image; where the app has a metrics directory, its path in the container),
and that directory's bind mount (``scheduler_mounts``). So two requests with the same TorchX fields print
the same, as under TorchX, and a container built by hand is launched like any other. The request renders three ways:
``repr`` (readable, per container, one row per value: control characters are shown as escapes),
``docker_run_command()`` (a shell-quoted ``docker run`` line to reproduce a replica by hand, with the merged
environment) and ``to_json()`` (for the notebook's rich display). This module holds the data; the labels
every container carries are ``docker.labels``, and the renderings live in ``views``, to which the methods
here delegate.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from jupyter_sched.schedulers.docker.labels import (
    LABEL_APP_ID,
    LABEL_METRICS_DIR,
    LABEL_METRICS_OWNER,
    LABEL_REPLICA_ID,
    LABEL_ROLE_NAME,
)
from jupyter_sched.schedulers.docker.request.views import (
    container_json,
    container_lines,
    docker_run_command,
    job_dryrun_view,
    job_json,
    job_text,
)
from jupyter_sched.specs.request.dryrun import DryRunView

DEFAULT_NETWORK = "torchx"
"""TorchX's network name: a sidecar (a database, a parameter server) attached to ``torchx`` for TorchX's
replicas reaches ours too, by hostname. TorchX and jupyter_sched share it harmlessly: it is a plain bridge
network, created by whichever launches first."""

UNBUFFERED = {"PYTHONUNBUFFERED": "1"}
"""Python's output reaches ``docker logs`` as it is written; a role's own ``PYTHONUNBUFFERED`` wins."""

PULL_POLICIES = ("never", "missing", "always")
IDENTITY_ENV = {
    "JUPYTER_SCHED_APP_ID": LABEL_APP_ID,
    "JUPYTER_SCHED_ROLE_NAME": LABEL_ROLE_NAME,
    "JUPYTER_SCHED_REPLICA_ID": LABEL_REPLICA_ID,
}
"""The replica's identity a container gets when created: each variable from the label it is read from."""
IMAGE_ENV = "JUPYTER_SCHED_IMAGE"
METRICS_MOUNT = "/jupyter_sched/metrics"
"""Where a container sees its app's metrics directory (the host path is in ``LABEL_METRICS_DIR``)."""
METRICS_DIR_ENV = "JUPYTER_SCHED_METRICS_DIR"
"""``METRICS_MOUNT``, for ``jupyter_sched.track`` in the container (the name is ``track.layout``'s)."""
METRICS_OWNER_ENV = "JUPYTER_SCHED_METRICS_OWNER"
"""The submitting user's ``uid:gid`` (``LABEL_METRICS_OWNER``): a container writing as another user hands
its metrics files over to it (the name is ``track.layout``'s)."""


@dataclass
class DockerContainer:
    """One replica: its image, its command (docker's CMD) and the SDK ``containers.create`` kwargs."""

    image: str
    command: List[str]
    kwargs: Dict[str, Any] = field(default_factory=dict)

    @property
    def default_env(self) -> Dict[str, str]:
        """Set when the container is created, unless ``kwargs["environment"]`` names the variable too
        (``PYTHONUNBUFFERED=1``: a role's own value wins)."""
        return dict(UNBUFFERED)

    @property
    def scheduler_env(self) -> Dict[str, str]:
        """Set when the container is created, over ``kwargs["environment"]``: the replica's app, role and
        replica (from its labels, where it has them) and its image. Both stay out of
        ``kwargs["environment"]``, which holds exactly what TorchX puts there."""
        labels = self.kwargs.get("labels") or {}
        env = {**{var: labels[label] for var, label in IDENTITY_ENV.items() if label in labels}, IMAGE_ENV: self.image}
        if labels.get(LABEL_METRICS_DIR):
            env[METRICS_DIR_ENV] = METRICS_MOUNT
            if labels.get(LABEL_METRICS_OWNER):
                env[METRICS_OWNER_ENV] = labels[LABEL_METRICS_OWNER]
        return env

    @property
    def scheduler_mounts(self) -> List[Dict[str, Any]]:
        """Added to ``kwargs["mounts"]`` when the container is created: the app's metrics directory on this
        machine (its ``LABEL_METRICS_DIR``), read-write at ``METRICS_MOUNT``, so what ``jupyter_sched.track``
        writes there is read here as on the local backends. Kept out of ``kwargs`` as the environment is."""
        source = self.labels.get(LABEL_METRICS_DIR)
        if not source:
            return []
        return [{"Target": METRICS_MOUNT, "Source": source, "Type": "bind", "ReadOnly": False}]

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
        """``kwargs`` as ``containers.create`` receives them: the ``environment`` is :attr:`env`, the
        ``mounts`` gain :attr:`scheduler_mounts`."""
        out = {**self.kwargs, "environment": self.env}
        if self.scheduler_mounts:
            out["mounts"] = [*(self.kwargs.get("mounts") or []), *self.scheduler_mounts]
        return out

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

        kwargs without a ``docker run`` flag are listed in a trailing ``#`` comment (see ``views``).
        """
        return docker_run_command(self, multiline)

    def to_json(self) -> Dict[str, Any]:
        return container_json(self)

    def __repr__(self) -> str:
        return "\n".join(container_lines(self))


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
        return job_json(self)

    def dryrun_view(self) -> DryRunView:
        """The request in neutral terms (see ``specs.dryrun``): one plan per container."""
        return job_dryrun_view(self)

    def __repr__(self) -> str:
        return job_text(self)

    __str__ = __repr__

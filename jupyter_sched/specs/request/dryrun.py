"""The neutral view of a request (:class:`DryRunView`) through which front ends and components read any
backend's request (``AppDryRunInfo``, the exact request a scheduler would receive, is in ``app``, as in
TorchX's ``specs.api``).

A request is backend-specific (``Popen`` arguments, docker SDK kwargs, an sbatch script). A backend that
gives its request a ``dryrun_view()`` method returning a :class:`DryRunView` describes it in neutral
terms: per replica its command, env (and what it adds at launch), cwd, image, mounts, limits and logs;
whether the replicas end with the process that started them; free-form sections (a batch script) and
warnings. The notebook's dry-run display, the command line and the components read only that, so a new
backend needs no edit elsewhere.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

LAUNCH_ENV_HEADING = "launch env (added when it starts, wins over env)"
"""How every rendering titles :attr:`ReplicaPlan.launch_env`."""


@dataclass
class ReplicaPlan:
    """How one replica would run."""

    role: str
    replica_id: int
    argv: List[str]
    """The command the replica runs. Where the request holds it as a list (local, docker) this *is* that
    list, so a role's ``pre_proc`` hook may edit it in place."""
    env: Dict[str, str] = field(default_factory=dict)
    """What the app and the backend set (unmasked: front ends mask secrets when they show it)."""
    cwd: Optional[str] = None
    image: Optional[str] = None
    """The container image, if it runs in one."""
    on_this_host: bool = False
    """True when it runs on the machine that starts it, so this interpreter and its paths exist there."""
    mounts: List[str] = field(default_factory=list)
    """Readable mounts, e.g. ``bind /data -> /data (ro)``."""
    limits: Dict[str, str] = field(default_factory=dict)
    """Resource limits and other placement facts, e.g. ``{"cpus": "2", "memory": "1024m"}``."""
    logs: List[str] = field(default_factory=list)
    """Where the replica's output is kept."""
    name: Optional[str] = None
    """The backend's name for the replica (a container's name), if it has one."""
    shell: Optional[str] = None
    """The command as the backend writes it for a shell (quoting and ``$`` expansions as it runs), when that
    is not simply ``argv`` quoted."""
    launch: Optional[Tuple[str, str]] = None
    """How to start it by hand: ``(label, shell line)``, e.g. ``("docker run", "docker run ... img cmd")``."""
    launch_env: Dict[str, str] = field(default_factory=dict)
    """Variables the backend adds when the process starts, over ``env`` (kept out of the request's own env
    where that must match TorchX's); front ends show them under :data:`LAUNCH_ENV_HEADING`."""

    @property
    def label(self) -> str:
        return f"{self.role}/{self.replica_id}"

    @property
    def command_line(self) -> str:
        """The command as a copyable shell line."""
        return self.shell if self.shell is not None else shlex.join(self.argv)


@dataclass
class DryRunView:
    """A backend's request in neutral terms (see the module docstring)."""

    replicas: List[ReplicaPlan]
    bound_to_owner: bool = False
    """True when the replicas end with the process that started them (local apps without outlive_owner)."""
    notes: List[Tuple[str, str]] = field(default_factory=list)
    """App-wide one-line facts: ``(name, text)``, e.g. ``("submit", "sbatch --parsable ...")``."""
    sections: List[Tuple[str, str]] = field(default_factory=list)
    """Free-form blocks of text: ``(title, text)``, e.g. ``("batch script", "#!/bin/bash ...")``."""
    warnings: List[str] = field(default_factory=list)
    """What would probably go wrong, said before anything runs."""

"""The ``local_docker`` run options: :class:`DockerOpts` (their types, for code that builds a cfg) and
:func:`run_opts` (their help and defaults, what ``DockerScheduler.run_opts()`` answers).

Kept apart from the scheduler so the options read as one list: the container environment (``copy_env``,
``env``), ``privileged``, the image ``pull`` policy, ``cancel_grace`` and the ``network`` the replicas join.
The workspace options (``image_repo``, ``quiet``) come from ``workspace``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, TypedDict

from jupyter_sched.schedulers.docker.request.job import DEFAULT_NETWORK
from jupyter_sched.specs import runopts


class DockerOpts(TypedDict, total=False):
    copy_env: Optional[List[str]]
    env: Optional[Dict[str, str]]
    privileged: bool
    pull: str
    cancel_grace: float
    network: str
    image_repo: Optional[str]
    quiet: bool


def run_opts() -> runopts:
    """The scheduler's own run options (the workspace's are added by ``DockerWorkspaceMixin``)."""
    opts = runopts()
    opts.add("copy_env", List[str], "glob patterns of environment variables to copy into the replicas, e.g. FOO_*")
    opts.add(
        "env",
        Dict[str, str],
        "environment variables of the replicas, ENV1:v1,ENV2:v2 (or ; between them); they override"
        " copy_env and are overridden by the role's env",
    )
    opts.add("privileged", bool, "run the containers privileged", default=False)
    opts.add(
        "pull",
        str,
        "when to pull images: never, missing (only if not on the engine) or always",
        default="missing",
    )
    opts.add(
        "cancel_grace",
        float,
        "seconds between SIGTERM and SIGKILL when the app is cancelled (docker counts whole seconds)",
        default=10.0,
    )
    opts.add("network", str, "user-defined bridge network the replicas join", default=DEFAULT_NETWORK)
    return opts

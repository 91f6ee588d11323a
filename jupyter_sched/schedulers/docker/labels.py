"""What marks the engine's objects as this backend's: the labels on containers, networks and images, and
the values it writes into them.

Every process reads an app back from these labels alone (``docker`` keeps no state of ours elsewhere), so
the request that writes them (``request.build``), the record that reads them (``record``), the verbs that
find an app's containers (``cancel``, ``interrupted``, ``cleanup``), the engine client that labels the
network and the workspace images (``engine``, ``workspace``) all take them from here; none of them needs
the request's data classes for it.
"""

from __future__ import annotations

import os

from jupyter_sched.version import __version__

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
LABEL_METRICS_DIR = "jupyter_sched.metrics-dir"
"""On every replica: the app's metrics directory on this machine, bind-mounted into the container at
``request.job.METRICS_MOUNT``; any process finds an app's metrics here (``DockerScheduler.metrics_dir``),
whatever its own state directory, and ``cleanup`` removes it."""
LABEL_METRICS_OWNER = "jupyter_sched.metrics-owner"
"""On every replica: ``uid:gid`` of the submitting user, who must read the metrics a container writes as
another user (root, most often): ``jupyter_sched.track`` hands its files over to it (see ``track.layout``)."""
LABEL_SUBMITTER = "jupyter_sched.submitter"
"""On every replica, added when its container is created: the submitting process (``host/pid/start``, see
``common.process_identity``). A container still never started once that process is gone belongs to a
submit that was cut short (a SIGKILL between create and start): ``describe``, ``list`` and ``cancel`` read
the app FAILED, "submit interrupted", and remove its containers (all or nothing, as a failed submit)."""
LABEL_INTERRUPTED = "jupyter_sched.interrupted"
"""Only on an app's interrupted-submit record (see ``docker.interrupted``): why the app FAILED."""
LABEL_CANCELLED_AT = "jupyter_sched.cancelled-at"
"""Only on an app's cancel record (see ``docker.cancel``): when the app was cancelled."""
LABEL_WORKSPACE = "jupyter_sched.workspace"
"""On images built from a workspace: the directory or fsspec URL they were built from (and the same key in
the metadata of a role whose image it is, so the request can say so)."""

LOCAL_WORKSPACE_REPO = "jupyter-sched/workspace"
"""The repository of workspace images built here (``workspace``): they hold the workspace's files."""


def owner_name() -> str:
    """This process's user, as ``LABEL_OWNER`` records it (the login name, else the numeric uid)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name for this uid (a container's arbitrary uid)
        return str(os.getuid())


def package_version() -> str:
    """jupyter_sched's version, for the ``LABEL_VERSION`` of containers, networks and images."""
    return __version__

"""Where a replica's metrics go, and the names every side agrees on (standard library only).

A replica learns who and where it is from variables its scheduler sets:

* ``JUPYTER_SCHED_JOB_ID`` -- the app's handle (``local_cwd://session/app-id``), set by the Runner on every
  backend; ``TORCHX_JOB_ID`` holds the same handle, for TorchX's tracker API.
* ``JUPYTER_SCHED_APP_ID``, ``JUPYTER_SCHED_ROLE_NAME``, ``JUPYTER_SCHED_REPLICA_ID`` -- set by our three
  backends (local, docker, Slurm).
* ``JUPYTER_SCHED_METRICS_DIR`` -- the app's metrics directory, on a filesystem the submitting machine reads:
  ``<app dir>/metrics`` on the local backends and under Slurm's shared ``job_dir``; in a ``local_docker``
  container, the bind mount of its app's directory on the submitting machine. Where it is not set (a
  container without a mount, a TorchX backend), records travel as marked lines on stderr instead.

In the metrics directory each replica has its own files, named by role and replica
(:func:`replica_stem`): ``<stem>.jsonl`` (the records, appended), ``<stem>.summary.json`` (rewritten
atomically), ``<stem>.tracker.jsonl`` (TorchX tracker calls) and ``<stem>.stop`` (created by whoever
decides the replica should stop: :func:`jupyter_sched.track.should_stop` turns true when it exists; a
``stop`` file without a stem stops every replica of the app).
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Tuple

JOB_ID_ENV = "JUPYTER_SCHED_JOB_ID"
APP_ID_ENV = "JUPYTER_SCHED_APP_ID"
ROLE_ENV = "JUPYTER_SCHED_ROLE_NAME"
REPLICA_ENV = "JUPYTER_SCHED_REPLICA_ID"
METRICS_DIR_ENV = "JUPYTER_SCHED_METRICS_DIR"
METRICS_SUBDIR = "metrics"
"""The metrics directory's name inside an app's directory (local backends, Slurm)."""
METRICS_OWNER_ENV = "JUPYTER_SCHED_METRICS_OWNER"
"""``uid:gid`` of whoever reads the metrics directory, where the replica may run as another user: a docker
container (root, most often) writing into a directory of the submitting user's, bind-mounted. See
:func:`hand_over`."""

TORCHX_JOB_ID_ENV = "TORCHX_JOB_ID"
TORCHX_TRACKERS_ENV = "TORCHX_TRACKERS"
TORCHX_PARENT_RUN_ID_ENV = "TORCHX_PARENT_RUN_ID"
TRACKER_NAME = "jupyter_sched"
TRACKER_CONFIG_ENV = "TORCHX_TRACKER_JUPYTER_SCHED_CONFIG"
TRACKER_CONFIG_AUTO = "auto"
"""The tracker's config as the Runner sets it: write where the replica's metrics go."""

RECORDS_SUFFIX = ".jsonl"
SUMMARY_SUFFIX = ".summary.json"
TRACKER_SUFFIX = ".tracker.jsonl"
STOP_SUFFIX = ".stop"
STOP_ALL = "stop"

LINE_MARK = "@@jupyter_sched:metrics "
"""The prefix of a record written as one line on stderr (where no metrics directory is shared)."""
TRACKER_MARK = "@@jupyter_sched:tracker "
"""The prefix of a TorchX tracker entry written as one line on stderr (where no metrics directory is shared)."""

_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def replica_stem(role: str, replica: int) -> str:
    """``<role>.<replica>`` with the role's characters outside ``[A-Za-z0-9_-]`` written as ``%XX`` (UTF-8),
    so any role name is one safe file name and :func:`parse_stem` gives it back."""
    quoted = "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in role)
    return f"{quoted or '%'}.{int(replica)}"


def parse_stem(stem: str) -> Optional[Tuple[str, int]]:
    """The role and replica of a :func:`replica_stem`, or None if ``stem`` is not one."""
    quoted, dot, k = stem.rpartition(".")
    if not dot or not k.isdigit() or not quoted:
        return None
    if quoted == "%":
        return "", int(k)
    try:
        raw = bytearray()
        i = 0
        while i < len(quoted):
            c = quoted[i]
            if c == "%":
                raw += bytes.fromhex(quoted[i + 1 : i + 3])
                i += 3
            elif c in _SAFE:
                raw += c.encode("ascii")
                i += 1
            else:
                return None
        return raw.decode("utf-8"), int(k)
    except ValueError:
        return None


def hand_over(fd: int, owner: Optional[str]) -> None:
    """Makes the file open at ``fd`` readable by ``owner`` (``METRICS_OWNER_ENV``'s ``uid:gid``) when this
    process is another user: it becomes the owner's (possible as root, a container's usual user), else
    readable by all (0644; the owner's directory above the mounted one keeps other users out). Without an
    owner, or as the owner, the file stays this user's alone. Never raises: a file the owner cannot read
    costs the metrics, not the job."""
    if not owner:
        return
    try:
        uid, _, gid = owner.partition(":")
        if int(uid) == os.geteuid():
            return
        try:
            os.fchown(fd, int(uid), int(gid or -1))
        except OSError:
            os.fchmod(fd, 0o644)
    except (ValueError, OSError, AttributeError):  # a malformed owner, or no fchown (Windows)
        pass


def app_metrics_dir(app_dir: str) -> str:
    """The metrics directory of an app whose files are in ``app_dir``."""
    return os.path.join(app_dir, METRICS_SUBDIR)


def trackers_with_ours(current: Optional[str]) -> str:
    """``TORCHX_TRACKERS`` with ours appended to the user's list (kept in its order, never replaced)."""
    names = [n for n in (current or "").split(",") if n.strip()]
    if TRACKER_NAME not in (n.strip() for n in names):
        names.append(TRACKER_NAME)
    return ",".join(names)


def tracker_env(job_id: str, env: Mapping[str, str], outer: Mapping[str, str]) -> dict:
    """The TorchX tracker variables a replica gets: ``TORCHX_JOB_ID`` (the handle), ``TORCHX_TRACKERS`` with
    ours appended to the role's list (else the submitting process's), and our tracker's config (unless the
    role sets one). ``TORCHX_PARENT_RUN_ID`` is not here: it is set only when asked for."""
    out = {
        TORCHX_JOB_ID_ENV: job_id,
        TORCHX_TRACKERS_ENV: trackers_with_ours(env.get(TORCHX_TRACKERS_ENV, outer.get(TORCHX_TRACKERS_ENV))),
    }
    if TRACKER_CONFIG_ENV not in env:
        out[TRACKER_CONFIG_ENV] = outer.get(TRACKER_CONFIG_ENV, TRACKER_CONFIG_AUTO)
    return out

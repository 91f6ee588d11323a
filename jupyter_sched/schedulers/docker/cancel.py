"""Cancelling a docker app: the *cancel record* that says so to every process, then the stop requests.

Why a record: a label cannot be added to a running container, and an exit code of 137 says nothing about
who sent the SIGKILL. So a cancel first creates a tiny cancel record: a container that is created but
never started (no process, no network), named ``<app_id>-cancelled`` and labelled with the app id, the
session and ``jupyter_sched.cancelled-at=<unix time>``. It is returned by the same label query that finds
the replicas, so it costs ``describe``/``list`` nothing extra, any process sees it, its fixed name makes
concurrent cancels idempotent, and ``cleanup`` removes it with the replicas. A replica that ends with a
non-zero code after that time is CANCELLED, not FAILED (``state``).

Then every live replica gets a stop request on its own thread (the image's stop signal, SIGKILL after the
replica's ``cancel_grace`` label, in whole seconds); the engine carries the stops through on its own, so
the threads only wait until their request is sent (``engine.send_stop``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Dict, List

from jupyter_sched.schedulers.docker.engine import create_record, send_stop, start_threads
from jupyter_sched.schedulers.docker.labels import (
    LABEL_APP_ID,
    LABEL_APP_NAME,
    LABEL_CANCEL_GRACE,
    LABEL_CANCELLED_AT,
    LABEL_OWNER,
    LABEL_SESSION,
    LABEL_VERSION,
    owner_name,
    package_version,
)
from jupyter_sched.schedulers.docker.record.state import cancelled_at, is_record, row_state

if TYPE_CHECKING:  # pragma: no cover
    import threading

    import docker

CANCEL_RECORD_SUFFIX = "-cancelled"


def cancel_app(
    client: "docker.DockerClient", app_id: str, rows: List[Dict[str, Any]], session_name: str
) -> List["threading.Thread"]:
    """Cancels the app whose containers are ``rows``: records the cancel (unless recorded already), then
    starts a stop request per live replica; returns those threads. An app already over is left alone."""
    replicas = [r for r in rows if not is_record(r)]
    cancelled = cancelled_at(rows)
    if cancelled is None:
        if all(row_state(r, None).is_terminal for r in replicas):
            return []  # already over: nothing to cancel
        record_cancel(client.api, app_id, replicas, session_name)
    live = [r for r in replicas if r.get("State") in ("running", "restarting", "paused")]
    return start_threads(send_stop, [(client, r["Id"], grace_of(r)) for r in live], name=f"jsched-cancel-{app_id}")


def record_cancel(api: Any, app_id: str, replicas: List[Dict[str, Any]], session_name: str) -> None:
    """Creates the app's cancel record (see the module docstring); a second cancel finds it there."""
    labels = dict(replicas[0].get("Labels") or {})
    record_labels = {
        LABEL_VERSION: package_version(),
        LABEL_APP_ID: app_id,
        LABEL_APP_NAME: labels.get(LABEL_APP_NAME, ""),
        LABEL_SESSION: labels.get(LABEL_SESSION, session_name),
        LABEL_OWNER: labels.get(LABEL_OWNER, owner_name()),
        LABEL_CANCELLED_AT: repr(time.time()),
    }
    create_record(api, replicas[0]["ImageID"], f"{app_id}{CANCEL_RECORD_SUFFIX}", "jupyter-sched-cancel-record",
                  record_labels)  # fmt: skip


def grace_of(row: Dict[str, Any]) -> int:
    """The replica's ``cancel_grace`` label in whole seconds, rounded up (10 if unreadable)."""
    try:
        grace = float((row.get("Labels") or {}).get(LABEL_CANCEL_GRACE, "10"))
    except ValueError:
        grace = 10.0
    return max(0, math.ceil(grace))

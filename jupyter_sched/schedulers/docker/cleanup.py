"""Removing what docker apps leave behind: their containers (replicas and cancel record, with their logs),
their metrics directories, the workspace images only they used, and the shared network.

Exited containers are kept until ``DockerScheduler.cleanup`` (or ``prune``) so their logs and exit codes
stay readable from any process; these functions do the removing. A workspace image (labelled
``jupyter_sched.workspace`` when it was built, see ``workspace``) goes only when no container uses
it any more; an image without that label is the user's and is never removed. A network still in use stays.
"""

from __future__ import annotations

import os
import shutil
from typing import Any, Dict, List

from jupyter_sched.schedulers.docker.engine import parallel
from jupyter_sched.schedulers.docker.labels import LABEL_WORKSPACE
from jupyter_sched.schedulers.docker.record.state import cancelled_at, is_record, row_state


def remove_containers(api: Any, ids: List[str]) -> int:
    """Force-removes the containers ``ids`` (with their anonymous volumes), in parallel; returns how many."""
    parallel(lambda cid: api.remove_container(cid, force=True, v=True), ids)
    return len(ids)


def check_removable(app_id: str, rows: List[Dict[str, Any]], force: bool) -> None:
    """Refuses (RuntimeError) to clean up an app with a replica still running, unless ``force``."""
    replicas = [r for r in rows if not is_record(r)]
    cancelled = cancelled_at(rows)
    live = [r for r in replicas if not row_state(r, cancelled).is_terminal]
    if live and not force:
        raise RuntimeError(
            f"app {app_id} still has {len(live)} replica(s) running; cancel it and wait for it to end, or"
            " call cleanup(app_id, force=True) to kill and remove it"
        )


def remove_metrics_dir(path: str) -> None:
    """Removes an app's metrics directory (``LABEL_METRICS_DIR``) and its app directory if that is then
    empty. What a container wrote as root is removable: the directory is writable by all (``launch``). A
    file that cannot be removed (a subdirectory a container made and closed) stays; cleanup goes on."""
    shutil.rmtree(path, ignore_errors=True)
    try:
        os.rmdir(os.path.dirname(path))
    except OSError:  # not empty (another of its files), or already gone
        pass


def remove_workspace_image(api: Any, image_id: str) -> None:
    """Removes ``image_id`` (every tag of it) if it is a workspace image no container uses any more."""
    try:
        info = api.inspect_image(image_id)
    except Exception:  # noqa: BLE001 - an image the engine cannot inspect (gone, refused) is not one we remove
        return
    if LABEL_WORKSPACE not in ((info.get("Config") or {}).get("Labels") or {}):
        return
    if api.containers(all=True, filters={"ancestor": image_id}):
        return  # another app still uses it
    for tag in info.get("RepoTags") or [image_id]:
        try:
            api.remove_image(tag)
        except Exception:  # noqa: BLE001 - a tag still in use or already gone stays; cleanup goes on with the next
            pass


def remove_network(api: Any, name: str) -> bool:
    """Removes the network ``name`` (every copy of it) if no container is attached; True if removed."""
    removed = False
    for net in api.networks(names=[name]):
        if net.get("Name") != name:
            continue
        try:
            api.remove_network(net["Id"])
            removed = True
        except Exception:  # noqa: BLE001 - in use (409) or already gone
            pass
    return removed

"""Undoing a docker submit whose submitter was killed half-way, found later by whoever reads the app.

A submit creates every container, then starts them all, and removes what it made if a step fails
(``launch``). A submitter killed in between (SIGKILL, the OOM killer) removes nothing: its containers
stay, some or all created and never started, and the app would read SUBMITTED for ever. Each container
names its submitter (``LABEL_SUBMITTER``: host, pid and start time), so ``describe``, ``list`` and
``cancel`` tell such an app from a submit still under way (``state.interrupted_by``: a never-started
replica whose submitter is gone) and undo it, as a failed submit is undone: every replica container is
force-removed, the ones already started included (all or nothing), and the app's metrics directory.

What is left is an *interrupted-submit record*, like a cancel record: a container created and never started
(no process, no network), named ``<app_id>-interrupted``, labelled with the app's id, name, session, owner
and replicas and with ``jupyter_sched.interrupted=<why>``. So the app keeps reading FAILED, "submit
interrupted: ...", from every process until ``cleanup`` or ``prune`` removes the record, instead of
vanishing between one read and the next. The record is made before the replicas are removed, so a reader
killed in between leaves a state the next reader finishes.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from jupyter_sched.schedulers.common.process_identity import pid_of
from jupyter_sched.schedulers.docker.cleanup import remove_containers, remove_metrics_dir
from jupyter_sched.schedulers.docker.engine import create_record
from jupyter_sched.schedulers.docker.labels import (
    LABEL_APP_ID,
    LABEL_APP_NAME,
    LABEL_INTERRUPTED,
    LABEL_METRICS_DIR,
    LABEL_OWNER,
    LABEL_REPLICAS,
    LABEL_SESSION,
    LABEL_VERSION,
    owner_name,
    package_version,
)
from jupyter_sched.schedulers.docker.record.state import (
    app_id_of,
    interrupted_by,
    interrupted_message,
    interrupted_reason,
    is_record,
)

INTERRUPTED_RECORD_SUFFIX = "-interrupted"


def undo_interrupted(api: Any, rows: List[Dict[str, Any]], is_gone: Callable[[str], bool]) -> Dict[str, str]:
    """For each app in ``rows`` (containers, as list rows) whose submit was cut short: records it and
    removes its replica containers. Returns app id -> why it FAILED, for those apps and for apps recorded
    so earlier."""
    apps: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        apps.setdefault(app_id_of(row), []).append(row)
    undone: Dict[str, str] = {}
    for app_id, group in apps.items():
        if not app_id:
            continue
        replicas = [r for r in group if not is_record(r)]
        why = interrupted_reason(group)
        if why is None:
            submitter = interrupted_by(group, is_gone)
            if submitter is None:
                continue
            why = interrupted_message(pid_of(submitter), len(replicas))
            record_interrupted(api, app_id, replicas, why)
        remove_containers(api, [r["Id"] for r in replicas])  # after a record: what a killed reader left
        for path in {str((r.get("Labels") or {}).get(LABEL_METRICS_DIR) or "") for r in replicas} - {""}:
            remove_metrics_dir(path)  # nothing ran, so nothing was logged: as a failed submit leaves none
        undone[app_id] = why
    return undone


def record_interrupted(api: Any, app_id: str, replicas: List[Dict[str, Any]], why: str) -> None:
    """Creates the app's interrupted-submit record (see the module docstring); a second reader finds it."""
    labels = dict(replicas[0].get("Labels") or {})
    record_labels = {
        LABEL_VERSION: package_version(),
        LABEL_APP_ID: app_id,
        LABEL_APP_NAME: labels.get(LABEL_APP_NAME, ""),
        LABEL_SESSION: labels.get(LABEL_SESSION, ""),
        LABEL_OWNER: labels.get(LABEL_OWNER, owner_name()),
        LABEL_REPLICAS: labels.get(LABEL_REPLICAS, "[]"),
        LABEL_INTERRUPTED: why,
    }
    create_record(api, replicas[0]["ImageID"], f"{app_id}{INTERRUPTED_RECORD_SUFFIX}",
                  "jupyter-sched-interrupted-record", record_labels)  # fmt: skip

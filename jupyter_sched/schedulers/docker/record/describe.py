"""What ``describe`` and ``list`` answer for docker apps, assembled from the engine's container data.

Pure (no engine calls): the scheduler fetches, these functions assemble. ``describe`` gets the app's
containers (replicas and cancel record) as sparse list rows plus a full inspect per replica; ``list`` gets
only rows (one label-filtered request for every app, no inspects). The state rules are ``state``'s.

* A replica's out-of-memory kill is said in words, with its limit and the peak its stats stream saw
  (``usage`` totals), in the replica's ``msg`` and error.
* A replica whose container is gone (``docker rm``) but that the app's ``jupyter_sched.replicas`` label
  names is reported UNKNOWN, and the app cannot succeed: its outcome is unknowable.
* A cancelled app says when; a failed one names each failed replica and its exit code.
* An app whose submit was cut short (``docker.interrupted``) is FAILED, "submit interrupted", on the app
  and on each replica, whether it was created, started or never created.

:func:`replica_row` finds the row of one replica for ``log_iter``, with the same errors as the other
backends for an unknown app or replica.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.schedulers.api import DescribeAppResponse, ListAppResponse
from jupyter_sched.schedulers.common.roles import unknown_replica
from jupyter_sched.schedulers.docker.labels import LABEL_APP_NAME, LABEL_REPLICA_ID, LABEL_ROLE_NAME
from jupyter_sched.schedulers.docker.record.state import (
    ReplicaView,
    app_id_of,
    app_state,
    cancelled_at,
    expected_replicas,
    gone_message,
    interrupted_reason,
    is_record,
    replica_state,
    row_state,
)
from jupyter_sched.schedulers.docker.usage import oom_peak
from jupyter_sched.specs import NONE, AppState, ReplicaStatus, Role, RoleStatus, UnknownAppException
from jupyter_sched.specs.status.usage import UsageTotals, oom_message

Totals = Callable[[str, Optional[float], Optional[float]], Optional[UsageTotals]]
"""(container name, started, finished) -> what the ended container used, if known (``DockerUsage.totals``)."""


def describe_response(
    app_id: str, rows: List[Dict[str, Any]], infos: List[Dict[str, Any]], totals_of: Totals
) -> Optional[DescribeAppResponse]:
    """The app's description from its ``rows`` (replicas and cancel record) and the ``infos`` (inspects) of
    the replicas still there; None when no replica is left."""
    replicas = [r for r in rows if not is_record(r)]
    cancelled = cancelled_at(rows)
    views = [ReplicaView.from_inspect(info) for info in infos]
    if not views:  # removed between the list and the inspects
        return None
    views.sort(key=lambda v: (v.role_index, v.replica_id))
    roles: Dict[str, RoleStatus] = {}
    role_defs: Dict[str, Role] = {}
    failures: List[str] = []
    states: List[AppState] = []
    limits = {(i.get("Name") or "").lstrip("/"): (i.get("HostConfig") or {}).get("Memory") for i in infos if i}
    for v in views:
        state = replica_state(v.word, v.exit_code, cancelled=cancelled, finished=v.finished)
        states.append(state)
        why = v.failure()
        totals = totals_of(v.name, v.started, v.finished) if v.finished is not None else None
        oom = ""
        if v.oom_killed:
            limit = limits.get(v.name) or None
            peak = oom_peak(totals.peak_rss_bytes if totals else None, limit)
            oom = oom_message(limit, peak, peak_unknown=peak is None)
            if totals is not None and peak is None:  # its kept peak is a stale sample too: not quoted
                totals = dataclasses.replace(totals, peak_rss_bytes=0)
            why = "; ".join([oom, *([v.error] if v.error else [])])
        if state == AppState.FAILED:
            failures.append(f"{v.role}[{v.replica_id}] exited with code {v.exit_code}" + (f" ({why})" if why else ""))
        roles.setdefault(v.role, RoleStatus(v.role, [])).replicas.append(
            ReplicaStatus(
                id=v.replica_id,
                state=state,
                role=v.role,
                hostname=v.name,
                structured_error_msg=why if why and state == AppState.FAILED else NONE,
                exit_code=v.exit_code,
                started=v.started,
                finished=v.finished,
                num_restarts=v.restart_count,
                usage=totals,
                msg=oom,
            )
        )
        if v.role not in role_defs:
            role_defs[v.role] = Role(
                name=v.role,
                image=v.image,
                entrypoint=v.command[0] if v.command else "",
                args=v.command[1:],
                num_replicas=0,
                max_retries=v.max_retries,
            )
        role_defs[v.role].num_replicas += 1
    present = {(v.role, v.replica_id) for v in views}
    for role, k in expected_replicas(replicas):
        if (role, k) in present:
            continue
        states.append(AppState.FAILED)  # its outcome is unknowable: the app cannot be said to succeed
        failures.append(gone_message(role, k))
        roles.setdefault(role, RoleStatus(role, [])).replicas.append(
            ReplicaStatus(
                id=k, state=AppState.UNKNOWN, role=role, hostname="", structured_error_msg=gone_message(role, k)
            )
        )
        if role in role_defs:
            role_defs[role].num_replicas += 1
    for role_status in roles.values():
        role_status.replicas.sort(key=lambda r: r.id)
    state = app_state(states, cancelled is not None)
    if state == AppState.CANCELLED:
        msg = f"cancelled at {datetime.fromtimestamp(cancelled or 0).isoformat(timespec='seconds')}"
    else:
        msg = "; ".join(failures) if failures else NONE
    return DescribeAppResponse(
        app_id=app_id,
        state=state,
        num_restarts=sum(v.restart_count for v in views),
        msg=msg,
        structured_error_msg=NONE,
        ui_url=None,
        roles_statuses=list(roles.values()),
        roles=list(role_defs.values()),
    )


def interrupted_response(app_id: str, rows: List[Dict[str, Any]], why: str) -> DescribeAppResponse:
    """An app whose submit was cut short (``docker.interrupted``; ``rows`` are its containers as they were
    found, replicas or record): FAILED, ``why`` on the app and on every replica it was submitted with."""
    roles: Dict[str, RoleStatus] = {}
    replicas = [r for r in rows if not is_record(r)]
    for role, k in expected_replicas(rows) or sorted({_replica_of(r) for r in replicas}):
        roles.setdefault(role, RoleStatus(role, [])).replicas.append(
            ReplicaStatus(id=k, state=AppState.FAILED, role=role, hostname="", structured_error_msg=why)
        )
    images = {_replica_of(r)[0]: str(r.get("Image", "")) for r in replicas}
    return DescribeAppResponse(
        app_id=app_id,
        state=AppState.FAILED,
        num_restarts=0,
        msg=why,
        structured_error_msg=NONE,
        roles_statuses=list(roles.values()),
        roles=[Role(name=n, image=images.get(n, ""), num_replicas=len(s.replicas)) for n, s in roles.items()],
    )


def _replica_of(row: Dict[str, Any]) -> Tuple[str, int]:
    labels = row.get("Labels") or {}
    try:
        return labels.get(LABEL_ROLE_NAME, ""), int(labels.get(LABEL_REPLICA_ID, "0"))
    except ValueError:
        return labels.get(LABEL_ROLE_NAME, ""), 0


def list_responses(rows: List[Dict[str, Any]], interrupted: Optional[Dict[str, str]] = None) -> List[ListAppResponse]:
    """Each app of ``rows`` once (by app id, sorted), its state from the sparse rows alone; an app in
    ``interrupted`` (app id -> why) is FAILED with that reason."""
    apps: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        apps.setdefault(app_id_of(row), []).append(row)
    out = []
    for app_id, group in apps.items():
        replicas = [r for r in group if not is_record(r)]
        why = (interrupted or {}).get(app_id) or interrupted_reason(group)
        if not app_id or not (replicas or why):
            continue
        name = ((replicas or group)[0].get("Labels") or {}).get(LABEL_APP_NAME, "")
        if why:
            out.append(ListAppResponse(app_id=app_id, state=AppState.FAILED, name=name))
            continue
        cancelled = cancelled_at(group)
        state = app_state([row_state(r, cancelled) for r in replicas], cancelled is not None)
        out.append(ListAppResponse(app_id=app_id, state=state, name=name))
    return sorted(out, key=lambda r: r.app_id)


def replica_row(app_id: str, rows: List[Dict[str, Any]], role_name: str, k: int) -> Dict[str, Any]:
    """The row of replica ``k`` of ``role_name``. Raises UnknownAppException (no replica at all),
    LookupError (its container was removed) or the api's unknown-replica error (no such replica)."""
    replicas = [r for r in rows if not is_record(r)]
    why = interrupted_reason(rows)
    if why is not None:
        raise LookupError(f"{role_name}[{k}] has no container and no logs: {why}")
    if not replicas:
        raise UnknownAppException(app_id)
    match = [
        r for r in replicas
        if (r.get("Labels") or {}).get(LABEL_ROLE_NAME) == role_name
        and (r.get("Labels") or {}).get(LABEL_REPLICA_ID) == str(k)
    ]  # fmt: skip
    if not match:
        if (role_name, k) in expected_replicas(replicas):
            raise LookupError(gone_message(role_name, k))
        labels = [r.get("Labels") or {} for r in replicas]
        pairs = ((lb.get(LABEL_ROLE_NAME, ""), int(lb.get(LABEL_REPLICA_ID, -1))) for lb in labels)
        raise unknown_replica(app_id, role_name, k, pairs)
    return match[0]


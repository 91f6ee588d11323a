"""From what the engine says about containers to replica and app states (pure functions, no I/O).

Two sources feed these: the sparse container list (``GET /containers/json``: state word, a status text
with the exit code, labels; one request for any number of containers) for ``list()``, and a full inspect
for ``describe()`` (exit code, restart count, start and finish times).
"""

from __future__ import annotations

import calendar
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from jupyter_sched.schedulers.docker.labels import (
    LABEL_APP_ID,
    LABEL_CANCELLED_AT,
    LABEL_INTERRUPTED,
    LABEL_REPLICA_ID,
    LABEL_REPLICAS,
    LABEL_ROLE_INDEX,
    LABEL_ROLE_NAME,
    LABEL_SUBMITTER,
)
from jupyter_sched.specs import AppState

_EXITED = re.compile(r"^Exited \((-?\d+)\)")
_ZERO_TIME = "0001-01-01T00:00:00Z"
# docker state word -> replica state, before looking at exit codes and cancels
_STATE_WORDS = {
    "created": AppState.SUBMITTED,
    "running": AppState.RUNNING,
    "restarting": AppState.PENDING,  # on-failure retry in back-off
    "paused": AppState.PENDING,
    "removing": AppState.PENDING,
}


def parse_time(text: Optional[str]) -> Optional[float]:
    """An engine timestamp (RFC 3339, nanoseconds, UTC) as a UNIX time; None for docker's zero time."""
    if not text or text.startswith("0001-01-01"):
        return None
    base = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    frac = text[19:].rstrip("Z")
    if frac.startswith("."):
        digits = "".join(ch for ch in frac[1:] if ch.isdigit())
        return base + (int(digits) / 10 ** len(digits) if digits else 0.0)
    return float(base)


def exit_code_of_status(status: str) -> Optional[int]:
    """The exit code in a list row's status text (``Exited (3) 2 seconds ago``)."""
    match = _EXITED.match(status or "")
    return int(match.group(1)) if match else None


def is_record(row: Dict[str, Any]) -> bool:
    """A record container (never started, no replica): an app's cancel record or interrupted-submit record."""
    labels = row.get("Labels") or {}
    return LABEL_CANCELLED_AT in labels or LABEL_INTERRUPTED in labels


def interrupted_reason(rows: Iterable[Dict[str, Any]]) -> Optional[str]:
    """Why the app FAILED, from its interrupted-submit record among ``rows`` (None if it has none)."""
    for row in rows:
        labels = row.get("Labels") or {}
        if LABEL_INTERRUPTED in labels:
            return str(labels[LABEL_INTERRUPTED])
    return None


def cancelled_at(rows: Iterable[Dict[str, Any]]) -> Optional[float]:
    """When the app was cancelled, from its cancel record among ``rows`` (None if it never was)."""
    for row in rows:
        labels = row.get("Labels") or {}
        if LABEL_CANCELLED_AT in labels:
            try:
                return float(labels[LABEL_CANCELLED_AT])
            except ValueError:
                return 0.0
    return None


def replica_state(
    word: str, exit_code: Optional[int], cancelled: Optional[float], finished: Optional[float] = None
) -> AppState:
    """A replica's state. After a cancel, a replica that ends with a non-zero code, or never started, is
    CANCELLED; one that had already failed before the cancel (``finished`` earlier) stays FAILED."""
    word = (word or "").lower()
    if word == "created" and cancelled is not None:
        return AppState.CANCELLED
    if word in _STATE_WORDS:
        return _STATE_WORDS[word]
    if word not in ("exited", "dead"):
        return AppState.UNKNOWN
    if word == "exited" and exit_code == 0:
        return AppState.SUCCEEDED
    if cancelled is not None and (finished is None or finished >= cancelled - 0.5):
        return AppState.CANCELLED
    return AppState.FAILED


def app_state(states: List[AppState], cancelled: bool) -> AppState:
    """Running while any replica is; once all have ended: CANCELLED after a cancel, FAILED if any
    failed, else SUCCEEDED. (Docker has no gang scheduling: a failed replica does not stop the others.)"""
    if not states:
        return AppState.UNKNOWN
    live = [s for s in states if not s.is_terminal]
    if live:
        for state in (AppState.RUNNING, AppState.PENDING, AppState.SUBMITTED):
            if state in live:
                return state
        return AppState.UNKNOWN
    if cancelled:
        return AppState.CANCELLED
    if AppState.FAILED in states:
        return AppState.FAILED
    return AppState.SUCCEEDED


def row_state(row: Dict[str, Any], cancelled: Optional[float]) -> AppState:
    """A replica's state from a (sparse) list row."""
    return replica_state(row.get("State", ""), exit_code_of_status(row.get("Status", "")), cancelled)


@dataclass
class ReplicaView:
    """What ``describe`` needs of one replica container (from an inspect)."""

    role: str
    role_index: int
    replica_id: int
    name: str
    image: str
    command: List[str]
    word: str
    exit_code: Optional[int]
    started: Optional[float]
    finished: Optional[float]
    restart_count: int
    max_retries: int
    oom_killed: bool
    error: str

    @classmethod
    def from_inspect(cls, info: Dict[str, Any]) -> "ReplicaView":
        config = info.get("Config") or {}
        labels = config.get("Labels") or {}
        state = info.get("State") or {}
        policy = (info.get("HostConfig") or {}).get("RestartPolicy") or {}
        word = state.get("Status", "")
        started = parse_time(state.get("StartedAt"))
        finished = parse_time(state.get("FinishedAt")) if word in ("exited", "dead") else None
        if started is not None and finished is not None and finished < started:
            finished = started  # docker stamps a very quick exit before the start it reports
        return cls(
            role=labels.get(LABEL_ROLE_NAME, ""),
            role_index=_int(labels.get(LABEL_ROLE_INDEX), 0),
            replica_id=_int(labels.get(LABEL_REPLICA_ID), 0),
            name=(info.get("Name") or "").lstrip("/"),
            image=str(config.get("Image", "")),
            command=list(config.get("Cmd") or []),
            word=word,
            exit_code=state.get("ExitCode") if word in ("exited", "dead") else None,
            started=started,
            finished=finished,
            restart_count=int(info.get("RestartCount") or 0),
            max_retries=int(policy.get("MaximumRetryCount") or 0),
            oom_killed=bool(state.get("OOMKilled")),
            error=str(state.get("Error") or ""),
        )

    def failure(self) -> str:
        """Why this replica failed, in words ("" if unknown)."""
        parts = []
        if self.oom_killed:
            parts.append("killed for using more memory than its limit (OOM)")
        if self.error:
            parts.append(self.error)
        return "; ".join(parts)


def _int(text: Optional[str], default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def app_id_of(row: Dict[str, Any]) -> str:
    return (row.get("Labels") or {}).get(LABEL_APP_ID, "")


def expected_replicas(rows: Iterable[Dict[str, Any]]) -> List[Tuple[str, int]]:
    """Every ``(role, replica index)`` the app was submitted with, in role order, from the replicas'
    ``LABEL_REPLICAS`` (empty for containers made before that label existed)."""
    for row in rows:
        text = (row.get("Labels") or {}).get(LABEL_REPLICAS)
        if not text:
            continue
        try:
            roles = json.loads(text)
            return [(str(name), k) for name, count in roles for k in range(int(count))]
        except (ValueError, TypeError):
            continue
    return []


def interrupted_by(rows: Iterable[Dict[str, Any]], is_gone: Callable[[str], bool]) -> Optional[str]:
    """The submitter (``LABEL_SUBMITTER``) of an app whose submit was cut short, or None. A submit creates
    every container, then starts them all: a replica container never started (state ``created``) whose
    submitter ``is_gone`` can only be left by a submitter killed before it finished. One still submitting
    (alive), or that ran elsewhere (``is_gone`` cannot tell), is not judged."""
    for row in rows:
        submitter = (row.get("Labels") or {}).get(LABEL_SUBMITTER)
        if not is_record(row) and row.get("State") == "created" and submitter and is_gone(submitter):
            return str(submitter)
    return None


def interrupted_message(submitter_pid: Optional[int], removed: int) -> str:
    """Why an interrupted submit's app FAILED (every replica says it too)."""
    who = f"process {submitter_pid}" if submitter_pid is not None else "the process"
    return (
        f"submit interrupted: {who}, which submitted it, ended before every replica had started; the"
        f" {removed} container(s) it had created were removed, so nothing of it runs"
    )


def gone_message(role: str, k: int) -> str:
    """Why a replica has no state and no logs: its container is not on the engine any more."""
    return (
        f"{role}[{k}]: its container was removed from the Docker engine (docker rm?), so its state and its"
        " logs are gone"
    )

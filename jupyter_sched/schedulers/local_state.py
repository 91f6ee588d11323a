"""The local backend's record of an app, kept in memory by its owner and mirrored to ``state.json``.

The file is what lets another process (the CLI, a restarted kernel) list, describe and read the logs of
apps it did not start. It is rewritten atomically (write then rename) whenever a replica starts or ends and
when the app is cancelled, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, List, Optional

from jupyter_sched.specs import AppState

STATE_FILE = "state.json"


@dataclass
class ReplicaRecord:
    role: str
    replica_id: int
    pid: Optional[int] = None
    exit_code: Optional[int] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    stdout: str = ""
    stderr: str = ""
    combined: str = ""
    error_file: str = ""
    usage: Optional[Dict[str, Any]] = None  # memory limit, then totals when it ends (see local_meter)

    @property
    def done(self) -> bool:
        """The process ended and every byte it printed is in its log files."""
        return self.finished is not None

    def state(self, cancelled: bool) -> AppState:
        if not self.done:
            return AppState.RUNNING
        if self.exit_code == 0:
            return AppState.SUCCEEDED
        return AppState.CANCELLED if cancelled else AppState.FAILED


@dataclass
class AppRecord:
    app_id: str
    name: str
    session: str
    app_dir: str
    owner_pid: int
    submitted: float
    owner_started: Optional[int] = None
    roles: List[Dict[str, Any]] = field(default_factory=list)
    replicas: List[ReplicaRecord] = field(default_factory=list)
    cancelled: bool = False
    outlive_owner: bool = False
    cancel_grace: float = 10.0
    msg: str = ""
    image_provider: str = ""  # the class that made the request: local_cwd and local_dir share a log dir

    @property
    def done(self) -> bool:
        return all(r.done for r in self.replicas)

    @property
    def finished(self) -> Optional[float]:
        ends = [r.finished for r in self.replicas]
        return max(ends) if ends and None not in ends else None  # type: ignore[type-var]

    def state(self) -> AppState:
        """RUNNING until every replica has ended; then CANCELLED, FAILED (any non-zero) or SUCCEEDED."""
        if not self.done:
            return AppState.RUNNING
        if self.cancelled:
            return AppState.CANCELLED
        if any(r.exit_code != 0 for r in self.replicas):
            return AppState.FAILED
        return AppState.SUCCEEDED

    def snapshot(self) -> "AppRecord":
        """A copy that the IO thread's later updates do not touch."""
        return replace(self, replicas=[replace(r) for r in self.replicas])

    def replica(self, role: str, k: int) -> Optional[ReplicaRecord]:
        for rep in self.replicas:
            if rep.role == role and rep.replica_id == k:
                return rep
        return None

    def to_json(self) -> Dict[str, Any]:
        # A shallow walk, not dataclasses.asdict: asdict deep-copies every value, and this runs on the submit
        # path and on every replica's end. The values are only serialised, never kept.
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["replicas"] = [dict(vars(r)) for r in self.replicas]
        data["state"] = str(self.state())
        return data

    @staticmethod
    def from_json(data: Dict[str, Any]) -> "AppRecord":
        data = dict(data)
        data.pop("state", None)
        data["replicas"] = [ReplicaRecord(**r) for r in data.get("replicas", [])]
        return AppRecord(**data)

    def create(self) -> None:
        """First write, on the submit path: a single create-and-write (no rename), so that the app is
        on disk, visible to other processes, by the time submit returns. A reader that catches the file
        half written treats it as absent for that moment."""
        fd = os.open(os.path.join(self.app_dir, STATE_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, json.dumps(self.to_json()).encode())
        finally:
            os.close(fd)

    def save(self) -> None:
        path = os.path.join(self.app_dir, STATE_FILE)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # the IO thread and a cancel may both save
        with open(tmp, "w") as f:
            json.dump(self.to_json(), f)
        os.replace(tmp, path)


def load_record(app_dir: str) -> Optional[AppRecord]:
    """The record saved in ``app_dir``, reconciled with reality: if its owner died without the replicas
    having ended (and they were not meant to outlive it), the unfinished replicas are reported as failed."""
    try:
        with open(os.path.join(app_dir, STATE_FILE)) as f:
            record = AppRecord.from_json(json.load(f))
    except (OSError, ValueError, TypeError):
        return None
    if not record.done and not owner_alive(record) and not _any_alive(record):
        now = time.time()
        for rep in record.replicas:
            if not rep.done:
                rep.finished = now
                rep.exit_code = _recorded_exit_code(rep)
        if not record.outlive_owner:  # for a detached app the owner leaving is what the user asked for
            record.msg = record.msg or f"owner process {record.owner_pid} exited before the app finished"
    return record


def _recorded_exit_code(rep: ReplicaRecord) -> Optional[int]:
    """The exit code a detached replica's wrapper wrote, if any (None: it was killed outright)."""
    try:
        with open(os.path.join(os.path.dirname(rep.stdout), "exit_code")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def process_start_time(pid: int) -> Optional[int]:
    """The start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22), which tells a
    process apart from a later one that reused its pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[19])


def owner_alive(record: AppRecord) -> bool:
    started = process_start_time(record.owner_pid)
    if started is None:
        return False
    return record.owner_started is None or started == record.owner_started


def _any_alive(record: AppRecord) -> bool:
    """True if a process group of an unfinished replica still exists (e.g. an app meant to outlive its
    owner)."""
    for rep in record.replicas:
        if rep.done or rep.pid is None:
            continue
        try:
            os.killpg(rep.pid, 0)
            return True
        except ProcessLookupError:
            continue
        except PermissionError:
            return True
    return False

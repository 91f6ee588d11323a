"""Finding, describing and listing local apps from their records, whichever process started them.

An app's record is in its owner's memory and in ``<log_dir>/<session>/<app_id>/state.json``, so another
process (the CLI, a restarted kernel) finds it under any log dir it knows: its default one, and those of
apps it started elsewhere. An app recorded under a custom ``log_dir`` is linked into the default one for
that reason. Reading a record back also settles what its owner can no longer say: a cancel by another
process (its marker, ``cancel``), replicas left running by an owner that died with its reaper (a new
reaper stops them, ``reaper``), and how and when replicas ended that nobody alive is left to record (see
``state.load_record``: never the time of the read).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from jupyter_sched.schedulers.api import DescribeAppResponse, ListAppResponse
from jupyter_sched.schedulers.common.log_files import read_error_file
from jupyter_sched.schedulers.common.private_files import make_private_dirs
from jupyter_sched.schedulers.common.roles import role_from_summary
from jupyter_sched.schedulers.local.cancel import cancel_requested
from jupyter_sched.schedulers.local.processes.reaper import adopt_orphans
from jupyter_sched.schedulers.local.processes.reaper import claimed as reaper_claimed
from jupyter_sched.schedulers.local.record.state import STATE_FILE, AppRecord, is_within, load_record, owner_alive
from jupyter_sched.schedulers.local.usage.meter import totals_of
from jupyter_sched.specs import NONE, AppState, ReplicaStatus, RoleStatus
from jupyter_sched.specs.status.handles import check_name

__all__ = ["describe_record", "find_record", "link_into_default_base", "list_apps"]


def find_record(bases: Iterable[str], session: str, app_id: str) -> Optional[AppRecord]:
    """The app's record read from ``<base>/<session>/<app_id>`` under the first base that has it (an
    unsafe ``app_id`` is refused before any path is built)."""
    check_name(app_id, "app id")
    for base in bases:
        app_dir = os.path.join(base, session, app_id)
        if not is_within(os.path.dirname(app_dir), base):
            continue  # the session dir is a symlink out of the log dir: not ours to read
        # While a reaper that claimed the app stops its replicas, their ends are its to record (when it
        # sees them): read as saved, the app runs until then, rather than ending when its last log was written.
        record = load_record(app_dir, reconcile=not reaper_claimed(app_dir))
        if record is not None:
            if not record.cancelled and cancel_requested(record.app_dir):
                record.cancelled = True
            _adopt_orphans(record)
            return record
    return None


def _adopt_orphans(record: AppRecord) -> None:
    """Replicas that outlived their owner against its wishes (its reaper died with it) are stopped now,
    by a reaper started for them, which records how they ended."""
    if record.done or record.outlive_owner or owner_alive(record) or reaper_claimed(record.app_dir):
        return
    if any(not r.done and r.pid and r.pid_started is not None and r.group.alive() for r in record.replicas):
        record.msg = f"owner process {record.owner_pid} exited; its replicas are being stopped"
        adopt_orphans(record.app_dir, record.cancel_grace)


def link_into_default_base(default_base: str, session: str, app_dir: str) -> None:
    """An app recorded under a custom ``log_dir`` gets a symlink in the scheduler's default log dir, so
    that other processes (CLI, a restarted kernel) that only know the default still find it."""
    default_session_dir = os.path.join(default_base, session)
    if os.path.dirname(app_dir) == default_session_dir:
        return
    try:
        make_private_dirs(default_session_dir)
        os.symlink(app_dir, os.path.join(default_session_dir, os.path.basename(app_dir)))
    except OSError:
        pass  # discoverability is a convenience; the app itself is fine


def describe_record(app_id: str, record: AppRecord) -> DescribeAppResponse:
    """``describe`` of the app whose record is ``record`` (a copy the IO thread does not change)."""
    roles_statuses: Dict[str, RoleStatus] = {}
    notes = [f"{r.role}[{r.replica_id}]: {r.msg}" for r in record.replicas if r.msg]
    notes += [record.save_error] if record.save_error else []
    msg = "; ".join(([record.msg] if record.msg else []) + notes)
    for rep in record.replicas:
        status = roles_statuses.setdefault(rep.role, RoleStatus(rep.role, []))
        status.replicas.append(
            ReplicaStatus(
                id=rep.replica_id,
                state=rep.state(record.cancelled),
                role=rep.role,
                hostname="localhost",
                structured_error_msg=read_error_file(rep.error_file),
                exit_code=rep.exit_code,
                pid=rep.pid,
                started=rep.started,
                finished=rep.finished,
                usage=totals_of(rep),
                msg=rep.msg,
            )
        )
    errors = [r.structured_error_msg for rs in roles_statuses.values() for r in rs.replicas]
    errors = [e for e in errors if e != NONE]
    return DescribeAppResponse(
        app_id=app_id,
        state=record.state(),
        num_restarts=0,
        msg=msg or NONE,
        structured_error_msg=errors[0] if errors else NONE,
        ui_url=f"file://{record.app_dir}",
        roles_statuses=list(roles_statuses.values()),
        roles=[role_from_summary(r) for r in record.roles],
    )


def list_apps(
    owned: Mapping[str, AppRecord],
    bases: Iterable[str],
    session: str,
    image_provider: str,
    lookup: Callable[[str], Optional[AppRecord]],
) -> List[ListAppResponse]:
    """``list``: the apps this process owns (``owned``) and those recorded on disk under ``bases`` by other
    processes with the same image provider, read with ``lookup``; by app id."""
    seen: Dict[str, ListAppResponse] = {}
    for app_id, owned_record in owned.items():
        seen[app_id] = ListAppResponse(app_id=app_id, state=owned_record.state(), name=owned_record.name)
    for base in bases:
        session_dir = os.path.join(base, session)
        try:
            entries = os.listdir(session_dir)
        except OSError:
            continue
        for app_id in entries:
            if app_id in seen:
                continue
            path = os.path.join(session_dir, app_id, STATE_FILE)
            try:
                st = os.stat(path)
            except OSError:
                continue
            key = (path, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
            ended = _ENDED.get(key)
            if ended is None:
                try:
                    record = lookup(app_id)
                except ValueError:  # a directory whose name is no app id (see check_name)
                    continue
                if record is None:
                    continue
                ended = (record.image_provider, record.state(), record.name)
                if record.done:
                    _remember_ended(key, ended)
            if ended[0] in ("", image_provider):
                seen[app_id] = ListAppResponse(app_id=app_id, state=ended[1], name=ended[2])
    return sorted(seen.values(), key=lambda r: r.app_id)


# What ``list`` read of ended apps, by their state file as it was (path, device, inode, mtime, size): an
# ended app's record does not change, so a long-lived lister (the Jupyter server's Jobs sidebar, a kernel's
# %sched_list) reads and checks each one once, not at every listing (a history of 1,000 apps cost ~1 s a
# listing). A rewritten or replaced file is a new key, so it is read again. Bounded: oldest dropped first.
_ENDED: "OrderedDict[Tuple[str, int, int, int, int], Tuple[str, AppState, str]]" = OrderedDict()
_ENDED_MAX = 50_000
_ENDED_LOCK = threading.Lock()


def _remember_ended(key: Tuple[str, int, int, int, int], value: Tuple[str, AppState, str]) -> None:
    with _ENDED_LOCK:
        _ENDED[key] = value
        while len(_ENDED) > _ENDED_MAX:
            _ENDED.popitem(last=False)

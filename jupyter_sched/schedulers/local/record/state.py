"""The local backend's record of an app, kept in memory by its owner and mirrored to ``state.json``.

The file is what lets another process (the CLI, a restarted kernel) list, describe and read the logs of
apps it did not start. It is rewritten atomically (write then rename) whenever a replica starts or ends and
when the app is cancelled, so a reader never sees half a file. A rewrite that fails (a full disk) leaves the
previous file as it was and no temporary file behind; the error is raised to the caller, which keeps the
app's state in memory and reports it.

The final record is written even on a full disk. When the app is recorded, room for its final record and
for TorchX's ``SUCCESS`` file is set aside in two files of zeros (``state.reserve``, ``SUCCESS.reserve``;
the submit fails, with nothing left running, if even that room is missing). A final write that finds the
disk full writes into its reserve file in place, over blocks it already holds, and renames it over the
target: nothing the replicas' logs (or anything else) take meanwhile can be needed. The reserves serve the
final record only; earlier rewrites that fail are retried by the next one. (A copy-on-write filesystem
needs new blocks even to overwrite: there the reserve is given back and the write tried once more.)

What it holds (created 0600 in the app's 0700 directory): the app's name and id, its roles' image,
entrypoint, argv, replica count and retry count (argv with secrets masked, ``specs.masking``: only
``describe`` reads them and nothing re-runs from the file), each replica's pid, process start time, times,
exit code, log file paths and log fault. It does not hold the environment: env values reach the replicas
only through ``Popen`` and are never written here.

A record is read back only from where it is expected (see :func:`load_record`): its ``app_dir`` is the
directory it was found in, and log paths it names outside that directory are refused.

**The ``SUCCESS`` marker**, the file TorchX's local scheduler leaves in an app's log directory once it has
ended, is written here too. Its name is TorchX's and means "the logs are complete", not "the app succeeded":
it is written for every ended app, and ``final_state`` says how it ended. Tools written for TorchX poll for it
before reading the log files; it lists, per role and replica, the pid, exit code and the paths of
``stdout``/``stderr`` and the error file. It is a convenience copy of what ``state.json`` holds: written
atomically (a reader never sees half of it) and only when the record is, so it never claims more than the
record does; a failure to write it (a full disk) is ignored, ``state.json`` stays the source of truth.
"""

from __future__ import annotations

import errno
import json
import math
import os
import threading
from dataclasses import dataclass, field, fields, replace
from typing import Any, Dict, List, Optional, Tuple

from jupyter_sched.schedulers.local.processes.groups import Group, process_start_time
from jupyter_sched.specs import AppState

STATE_FILE = "state.json"
RESERVE_FILE = "state.reserve"
"""Room for the final ``state.json``, set aside when the app is recorded (see the module docstring)."""
DONE_MARKER = "SUCCESS"
MARKER_RESERVE_FILE = DONE_MARKER + ".reserve"
"""Room for the ``SUCCESS`` file, likewise."""
FILE_MODE = 0o600
_MIN_RESERVE = 64 * 1024
_MIN_MARKER_RESERVE = 16 * 1024


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
    pid_started: Optional[int] = None
    """The process start time (clock ticks since boot) that proves a pid is still this replica."""
    msg: str = ""
    """Why its logs are incomplete (a full disk), or how it was ended; "" when there is nothing to say."""

    @property
    def group(self) -> Group:
        """Its process group, checked against the recorded start time before any signal."""
        return Group(self.pid or 0, self.pid_started)
    usage: Optional[Dict[str, Any]] = None  # memory limit, then totals when it ends (see meter)

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
    save_error: str = field(default="", compare=False)
    """Why the last write of ``state.json`` failed (kept in memory only, never written)."""

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
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "save_error"}
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
        half written treats it as absent for that moment. Then the room for the final record is set aside
        (see the module docstring); if the disk has not even that, nothing is left and OSError is raised."""
        path = os.path.join(self.app_dir, STATE_FILE)
        data = json.dumps(self.to_json()).encode()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            _write_all(fd, data)
        except BaseException:
            os.close(fd)
            os.unlink(path)
            raise
        os.close(fd)
        try:
            _reserve(os.path.join(self.app_dir, RESERVE_FILE), max(_MIN_RESERVE, 4 * len(data)))
            _reserve(os.path.join(self.app_dir, MARKER_RESERVE_FILE), max(_MIN_MARKER_RESERVE, 2 * len(data)))
        except BaseException:
            for name in (STATE_FILE, RESERVE_FILE, MARKER_RESERVE_FILE):
                _unlink(os.path.join(self.app_dir, name))
            raise

    def save(self) -> None:
        """Replaces ``state.json`` atomically; on failure the previous file stays and no temporary file is
        left, and the OSError is raised (and remembered in :attr:`save_error`). The record of an ended app
        is written with the room set aside for it if the disk is full (see the module docstring)."""
        path = os.path.join(self.app_dir, STATE_FILE)
        final = self.done
        if final:  # TorchX's "logs complete" file, before the record that says the app ended
            self.write_done_marker()
        try:
            replace_file(
                path,
                json.dumps(self.to_json()).encode(),
                reserve=os.path.join(self.app_dir, RESERVE_FILE) if final else None,
            )
        except OSError as e:
            self.save_error = f"could not save {path}: {e.strerror or e}"
            if final:  # the marker never claims more than the record does
                _unlink(os.path.join(self.app_dir, DONE_MARKER))
            raise
        self.save_error = ""
        if final:  # nothing more to save
            _unlink(os.path.join(self.app_dir, RESERVE_FILE))
            _unlink(os.path.join(self.app_dir, MARKER_RESERVE_FILE))

    def write_done_marker(self) -> None:
        """TorchX's ``SUCCESS`` file for this ended app (see the module docstring), with the room set aside
        for it if the disk is full; a failure to write it is ignored: it is a convenience copy, ``state.json``
        stays the source of truth."""
        try:
            replace_file(
                os.path.join(self.app_dir, DONE_MARKER),
                marker_json(self).encode(),
                reserve=os.path.join(self.app_dir, MARKER_RESERVE_FILE),
            )
        except OSError:
            pass


def _reserve(path: str, size: int) -> None:
    """A new file of ``size`` zero bytes: written, not sparse, so that its blocks are really held."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        _write_all(fd, bytes(size))
    finally:
        os.close(fd)


def replace_file(path: str, data: bytes, reserve: Optional[str] = None) -> None:
    """Replaces ``path`` at once with ``data`` in a file only its owner can read (``FILE_MODE``): a reader
    sees the old file or the new one. On failure (a full disk) the OSError is raised, the previous file
    stays and no temporary file is left. Each process and thread writes its own temporary file (the IO
    thread and a cancel may both save a record).

    ``reserve``: a file of zeros set aside for this write. If the disk is full, ``data`` is written into
    it in place and it is renamed over ``path`` (it is used up)."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        _unlink(tmp)
        if reserve is None or e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        _replace_from_reserve(path, data, reserve, e)


def _replace_from_reserve(path: str, data: bytes, reserve: str, full: OSError) -> None:
    """The disk is full: ``data`` goes into the blocks ``reserve`` holds, which then becomes ``path``."""
    try:
        fd = os.open(reserve, os.O_WRONLY)
    except OSError:
        raise full from None  # no reserve (used up, or never made): the disk is still full
    try:
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
    except OSError:
        # Overwriting needed new blocks (a copy-on-write filesystem): give the room back, try once more.
        _unlink(reserve)
        replace_file(path, data)
        return
    os.replace(reserve, path)


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def load_record(app_dir: str, reconcile: bool = True) -> Optional[AppRecord]:
    """The record saved in ``app_dir``, reconciled with reality (unless ``reconcile`` is False: then as
    saved): if its owner died without the replicas having ended (and they were not meant to outlive it),
    the unfinished replicas are reported as failed.

    The record is trusted only as far as it describes itself: its ``app_dir`` becomes the directory it was
    read from, and a log or error file it names outside that directory is dropped (reads then find no
    file rather than someone else's)."""
    try:
        with open(os.path.join(app_dir, STATE_FILE)) as f:
            record = AppRecord.from_json(json.load(f))
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    real_dir = os.path.realpath(app_dir)  # resolved once: a record names up to 4 files per replica
    if os.path.realpath(record.app_dir) != real_dir:
        record.app_dir = app_dir
    for rep in record.replicas:
        for name in ("stdout", "stderr", "combined", "error_file"):
            if getattr(rep, name) and not _resolves_within(getattr(rep, name), real_dir):
                setattr(rep, name, "")
    if reconcile and not record.done and not owner_alive(record) and not _any_alive(record):
        for rep in record.replicas:
            if not rep.done:
                rep.exit_code, rep.finished = _recorded_end(rep, record.submitted)
        if not record.outlive_owner:  # for a detached app the owner leaving is what the user asked for
            record.msg = record.msg or f"owner process {record.owner_pid} exited before the app finished"
    return record


def _recorded_end(rep: ReplicaRecord, submitted: float) -> Tuple[Optional[int], float]:
    """How and when a replica ended that its owner did not live to record: the exit code and end time its
    wrapper wrote (a detached replica, see ``detached``). Never the time of the read: a detached job read
    an hour after it ended must not read as an hour long, nor grow longer at each read.

    A wrapper of an earlier version wrote the code alone: its file was written as the replica ended, so
    its modification time is the end. Without the file (the replica was killed with its wrapper, or had
    none) nobody saw the end: it is the replica's last sign of life, the newest of its start and the last
    writes to its log and error files (or the app's submit), which stays the same at every read (exit code
    None)."""
    path = os.path.join(os.path.dirname(rep.stdout), "exit_code") if rep.stdout else ""
    try:
        with open(path) as f:
            lines = f.read().split()
        code = int(lines[0])
        ended = float(lines[1]) if len(lines) > 1 else os.stat(path).st_mtime
        if math.isfinite(ended):
            return code, max(ended, rep.started or ended)
    except (OSError, ValueError, IndexError):
        pass
    seen = [submitted, rep.started or submitted]
    for name in filter(None, (rep.stdout, rep.stderr, rep.combined, rep.error_file)):
        try:
            seen.append(os.stat(name).st_mtime)
        except OSError:
            pass
    return None, max(seen)


def is_within(path: str, root: str) -> bool:
    """``path`` resolves (symlinks included) to ``root`` itself or somewhere below it."""
    return _resolves_within(path, os.path.realpath(root))


def _resolves_within(path: str, real_root: str) -> bool:
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def owner_alive(record: AppRecord) -> bool:
    started = process_start_time(record.owner_pid)
    if started is None:
        return False
    return record.owner_started is None or started == record.owner_started


def _any_alive(record: AppRecord) -> bool:
    """True if a process group of an unfinished replica still exists (e.g. an app meant to outlive its
    owner)."""
    return any(not rep.done and rep.pid and rep.group.alive() for rep in record.replicas)


# -- the SUCCESS marker (TorchX's) ---------------------------------------------------------------------------


def marker_content(record: AppRecord) -> Dict[str, Any]:
    """What the marker says about an ended app (TorchX's field names)."""
    roles: Dict[str, List[Dict[str, Any]]] = {}
    for rep in record.replicas:
        roles.setdefault(rep.role, []).append(
            {
                "replica_id": rep.replica_id,
                "pid": rep.pid,
                "exitcode": rep.exit_code,
                "stdout": rep.stdout,
                "stderr": rep.stderr,
                "error_file": rep.error_file,
            }
        )
    return {
        "app_id": record.app_id,
        "log_dir": record.app_dir,
        "final_state": record.state().name,
        "last_updated": record.finished,
        "roles": roles,
    }


def marker_json(record: AppRecord) -> str:
    """The file's text (:meth:`AppRecord.write_done_marker` writes it at once, beside the record)."""
    return json.dumps(marker_content(record), indent=2)

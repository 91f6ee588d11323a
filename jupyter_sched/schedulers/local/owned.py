"""An app this process started and owns: starting all its replicas or none, hearing each one end, cancelling it.

The owner holds the app's record in memory (``state``) with its live replicas (``procs``) and
keeps ``state.json`` in step: the app is recorded before ``schedule`` returns, and the record is saved
again when a replica ends (before the end shows in memory), when its logs fault and when the app is
cancelled. Once the app runs, only the IO thread saves it, so no save overtakes another. A save that
fails (a full disk) never raises into the IO loop: the state stays in memory, and ``describe`` shows why
the file lags.
"""

from __future__ import annotations

import logging
import os
import shlex
import time
from dataclasses import dataclass, field
from functools import partial
from typing import List, Optional

from jupyter_sched.schedulers.common.roles import role_summary
from jupyter_sched.schedulers.local.cancel import cancel_requested, mark_cancelled, stop_replicas
from jupyter_sched.schedulers.local.processes.procs import ProcessLoop, Replica
from jupyter_sched.schedulers.local.processes.reaper import ReaperClient
from jupyter_sched.schedulers.local.processes.spawn import record_start_times, rollback, spawn
from jupyter_sched.schedulers.local.record.state import AppRecord, ReplicaRecord, process_start_time
from jupyter_sched.schedulers.local.request.build import ERROR_FILE_ENV
from jupyter_sched.schedulers.local.request.popen import PopenRequest
from jupyter_sched.schedulers.local.usage.meter import LocalMeter
from jupyter_sched.schedulers.local.warm_starts.zygote import ZygotePool
from jupyter_sched.specs import AppDef

__all__ = ["OwnedApp", "new_record", "save_record"]

logger = logging.getLogger(__name__)
OWNER_STARTED = process_start_time(os.getpid())
"""This process's start time, recorded with its pid so a later process that reuses the pid is no owner."""


def new_record(request: PopenRequest, app: Optional[AppDef], session: str, image_provider: str) -> AppRecord:
    """The record of an app this process is about to start (no replica yet)."""
    return AppRecord(
        app_id=request.app_id,
        name=app.name if app else request.app_id.rsplit("-", 1)[0],
        session=session,
        app_dir=request.log_dir,
        owner_pid=os.getpid(),
        owner_started=OWNER_STARTED,
        submitted=time.time(),
        roles=[role_summary(r) for r in (app.roles if app else [])],
        outlive_owner=request.outlive_owner,
        cancel_grace=request.cancel_grace,
        image_provider=image_provider,
    )


def save_record(record: AppRecord) -> None:
    """Saves the record; a failure (a full disk) is logged and shown by ``describe``, never raised."""
    try:
        record.save()
    except OSError:
        logger.warning("jupyter_sched: %s (the app's state is kept in memory)", record.save_error)


@dataclass(eq=False)
class OwnedApp:
    """The record and live replicas of an app this process started; ``meter`` samples its usage and
    ``loop`` reads its output (both the scheduler's).

    ``owner`` is the scheduler: the IO loop holds each running replica's callbacks, which hold this app,
    so a scheduler is never collected (and closed, stopping its apps) while the loop still runs its
    replicas."""

    record: AppRecord
    meter: LocalMeter
    loop: ProcessLoop
    owner: object
    replicas: List[Replica] = field(default_factory=list)
    zygotes: Optional[ZygotePool] = None
    """Where replicas planned to start warm are forked (the scheduler's; see ``zygote``)."""

    def start(self, request: PopenRequest) -> None:
        """Starts every replica and records the app on disk, or leaves none running: a replica that cannot
        start stops the ones already started and the error names it. The IO loop is not told yet."""
        record = self.record
        started: List[Replica] = []
        owner_env = dict(os.environ)
        try:
            for role_name, params in request.role_params.items():
                for k, param in enumerate(params):
                    rep_record = ReplicaRecord(
                        role=role_name,
                        replica_id=k,
                        stdout=param.stdout or "",
                        stderr=param.stderr or "",
                        combined=param.combined or "",
                        error_file=param.env.get(ERROR_FILE_ENV, ""),
                    )
                    rep = spawn(
                        param, rep_record, request.outlive_owner, partial(self.replica_done, rep_record), self.zygotes,
                        owner_env,
                    )  # fmt: skip
                    rep.on_fault = partial(self.log_fault, rep_record)
                    started.append(rep)
                    record.replicas.append(rep_record)
        except BaseException as e:
            rollback(started, request)
            if isinstance(e, OSError):
                raise RuntimeError(
                    f"could not start replica {role_name}[{k}] ({shlex.join(param.args)}): {e}."
                    " No replica of the app was left running."
                ) from e
            raise
        self.replicas = started
        record_start_times(record.replicas)
        params = [p for ps in request.role_params.values() for p in ps]
        for rep_record, param in zip(record.replicas, params):
            self.meter.started(record, rep_record, param.replica_env)
        try:
            record.create()
        except OSError as e:
            rollback(started, request)
            raise RuntimeError(
                f"could not record the app in {request.log_dir!r} ({e.strerror or e}); no replica was left"
                " running. Free some space or set --cfg log_dir=<a writable directory>."
            ) from e

    def replica_done(self, rep_record: ReplicaRecord, rep: Replica) -> None:
        """Loop thread: the replica exited and its output is fully written."""
        record = self.record
        rep_record.exit_code = rep.exit_code
        finished = time.time()
        self.meter.ended(record, rep_record, finished)  # before the end is visible: totals come with it
        if not record.cancelled and cancel_requested(record.app_dir):
            record.cancelled = True
        # The end is on disk before this process shows it: whoever hears from the owner that the replica (or
        # the app, with TorchX's SUCCESS file) ended finds state.json saying so too.
        saved = record.snapshot()
        saved.replicas[next(i for i, r in enumerate(record.replicas) if r is rep_record)].finished = finished
        save_record(saved)
        record.save_error = saved.save_error
        rep_record.finished = finished
        if not record.outlive_owner:
            ReaperClient.forget([rep_record.group])

    def log_fault(self, rep_record: ReplicaRecord, rep: Replica, reason: str) -> None:
        """Loop thread: the replica's logs could not be written in full; it keeps running and being read."""
        rep_record.msg = f"logs truncated: {reason}; the rest of its output was read and dropped"
        logger.warning(
            "jupyter_sched: %s[%s] of %s: %s", rep_record.role, rep_record.replica_id, self.record.app_id,
            rep_record.msg,
        )  # fmt: skip
        save_record(self.record)

    def stop_for_owner(self, grace: float, msg: str) -> None:
        """Stops the running replicas because their owner is going away (it exits, or closes its scheduler):
        SIGTERM now, SIGKILL after ``grace``. Unlike :meth:`cancel` nobody asked for it, so the app ends
        FAILED and says why in ``msg`` (as the reaper says when the owner dies without a word).

        ``msg`` is saved with the next replica's end, by the IO thread, not here: this runs while replicas
        are ending (a second call, from ``close`` after a SIGTERM handler's), and a save from this thread
        could land after the IO thread's and put back a replica's end as unfinished. If the owner dies
        first, the reaper records the same words."""
        record = self.record
        if record.done:
            return
        if not record.cancelled:
            record.msg = record.msg or msg
        stop_replicas(self.replicas, grace, self.loop)

    def cancel(self, grace: Optional[float] = None) -> None:
        """SIGTERM to every running replica now, SIGKILL after ``grace`` (default: the app's
        ``cancel_grace``) seconds; returns at once. The app ends CANCELLED."""
        record = self.record
        if record.done:
            return
        if not record.cancelled:
            record.cancelled = True
            try:
                mark_cancelled(record.app_dir)  # what every reader goes by at once (see cancel)
            except OSError:
                pass
            # Saved on the IO thread, the one writer of a running app's record: a save from here could land
            # after the IO thread's save of a replica's end and put that replica back as unfinished.
            self.loop.call_later(0.0, partial(save_record, record))
        stop_replicas(self.replicas, record.cancel_grace if grace is None else grace, self.loop)

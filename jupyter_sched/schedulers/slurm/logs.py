"""Reading a Slurm replica's log files (see ``log_files``): which file, and when the replica is done writing it.

The files are written on the node by ``slurm_replica.py`` (each chunk appended as it is read, with an index
record ``(file size after the chunk, time)`` beside it, the same layout as the local backend's) and read
here from the shared job directory. Slurm cannot wake us, so a follow polls the file, every 0.05 s and at
most every 0.07 s while it stays quiet: with ``QUIET_S`` that keeps a frame or unterminated text within
about 100 ms of the wrapper writing it (one read of a small file per poll and replica; a network file
system's attribute cache may add its own delay).

The files are known from the job's manifest (:func:`replica_log_path`); a job submitted some other way has
none, and the error says where its output went instead. A follow ends once the replica can write nothing
more (:class:`ReplicaEnds`): the app ended, or the replica's step ended and no requeue can start it again.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from typing import Callable, Dict, Optional, Tuple

from jupyter_sched.schedulers.api import Stream
from jupyter_sched.schedulers.common.log_files import IndexedLogIterator
from jupyter_sched.schedulers.common.roles import unknown_replica
from jupyter_sched.schedulers.slurm.cli import map_state
from jupyter_sched.schedulers.slurm.files import MANIFEST
from jupyter_sched.schedulers.slurm.job import SlurmJob

FINISHED_RECHECK_S = 0.5  # seconds between Slurm queries while a log iterator waits for a replica to end


class SlurmLogIterator(IndexedLogIterator):
    """Iterates one log file of one replica. ``finished()`` says whether the replica can write nothing
    more (Slurm is asked, at the caller's pace)."""

    first_poll_s = 0.05
    max_poll_s = 0.07

    def __init__(
        self,
        log_file: str,
        finished: Callable[[], bool],
        regex: Optional[str] = None,
        should_tail: bool = False,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> None:
        super().__init__(log_file, regex=regex, should_tail=should_tail, since=since, until=until)
        self._is_finished = finished

    def _finished(self) -> bool:
        return self._is_finished()


def replica_log_path(app_id: str, job: SlurmJob, role_name: str, k: int, stream: Stream) -> str:
    """The file holding ``stream`` (stdout, stderr, else both combined) of replica ``k`` of ``role_name``.
    Raises ValueError for a job not submitted by us or a file this machine cannot see."""
    dirs = job.replica_dirs()
    if not dirs:
        raise ValueError(
            f"Slurm job {app_id} was not submitted by jupyter_sched (no {MANIFEST} in its work dir"
            f" {job.leader.work_dir!r}), so its replicas' log files are unknown; read its output files"
            " (scontrol show job shows StdOut) directly"
        )
    rep_dir = dirs.get((role_name, k))
    if rep_dir is None:
        raise unknown_replica(app_id, role_name, k, dirs)
    path = os.path.join(
        rep_dir, {Stream.STDOUT: "stdout.log", Stream.STDERR: "stderr.log"}.get(stream, "combined.log")
    )
    if not os.path.exists(path):
        raise ValueError(
            f"the log file {path} does not exist here: job_dir must be on a filesystem shared with the nodes"
        )
    return path


def replica_done(job: Optional[SlurmJob], role_name: str, k: int) -> bool:
    """True once the replica can write nothing more: the app ended (or Slurm forgot it), or the replica's
    step ended and no retry can start it again."""
    if job is None or job.state.is_terminal:
        return True
    max_retries = int((job.manifest or {}).get("max_retries", 0))
    if job.restarts < max_retries:
        return False
    for comp, (role, rk) in zip(job.components, job.replicas):
        if (role, rk) == (role_name, k):
            step = job.steps.get(comp.offset)
            return step is not None and map_state(step["State"]).is_terminal
    return True


class ReplicaEnds:
    """Whether replicas are done writing (:func:`replica_done`), asking Slurm (through ``read_job``) at most
    every ``FINISHED_RECHECK_S`` per replica; a replica once done stays done."""

    def __init__(self, read_job: Callable[[str], Optional[SlurmJob]]) -> None:
        self._read_job = read_job
        self._finished: Dict[Tuple[str, str, int], Tuple[bool, float]] = {}

    def finished(self, app_id: str, role_name: str, k: int) -> bool:
        key = (app_id, role_name, k)
        done, checked = self._finished.get(key, (False, 0.0))
        if done or time.monotonic() - checked < FINISHED_RECHECK_S:
            return done
        done = replica_done(self._read_job(app_id), role_name, k)
        self._finished[key] = (done, time.monotonic())
        return done

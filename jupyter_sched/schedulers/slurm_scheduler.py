"""The slurm backend: an AppDef runs as one Slurm batch job, each replica a het-job component on its own node.

``submit_dryrun`` renders the batch script (see :mod:`slurm.batch` for the mapping) and checks with ``sinfo``
that the partition can hold the app; ``schedule`` writes the script, a manifest and the replicas' log files
into the app's directory under ``job_dir`` and runs ``sbatch --parsable``. The Slurm job id is the app id.

State comes from Slurm itself: ``scontrol`` while the controller holds the job (pending, running, and
``MinJobAge`` after it ended), ``sacct`` for each replica's step (its own state, exit code, start and end)
and for jobs the controller has forgotten. ``list`` shows the jobs this session submitted (recorded under
``<job root>/<session>/jobs/``, so any process sees them), with their states read from Slurm in one query.

Logs are the files the replica wrapper writes on the node (``<app_dir>/<role>/<k>/{stdout,stderr,combined}.log``
with time indexes), read with the same line and ``\\r`` semantics as the local backend (:mod:`slurm.logs`).
The app directory must be on a filesystem every node shares with the submitting machine (the default, under
the user's home, usually is).

The class keeps the Scheduler methods and delegates: the request to :mod:`slurm.batch`, the capacity check
and ``sbatch`` to :mod:`slurm.submit`, the app directory and the session's index to :mod:`slurm.files`,
reading a job from Slurm to :mod:`slurm.job`, the answers of ``describe`` and ``list`` to
:mod:`slurm.status`, log files to :mod:`slurm.logs`, usage to :mod:`slurm.usage`.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from typing import Any, Iterable, List, Mapping, Optional, Tuple

from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    checked_app,
    stream_arg,
)
from jupyter_sched.schedulers.common.state_dir import default_job_root
from jupyter_sched.schedulers.shared_files import MetricsFiles, SharedFiles
from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.schedulers.slurm import opts as slurm_opts
from jupyter_sched.schedulers.slurm.batch import SlurmBatchRequest, build_request
from jupyter_sched.schedulers.slurm.cli import SlurmError
from jupyter_sched.schedulers.slurm.files import recorded_jobs
from jupyter_sched.schedulers.slurm.job import SlurmJob, SlurmJobReader
from jupyter_sched.schedulers.slurm.logs import ReplicaEnds, SlurmLogIterator, replica_log_path
from jupyter_sched.schedulers.slurm.opts import SlurmOpts
from jupyter_sched.schedulers.slurm.status import describe_job, list_jobs
from jupyter_sched.schedulers.slurm.submit import ClusterCapacity, submit
from jupyter_sched.schedulers.slurm.usage import SlurmUsage
from jupyter_sched.schedulers.timed_logs import TimedLogs
from jupyter_sched.schedulers.usage_api import UsageMixin
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    UnknownAppException,
    random_id,
    runopts,
)
from jupyter_sched.specs.output.names import safe_name
from jupyter_sched.specs.status.usage import UsageSample

__all__ = ["SlurmBatchRequest", "SlurmError", "SlurmOpts", "SlurmScheduler", "create_scheduler", "default_job_root"]


# -- the scheduler -------------------------------------------------------------------------------------------------


class SlurmScheduler(Scheduler[SlurmBatchRequest], UsageMixin, TimedLogs, SharedFiles, MetricsFiles):
    """Runs apps as Slurm batch jobs; see the module docstring and docs/slurm.md."""

    def __init__(self, session_name: str, job_root: Optional[str] = None) -> None:
        super().__init__("slurm", session_name)
        self._root = os.path.abspath(os.path.expanduser(job_root or default_job_root()))
        self._jobs = SlurmJobReader()
        self._ends = ReplicaEnds(self._jobs.read)
        self._usage = SlurmUsage()
        self._cluster = ClusterCapacity()

    # -- options and dry run ---------------------------------------------------------------------------------------
    def _run_opts(self) -> runopts:
        return slurm_opts.run_options()

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """A role without a resource gets the partition's defaults (one CPU), so none is required."""

    def max_replicas(self) -> int:
        """The cluster's size: one replica per node, so an app can never have more replicas than the cluster
        has nodes (``JUPYTER_SCHED_MAX_REPLICAS`` overrides it). Checked before any request is built; the
        capacity check then refines it per partition, resources and constraint. Without ``sinfo``,
        ``slurm.submit.UNKNOWN_CLUSTER_MAX``."""
        return self._cluster.max_replicas()

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[SlurmBatchRequest]:
        app = checked_app(self, app)
        cwd = slurm_opts.check(cfg)
        job_dir = os.path.abspath(os.path.expanduser(str(cfg.get("job_dir") or self._session_dir())))
        app_dir = os.path.join(job_dir, f"{safe_name(app.name)}-{random_id()}")
        request = build_request(app, cfg, self.session_name, app_dir, cwd)
        self._cluster.check(app, request, cfg, strict=False)
        return AppDryRunInfo(request, repr)

    def _session_dir(self) -> str:
        return os.path.join(self._root, self.session_name)

    def _index_dir(self) -> str:
        return os.path.join(self._session_dir(), "jobs")

    # -- submit ----------------------------------------------------------------------------------------------------
    def schedule(self, dryrun_info: AppDryRunInfo[SlurmBatchRequest]) -> str:
        request = dryrun_info.request
        if not request.capacity_checked and dryrun_info.app is not None:
            self._cluster.check(dryrun_info.app, request, dryrun_info.cfg, strict=True)
        return submit(request, dryrun_info.cfg, self._index_dir())

    # -- describe --------------------------------------------------------------------------------------------------
    def _job(self, app_id: str) -> Optional[SlurmJob]:
        """What Slurm knows of job ``app_id`` (None if nothing, or if it names a non-leader het component)."""
        return self._jobs.read(app_id)

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        job = self._job(app_id)
        if job is None:
            return None
        return describe_job(app_id, job, self._usage)

    def metrics_dir(self, app_id: str) -> Optional[str]:
        """``<app dir>/metrics`` under the shared ``job_dir`` (the job's work dir), for a job of ours."""
        job = self._job(app_id)
        if job is None or job.manifest is None:
            return None
        return os.path.join(job.leader.work_dir, "metrics")

    # -- list ------------------------------------------------------------------------------------------------------
    def list(self) -> List[ListAppResponse]:
        """Jobs this session submitted (from any process), with their states from Slurm. Jobs Slurm no longer
        knows (or whose id now belongs to another job, after a cluster reset) are left out."""
        return list_jobs(recorded_jobs(self._index_dir()))

    # -- cancel ----------------------------------------------------------------------------------------------------
    def _cancel_existing(self, app_id: str) -> None:
        """``scancel``: Slurm signals every replica (SIGTERM, SIGKILL after KillWait); returns at once and the
        app ends CANCELLED."""
        proc = slurm_cli.run(["scancel", app_id])
        if proc.returncode != 0 and "already completing or completed" not in proc.stderr:
            slurm_cli.check_result(proc, f"scancel {app_id}")

    # -- usage -----------------------------------------------------------------------------------------------------
    def shared_root(self, cfg: Mapping[str, CfgVal]) -> str:
        """``job_dir``, else this scheduler's root: a directory every node shares (see ``default_job_root``)."""
        return str(cfg.get("job_dir") or self._root)

    def usage(self, app_id: str) -> List[UsageSample]:
        """Per replica: ``sstat`` of its running step, ``sacct`` MaxRSS/TotalCPU once it ended (see
        ``slurm.usage``; a cluster that gathers nothing is refused with the setting to change)."""
        job = self._job(app_id)
        if job is None:
            raise UnknownAppException(app_id)
        reps = []
        for comp, (role, k) in zip(job.components, job.replicas):
            state, _, started, finished = job.replica_state(comp, job.state)
            if state == AppState.RUNNING or state.is_terminal:
                reps.append((role, k, comp.offset, state == AppState.RUNNING, started, finished))
        return self._usage.samples(app_id, reps, het=len(job.components) > 1)

    def wait_for_change(self, app_id: str, timeout: float) -> None:
        """Slurm has no change feed for one job: poll, but not more than ten times a second."""
        time.sleep(max(timeout, 0.1))

    # -- logs ------------------------------------------------------------------------------------------------------
    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        return self._log_reader(app_id, role_name, k, regex, since, until, should_tail, streams)

    def log_iter_timed(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[Tuple[float, str]]:
        """``log_iter`` with the time each item was written (the node's clock, from the log's time index)."""
        return self._log_reader(app_id, role_name, k, regex, since, until, should_tail, streams).timed()

    def _log_reader(
        self,
        app_id: str,
        role_name: str,
        k: int,
        regex: Optional[str],
        since: Optional[datetime],
        until: Optional[datetime],
        should_tail: bool,
        streams: Optional[Stream],
    ) -> SlurmLogIterator:
        stream = stream_arg(streams)
        job = self._job(app_id)
        if job is None:
            raise UnknownAppException(app_id)
        path = replica_log_path(app_id, job, role_name, k, stream)
        return SlurmLogIterator(
            path,
            finished=lambda: self._ends.finished(app_id, role_name, k),
            regex=regex,
            should_tail=should_tail,
            since=since,
            until=until,
        )


def create_scheduler(session_name: str, job_root: Optional[str] = None, **kwargs: Any) -> SlurmScheduler:
    """``slurm``: apps run as Slurm batch jobs. Other keyword arguments (meant for other backends) are
    ignored."""
    return SlurmScheduler(session_name, job_root=job_root)

"""The slurm backend: an AppDef runs as one Slurm batch job, each replica a het-job component on its own node.

``submit_dryrun`` renders the batch script (see :mod:`slurm_batch` for the mapping) and checks with ``sinfo``
that the partition can hold the app; ``schedule`` writes the script, a manifest and the replicas' log files
into the app's directory under ``job_dir`` and runs ``sbatch --parsable``. The Slurm job id is the app id.

State comes from Slurm itself: ``scontrol`` while the controller holds the job (pending, running, and
``MinJobAge`` after it ended), ``sacct`` for each replica's step (its own state, exit code, start and end)
and for jobs the controller has forgotten. ``list`` shows the jobs this session submitted (recorded under
``<job root>/<session>/jobs/``, so any process sees them), with their states read from Slurm in one query.

Logs are the files the replica wrapper writes on the node (``<app_dir>/<role>/<k>/{stdout,stderr,combined}.log``
with time indexes), read with the same line and ``\\r`` semantics as the local backend (:mod:`slurm_logs`).
The app directory must be on a filesystem every node shares with the submitting machine (the default, under
the user's home, usually is).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from jupyter_sched.schedulers import slurm_cli, slurm_opts
from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    checked_app,
    role_from_summary,
    stream_arg,
    unknown_replica,
)
from jupyter_sched.schedulers.log_files import read_error_file
from jupyter_sched.schedulers.slurm_batch import SlurmBatchRequest, build_request, check_fit
from jupyter_sched.schedulers.slurm_cli import SlurmError, map_state, parse_exit_code, parse_time, split_job_id
from jupyter_sched.schedulers.slurm_files import (
    MANIFEST,
    SRUN_LOG,
    materialize,
    read_json,
    record_submitted,
    recorded_jobs,
)
from jupyter_sched.schedulers.slurm_logs import SlurmLogIterator
from jupyter_sched.schedulers.slurm_opts import SlurmOpts
from jupyter_sched.schedulers.slurm_usage import SlurmUsage
from jupyter_sched.schedulers.timed_logs import TimedLogs
from jupyter_sched.schedulers.usage_api import UsageMixin
from jupyter_sched.specs import (
    NONE,
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    ReplicaStatus,
    RoleStatus,
    UnknownAppException,
    random_id,
    runopts,
)
from jupyter_sched.specs.limits import max_replicas_from_env
from jupyter_sched.specs.names import safe_name
from jupyter_sched.specs.usage import UsageSample

__all__ = ["SlurmBatchRequest", "SlurmError", "SlurmOpts", "SlurmScheduler", "create_scheduler", "default_job_root"]

_FINISHED_RECHECK = 0.5  # seconds between Slurm queries while a log iterator waits for a replica to end
_ENDED_CACHE = 1000  # ended jobs remembered per scheduler
_STEP_LAG = 10.0  # longest wait for sacct to record the steps of a job that just ended (slurmdbd lags under load)


def default_job_root() -> str:
    """Where app directories and the session's job records go without ``job_dir``:
    ``$JUPYTER_SCHED_SLURM_DIR``, else ``$XDG_STATE_HOME/jupyter_sched/slurm`` (``~/.local/state/...``).
    A home directory is usually shared by every node of a cluster; ``/tmp`` is not."""
    env = os.environ.get("JUPYTER_SCHED_SLURM_DIR")
    if env:
        return env
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "jupyter_sched", "slurm")


# -- what Slurm says about one job ---------------------------------------------------------------------------------


@dataclass
class _Component:
    offset: int
    state: str
    reason: str
    nodes: str
    start: Optional[float]
    end: Optional[float]
    exit_code: Optional[int]
    work_dir: str
    name: str


@dataclass
class _Job:
    job_id: str
    components: List[_Component]
    steps: Dict[int, Dict[str, str]]  # component offset -> sacct row of its step 0 (current attempt only)
    restarts: int
    manifest: Optional[Dict[str, Any]] = None
    replicas: List[Tuple[str, int]] = field(default_factory=list)  # (role, replica id) by component offset
    complete: bool = False  # ended, and the database has the step (exit code) of every replica that started

    @property
    def leader(self) -> _Component:
        return self.components[0]

    @property
    def state(self) -> AppState:
        return map_state(self.leader.state)


def _from_controller(records: List[Dict[str, str]]) -> Tuple[List[_Component], int]:
    comps = [
        _Component(
            offset=int(r.get("HetJobOffset") or 0),
            state=r.get("JobState", ""),
            reason=r.get("Reason", ""),
            nodes=r.get("NodeList", "") if r.get("NodeList") not in ("(null)", None) else "",
            start=parse_time(r.get("StartTime")),
            end=parse_time(r.get("EndTime")),
            exit_code=parse_exit_code(r.get("ExitCode")),
            work_dir=r.get("WorkDir", ""),
            name=r.get("JobName", ""),
        )
        for r in records
    ]
    restarts = int(records[0].get("Restarts") or 0) if records else 0
    return comps, restarts


def _from_accounting(rows: List[Dict[str, str]]) -> Tuple[List[_Component], int]:
    latest: Dict[int, Dict[str, str]] = {}
    attempts: Dict[int, int] = {}
    for row in rows:
        ids = split_job_id(row["JobID"])
        if ids.step is not None:
            continue
        offset = ids.component or 0
        latest[offset] = row  # sacct lists earlier attempts first
        attempts[offset] = attempts.get(offset, 0) + 1
    comps = [
        _Component(
            offset=offset,
            state=row["State"],
            reason="",
            nodes=row["NodeList"] if row["NodeList"] != "None assigned" else "",
            start=parse_time(row["Start"]),
            end=parse_time(row["End"]),
            exit_code=parse_exit_code(row["ExitCode"]),
            work_dir=row["WorkDir"],
            name=row["JobName"],
        )
        for offset, row in sorted(latest.items())
    ]
    return comps, max(attempts.get(0, 1) - 1, 0)


def _current_steps(rows: List[Dict[str, str]], comps: List[_Component]) -> Dict[int, Dict[str, str]]:
    """Each component's step 0 *of the current attempt* (a requeued job's old steps started earlier)."""
    start = {c.offset: c.start for c in comps}
    steps: Dict[int, Dict[str, str]] = {}
    for row in rows:
        ids = split_job_id(row["JobID"])
        if ids.step != "0":
            continue
        offset = ids.component or 0
        began, step_start = start.get(offset), parse_time(row["Start"])
        if began is None or step_start is None or step_start < began:
            continue
        steps[offset] = row
    return steps


def _ended_steps(steps: Dict[int, Dict[str, str]]) -> Set[int]:
    """Offsets whose step the database already records as ended (with its exit code): a step can be listed
    while still RUNNING there for a moment after the controller has ended the job."""
    return {offset for offset, row in steps.items() if map_state(row["State"]).is_terminal}


def _srun_problem(rep_dir: str) -> str:
    """The last thing Slurm or the wrapper itself said about a replica (``srun.log``: the wrapper could not
    start, or crashed), which its own logs cannot hold; "" if nothing but cancellation notices."""
    try:
        with open(os.path.join(rep_dir, SRUN_LOG), "rb") as f:
            f.seek(max(os.fstat(f.fileno()).st_size - 4096, 0))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    said = [line.strip() for line in tail.splitlines() if line.strip() and "*** STEP " not in line]
    return said[-1][:300] if said else ""


_UNKNOWN_CLUSTER_MAX = 4096
"""The replica bound when ``sinfo`` does not answer (the dry run cannot check the cluster)."""
_SINFO_TTL_S = 10.0


# -- the scheduler -------------------------------------------------------------------------------------------------


class SlurmScheduler(Scheduler[SlurmBatchRequest], UsageMixin, TimedLogs):
    """Runs apps as Slurm batch jobs; see the module docstring and docs/slurm.md."""

    def __init__(self, session_name: str, job_root: Optional[str] = None) -> None:
        super().__init__("slurm", session_name)
        self._root = os.path.abspath(os.path.expanduser(job_root or default_job_root()))
        self._finished: Dict[Tuple[str, str, int], Tuple[bool, float]] = {}
        self._ended: Dict[str, _Job] = {}  # jobs that ended, as Slurm finally recorded them
        self._usage = SlurmUsage()
        self._sinfo: Optional[Tuple[float, Dict[str, slurm_cli.Partition]]] = None

    # -- options and dry run ---------------------------------------------------------------------------------------
    def _run_opts(self) -> runopts:
        return slurm_opts.run_options()

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """A role without a resource gets the partition's defaults (one CPU), so none is required."""

    def max_replicas(self) -> int:
        """The cluster's size: one replica per node, so an app can never have more replicas than the cluster
        has nodes (``JUPYTER_SCHED_MAX_REPLICAS`` overrides it). Checked before any request is built; the
        capacity check then refines it per partition, resources and constraint. Without ``sinfo``,
        ``_UNKNOWN_CLUSTER_MAX``."""
        try:
            parts = self._partitions()
        except SlurmError:
            return max_replicas_from_env(os.environ, _UNKNOWN_CLUSTER_MAX)
        nodes = {node.name for part in parts.values() for node in part.nodes}
        return max_replicas_from_env(os.environ, len(nodes) or 1)

    def _partitions(self) -> Dict[str, slurm_cli.Partition]:
        """``sinfo``'s partitions, asked at most once per ``_SINFO_TTL_S`` (a dry run needs them twice)."""
        now = time.monotonic()
        if self._sinfo is None or now - self._sinfo[0] > _SINFO_TTL_S:
            self._sinfo = (now, slurm_cli.partitions())
        return self._sinfo[1]

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[SlurmBatchRequest]:
        app = checked_app(self, app)
        cwd = slurm_opts.check(cfg)
        job_dir = os.path.abspath(os.path.expanduser(str(cfg.get("job_dir") or self._session_dir())))
        app_dir = os.path.join(job_dir, f"{safe_name(app.name)}-{random_id()}")
        request = build_request(app, cfg, self.session_name, app_dir, cwd)
        self._check_capacity(app, request, cfg, strict=False)
        return AppDryRunInfo(request, repr)

    def _session_dir(self) -> str:
        return os.path.join(self._root, self.session_name)

    def _index_dir(self) -> str:
        return os.path.join(self._session_dir(), "jobs")

    def _check_capacity(self, app: AppDef, request: SlurmBatchRequest, cfg: Mapping[str, CfgVal], strict: bool) -> None:
        """Refuses (InvalidAppError) an app the cluster cannot hold. Without an answer from ``sinfo`` the
        dry run only notes that nothing was checked; ``schedule`` then raises."""
        try:
            parts = self._partitions()
        except SlurmError as e:
            if strict:
                raise
            request.capacity = f"not checked ({e})"
            return
        constraint = cfg.get("constraint")
        limit = cfg.get("time")
        request.capacity = check_fit(
            app,
            parts,
            partition=request.partition,
            constraint=str(constraint) if constraint else None,
            time_limit=str(limit) if limit else None,
        )
        request.capacity_checked = True

    # -- submit ----------------------------------------------------------------------------------------------------
    def schedule(self, dryrun_info: AppDryRunInfo[SlurmBatchRequest]) -> str:
        request = dryrun_info.request
        if not request.capacity_checked and dryrun_info.app is not None:
            self._check_capacity(dryrun_info.app, request, dryrun_info.cfg, strict=True)
        manifest = materialize(request)
        submitted = time.time()
        try:
            proc = slurm_cli.run(request.sbatch_cmd)
        except SlurmError:
            shutil.rmtree(request.app_dir, ignore_errors=True)
            raise
        if proc.returncode != 0:
            shutil.rmtree(request.app_dir, ignore_errors=True)
            detail = (proc.stderr or proc.stdout).strip()
            detail = " ".join(line for line in detail.splitlines() if not line.startswith("Try "))
            detail = detail or f"exit {proc.returncode}"
            raise SlurmError(
                f"sbatch refused app {request.app_name!r}: {detail}; {slurm_opts.blame(detail, dryrun_info.cfg)}"
            )
        job_id = proc.stdout.strip().split(";")[0]
        record_submitted(request, manifest, self._index_dir(), job_id, submitted)
        return job_id

    # -- describe --------------------------------------------------------------------------------------------------
    def _job(self, app_id: str) -> Optional[_Job]:
        """What Slurm knows of job ``app_id`` (None if nothing, or if it names a non-leader het component)."""
        if not re.fullmatch(r"\d+", app_id or ""):
            return None
        cached = self._ended.get(app_id)
        if cached is not None and cached.complete:
            return cached
        records = slurm_cli.job_components(app_id)
        comps: List[_Component] = []
        restarts = 0
        if records:
            het = records[0].get("HetJobId")
            if het and het != app_id:
                return None
            comps, restarts = _from_controller(records)
            if comps[0].start is None:  # pending: no steps yet, no need to ask the database
                return self._attach_manifest(_Job(app_id, comps, {}, restarts))
        # an ended job kept without every step's exit code is read again, once, without waiting
        deadline = time.monotonic() + (0.0 if cached is not None else _STEP_LAG)
        while True:
            accounting = slurm_cli.accounting_rows([app_id])
            rows = [r for r in accounting or [] if split_job_id(r["JobID"]).job == app_id]
            if not records:
                if not rows:
                    return None
                comps, restarts = _from_accounting(rows)
                if not comps:
                    return None
            job = _Job(app_id, comps, _current_steps(rows, comps), restarts)
            if not job.state.is_terminal or accounting is None:
                return self._attach_manifest(job)
            job.complete = all(c.offset in _ended_steps(job.steps) for c in comps if c.start is not None)
            if job.complete or time.monotonic() >= deadline:
                # The database records a step a moment after the controller ends the job: wait for it so
                # that the final status has every replica's exit code, then keep it (it cannot change). If
                # it is still missing at the deadline, keep what there is; later calls look once more.
                self._ended.pop(app_id, None)
                while len(self._ended) >= _ENDED_CACHE:
                    self._ended.pop(next(iter(self._ended)))
                self._ended[app_id] = self._attach_manifest(job)
                return self._ended[app_id]
            time.sleep(0.1)

    def _attach_manifest(self, job: _Job) -> _Job:
        work_dir = job.leader.work_dir
        manifest = read_json(os.path.join(work_dir, MANIFEST)) if work_dir else None
        if manifest is not None and str(manifest.get("job_id")) != job.job_id:
            manifest = None
        job.manifest = manifest
        by_offset: Dict[int, Tuple[str, int]] = {}
        if manifest:
            for rep in manifest.get("replicas", []):
                by_offset[int(rep["component"])] = (str(rep["role"]), int(rep["replica_id"]))
        for comp in job.components:
            if comp.offset in by_offset:
                job.replicas.append(by_offset[comp.offset])
                continue
            parts = comp.name.split(":")
            if len(parts) == 3 and parts[2].isdigit():
                job.replicas.append((parts[1], int(parts[2])))
            else:
                job.replicas.append((comp.name or "job", comp.offset))
        return job

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        job = self._job(app_id)
        if job is None:
            return None
        app_state = job.state
        roles: Dict[str, RoleStatus] = {}
        rep_dirs = self._replica_dirs(job)
        for comp, (role, k) in zip(job.components, job.replicas):
            state, exit_code, started, finished = self._replica_state(job, comp, app_state)
            oom = self._oom_text(job, comp)
            if oom and state == AppState.CANCELLED:  # OverMemoryKill cancels the step: it failed
                state = AppState.FAILED
            rep_dir = rep_dirs.get((role, k))
            error = read_error_file(os.path.join(rep_dir, "error.json")) if rep_dir else NONE
            roles.setdefault(role, RoleStatus(role, [])).replicas.append(
                ReplicaStatus(
                    id=k,
                    state=state,
                    role=role,
                    hostname=comp.nodes,
                    structured_error_msg=oom if oom and error == NONE else error,  # as the docker backend
                    exit_code=exit_code,
                    started=started,
                    finished=finished,
                    num_restarts=job.restarts,
                    msg=oom,
                    usage=self._usage.totals(job.steps.get(comp.offset), started, finished)
                    if state.is_terminal
                    else None,
                )
            )
        errors = [
            r.structured_error_msg for rs in roles.values() for r in rs.replicas if r.structured_error_msg != NONE
        ]
        leader = job.leader
        msg = slurm_cli.slurm_state_name(leader.state)
        # a cancelled job keeps the reason it last waited for ("CANCELLED (BeginTime)"): not worth saying
        if leader.reason and leader.reason not in ("None", "(null)") and app_state != AppState.CANCELLED:
            msg += f" ({leader.reason})"
        if job.restarts:
            msg += f"; requeued {job.restarts} time(s)"
        problems = [
            f"{role}[{r.id}]: {line}"
            for role, rs in roles.items()
            for r in rs.replicas
            if r.state == AppState.FAILED and ((role, r.id) in rep_dirs or r.msg)
            for line in [r.msg or _srun_problem(rep_dirs[(role, r.id)])]  # killed for memory, else srun's word
            if line
        ]
        if problems:
            msg += ": " + "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        manifest = job.manifest or {}
        return DescribeAppResponse(
            app_id=app_id,
            state=app_state,
            num_restarts=job.restarts,
            msg=msg,
            structured_error_msg=errors[0] if errors else NONE,
            ui_url=f"file://{manifest['app_dir']}" if manifest.get("app_dir") else None,
            roles_statuses=list(roles.values()),
            roles=[role_from_summary(r) for r in manifest.get("roles", [])],
        )

    @staticmethod
    def _replica_state(
        job: _Job, comp: _Component, app_state: AppState
    ) -> Tuple[AppState, Optional[int], Optional[float], Optional[float]]:
        """A replica's state, exit code, start and end: from its own step when Slurm has one for the current
        attempt, else from its component (which shares the job's state)."""
        step = job.steps.get(comp.offset)
        if step is not None:
            state = map_state(step["State"])
            if state.is_terminal:
                return state, parse_exit_code(step["ExitCode"]), parse_time(step["Start"]), parse_time(step["End"])
            if not app_state.is_terminal:
                return AppState.RUNNING, None, parse_time(step["Start"]), None
        state = map_state(comp.state)
        if app_state.is_terminal:
            state = app_state
        exit_code = comp.exit_code if state.is_terminal and len(job.components) == 1 else None
        return state, exit_code, comp.start, comp.end if state.is_terminal else None

    @staticmethod
    def _replica_dirs(job: _Job) -> Dict[Tuple[str, int], str]:
        if not job.manifest:
            return {}
        return {(str(r["role"]), int(r["replica_id"])): str(r["dir"]) for r in job.manifest.get("replicas", [])}

    # -- list ------------------------------------------------------------------------------------------------------
    def list(self) -> List[ListAppResponse]:
        """Jobs this session submitted (from any process), with their states from Slurm. Jobs Slurm no longer
        knows (or whose id now belongs to another job, after a cluster reset) are left out."""
        entries = recorded_jobs(self._index_dir())
        if not entries:
            return []
        ids = sorted(entries, key=int)
        found: Dict[str, Tuple[str, str]] = {
            job_id: (row["State"], row["WorkDir"]) for job_id, row in slurm_cli.queue_states(ids).items()
        }
        rest = [i for i in ids if i not in found]
        for row in slurm_cli.accounting_rows(rest, allocations_only=True) or []:
            parts = split_job_id(row["JobID"])
            if parts.step is None and parts.component in (None, 0) and parts.job in entries:
                found[parts.job] = (row["State"], row["WorkDir"])  # the last attempt wins
        out = []
        for job_id in ids:
            if job_id not in found:
                continue
            state, work_dir = found[job_id]
            if os.path.normpath(work_dir) != os.path.normpath(str(entries[job_id].get("app_dir"))):
                continue
            out.append(
                ListAppResponse(app_id=job_id, state=map_state(state), name=str(entries[job_id].get("name", "")))
            )
        return out

    # -- cancel ----------------------------------------------------------------------------------------------------
    def _cancel_existing(self, app_id: str) -> None:
        """``scancel``: Slurm signals every replica (SIGTERM, SIGKILL after KillWait); returns at once and the
        app ends CANCELLED."""
        proc = slurm_cli.run(["scancel", app_id])
        if proc.returncode != 0 and "already completing or completed" not in proc.stderr:
            slurm_cli.check_result(proc, f"scancel {app_id}")

    # -- usage -----------------------------------------------------------------------------------------------------
    def usage(self, app_id: str) -> List[UsageSample]:
        """Per replica: ``sstat`` of its running step, ``sacct`` MaxRSS/TotalCPU once it ended (see
        ``slurm_usage``; a cluster that gathers nothing is refused with the setting to change)."""
        job = self._job(app_id)
        if job is None:
            raise UnknownAppException(app_id)
        reps = []
        for comp, (role, k) in zip(job.components, job.replicas):
            state, _, started, finished = self._replica_state(job, comp, job.state)
            if state == AppState.RUNNING or state.is_terminal:
                reps.append((role, k, comp.offset, state == AppState.RUNNING, started, finished))
        return self._usage.samples(app_id, reps, het=len(job.components) > 1)

    def _oom_text(self, job: _Job, comp: _Component) -> str:
        """"killed: out of memory (...)" for a replica whose step Slurm ended for its memory: OUT_OF_MEMORY
        (cgroup enforcement), or killed by SIGKILL, which ``slurm_usage`` then checks against its memory
        (OverMemoryKill); "" otherwise, without asking sacct again."""
        step = job.steps.get(comp.offset) or {}
        state = step.get("State") or comp.state
        killed = step.get("ExitCode", "").endswith(":9") and map_state(state).is_terminal
        if not (state.startswith("OUT_OF_MEMORY") or killed):
            return ""
        return self._usage.oom_text(job.job_id, comp.offset, len(job.components) > 1)

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
        dirs = self._replica_dirs(job)
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
        return SlurmLogIterator(
            path,
            finished=lambda: self._replica_finished(app_id, role_name, k),
            regex=regex,
            should_tail=should_tail,
            since=since,
            until=until,
        )

    def _replica_finished(self, app_id: str, role_name: str, k: int) -> bool:
        """True once the replica can write nothing more: the app ended, or the replica's step ended and no
        retry can start it again. Slurm is asked at most every half second per replica."""
        key = (app_id, role_name, k)
        done, checked = self._finished.get(key, (False, 0.0))
        if done or time.monotonic() - checked < _FINISHED_RECHECK:
            return done
        done = self._query_finished(app_id, role_name, k)
        self._finished[key] = (done, time.monotonic())
        return done

    def _query_finished(self, app_id: str, role_name: str, k: int) -> bool:
        job = self._job(app_id)
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


def create_scheduler(session_name: str, job_root: Optional[str] = None, **kwargs: Any) -> SlurmScheduler:
    """``slurm``: apps run as Slurm batch jobs. Other keyword arguments (meant for other backends) are
    ignored."""
    return SlurmScheduler(session_name, job_root=job_root)

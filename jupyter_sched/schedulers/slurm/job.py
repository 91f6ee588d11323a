"""What Slurm says about one job, read into a small model: a :class:`SlurmJob` and its components.

Slurm has two sources: the controller (``scontrol``) while it holds the job (pending, running, and
``MinJobAge`` after it ended), and the accounting database (``sacct``) for each replica's step (its own state,
exit code, start and end) and for jobs the controller has forgotten. :class:`SlurmJobReader` asks both and
parses their rows here; the job's manifest (:mod:`files`) says which component is which replica.

The database records a step a moment after the controller ends the job (longer when slurmdbd is loaded), so
the reader waits up to ``STEP_LAG_S`` for every replica's exit code before it keeps an ended job for good.
A requeued job's earlier steps are ignored: each replica's step is the one of the current attempt.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.schedulers.slurm.cli import map_state, parse_exit_code, parse_time, split_job_id
from jupyter_sched.schedulers.slurm.files import MANIFEST, read_json
from jupyter_sched.specs import AppState

ENDED_CACHE = 1000  # ended jobs remembered per reader
STEP_LAG_S = 10.0  # longest wait for sacct to record the steps of a job that just ended (slurmdbd lags under load)


@dataclass
class SlurmComponent:
    """One het-job component (the whole job, for one replica) as the controller or the database shows it."""

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
class SlurmJob:
    """A job: its components, each replica's step of the current attempt, and our manifest if it is ours."""

    job_id: str
    components: List[SlurmComponent]
    steps: Dict[int, Dict[str, str]]  # component offset -> sacct row of its step 0 (current attempt only)
    restarts: int
    manifest: Optional[Dict[str, Any]] = None
    replicas: List[Tuple[str, int]] = field(default_factory=list)  # (role, replica id) by component offset
    complete: bool = False  # ended, and the database has the step (exit code) of every replica that started

    @property
    def leader(self) -> SlurmComponent:
        return self.components[0]

    @property
    def state(self) -> AppState:
        return map_state(self.leader.state)

    def replica_state(
        self, comp: SlurmComponent, app_state: AppState
    ) -> Tuple[AppState, Optional[int], Optional[float], Optional[float]]:
        """A replica's state, exit code, start and end: from its own step when Slurm has one for the current
        attempt, else from its component (which shares the job's state).

        When a node of the job goes down, the database first marks *every* step NODE_FAIL with exit code
        ``0:0``, healthy ones included, while the controller is still stopping them (the job COMPLETING);
        their real end (CANCELLED by the signal) follows. So a NODE_FAIL step is no end while the job runs,
        and its ``0:0`` is no exit code: a healthy replica never shows "FAILED, exit 0"."""
        step = self.steps.get(comp.offset)
        if step is not None:
            state = map_state(step["State"])
            node_fail = node_failed(step)
            if state.is_terminal and not (node_fail and not app_state.is_terminal):
                exit_code = None if node_fail else parse_exit_code(step["ExitCode"])
                return state, exit_code, parse_time(step["Start"]), parse_time(step["End"])
            if not app_state.is_terminal:
                return AppState.RUNNING, None, parse_time(step["Start"]), None
        state = map_state(comp.state)
        if app_state.is_terminal:
            state = app_state
        exit_code = comp.exit_code if state.is_terminal and len(self.components) == 1 else None
        return state, exit_code, comp.start, comp.end if state.is_terminal else None

    def replica_dirs(self) -> Dict[Tuple[str, int], str]:
        """(role, replica id) -> the replica's directory, from the manifest ({} for a job not ours)."""
        if not self.manifest:
            return {}
        return {(str(r["role"]), int(r["replica_id"])): str(r["dir"]) for r in self.manifest.get("replicas", [])}


def from_controller(records: List[Dict[str, str]]) -> Tuple[List[SlurmComponent], int]:
    """The components ``scontrol show job`` lists (one record each) and the job's requeue count."""
    comps = [
        SlurmComponent(
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


def from_accounting(rows: List[Dict[str, str]]) -> Tuple[List[SlurmComponent], int]:
    """The components of a job the controller forgot, from ``sacct``'s allocation rows (the last attempt of
    each), and how many earlier attempts there were."""
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
        SlurmComponent(
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


def current_steps(rows: List[Dict[str, str]], comps: List[SlurmComponent]) -> Dict[int, Dict[str, str]]:
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


def ended_steps(steps: Dict[int, Dict[str, str]]) -> Set[int]:
    """Offsets whose step the database already records as ended (with its exit code): a step can be listed
    while still RUNNING there for a moment after the controller has ended the job, and when a node of the
    job goes down every step is first marked NODE_FAIL ``0:0`` (healthy ones too) until its real end (the
    signal that stopped it) is recorded, a moment later."""
    return {offset for offset, row in steps.items() if map_state(row["State"]).is_terminal and not node_failed(row)}


def node_failed(step: Dict[str, str]) -> bool:
    """The database marks the step NODE_FAIL: a placeholder with exit code ``0:0``, not how it ended."""
    return slurm_cli.slurm_state_name(step["State"]) == "NODE_FAIL"


class SlurmJobReader:
    """Reads jobs from Slurm; keeps the last ``ENDED_CACHE`` ended jobs once the database has their steps."""

    def __init__(self) -> None:
        self._ended: Dict[str, SlurmJob] = {}  # jobs that ended, as Slurm finally recorded them

    def read(self, app_id: str) -> Optional[SlurmJob]:
        """What Slurm knows of job ``app_id`` (None if nothing, or if it names a non-leader het component)."""
        if not re.fullmatch(r"\d+", app_id or ""):
            return None
        cached = self._ended.get(app_id)
        if cached is not None and cached.complete:
            return cached
        records = slurm_cli.job_components(app_id)
        comps: List[SlurmComponent] = []
        restarts = 0
        if records:
            het = records[0].get("HetJobId")
            if het and het != app_id:
                return None
            comps, restarts = from_controller(records)
            if comps[0].start is None:  # pending: no steps yet, no need to ask the database
                return self._attach_manifest(SlurmJob(app_id, comps, {}, restarts))
        # an ended job kept without every step's exit code is read again, once, without waiting
        deadline = time.monotonic() + (0.0 if cached is not None else STEP_LAG_S)
        while True:
            accounting = slurm_cli.accounting_rows([app_id])
            rows = [r for r in accounting or [] if split_job_id(r["JobID"]).job == app_id]
            if not records:
                if not rows:
                    return None
                comps, restarts = from_accounting(rows)
                if not comps:
                    return None
            job = SlurmJob(app_id, comps, current_steps(rows, comps), restarts)
            if not job.state.is_terminal or accounting is None:
                return self._attach_manifest(job)
            job.complete = all(c.offset in ended_steps(job.steps) for c in comps if c.start is not None)
            if job.complete or time.monotonic() >= deadline:
                # The database records a step a moment after the controller ends the job: wait for it so
                # that the final status has every replica's exit code, then keep it (it cannot change). If
                # it is still missing at the deadline, keep what there is; later calls look once more.
                self._ended.pop(app_id, None)
                while len(self._ended) >= ENDED_CACHE:
                    self._ended.pop(next(iter(self._ended)))
                self._ended[app_id] = self._attach_manifest(job)
                return self._ended[app_id]
            time.sleep(0.1)

    @staticmethod
    def _attach_manifest(job: SlurmJob) -> SlurmJob:
        """Our manifest (if the job's work dir has one for this very job) and which replica each component is."""
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

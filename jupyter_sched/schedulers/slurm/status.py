"""What ``describe`` and ``list`` say about Slurm jobs, assembled from what Slurm says (:mod:`job`).

A replica's status comes from its own step of the current attempt (state, exit code, start and end), the
error file its program wrote, and a kill for memory, named the way every backend names it (``oom_text``):
Slurm ends such a step OUT_OF_MEMORY, or CANCELLED by SIGKILL under OverMemoryKill, which is a failure.
The app's message is Slurm's state and the reason it gives, the requeues, and for the first failed replicas
what went wrong: the kill for memory, or the last line srun or the replica wrapper wrote (``srun.log``),
which the replica's own logs cannot hold. ``list`` reads the states of the session's jobs in one query.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Tuple

from jupyter_sched.schedulers.api import DescribeAppResponse, ListAppResponse
from jupyter_sched.schedulers.common.log_files import read_error_file
from jupyter_sched.schedulers.common.roles import role_from_summary
from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.schedulers.slurm.cli import map_state, split_job_id
from jupyter_sched.schedulers.slurm.files import SRUN_LOG
from jupyter_sched.schedulers.slurm.job import SlurmComponent, SlurmJob
from jupyter_sched.schedulers.slurm.usage import SlurmUsage
from jupyter_sched.specs import NONE, AppState, ReplicaStatus, RoleStatus


def describe_job(app_id: str, job: SlurmJob, usage: SlurmUsage) -> DescribeAppResponse:
    """``describe``'s answer for a job Slurm knows: each replica's state from its own step, the file its
    program wrote for an error, a kill for memory; the message says Slurm's state, its reason and what went
    wrong with the first failed replicas."""
    app_state = job.state
    roles: Dict[str, RoleStatus] = {}
    rep_dirs = job.replica_dirs()
    for comp, (role, k) in zip(job.components, job.replicas):
        state, exit_code, started, finished = job.replica_state(comp, app_state)
        oom = oom_text(usage, job, comp)
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
                usage=usage.totals(job.steps.get(comp.offset), started, finished)
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
        for line in [r.msg or srun_problem(rep_dirs[(role, r.id)])]  # killed for memory, else srun's word
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


def oom_text(usage: SlurmUsage, job: SlurmJob, comp: SlurmComponent) -> str:
    """"killed: out of memory (...)" for a replica whose step Slurm ended for its memory: OUT_OF_MEMORY
    (cgroup enforcement), or killed by SIGKILL, which ``usage`` then checks against its memory
    (OverMemoryKill); "" otherwise, without asking sacct again."""
    step = job.steps.get(comp.offset) or {}
    state = step.get("State") or comp.state
    killed = step.get("ExitCode", "").endswith(":9") and map_state(state).is_terminal
    if not (state.startswith("OUT_OF_MEMORY") or killed):
        return ""
    return usage.oom_text(job.job_id, comp.offset, len(job.components) > 1)


def srun_problem(rep_dir: str) -> str:
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


def list_jobs(entries: Dict[str, Dict[str, Any]]) -> List[ListAppResponse]:
    """``list``'s answer for the session's index (job id -> entry, see ``files.recorded_jobs``): their
    states in one query to the controller and one to the database. Jobs Slurm no longer knows, or whose id
    now belongs to another job (its work dir is not the entry's app dir, after a cluster reset), are left
    out."""
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

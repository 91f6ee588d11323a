"""An AppDef as one Slurm batch job: the mapping, and :func:`build_request`, which applies it.

The request it builds is :class:`SlurmBatchRequest` (:mod:`request`, which also renders its script), the
app directory's file names come from :mod:`files`; this module re-exports them, so
``batch`` stays the one place to import the batch side from.

The mapping (see docs/slurm.md):

* One AppDef is one ``sbatch`` job; its Slurm job id is the app id.
* Each replica of each role is one component of a heterogeneous job (``#SBATCH hetjob`` between them), one
  task on a node of its own: ``--nodes=1 --ntasks=1 --cpus-per-task=<cpu> --mem=<memMB> --gres=gpu:<gpu>``.
  A single-replica app is a plain job. Components never share a node, so an app needs as many nodes as it
  has replicas; :func:`check_fit` (in :mod:`fit`, re-exported here) refuses an app the partition
  cannot hold instead of letting Slurm keep it pending forever.
* One ``srun`` starts every replica (``:`` between the het groups); with ``kill_on_bad_exit`` a failing
  replica stops the others. Each replica runs under ``slurm_replica.py``, which writes its stdout, stderr
  and combined logs (with time indexes) into ``<app_dir>/<role>/<k>/``.
* ``max_retries`` requeues the whole job (``scontrol requeue``) while ``SLURM_RESTART_COUNT`` is below the
  largest ``max_retries`` of the app's roles.
"""

from __future__ import annotations

import os
import shlex
from typing import Any, List, Mapping

from jupyter_sched.schedulers.common.roles import role_summary
from jupyter_sched.schedulers.slurm.files import BATCH_LOG, LOG_FILES, MANIFEST, SCRIPT_NAME, SRUN_LOG, WRAPPER_NAME
from jupyter_sched.schedulers.slurm.fit import check_fit
from jupyter_sched.schedulers.slurm.opts import sbatch_extra
from jupyter_sched.schedulers.slurm.request import (
    APP_ID_MARK,
    RANK0_ENV,
    SlurmBatchRequest,
    SlurmReplica,
    render_script,
    shell_word,
)
from jupyter_sched.specs import AppDef, CfgVal, macros
from jupyter_sched.specs.output.names import safe_name

__all__ = [
    "BATCH_LOG", "ERROR_FILE_ENV", "LOG_FILES", "MANIFEST", "RANK0_ENV", "SCRIPT_NAME", "SRUN_LOG", "WRAPPER_NAME",
    "SlurmBatchRequest", "SlurmReplica", "build_request", "check_fit", "render_script", "shell_word",
]  # fmt: skip

ERROR_FILE_ENV = "TORCHELASTIC_ERROR_FILE"


def _opt(flag: str, value: Any) -> str:
    value = str(value)
    if value == "":
        return flag
    return f"{flag}={shlex.quote(value)}"


_COMPONENT_CFG = (("partition", "--partition"), ("time", "--time"), ("qos", "--qos"), ("constraint", "--constraint"),
                  ("account", "--account"))  # fmt: skip
_JOB_CFG = (("mail_user", "--mail-user"), ("mail_type", "--mail-type"), ("comment", "--comment"))


def build_request(app: AppDef, cfg: Mapping[str, CfgVal], session: str, app_dir: str, cwd: str) -> SlurmBatchRequest:
    """The batch request for ``app`` (already validated, a copy we may change)."""
    python = str(cfg.get("python") or "python3")
    wrapper = os.path.join(app_dir, WRAPPER_NAME)
    kill = bool(cfg.get("kill_on_bad_exit", True))
    extra = sbatch_extra(cfg)
    component_cfg = [_opt(flag, cfg[key]) for key, flag in _COMPONENT_CFG if cfg.get(key)]
    component_cfg += [_opt("--" + k.lstrip("-"), v) for k, v in extra.items()]
    max_retries = max(r.max_retries for r in app.roles)
    replicas: List[SlurmReplica] = []
    heterogeneous = sum(r.num_replicas for r in app.roles) > 1
    offset = 0
    for role in app.roles:
        for k in range(role.num_replicas):
            values = macros.Values(img_root=cwd, app_id=APP_ID_MARK, replica_id=str(k), rank0_env=RANK0_ENV)
            r = values.apply(role)
            rep_dir = os.path.join(app_dir, safe_name(role.name, "role"), str(k))
            res = role.resource
            sbatch = [f"--job-name={safe_name(app.name)}:{safe_name(role.name, 'role')}:{k}", "--nodes=1", "--ntasks=1"]
            if res.cpu > 0:
                sbatch.append(f"--cpus-per-task={res.cpu}")
            if res.memMB > 0:
                sbatch.append(f"--mem={res.memMB}")
            if res.gpu > 0:
                sbatch.append(f"--gres=gpu:{res.gpu}")
            sbatch += component_cfg
            srun = [f"--het-group={offset}"] if heterogeneous else []
            srun += [_opt("--chdir", cwd), _opt("--output", os.path.join(rep_dir, SRUN_LOG)), "--open-mode=append"]
            if res.cpu > 0:
                srun.append(f"--cpus-per-task={res.cpu}")
            if kill:
                srun.append("--kill-on-bad-exit=1")
            env = dict(r.env)
            env.setdefault(ERROR_FILE_ENV, os.path.join(rep_dir, "error.json"))
            # the same identity variables as the local and docker backends
            env["JUPYTER_SCHED_APP_ID"] = APP_ID_MARK
            env["JUPYTER_SCHED_ROLE_NAME"] = role.name
            env["JUPYTER_SCHED_REPLICA_ID"] = str(k)
            # where jupyter_sched.track writes the replica's metrics: the app's directory is on the shared job_dir
            env["JUPYTER_SCHED_METRICS_DIR"] = os.path.join(app_dir, "metrics")
            command = [shlex.quote(python), shlex.quote(wrapper), shlex.quote(rep_dir), "-C", shlex.quote(cwd)]
            for key, value in env.items():
                command += ["-e", shell_word(f"{key}={value}")]
            command += ["--", shlex.quote(r.entrypoint)] + [shell_word(a) for a in r.args]
            replicas.append(
                SlurmReplica(role.name, k, offset, rep_dir, res.cpu, res.gpu, res.memMB, sbatch, srun, command, env)
            )
            offset += 1
    job_opts = [
        _opt("--chdir", app_dir),
        _opt("--output", os.path.join(app_dir, BATCH_LOG)),
        "--open-mode=append",
        "--requeue" if max_retries > 0 else "--no-requeue",
    ] + [_opt(flag, cfg[key]) for key, flag in _JOB_CFG if cfg.get(key)]
    return SlurmBatchRequest(
        app_name=app.name,
        session=session,
        app_dir=app_dir,
        cwd=cwd,
        job_opts=job_opts,
        replicas=replicas,
        max_retries=max_retries,
        kill_on_bad_exit=kill,
        python=python,
        roles=[role_summary(r) for r in app.roles],
        partition=str(cfg["partition"]) if cfg.get("partition") else None,
    )

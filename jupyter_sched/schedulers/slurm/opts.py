"""The slurm backend's run options, and their checks before anything is submitted.

A bad value is refused at dry run with an error that names the option and the fix, rather than left for
``sbatch`` to refuse with a message about a flag the user never typed, or (worse) for Slurm to accept and
do something else: ``srun --chdir`` to a missing directory runs the replica in ``/tmp``; an ``sbatch_opts``
entry ``nodes:2`` would give every replica two nodes behind the capacity check's back.
"""

from __future__ import annotations

import os
import re
from typing import Dict, Mapping, Optional, TypedDict

from jupyter_sched.specs import CfgVal, InvalidRunConfigException, runopts

TIME_RE = re.compile(r"^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+(?::\d{1,2}){0,2}|UNLIMITED|INFINITE)$", re.I)

MAIL_TYPES = frozenset(
    "NONE BEGIN END FAIL REQUEUE ALL INVALID_DEPEND STAGE_OUT TIME_LIMIT TIME_LIMIT_90 TIME_LIMIT_80"
    " TIME_LIMIT_50 ARRAY_TASKS".split()
)

# sbatch options with a run option of their own (the option is applied the same way, so say which)
_HAS_RUN_OPTION = {
    "partition": "partition", "p": "partition", "time": "time", "t": "time", "account": "account",
    "A": "account", "qos": "qos", "q": "qos", "constraint": "constraint", "C": "constraint",
    "mail-user": "mail_user", "mail-type": "mail_type", "comment": "comment",
}  # fmt: skip

# sbatch options that would undo the backend's layout (one task on one node per replica, its output files,
# the job name it parses back, the requeue policy from max_retries) or are not options of a batch script
_LAYOUT = {
    "nodes": "each replica runs on one node of its own (add replicas instead)",
    "N": "each replica runs on one node of its own (add replicas instead)",
    "ntasks": "each replica is one task (add replicas instead)",
    "n": "each replica is one task (add replicas instead)",
    "ntasks-per-node": "each replica is one task (add replicas instead)",
    "cpus-per-task": "CPUs come from the role's resource (resource.cpu)",
    "c": "CPUs come from the role's resource (resource.cpu)",
    "mem": "memory comes from the role's resource (resource.memMB)",
    "gres": "GPUs come from the role's resource (resource.gpu)",
    "gpus": "GPUs come from the role's resource (resource.gpu)",
    "chdir": "the batch job runs in its app directory; set the run option cwd for the replicas",
    "D": "the batch job runs in its app directory; set the run option cwd for the replicas",
    "output": "the logs go to the app directory; set the run option job_dir to move them",
    "o": "the logs go to the app directory; set the run option job_dir to move them",
    "error": "the logs go to the app directory; set the run option job_dir to move them",
    "e": "the logs go to the app directory; set the run option job_dir to move them",
    "open-mode": "the logs are appended to across retries",
    "job-name": "the job name is how the backend finds each replica (it is <app>:<role>:<replica>)",
    "J": "the job name is how the backend finds each replica (it is <app>:<role>:<replica>)",
    "requeue": "requeueing follows the roles' max_retries",
    "no-requeue": "requeueing follows the roles' max_retries",
    "array": "an app is one job, not an array",
    "a": "an app is one job, not an array",
    "wrap": "the backend writes the batch script",
    "parsable": "the backend submits with --parsable already",
    "het-group": "replicas map to het-job components by themselves",
}


class SlurmOpts(TypedDict, total=False):
    partition: Optional[str]
    time: Optional[str]
    account: Optional[str]
    qos: Optional[str]
    constraint: Optional[str]
    mail_user: Optional[str]
    mail_type: Optional[str]
    comment: Optional[str]
    job_dir: Optional[str]
    cwd: Optional[str]
    python: str
    kill_on_bad_exit: bool
    sbatch_opts: Optional[Dict[str, str]]


def run_options() -> runopts:
    opts = runopts()
    opts.add("partition", str, "partition to run in (default: the cluster's default partition)")
    opts.add("time", str, "time limit: minutes, MM:SS, HH:MM:SS or D-HH[:MM[:SS]] (default: the partition's)")
    opts.add("account", str, "account to charge (sbatch --account)")
    opts.add("qos", str, "quality of service (sbatch --qos)")
    opts.add("constraint", str, "node features every replica needs (sbatch --constraint), e.g. 'intel&ib'")
    opts.add("mail_user", str, "who gets Slurm's mail about the job (sbatch --mail-user)")
    opts.add("mail_type", str, "when Slurm mails: NONE, BEGIN, END, FAIL, REQUEUE, ALL, ... (sbatch --mail-type)")
    opts.add("comment", str, "a comment stored with the job (sbatch --comment)")
    opts.add(
        "job_dir",
        str,
        "directory for the batch script, its output and the replicas' logs (one sub-directory per app);"
        " every node must see it (default: $JUPYTER_SCHED_SLURM_DIR or ~/.local/state/jupyter_sched/slurm,"
        " then /<session>)",
    )
    opts.add("cwd", str, "working directory of the replicas; must exist on the nodes (default: the current one)")
    opts.add("python", str, "python the nodes run the replica log wrapper with (stdlib only)", default="python3")
    opts.add(
        "kill_on_bad_exit",
        bool,
        "when a replica exits non-zero, stop the other replicas (srun --kill-on-bad-exit)",
        default=True,
    )
    opts.add(
        "sbatch_opts",
        Dict[str, str],
        "more sbatch options for every replica, option:value ('' for a flag), e.g."
        " sbatch_opts=reservation:rsv1;exclusive:''",
    )
    return opts


def sbatch_extra(cfg: Mapping[str, CfgVal]) -> Dict[str, str]:
    """The run option ``sbatch_opts`` (option -> value), ``{}`` when unset. Resolving the cfg against
    ``run_options()`` has already refused a value that is not a ``Dict[str, str]``."""
    value = cfg.get("sbatch_opts")
    return dict(value) if isinstance(value, dict) else {}


def check(cfg: Mapping[str, CfgVal]) -> str:
    """Checks the resolved run options; returns the replicas' working directory (absolute)."""
    limit = cfg.get("time")
    if limit and not TIME_RE.match(str(limit)):
        raise InvalidRunConfigException(
            f"run option time={limit!r} is not a Slurm time limit; use minutes ('30'), 'HH:MM:SS' or 'D-HH:MM:SS'",
            "time",
            cfg,
        )
    mail = cfg.get("mail_type")
    if mail:
        bad = [m for m in str(mail).split(",") if m.strip().upper() not in MAIL_TYPES]
        if bad:
            raise InvalidRunConfigException(
                f"run option mail_type={mail!r}: {', '.join(map(repr, bad))} is not a mail type; use a"
                f" comma-separated list of {', '.join(sorted(MAIL_TYPES))}",
                "mail_type",
                cfg,
            )
    for key in sbatch_extra(cfg):
        name = str(key).lstrip("-").split("=")[0]
        if name in _LAYOUT:
            raise InvalidRunConfigException(
                f"run option sbatch_opts: {name!r} is set by the slurm backend ({_LAYOUT[name]});"
                " remove it from sbatch_opts",
                "sbatch_opts",
                cfg,
            )
        if name in _HAS_RUN_OPTION:
            own = _HAS_RUN_OPTION[name]
            raise InvalidRunConfigException(
                f"run option sbatch_opts: {name!r} has a run option of its own; use run option {own}=<value>",
                "sbatch_opts",
                cfg,
            )
    cwd = os.path.abspath(os.path.expanduser(str(cfg.get("cwd") or os.getcwd())))
    if not os.path.isdir(cwd):
        what = "does not exist" if not os.path.exists(cwd) else "is not a directory"
        raise InvalidRunConfigException(
            f"run option cwd={cwd!r} {what} (the replicas run there, and it must be on a filesystem every node"
            " shares with this machine); create it or set cwd to an existing directory",
            "cwd",
            cfg,
        )
    return cwd


_FLAG_OPTION = {
    "partition": "partition", "time": "time", "account": "account", "qos": "qos", "constraint": "constraint",
    "mail-user": "mail_user", "mail-type": "mail_type", "comment": "comment",
}  # fmt: skip


def blame(detail: str, cfg: Mapping[str, CfgVal]) -> str:
    """Which run option to fix when ``sbatch`` refused a script with message ``detail``: the one behind the
    first ``--flag`` it names, or the resources and options it may be about."""
    extra = {str(k).lstrip("-") for k in sbatch_extra(cfg)}
    for flag in re.findall(r"--([A-Za-z][\w-]*)", detail):
        if flag in extra:
            return f"fix or remove {flag!r} in the run option sbatch_opts"
        if flag in _FLAG_OPTION:
            return f"fix the run option {_FLAG_OPTION[flag]}"
    given = [key for key in ("partition", "account", "qos", "time", "constraint") if cfg.get(key)]
    hint = f" (given: {', '.join(f'{k}={cfg[k]!r}' for k in given)})" if given else ""
    return (
        "check the run options partition, account, qos, time, constraint and sbatch_opts" + hint
        + " and the roles' resources; a dry run shows them as #SBATCH lines"
    )

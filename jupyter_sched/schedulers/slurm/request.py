"""What ``schedule`` submits for an app on Slurm: the request (:class:`SlurmBatchRequest`) and its replicas.

:mod:`batch` builds it from an AppDef; here is the model and how it shows itself: as plain data
(``to_json``, which the notebook tabulates), in the neutral dry-run terms every backend shares
(``dryrun_view``) and as text (``repr``: the submit command, the app directory, the capacity check's verdict
and the batch script, rendered by :func:`render_script`).

**The batch script.** Its text: the ``#SBATCH`` lines, the preamble every replica relies on, and one ``srun``.

The script is what ``sbatch`` runs and also what a dry run shows, so it is laid out to be read: one option per
line, a ``#SBATCH hetjob`` line between het-job components, each ``srun`` group and each ``-e`` of the replica
wrapper on a line of its own, and a comment saying how to submit it by hand. The preamble puts the rank-0
node's address in ``$TORCHX_RANK0_HOST`` (TorchX's name) and, with ``max_retries``, the tail requeues a failed
attempt. ``${app_id}`` is the Slurm job id, known only once the job runs: the request carries a marker in its
place, which :func:`shell_word` renders as ``"$SLURM_JOB_ID"``.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from jupyter_sched.schedulers.slurm.files import LOG_FILES, SCRIPT_NAME, WRAPPER_NAME
from jupyter_sched.specs import DryRunView, ReplicaPlan

RANK0_ENV = "TORCHX_RANK0_HOST"  # TorchX's name, so code written for TorchX finds rank 0

# ${app_id} is the Slurm job id, known only once the job runs: it is rendered as "$SLURM_JOB_ID".
APP_ID_MARK = "\x00app_id\x00"
_JOB_ID_SHELL = '"$SLURM_JOB_ID"'


def shell_word(text: str) -> str:
    """``text`` quoted for bash, with every ``${app_id}`` (already replaced by a marker) expanding to the
    job id at run time."""
    parts = text.split(APP_ID_MARK)
    if len(parts) == 1:
        return shlex.quote(text)
    out = []
    for i, part in enumerate(parts):
        if i:
            out.append(_JOB_ID_SHELL)
        if part:
            out.append(shlex.quote(part))
    return "".join(out)


def readable(text: str) -> str:
    """``text`` for people: each ``${app_id}`` marker shown as ``${SLURM_JOB_ID}``."""
    return text.replace(APP_ID_MARK, "${SLURM_JOB_ID}")


@dataclass
class SlurmReplica:
    """One replica: a het-job component (``offset``) and its group on the ``srun`` line."""

    role: str
    replica_id: int
    offset: int
    dir: str
    cpu: int
    gpu: int
    memMB: int
    sbatch_opts: List[str]
    srun_opts: List[str]
    command: List[str]  # shell words, quoted: python3 slurm_replica.py DIR -C CWD -e K=V... -- entrypoint args...
    env: Dict[str, str]

    @property
    def name(self) -> str:
        return f"{self.role}[{self.replica_id}]"

    def to_json(self) -> Dict[str, Any]:
        return {
            "role": self.role,
            "replica_id": self.replica_id,
            "component": self.offset,
            "resources": {"cpu": self.cpu, "gpu": self.gpu, "memMB": self.memMB},
            "sbatch": list(self.sbatch_opts),
            "srun": list(self.srun_opts),
            "command": " ".join(self.command),
            "env": {k: readable(v) for k, v in self.env.items()},
            "logs": {name[: -len(".log")]: os.path.join(self.dir, name) for name in LOG_FILES},
        }


@dataclass
class SlurmBatchRequest:
    """What ``schedule`` writes into ``app_dir`` and submits with ``sbatch --parsable``."""

    app_name: str
    session: str
    app_dir: str
    cwd: str
    job_opts: List[str]
    replicas: List[SlurmReplica]
    max_retries: int
    kill_on_bad_exit: bool
    python: str
    roles: List[Dict[str, Any]] = field(default_factory=list)
    capacity: str = "not checked"
    capacity_checked: bool = False
    partition: Optional[str] = None

    @property
    def script_path(self) -> str:
        return os.path.join(self.app_dir, SCRIPT_NAME)

    @property
    def sbatch_cmd(self) -> List[str]:
        return ["sbatch", "--parsable", self.script_path]

    @property
    def heterogeneous(self) -> bool:
        return len(self.replicas) > 1

    @property
    def script(self) -> str:
        return render_script(self)

    def to_json(self) -> Dict[str, Any]:
        """The request as plain data (for a table in the notebook, or ``json.dumps``)."""
        return {
            "app_name": self.app_name,
            "session": self.session,
            "app_dir": self.app_dir,
            "cwd": self.cwd,
            "submit": " ".join(shlex.quote(a) for a in self.sbatch_cmd),
            "job_options": list(self.job_opts),
            "max_retries": self.max_retries,
            "kill_on_bad_exit": self.kill_on_bad_exit,
            "capacity": self.capacity,
            "replicas": [r.to_json() for r in self.replicas],
            "script": self.script,
        }

    def dryrun_view(self) -> DryRunView:
        """The request in neutral terms (see ``specs.dryrun``): per replica the command its het-job component
        runs (the log wrapper, then the program), how the job is submitted, whether it fits, and the script."""
        plans = []
        for r in self.replicas:
            data = r.to_json()
            cwd = next((o.split("=", 1)[1] for o in r.srun_opts if o.startswith("--chdir=")), self.cwd)
            limits = {k: str(v) for k, v in data["resources"].items()}
            limits["sbatch"] = " ".join(r.sbatch_opts)
            try:
                argv = shlex.split(data["command"])
            except ValueError:  # quoting only a shell reads; the shell line below is exact anyway
                argv = list(r.command)
            plans.append(ReplicaPlan(
                role=r.role, replica_id=r.replica_id, argv=argv, shell=data["command"],
                env=data["env"], cwd=cwd, limits=limits, logs=list(data["logs"].values()),
            ))  # fmt: skip
        submit = " ".join(shlex.quote(a) for a in self.sbatch_cmd)
        notes = [("submit", submit), ("capacity", self.capacity)]
        return DryRunView(plans, notes=notes, sections=[("batch script", self.script)])

    def __repr__(self) -> str:
        kind = f"{len(self.replicas)} het-job components" if self.heterogeneous else "a single job"
        head = [
            f"SlurmBatchRequest(app={self.app_name}, session={self.session}: "
            f"{len(self.replicas)} replica(s) as {kind})",
            f"  submit:   {' '.join(shlex.quote(a) for a in self.sbatch_cmd)}",
            f"  app_dir:  {self.app_dir}  (script, batch.out, <role>/<k>/{{stdout,stderr,combined}}.log)",
            f"  capacity: {self.capacity}",
            "  script:",
        ]
        return "\n".join(head + ["    " + line if line else "" for line in self.script.splitlines()])


# -- the batch script ----------------------------------------------------------------------------------------


def render_script(req: "SlurmBatchRequest") -> str:
    """The batch script: one ``#SBATCH`` option per line (a ``#SBATCH hetjob`` line between components), then
    one ``srun`` whose groups and options are on lines of their own."""
    wrapper_src = os.path.join(os.path.dirname(os.path.abspath(__file__)), WRAPPER_NAME)
    app_dir = shlex.quote(req.app_dir)
    lines = [
        "#!/bin/bash",
        f"# jupyter_sched app {req.app_name!r} (session {req.session!r}): {len(req.replicas)} replica(s),"
        + (" one het-job component each." if req.heterogeneous else " a plain job."),
        f"# jupyter_sched submits it as {shlex.quote(req.script_path)}, with the replicas' log wrapper beside it.",
        "# To submit it yourself, put the wrapper there first:",
        f"#   umask 077 && mkdir -p {app_dir} && cp {shlex.quote(wrapper_src)} {app_dir}/"
        " && sbatch --parsable THIS_FILE",
    ]
    for rep in req.replicas:
        if rep.offset:
            lines.append("#SBATCH hetjob")
        opts = rep.sbatch_opts + (req.job_opts if rep.offset == 0 else [])
        lines += ["#SBATCH " + opt for opt in opts]
    lines += [
        "",
        "# What the job writes (logs, srun messages) is for its owner only.",
        "umask 077",
        "# srun writes each replica's own messages into <role>/<k>/srun.log: its directory must exist.",
        "mkdir -p " + " ".join(shlex.quote(rep.dir) for rep in req.replicas),
        "# Replicas find the rank-0 node's address in $" + RANK0_ENV + ".",
        'rank0_node=$(scontrol show hostnames "${SLURM_JOB_NODELIST_HET_GROUP_0:-$SLURM_JOB_NODELIST}" | head -n 1)',
        f"{RANK0_ENV}=$(scontrol show node \"$rank0_node\" 2>/dev/null | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')",
        f'export {RANK0_ENV}="${{{RANK0_ENV}:-$rank0_node}}"',
        "export PYTHONUNBUFFERED=1",
        'echo "jupyter_sched: job $SLURM_JOB_ID attempt ${SLURM_RESTART_COUNT:-0} on $SLURM_JOB_NODELIST'
        f' (rank 0: ${RANK0_ENV})"',
        "",
    ]
    groups = []
    for rep in req.replicas:
        words = rep.srun_opts + rep.command
        # the options, then the wrapper and its replica dir, each -e, and the command: each on a line of its own
        parts, i = [" ".join(rep.srun_opts)], len(rep.srun_opts)
        sep = words.index("--", i)
        head = words[i:sep]
        parts.append(" ".join(head[:3]))
        parts += [" ".join(head[j : j + 2]) for j in range(3, len(head), 2)]
        parts.append(" ".join(words[sep:]))
        groups.append(" \\\n    ".join(p for p in parts if p))
    lines.append("srun " + " \\\n  : ".join(groups))
    lines.append("rc=$?")
    if req.max_retries > 0:
        lines += [
            f'if [ "$rc" -ne 0 ] && [ "${{SLURM_RESTART_COUNT:-0}}" -lt {req.max_retries} ]; then',
            '    echo "jupyter_sched: attempt ${SLURM_RESTART_COUNT:-0} failed (exit $rc): requeueing" >&2',
            '    scontrol requeue "$SLURM_JOB_ID"',
            "fi",
        ]
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"

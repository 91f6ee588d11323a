"""What ``schedule`` submits for an app on Slurm: the request (:class:`SlurmBatchRequest`) and its replicas.

:mod:`batch` builds it from an AppDef; here is the model and how it shows itself: as plain data
(``to_json``, which the notebook tabulates), in the neutral dry-run terms every backend shares
(``dryrun_view``) and as text (``repr``: the submit command, the app directory, the capacity check's verdict
and the batch script, rendered by :mod:`script`).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from jupyter_sched.schedulers.slurm.files import LOG_FILES, SCRIPT_NAME
from jupyter_sched.schedulers.slurm.script import readable, render_script
from jupyter_sched.specs import DryRunView, ReplicaPlan


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

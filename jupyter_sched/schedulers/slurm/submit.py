"""Submitting to Slurm: whether the cluster can hold the app (``sinfo``, asked briefly cached), then ``sbatch``.

The capacity check runs at dry run (where a cluster that does not answer only leaves a note in the request)
and again at ``schedule`` for a request whose dry run could not check it (then it raises). The check itself
is :func:`fit.check_fit`; here is where its partitions come from. ``submit`` writes the app directory
(:mod:`files`), runs ``sbatch --parsable`` and records the job id in the manifest and the session's
index; a refused or failed ``sbatch`` removes the directory and says which run options to check.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Dict, Mapping, Optional, Tuple

from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.schedulers.slurm import opts as slurm_opts
from jupyter_sched.schedulers.slurm.cli import SlurmError
from jupyter_sched.schedulers.slurm.files import materialize, record_submitted
from jupyter_sched.schedulers.slurm.fit import check_fit
from jupyter_sched.schedulers.slurm.request import SlurmBatchRequest
from jupyter_sched.specs import AppDef, CfgVal
from jupyter_sched.specs.limits import max_replicas_from_env

UNKNOWN_CLUSTER_MAX = 4096
"""The replica bound when ``sinfo`` does not answer (the dry run cannot check the cluster)."""
SINFO_TTL_S = 10.0


class ClusterCapacity:
    """The cluster's partitions from ``sinfo``, asked at most once per ``SINFO_TTL_S`` (a dry run needs them
    twice), and the checks made with them."""

    def __init__(self) -> None:
        self._sinfo: Optional[Tuple[float, Dict[str, slurm_cli.Partition]]] = None

    def partitions(self) -> Dict[str, slurm_cli.Partition]:
        now = time.monotonic()
        if self._sinfo is None or now - self._sinfo[0] > SINFO_TTL_S:
            self._sinfo = (now, slurm_cli.partitions())
        return self._sinfo[1]

    def max_replicas(self) -> int:
        """One replica per node: the number of nodes (``JUPYTER_SCHED_MAX_REPLICAS`` overrides it);
        ``UNKNOWN_CLUSTER_MAX`` without ``sinfo``."""
        try:
            parts = self.partitions()
        except SlurmError:
            return max_replicas_from_env(os.environ, UNKNOWN_CLUSTER_MAX)
        nodes = {node.name for part in parts.values() for node in part.nodes}
        return max_replicas_from_env(os.environ, len(nodes) or 1)

    def check(self, app: AppDef, request: SlurmBatchRequest, cfg: Mapping[str, CfgVal], strict: bool) -> None:
        """Refuses (InvalidAppError) an app the cluster cannot hold. Without an answer from ``sinfo`` the
        dry run only notes that nothing was checked; ``schedule`` then raises."""
        try:
            parts = self.partitions()
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


def submit(request: SlurmBatchRequest, cfg: Mapping[str, CfgVal], index_dir: str) -> str:
    """Writes the app directory, submits the script with ``sbatch --parsable`` and records the job; returns
    the job id. On failure the app directory is removed and SlurmError raised."""
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
        raise SlurmError(f"sbatch refused app {request.app_name!r}: {detail}; {slurm_opts.blame(detail, cfg)}")
    job_id = proc.stdout.strip().split(";")[0]
    record_submitted(request, manifest, index_dir, job_id, submitted)
    return job_id

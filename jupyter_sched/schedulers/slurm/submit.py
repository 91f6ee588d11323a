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
from typing import Any, Dict, Mapping, Optional, Tuple

from jupyter_sched.schedulers.common.private_files import make_private_dirs
from jupyter_sched.schedulers.slurm import cli as slurm_cli
from jupyter_sched.schedulers.slurm import opts as slurm_opts
from jupyter_sched.schedulers.slurm.cli import SlurmError
from jupyter_sched.schedulers.slurm.files import (
    BATCH_LOG,
    LOG_FILES,
    MANIFEST,
    SCRIPT_NAME,
    WRAPPER_NAME,
    private_dir,
    private_file,
    write_json,
)
from jupyter_sched.schedulers.slurm.fit import check_fit
from jupyter_sched.schedulers.slurm.request import SlurmBatchRequest
from jupyter_sched.specs import AppDef, CfgVal
from jupyter_sched.specs.request.limits import max_replicas_from_env

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


def materialize(request: SlurmBatchRequest) -> Dict[str, Any]:
    """Writes the app's directory: script, replica wrapper, manifest and empty log files (so readers never
    wait for a file a replica that failed to start would create). Returns the manifest (no job id yet)."""
    try:
        make_private_dirs(os.path.dirname(request.app_dir))  # the job_dir root and the session's directory
        os.mkdir(request.app_dir, 0o700)
        os.chmod(request.app_dir, 0o700)
        private_file(os.path.join(request.app_dir, BATCH_LOG))  # Slurm keeps the mode of a file it reopens
        for rep in request.replicas:
            private_dir(os.path.dirname(rep.dir))
            private_dir(rep.dir)
            for name in LOG_FILES:
                for path in (os.path.join(rep.dir, name), os.path.join(rep.dir, name[: -len(".log")] + ".idx")):
                    private_file(path)
        script = os.path.join(request.app_dir, SCRIPT_NAME)
        with open(private_file(script), "w") as f:  # sbatch reads it; it holds the replicas' env
            f.write(request.script)
        wrapper = os.path.join(request.app_dir, WRAPPER_NAME)
        shutil.copyfile(os.path.join(os.path.dirname(__file__), WRAPPER_NAME), private_file(wrapper))  # beside us
        manifest = {
            "app_name": request.app_name,
            "session": request.session,
            "job_id": None,
            "app_dir": request.app_dir,
            "cwd": request.cwd,
            "max_retries": request.max_retries,
            "roles": request.roles,
            "replicas": [
                {"role": r.role, "replica_id": r.replica_id, "component": r.offset, "dir": r.dir}
                for r in request.replicas
            ],
        }
        write_json(os.path.join(request.app_dir, MANIFEST), manifest)
    except OSError as e:
        shutil.rmtree(request.app_dir, ignore_errors=True)
        raise ValueError(
            f"job_dir: cannot write the app directory {request.app_dir!r} ({e.strerror or e})."
            " Set --cfg job_dir=<a writable directory every node can see>."
        ) from e
    return manifest


def record_submitted(
    request: SlurmBatchRequest, manifest: Dict[str, Any], index_dir: str, job_id: str, submitted: float
) -> None:
    """Once ``sbatch`` accepted the app: its job id into the manifest, and an entry in the session's index."""
    manifest.update(job_id=job_id, submitted=submitted)
    write_json(os.path.join(request.app_dir, MANIFEST), manifest)
    private_dir(index_dir)
    write_json(
        os.path.join(index_dir, f"{job_id}.json"),
        {"job_id": job_id, "name": request.app_name, "app_dir": request.app_dir, "submitted": submitted},
    )

"""A Slurm app's files: the app directory's layout, how it is written before ``sbatch``, and the session's index.

The app directory (``<job_dir>/<app>-<id>/``, on a filesystem the nodes share) holds the batch script, the
replica wrapper beside it, a manifest (``job.json``: which het-job component is which replica, where its
logs are) and one directory per replica with its log files, created empty so that a reader never waits for
a file a replica that failed to start would create. Everything is private to its owner (0700 directories,
0600 files): the script and manifest hold the replicas' env (tokens passed with ``-e``), the logs what the
jobs print.

The session's index (``<job root>/<session>/jobs/<job id>.json``) records each job the session submitted, so
that ``list`` in any process sees it.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import TYPE_CHECKING, Any, Dict, Optional

from jupyter_sched.schedulers.private_files import make_private_dirs, private_file

if TYPE_CHECKING:
    from jupyter_sched.schedulers.slurm_batch import SlurmBatchRequest

SCRIPT_NAME = "job.sbatch"
WRAPPER_NAME = "slurm_replica.py"
BATCH_LOG = "batch.out"
SRUN_LOG = "srun.log"  # what srun and the wrapper itself print about a replica (not its output)
MANIFEST = "job.json"
LOG_FILES = ("stdout.log", "stderr.log", "combined.log")


def read_json(path: str) -> Optional[Dict[str, Any]]:
    """The JSON object in ``path``; None if it is missing, unreadable or not an object."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: str, data: Dict[str, Any]) -> None:
    """Replaces ``path`` at once (a reader sees the old file or the new one) with a private file."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(private_file(tmp), "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def private_dir(path: str) -> None:
    """``path`` (and missing parents) as a directory only its owner can enter: 0700, whatever the umask."""
    make_private_dirs(path)
    os.chmod(path, 0o700)


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
        shutil.copyfile(os.path.join(os.path.dirname(__file__), WRAPPER_NAME), private_file(wrapper))
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


def recorded_jobs(index_dir: str) -> Dict[str, Dict[str, Any]]:
    """The session's index: job id -> its entry (``job_id``, ``name``, ``app_dir``, ``submitted``)."""
    entries: Dict[str, Dict[str, Any]] = {}
    try:
        names = os.listdir(index_dir)
    except OSError:
        return {}
    for name in names:
        if not name.endswith(".json"):
            continue
        entry = read_json(os.path.join(index_dir, name))
        if entry and str(entry.get("job_id", "")).isdigit():
            entries[str(entry["job_id"])] = entry
    return entries

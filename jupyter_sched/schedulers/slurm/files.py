"""A Slurm app's files: the app directory's layout and the session's index (``submit`` writes them).

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
from typing import Any, Dict, Optional

from jupyter_sched.schedulers.common.private_files import make_private_dirs, private_file

SCRIPT_NAME = "job.sbatch"
#: The replica wrapper's file name: a contract, not a module path. The wrapper is copied into each job
#: directory under this name and the batch script runs it there (``python3 slurm_replica.py ...``), so it
#: keeps its backend prefix inside the slurm/ package; renaming it would break the scripts of submitted jobs.
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

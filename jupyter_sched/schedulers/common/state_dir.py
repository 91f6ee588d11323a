"""Where jupyter_sched keeps its files by default: one per-user state directory, and the variables that move it.

Several backends and both front ends need it (the local backend's logs and records, the docker backend's
usage totals, a notebook session's records, function jobs' files, Slurm's job directories), so it lives here
rather than in any one backend.

Not a temporary directory: a notebook's job logs must outlive cells, runners and kernel restarts, and
nothing here ever deletes a directory it did not create for a single app.
"""

from __future__ import annotations

import os

__all__ = ["LOG_DIR_ENV", "NOTEBOOK_REGISTRY", "SLURM_DIR_ENV", "default_job_root", "default_log_dir", "state_home"]

LOG_DIR_ENV = "JUPYTER_SCHED_LOG_DIR"
"""The environment variable naming the default local log dir (the one place that spells it)."""

NOTEBOOK_REGISTRY = ".notebook"
"""The directory, under the log dir, of the notebook sessions' launch registries (``<session>.jsonl``, one JSON
line per launch): a notebook session writes them, the Jupyter server extension reads them."""

SLURM_DIR_ENV = "JUPYTER_SCHED_SLURM_DIR"
"""The environment variable naming the default root of Slurm job directories."""


def state_home() -> str:
    """``$XDG_STATE_HOME/jupyter_sched``, else ``~/.local/state/jupyter_sched``."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "jupyter_sched")


def default_log_dir() -> str:
    """Where local logs and records go without ``log_dir``: ``$JUPYTER_SCHED_LOG_DIR``, else
    ``<state home>/logs``."""
    return os.environ.get(LOG_DIR_ENV) or os.path.join(state_home(), "logs")


def default_job_root() -> str:
    """Where Slurm app directories and the session's job records go without ``job_dir``:
    ``$JUPYTER_SCHED_SLURM_DIR``, else ``<state home>/slurm`` (``~/.local/state/...``). A home directory is
    usually shared by every node of a cluster; ``/tmp`` is not."""
    return os.environ.get(SLURM_DIR_ENV) or os.path.join(state_home(), "slurm")

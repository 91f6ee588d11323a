"""The local backend's run options: their ``TypedDict`` (TorchX's ``LocalOpts``), their declaration, and
where logs go when ``log_dir`` is not given.

Kept apart from the scheduler so that the front ends (the CLI, a notebook session) can read or set the
default log dir without the scheduler's machinery, and so the options a user can pass are listed in one
place.
"""

from __future__ import annotations

import os
from typing import Optional, TypedDict

from jupyter_sched.schedulers.local.limit import add_memory_limit_opt
from jupyter_sched.specs import runopts

__all__ = ["LOG_DIR_ENV", "LocalOpts", "default_log_dir", "local_run_opts"]

LOG_DIR_ENV = "JUPYTER_SCHED_LOG_DIR"
"""The environment variable naming the default local log dir (the one place that spells it)."""


class LocalOpts(TypedDict, total=False):
    log_dir: str
    prepend_cwd: Optional[bool]
    auto_set_cuda_visible_devices: Optional[bool]
    cancel_grace: float
    outlive_owner: bool


def default_log_dir() -> str:
    """Where logs go without ``log_dir``: ``$JUPYTER_SCHED_LOG_DIR``, else a per-user state directory.

    Not a temporary directory: a notebook's job logs must outlive cells, runners and kernel restarts, and
    nothing here ever deletes a directory it did not create for a single app.
    """
    env = os.environ.get(LOG_DIR_ENV)
    if env:
        return env
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "jupyter_sched", "logs")


def local_run_opts() -> runopts:
    """The run options ``local_cwd`` and ``local_dir`` accept (``LocalScheduler.run_opts()``)."""
    opts = runopts()
    opts.add("log_dir", str, "dir to write stdout/stderr log files of replicas (default: a per-user state dir)")
    opts.add(
        "prepend_cwd",
        bool,
        "if set, prepends CWD to replica's PATH env var making any binaries in CWD take precedence over"
        " those in PATH (otherwise CWD is appended after PATH)",
        default=False,
    )
    opts.add(
        "auto_set_cuda_visible_devices",
        bool,
        "sets `CUDA_VISIBLE_DEVICES` for roles that request GPU resources. Each role replica will be"
        " assigned one GPU. Does nothing if the device count is less than replicas.",
        default=False,
    )
    opts.add("cancel_grace", float, "seconds between SIGTERM and SIGKILL when the app is cancelled", default=10.0)
    opts.add(
        "outlive_owner",
        bool,
        "keep the replicas running when the process that started them exits (e.g. a kernel restart);"
        " they write their logs straight to files",
        default=False,
    )
    add_memory_limit_opt(opts)
    return opts

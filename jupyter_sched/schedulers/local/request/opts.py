"""The local backend's run options: their ``TypedDict`` (TorchX's ``LocalOpts``) and their declaration, so
the options a user can pass are listed in one place. Where logs go when ``log_dir`` is not given is the
shared state directory's (``schedulers/common/state_dir.py``).
"""

from __future__ import annotations

from typing import Optional, TypedDict

from jupyter_sched.schedulers.local.usage.limit import add_memory_limit_opt
from jupyter_sched.specs import runopts

__all__ = ["LocalOpts", "local_run_opts"]


class LocalOpts(TypedDict, total=False):
    log_dir: str
    prepend_cwd: Optional[bool]
    auto_set_cuda_visible_devices: Optional[bool]
    cancel_grace: float
    outlive_owner: bool


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

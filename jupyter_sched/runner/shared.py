"""Process-wide runners: one per session and log directory, made on first use and never closed here.

A notebook's magics, ``jupyter_sched.submit`` in a plain script and its sweeps all launch through the runner
of their session. It is never closed by them: closing a Runner closes its local scheduler, which stops the
apps it owns, and neither unloading the notebook extension nor finishing a cell may kill jobs (a plain
script's local replicas end with the process, as the local scheduler promises).
"""

from __future__ import annotations

import os
import threading
from typing import Dict, Tuple

from jupyter_sched.runner.api import Runner, get_runner
from jupyter_sched.schedulers.common.state_dir import LOG_DIR_ENV

_RUNNERS: Dict[Tuple[str, str], Runner] = {}
_RUNNERS_LOCK = threading.Lock()


def shared_runner(session: str, log_dir: str = "") -> Runner:
    """The process-wide Runner of ``session``. A ``log_dir`` is exported as ``JUPYTER_SCHED_LOG_DIR`` first,
    so every local scheduler of this process (and its restarted kernels) agrees on it."""
    if log_dir:
        os.environ[LOG_DIR_ENV] = os.path.abspath(os.path.expanduser(log_dir))
    key = (session, os.environ.get(LOG_DIR_ENV, ""))
    with _RUNNERS_LOCK:
        runner = _RUNNERS.get(key)
        if runner is None:
            runner = _RUNNERS[key] = get_runner(session)
        return runner

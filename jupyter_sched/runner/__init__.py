"""The runner layer: sessions of apps on named schedulers (see :mod:`jupyter_sched.runner.api`).

A package, as TorchX's ``torchx.runner`` is. Code (and tests) written for TorchX address
``runner.api.get_scheduler_factories`` and ``runner.api.log_event``; those names live there too.

* :mod:`.api` -- :class:`Runner` and :func:`get_runner`: run, dry run, wait, status, cancel, log lines.
* :mod:`.events` -- one ``logging`` record per Runner API call.
* :mod:`.shared` -- process-wide runners, one per session and log directory, made on first use.
"""

from jupyter_sched.runner.api import (  # noqa: F401
    DEFAULT_SESSION,
    JOB_ID_ENV,
    Runner,
    failed_replica,
    get_runner,
)

__all__ = ["DEFAULT_SESSION", "JOB_ID_ENV", "Runner", "failed_replica", "get_runner"]

"""The runner layer: sessions of apps on named schedulers (see :mod:`jupyter_sched.runner.api`).

A package, as TorchX's ``torchx.runner`` is: ``api`` holds :class:`Runner` and :func:`get_runner`,
``events`` records each Runner API call through ``logging``. Code (and tests) written for TorchX address
``runner.api.get_scheduler_factories`` and ``runner.api.log_event``; those names live there too.
"""

from jupyter_sched.runner.api import (  # noqa: F401
    DEFAULT_SESSION,
    JOB_ID_ENV,
    Runner,
    failed_replica,
    get_runner,
)

__all__ = ["DEFAULT_SESSION", "JOB_ID_ENV", "Runner", "failed_replica", "get_runner"]

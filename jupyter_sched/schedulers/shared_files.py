"""The shared-files extension of the scheduler contract: where files written by the submitting process can be
read by an app's replicas.

A function job writes the pickled function and its bootstrap into a directory of its own before it
launches; the replicas read them there and write their results back. A scheduler says where such
directories go with :meth:`SharedFiles.shared_root`; one that does not inherit the mixin runs its replicas
on this machine (or mounts its state directory), so :func:`shared_root` falls back to
:func:`~jupyter_sched.schedulers.common.state_dir.default_log_dir`.

The way back: replicas write their metrics (``jupyter_sched.track``) into the directory their scheduler names
in ``JUPYTER_SCHED_METRICS_DIR``; a scheduler that sets it says where an app's is with
:meth:`MetricsFiles.metrics_dir`, from any process. One without the mixin sets none (its replicas' records
travel as marked lines on stderr).
"""

from __future__ import annotations

import abc
from typing import Mapping, Optional

from jupyter_sched.schedulers.common.state_dir import default_log_dir
from jupyter_sched.specs import CfgVal

__all__ = ["MetricsFiles", "SharedFiles", "metrics_dir", "shared_root"]


class SharedFiles(abc.ABC):
    """A scheduler whose replicas read files from a root that is not this machine's state directory."""

    @abc.abstractmethod
    def shared_root(self, cfg: Mapping[str, CfgVal]) -> str:
        """The directory, on a filesystem this process and every replica share, under which files for an app
        submitted with run options ``cfg`` go."""


def shared_root(scheduler: object, cfg: Mapping[str, CfgVal]) -> str:
    """``scheduler``'s shared root for ``cfg``: its own, else this machine's state directory."""
    if isinstance(scheduler, SharedFiles):
        return scheduler.shared_root(cfg)
    return default_log_dir()


class MetricsFiles(abc.ABC):
    """A scheduler whose replicas get a metrics directory (``JUPYTER_SCHED_METRICS_DIR``) this machine reads."""

    @abc.abstractmethod
    def metrics_dir(self, app_id: str) -> Optional[str]:
        """The metrics directory of app ``app_id`` (it may not exist yet), or None if the app is unknown."""


def metrics_dir(scheduler: object, app_id: str) -> Optional[str]:
    """``scheduler``'s metrics directory for ``app_id``; None when it keeps none or does not know the app."""
    if isinstance(scheduler, MetricsFiles):
        return scheduler.metrics_dir(app_id)
    return None

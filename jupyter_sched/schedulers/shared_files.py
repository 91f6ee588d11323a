"""The shared-files extension of the scheduler contract: where files written by the submitting process can be
read by an app's replicas.

A function job writes the pickled function and its bootstrap into a directory of its own before it
launches; the replicas read them there and write their results back. A scheduler says where such
directories go with :meth:`SharedFiles.shared_root`; one that does not inherit the mixin runs its replicas
on this machine (or mounts its state directory), so :func:`shared_root` falls back to
:func:`~jupyter_sched.schedulers.common.state_dir.default_log_dir`.
"""

from __future__ import annotations

import abc
from typing import Mapping

from jupyter_sched.schedulers.common.state_dir import default_log_dir
from jupyter_sched.specs import CfgVal

__all__ = ["SharedFiles", "shared_root"]


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

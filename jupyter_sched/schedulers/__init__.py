"""Scheduler registry: the built-in backends plus plugins from the ``jupyter_sched.schedulers`` group.

The first entry, and so the default, is ``local_cwd``: it needs nothing but this package. Backend modules
are imported only when their factory is first called, so a missing optional dependency (docker, slurm)
fails when that backend is used, not at import.

The layer's rooms (``tests/test_layers.py`` checks who may import whom):

- ``api``: the contract, TorchX's ``Scheduler`` and its responses, ``Stream``, ``WorkspaceMixin``.
- ``timed_logs``, ``usage_api``, ``shared_files``, ``warm_start``: our extensions of the contract (timed log
  items, resource usage, where a job's files are shared with its replicas, a role's ask to start warm). A
  new kind of reading every backend may offer (a live metric) is a new extension here.
- ``local_scheduler``, ``docker_scheduler``, ``slurm_scheduler``: each backend's scheduler class at TorchX's
  module path (the face: patch ``make_unique`` there), delegating to its wing.
- ``local/``, ``docker/``, ``slurm/``, ``torchx_bridge/``: the wings, one per backend, each importing only
  itself, ``common/`` and the contract.
- ``common/``: what several wings share (log files, workspace sources, ``.dockerignore``, the state dir,
  roles, private files, process identity).
"""

from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import entry_points
from typing import Any, Dict

from jupyter_sched.schedulers.api import Scheduler, SchedulerFactory

DEFAULT_SCHEDULER_MODULES: Dict[str, str] = {
    "local_cwd": "jupyter_sched.schedulers.local_scheduler:create_cwd_scheduler",
    "local_dir": "jupyter_sched.schedulers.local_scheduler:create_dir_scheduler",
    "local_docker": "jupyter_sched.schedulers.docker_scheduler:create_scheduler",
    "slurm": "jupyter_sched.schedulers.slurm_scheduler:create_scheduler",
}
BUILTIN_SCHEDULERS = tuple(DEFAULT_SCHEDULER_MODULES)
"""The backends of this package, by name: what the Jupyter server lists by default, and the first entries
of :func:`get_scheduler_factories` (the CLI's and the notebook's ``-s`` choices)."""


def _deferred(target: str) -> SchedulerFactory:
    module_name, _, attr = target.partition(":")

    def factory(session_name: str, **kwargs: Any) -> Scheduler:
        module = importlib.import_module(module_name)
        return getattr(module, attr or "create_scheduler")(session_name, **kwargs)

    factory.__qualname__ = factory.__name__ = f"create_{target}"
    return factory


#: Schedulers of another library, behind our interface through a bridge module: ``-s PREFIX:NAME``. Each
#: target returns ``{NAME: factory}`` for what that library has installed; a prefix whose module (or the
#: library it needs) is missing adds nothing. ``torchx:`` needs ``pip install jupyter_sched[torchx]``.
SCHEDULER_PREFIXES: Dict[str, str] = {
    "torchx": "jupyter_sched.schedulers.torchx_bridge.scheduler:bridged_factories",
}
_PREFIX_NEEDS = {"torchx": "torchx"}


def _prefixed() -> Dict[str, SchedulerFactory]:
    factories: Dict[str, SchedulerFactory] = {}
    for prefix, target in SCHEDULER_PREFIXES.items():
        needs = _PREFIX_NEEDS.get(prefix)
        if needs and importlib.util.find_spec(needs) is None:
            continue
        module_name, _, attr = target.partition(":")
        listed = getattr(importlib.import_module(module_name), attr)()
        factories.update({f"{prefix}:{name}": factory for name, factory in listed.items()})
    return factories


def _available(target: str) -> bool:
    module_name = target.partition(":")[0]
    return importlib.util.find_spec(module_name) is not None


def get_scheduler_factories(
    group: str = "jupyter_sched.schedulers", skip_defaults: bool = False
) -> Dict[str, SchedulerFactory]:
    """All scheduler names and their factories; built-ins first, then plugins (which may override a
    built-in of the same name but never remove the others)."""
    factories: Dict[str, SchedulerFactory] = {}
    if not skip_defaults:
        for name, target in DEFAULT_SCHEDULER_MODULES.items():
            if _available(target):
                factories[name] = _deferred(target)
        factories.update(_prefixed())
    for ep in entry_points(group=group):
        factories[ep.name] = ep.load()
    return factories


def get_default_scheduler_name() -> str:
    """The first registered scheduler: ``local_cwd``."""
    return next(iter(get_scheduler_factories()))


__all__ = [
    "BUILTIN_SCHEDULERS", "DEFAULT_SCHEDULER_MODULES", "SCHEDULER_PREFIXES", "Scheduler", "SchedulerFactory",
    "get_default_scheduler_name",
    "get_scheduler_factories",
]  # fmt: skip

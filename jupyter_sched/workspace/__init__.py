"""TorchX's module path for workspaces (``torchx.workspace``): the very same :class:`WorkspaceMixin` as
:mod:`jupyter_sched.schedulers.api`, so code importing it from either place works and ``isinstance``
agrees. The Docker implementation is :mod:`jupyter_sched.schedulers.docker.workspace`."""

from jupyter_sched.schedulers.api import WorkspaceMixin

__all__ = ["WorkspaceMixin"]

"""``torchx.workspace.api`` under our name: a re-export (see :mod:`jupyter_sched.workspace`)."""

from jupyter_sched.schedulers.api import WorkspaceMixin

__all__ = ["WorkspaceMixin"]

"""What a backend records of an app's roles beside it, so ``describe`` can rebuild them later, and the one
error every backend's ``log_iter`` raises for a role or replica the app does not have.

Shared by the local, docker and Slurm backends; not part of TorchX's Scheduler contract (``api.py``).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Tuple

from jupyter_sched.specs import Role
from jupyter_sched.specs.output.masking import mask_argv

__all__ = ["role_from_summary", "role_summary", "unknown_replica"]


def role_summary(role: Role) -> dict:
    """The parts of a Role a backend records beside an app, so ``describe`` can rebuild it later.

    Only ``describe`` reads it (nothing re-runs from it), so its args are kept masked (specs.masking)."""
    return {
        "name": role.name,
        "image": role.image,
        "entrypoint": role.entrypoint,
        "args": mask_argv(role.args),
        "num_replicas": role.num_replicas,
        "max_retries": role.max_retries,
    }


def role_from_summary(summary: Mapping[str, Any]) -> Role:
    """The Role recorded by :func:`role_summary`, rebuilt (fields it does not keep get their defaults)."""
    return Role(
        name=summary["name"],
        image=summary.get("image", ""),
        entrypoint=summary.get("entrypoint", ""),
        args=list(summary.get("args", [])),
        num_replicas=summary.get("num_replicas", 1),
        max_retries=summary.get("max_retries", 0),
    )


def unknown_replica(app_id: str, role_name: str, k: int, replicas: Iterable[Tuple[str, int]]) -> ValueError:
    """The error for a ``log_iter`` of a role or replica the app does not have, naming what exists.

    ``replicas`` are the app's ``(role, replica index)`` pairs.
    """
    pairs = list(replicas)
    roles = sorted({role for role, _ in pairs})
    if role_name not in roles:
        return ValueError(f"app {app_id} has no role {role_name!r}; its roles are: {', '.join(roles)}")
    count = sum(1 for role, _ in pairs if role == role_name)
    return ValueError(f"role {role_name!r} of app {app_id} has replicas 0..{count - 1}, not {k}")

"""How many replicas an app may ask for: checked before any request is built.

Without a bound, ``--num_replicas 99999999999999999999`` makes a backend loop building requests until
memory runs out (a dry run included) and a real submit would try to fork that many. The bound is per
scheduler (one machine's worth on the local and Docker backends, the cluster's size on Slurm) and can be
raised or lowered with the ``JUPYTER_SCHED_MAX_REPLICAS`` environment variable. Pure: the caller passes
the environment and CPU count in.
"""

from __future__ import annotations

from typing import Mapping, Optional

from jupyter_sched.specs.errors import InvalidAppError
from jupyter_sched.specs.request.app import AppDef

MAX_REPLICAS_ENV = "JUPYTER_SCHED_MAX_REPLICAS"

__all__ = ["MAX_REPLICAS_ENV", "check_replica_limit", "machine_max_replicas", "max_replicas_from_env"]


def machine_max_replicas(cpu_count: Optional[int]) -> int:
    """The default bound on one machine: 16 replicas per CPU, at least 64 (processes or containers that
    mostly wait are cheap; tens of thousands are not)."""
    return max(64, 16 * (cpu_count or 1))


def max_replicas_from_env(environ: Mapping[str, str], default: int) -> int:
    """``JUPYTER_SCHED_MAX_REPLICAS`` when set (a positive integer), else ``default``."""
    text = environ.get(MAX_REPLICAS_ENV, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidAppError(
            MAX_REPLICAS_ENV, f"{text!r} is not a positive integer", f"Set {MAX_REPLICAS_ENV} to e.g. 256, or unset it"
        )
    return value


def check_replica_limit(app: AppDef, limit: Optional[int], scheduler: str) -> None:
    """Refuses an app whose roles ask for more than ``limit`` replicas, one role or all roles together,
    naming the field and the fix. ``None`` means no bound."""
    if limit is None:
        return
    fix = (
        f"Ask for at most {limit}, or raise the bound with {MAX_REPLICAS_ENV}=N"
        f" if this machine or cluster can really run that many"
    )
    total = 0
    for i, role in enumerate(app.roles):
        n = role.num_replicas
        if isinstance(n, int) and not isinstance(n, bool) and n > limit:
            raise InvalidAppError(
                f"roles[{i}].num_replicas",
                f"role {role.name!r} asks for {n} replicas, more than {scheduler} runs ({limit})",
                fix,
            )
        total += n if isinstance(n, int) else 0
    if total > limit:
        raise InvalidAppError(
            "roles",
            f"the roles together ask for {total} replicas, more than {scheduler} runs ({limit})",
            fix,
        )

"""Helpers shared by the built-in components: roles, apps, and the local ``python3``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from jupyter_sched.specs import AppDef, AppDryRunInfo, Role, parse_mounts, resource

PYTHON = "python3"
"""The interpreter built-ins run in an image. On the local schedulers it is replaced by the interpreter that
runs jupyter_sched (``sys.executable``, e.g. the notebook's kernel), so a job sees the same packages."""


@dataclass
class PythonRole(Role):
    """A Role that runs :data:`PYTHON` at position ``python_arg`` of each replica's argv (0: the entrypoint).

    Its ``pre_proc`` hook swaps in ``sys.executable`` where the request's neutral view says a replica runs on
    this machine (the local backends); other backends leave ``python3`` to the image.
    """

    python_arg: int = 0

    def pre_proc(self, scheduler: str, dryrun_info: AppDryRunInfo) -> AppDryRunInfo:
        view = dryrun_info.view()
        for plan in view.replicas if view is not None else []:
            if plan.role != self.name or not plan.on_this_host:
                continue
            if len(plan.argv) > self.python_arg and plan.argv[self.python_arg] == PYTHON:
                plan.argv[self.python_arg] = sys.executable  # the request's own list (see ReplicaPlan.argv)
        return dryrun_info


def make_app(
    name: str,
    role_name: str,
    entrypoint: str,
    args: List[str],
    *,
    image: str,
    num_replicas: int,
    cpu: int,
    gpu: int,
    memMB: int,  # noqa: N803 (the public spelling of the data model)
    h: Optional[str],
    env: Optional[Dict[str, str]],
    max_retries: int,
    mounts: Optional[List[str]],
    base_env: Optional[Dict[str, str]] = None,
    python_arg: Optional[int] = None,
) -> AppDef:
    """One-role AppDef with the options every built-in shares; ``env`` is applied over ``base_env``."""
    if num_replicas < 1:
        raise ValueError(f"--num_replicas must be 1 or more (got {num_replicas})")
    if max_retries < 0:
        raise ValueError(f"--max_retries must be 0 or more (got {max_retries})")
    role_env = {**(base_env or {}), **(env or {})}
    fields: Dict[str, Any] = dict(
        name=role_name,
        image=image,
        entrypoint=entrypoint,
        args=list(args),
        env=role_env,
        num_replicas=num_replicas,
        max_retries=max_retries,
        resource=resource(cpu=cpu, gpu=gpu, memMB=memMB, h=h),
        mounts=parse_mounts(mounts) if mounts else [],
    )
    role = Role(**fields) if python_arg is None else PythonRole(**fields, python_arg=python_arg)
    return AppDef(name=name, roles=[role])


_COMMON_ARGS = """\
    name: the app name (default: the component's)
    image: the image to run in (ignored by local_cwd, which runs in the current directory)
    num_replicas: how many replicas of the command to run
    cpu: CPUs per replica (enforced by docker and slurm, not locally)
    gpu: GPUs per replica
    memMB: memory per replica in MB, a limit on local_docker and slurm (a job that fits locally may run out
        of memory there); the local schedulers ignore it (their limit is the run option memory_limit)
    h: a named resource such as cpu.small or gpu.large; overrides cpu, gpu and memMB
    env: environment variables, e.g. A=1,B=2 (repeat the flag to add more)
    max_retries: how many times a failed replica is restarted (by backends that support retries)
    mounts: mounts, e.g. type=bind,src=/data,dst=/data[,readonly] or type=volume,src=NAME,dst=/path"""


def common_args(fn):  # type: ignore[no-untyped-def]
    """Appends the documentation of the shared flags to ``fn``'s ``Args:`` section (it must come last)."""
    import inspect

    fn.__doc__ = inspect.cleandoc(fn.__doc__ or "").rstrip() + "\n" + _COMMON_ARGS + "\n"
    return fn

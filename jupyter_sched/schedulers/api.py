"""The Scheduler contract every backend implements, and the responses it returns.

``submit`` is ``submit_dryrun`` followed by ``schedule``: a backend builds its native request in
``_submit_dryrun`` (pure: it never starts anything and never modifies the caller's AppDef) and carries it
out in ``schedule``. ``describe`` returns None for an app it does not know, so ``exists`` is exact.
``cancel`` is idempotent and returns at once; ``close`` is idempotent and never raises.
"""

from __future__ import annotations

import abc
import copy
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Generic, Iterable, Iterator, List, Mapping, Optional, Protocol, TypeVar

from jupyter_sched.logs.lines import split_lines
from jupyter_sched.specs import (
    NONE,
    NULL_RESOURCE,
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    Role,
    RoleStatus,
    runopts,
    validate_app,
)
from jupyter_sched.specs.request.limits import check_replica_limit, machine_max_replicas, max_replicas_from_env

T = TypeVar("T")

__all__ = [
    "DescribeAppResponse", "ListAppResponse", "Scheduler", "SchedulerFactory", "Stream", "WorkspaceMixin",
    "checked_app", "filter_regex", "split_lines", "split_lines_iterator",
]  # fmt: skip


class Stream(str, Enum):
    """Which output of a replica to read."""

    STDOUT = "stdout"
    STDERR = "stderr"
    COMBINED = "combined"

    def __str__(self) -> str:
        return self.value


@dataclass
class DescribeAppResponse:
    """What a scheduler knows of an app: its state and, per role, each replica's status."""

    app_id: str = "<NOT_SET>"
    state: AppState = AppState.UNSUBMITTED
    num_restarts: int = -1
    msg: str = NONE
    structured_error_msg: str = NONE
    ui_url: Optional[str] = None
    roles_statuses: List[RoleStatus] = field(default_factory=list)
    roles: List[Role] = field(default_factory=list)


@dataclass(unsafe_hash=True)
class ListAppResponse:
    """One app in ``list()``; the runner fills in ``app_handle``."""

    app_id: str
    state: AppState
    app_handle: str = "<NOT_SET>"
    name: str = field(default="", compare=False, hash=False)


class WorkspaceMixin(abc.ABC, Generic[T]):
    """A scheduler that can overlay a local directory (a *workspace*) onto a role's image.

    Generic in what ``dryrun_push_images`` returns (the images to push), as in TorchX, so
    ``class S(WorkspaceMixin[None], Scheduler[...])`` is a valid declaration.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)

    def workspace_opts(self) -> runopts:
        return runopts()

    @abc.abstractmethod
    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        """Builds ``workspace`` into ``role``'s image and points the role at the result (in place)."""

    def dryrun_push_images(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> T:
        """What ``push_images`` would push for ``app`` (updating its images to their pushed names)."""
        raise NotImplementedError(f"{type(self).__name__} does not push images")

    def push_images(self, images_to_push: T) -> None:
        """Pushes what ``dryrun_push_images`` returned."""
        raise NotImplementedError(f"{type(self).__name__} does not push images")


class Scheduler(abc.ABC, Generic[T]):
    """A backend that runs AppDefs. Implement the abstract methods; the template methods do the rest."""

    def __init__(self, backend: str, session_name: str) -> None:
        self.backend = backend
        self.session_name = session_name

    def close(self) -> None:
        """Frees local state. Idempotent, never raises; only stateful backends override it."""

    def submit(self, app: AppDef, cfg: Mapping[str, CfgVal], workspace: Optional[str] = None) -> str:
        """Runs ``app`` and returns its app id. The caller's AppDef is left as it was."""
        resolved = self.run_opts().resolve(cfg)
        if workspace:
            if not isinstance(self, WorkspaceMixin):
                raise TypeError(f"{type(self).__name__} does not support workspaces (got workspace={workspace!r})")
            app = copy.deepcopy(app)
            self.build_workspace_and_update_role(app.roles[0], workspace, resolved)
        return self.schedule(self.submit_dryrun(app, resolved))

    @abc.abstractmethod
    def schedule(self, dryrun_info: AppDryRunInfo[T]) -> str:
        """Carries out a request made by ``submit_dryrun`` and returns the app id."""

    def submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[T]:
        """The request ``schedule`` would carry out, without starting anything.

        As in TorchX: resolves ``cfg``, builds the request with ``_submit_dryrun`` and runs each role's
        ``pre_proc`` hook in order. Validation is the caller's (``Runner.dryrun`` validates) or the
        backend's: each of ours calls :func:`checked_app` first thing in ``_submit_dryrun``, so a bad app
        is refused before any request is built, however it was submitted.
        """
        resolved = self.run_opts().resolve(cfg)
        info = self._submit_dryrun(app, resolved)
        for role in app.roles:
            info = role.pre_proc(self.backend, info)
        info._app = app
        info._cfg = resolved
        return info

    @abc.abstractmethod
    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[T]:
        ...

    def run_opts(self) -> runopts:
        """The run options this scheduler accepts: a ``--help`` for ``cfg``."""
        opts = self._run_opts()
        if isinstance(self, WorkspaceMixin):
            opts.update(self.workspace_opts())
        return opts

    def _run_opts(self) -> runopts:
        return runopts()

    @abc.abstractmethod
    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        """The app's state and replica statuses, or None if the scheduler does not know the app."""

    @abc.abstractmethod
    def list(self) -> List[ListAppResponse]:
        """The apps this scheduler can see for its session, each listed once."""

    def exists(self, app_id: str) -> bool:
        return self.describe(app_id) is not None

    def cancel(self, app_id: str) -> None:
        """Asks the app to stop; returns at once (use ``wait`` to see it reach a terminal state)."""
        if self.exists(app_id):
            self._cancel_existing(app_id)

    @abc.abstractmethod
    def _cancel_existing(self, app_id: str) -> None:
        ...

    def wait_for_change(self, app_id: str, timeout: float) -> None:
        """Blocks until the app's state may have changed, or ``timeout`` seconds. Backends that learn of
        changes as they happen override it so that ``Runner.wait`` returns at once; this default sleeps."""
        time.sleep(timeout)

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        """Lines of replica ``k`` of ``role_name``. Each item ends in ``\\n`` except ``\\r`` progress frames
        and a final partial line; print items with ``end=""``. ``should_tail=True`` follows until the replica
        has ended and every byte was yielded."""
        raise NotImplementedError(f"{type(self).__name__} does not support application log iteration")

    def max_replicas(self) -> int:
        """The most replicas one app may have here (all roles together); refused beyond it, before any
        request is built. One machine's worth by default; ``JUPYTER_SCHED_MAX_REPLICAS`` overrides it."""
        return max_replicas_from_env(os.environ, machine_max_replicas(os.cpu_count()))

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """Backend-specific checks before a dry run; by default every role must ask for a resource."""
        for role in app.roles:
            if role.resource == NULL_RESOURCE:
                raise ValueError(
                    f"No resource for role: {role.image}. Did you forget to attach resource to the role"
                )


def checked_app(scheduler: Scheduler, app: AppDef) -> AppDef:
    """A deep copy of ``app``, validated for ``scheduler`` (fields, the replica limit, ``_validate``).

    Our backends call it first thing in ``_submit_dryrun``: whether an app comes through the runner or
    straight to ``submit``/``submit_dryrun``, bad input is refused naming the field before a request is
    built, and the caller's AppDef is never modified.
    """
    validate_app(app)
    check_replica_limit(app, scheduler.max_replicas(), scheduler.backend)
    app = copy.deepcopy(app)
    scheduler._validate(app, scheduler.backend)
    return app


class SchedulerFactory(Protocol):
    """What a registry entry is: ``factory(session_name, **kwargs) -> Scheduler``.

    A ``typing.Protocol`` (as in TorchX's interface), so any function of that shape is one, and the name
    is a real class that annotations and plugin code can import from here or from ``schedulers``.
    """

    def __call__(self, session_name: str, **kwargs: Any) -> Scheduler:  # pragma: no cover - protocol
        ...


def filter_regex(regex: str, data: Iterable[str]) -> Iterator[str]:
    """Keeps the items in which ``regex`` is found (``re.search``)."""
    pattern = re.compile(regex)
    return (line for line in data if pattern.search(line))


def split_lines_iterator(chunks: Iterable[str]) -> Iterator[str]:
    """Lines of a stream of text chunks, joined across chunk boundaries (unlike TorchX)."""
    pending = ""
    for chunk in chunks:
        lines = split_lines(pending + chunk)
        if lines and not lines[-1].endswith(("\n", "\r")):
            pending = lines.pop()
        else:
            pending = ""
        yield from lines
    if pending:
        yield pending


def stream_arg(streams: Optional[Stream]) -> Stream:
    """Normalises a ``streams`` argument, raising ValueError for an unsupported value."""
    if streams is None:
        return Stream.COMBINED
    try:
        return Stream(streams)
    except ValueError:
        raise ValueError(
            f"unsupported streams={streams!r}; use one of {[s.value for s in Stream]}"
        ) from None

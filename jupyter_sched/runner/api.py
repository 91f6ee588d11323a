"""The Runner: sessions of apps on named schedulers, addressed by handles ``scheduler://session/app_id``.

It is the layer the CLI and the notebook magics talk to: it validates and dry-runs AppDefs (on a copy:
the caller's AppDef is never modified), schedules them, and answers status, wait, cancel, describe,
log and list questions for any handle, including handles of apps started by another process.
"""

from __future__ import annotations

import copy
import json
import os
import threading
import time
import weakref
from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.runner.events import log_event
from jupyter_sched.schedulers import SchedulerFactory, get_scheduler_factories
from jupyter_sched.schedulers.api import ListAppResponse, Scheduler, Stream
from jupyter_sched.schedulers.shared_files import metrics_dir, shared_root
from jupyter_sched.schedulers.timed_logs import TimedLogs
from jupyter_sched.schedulers.usage_api import UsageMixin
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    AppHandle,
    AppState,
    AppStatus,
    CfgVal,
    Role,
    UnknownAppException,
    UnknownSchedulerException,
    macros,
    make_app_handle,
    runopts,
    validate_app,
)
from jupyter_sched.specs.request.limits import check_replica_limit
from jupyter_sched.specs.status.handles import check_name, parse_safe_handle
from jupyter_sched.specs.status.usage import UsageSample
from jupyter_sched.track.layout import TORCHX_PARENT_RUN_ID_ENV, tracker_env

DEFAULT_SESSION = "default"
JOB_ID_ENV = "JUPYTER_SCHED_JOB_ID"


class Runner:
    """Submits and tracks apps for one session. Use as a context manager to close its schedulers.

    Each public call is recorded as one event (``jupyter_sched.runner.events``).
    """

    def __init__(
        self,
        name: str,
        scheduler_factories: Mapping[str, SchedulerFactory],
        component_defaults: Optional[Dict[str, Dict[str, str]]] = None,
        scheduler_params: Optional[Dict[str, Any]] = None,
    ) -> None:
        self._name = check_name(name, "session name")
        self._factories = dict(scheduler_factories)
        self._component_defaults = component_defaults or {}
        self._scheduler_params = scheduler_params or {}
        self._schedulers: Dict[Tuple[str, str], Scheduler] = {}
        self._schedulers_lock = threading.Lock()
        self._apps: Dict[AppHandle, AppDef] = {}
        # the caller's AppDef behind each dry run this runner made (before the runner added its variables),
        # which describe() returns once the run is scheduled
        self._given: "weakref.WeakKeyDictionary[AppDryRunInfo, AppDef]" = weakref.WeakKeyDictionary()
        #: Apps a fail-fast wait cancelled: handle -> (role, replica id, exit code) of the failed replica.
        self._failed_fast: Dict[AppHandle, Tuple[str, int, Optional[int]]] = {}

    @property
    def session_name(self) -> str:
        return self._name

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes every scheduler this runner created (stopping apps they own locally)."""
        for scheduler in self._schedulers.values():
            scheduler.close()
        self._schedulers.clear()

    # -- schedulers ----------------------------------------------------------------------------------------
    def scheduler_backends(self) -> List[str]:
        return list(self._factories)

    def _scheduler(self, scheduler: str, session_name: Optional[str] = None) -> Scheduler:
        session = self._name if session_name is None else session_name
        key = (scheduler, session)
        sched = self._schedulers.get(key)
        if sched is not None:
            return sched
        # One scheduler per key even when threads ask at once: a second one would own the apps it started
        # apart from the runner's, and be collected (and closed) on whatever thread ran the GC then.
        with self._schedulers_lock:
            sched = self._schedulers.get(key)
            if sched is None:
                factory = self._factories.get(scheduler)
                if factory is None:
                    raise UnknownSchedulerException(scheduler, self.scheduler_backends())
                sched = factory(session, **self._scheduler_params)
                self._schedulers[key] = sched
        return sched

    def scheduler_run_opts(self, scheduler: str) -> runopts:
        return self._scheduler(scheduler).run_opts()

    def shared_root(self, scheduler: str, cfg: Optional[Mapping[str, CfgVal]] = None) -> str:
        """Where files this process writes for an app on ``scheduler`` (run options ``cfg``) can be read by its
        replicas; see ``schedulers.shared_files``."""
        return shared_root(self._scheduler(scheduler), cfg or {})

    def metrics_dir(self, app_handle: AppHandle) -> Optional[str]:
        """Where the app's replicas write their metrics (``jupyter_sched.track``), for schedulers that keep them
        in files this process reads (local, Slurm); None for the others or an unknown app."""
        sched, app_id = self._resolve(app_handle)
        return metrics_dir(sched, app_id)

    def cfg_from_str(self, scheduler: str, cfg_str: str) -> Dict[str, CfgVal]:
        """Parses ``k=v,k2=v2`` against the scheduler's run options (unknown keys are errors)."""
        return self.scheduler_run_opts(scheduler).cfg_from_str(cfg_str)

    # -- submit ----------------------------------------------------------------------------------------------
    def dryrun(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppDryRunInfo:
        """The request ``scheduler`` would get for ``app``; nothing runs and ``app`` is not modified.

        Validates as TorchX's runner does (the app's fields, then the scheduler's ``_validate``), plus the
        scheduler's replica limit, before the scheduler builds any request.
        """
        with self._event("dryrun", scheduler, app=app, cfg=cfg, workspace=workspace):
            return self._dryrun(app, scheduler, cfg, workspace, parent_run_id)

    def _event(
        self,
        api: str,
        scheduler: str,
        app_id: Optional[str] = None,
        app: Optional[AppDef] = None,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
    ) -> log_event:
        image = app.roles[0].image if app is not None and app.roles else None
        runcfg = json.dumps(dict(cfg), default=str) if cfg else None
        return log_event(api, scheduler, app_id, image, runcfg, workspace, session=self._name)

    def _dryrun(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]],
        workspace: Optional[str],
        parent_run_id: Optional[str],
    ) -> AppDryRunInfo:
        validate_app(app)
        given = copy.deepcopy(app)
        sched = self._scheduler(scheduler)
        check_replica_limit(app, sched.max_replicas() if isinstance(sched, Scheduler) else None, scheduler)
        app = copy.deepcopy(app)
        job_id = make_app_handle(scheduler, self._name, macros.app_id)
        for role in app.roles:
            role.env[JOB_ID_ENV] = job_id
            # TorchX's tracker API, as TorchX's runner sets it up: the handle, and our tracker appended to the
            # user's list (role env, else this process's), so app_run_from_env() stores beside the metrics
            role.env.update(tracker_env(job_id, role.env, os.environ))
            if parent_run_id:
                role.env["JUPYTER_SCHED_PARENT_RUN_ID"] = parent_run_id
                role.env[TORCHX_PARENT_RUN_ID_ENV] = parent_run_id
        resolved = sched.run_opts().resolve(cfg)
        if workspace:
            from jupyter_sched.schedulers.api import WorkspaceMixin

            if not isinstance(sched, WorkspaceMixin):
                raise ValueError(
                    f"workspace={workspace!r}: the {scheduler} scheduler does not support workspaces;"
                    " drop --workspace or use local_docker"
                )
            sched.build_workspace_and_update_role(app.roles[0], workspace, resolved)
        sched._validate(app, scheduler)
        info = sched.submit_dryrun(app, resolved)
        info._scheduler = scheduler
        self._given[info] = given
        return info

    def schedule(self, dryrun_info: AppDryRunInfo) -> AppHandle:
        """Runs a request made by :meth:`dryrun` and returns the app's handle."""
        # the slot dryrun() wrote (TorchX's runner reads the same one), not a property of the info's class:
        # whatever object a scheduler returned from submit_dryrun, the runner finds its own note on it
        scheduler = dryrun_info._scheduler
        if scheduler is None:
            raise ValueError("this AppDryRunInfo was not made by Runner.dryrun (it names no scheduler)")
        with self._event("schedule", scheduler, app=dryrun_info.app) as ev:
            app_id = self._scheduler(scheduler).schedule(dryrun_info)
            ev.event.app_id = app_id
        handle = make_app_handle(scheduler, self._name, app_id)
        given = self._given.get(dryrun_info, dryrun_info.app)
        if given is not None:
            self._apps[handle] = given
        return handle

    def run(
        self,
        app: AppDef,
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppHandle:
        with self._event("run", scheduler, app=app, cfg=cfg, workspace=workspace) as ev:
            handle = self.schedule(self.dryrun(app, scheduler, cfg, workspace, parent_run_id))
            ev.event.app_id = parse_safe_handle(handle)[2]
            return handle

    def dryrun_component(
        self,
        component: str,
        component_args: List[str],
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppDryRunInfo:
        """Builds the AppDef of ``component`` from command-line style arguments, then dry-runs it."""
        from jupyter_sched.components.finder import materialize

        app = materialize(component, component_args, self._component_defaults.get(component))
        return self.dryrun(app, scheduler, cfg, workspace, parent_run_id)

    def run_component(
        self,
        component: str,
        component_args: List[str],
        scheduler: str,
        cfg: Optional[Mapping[str, CfgVal]] = None,
        workspace: Optional[str] = None,
        parent_run_id: Optional[str] = None,
    ) -> AppHandle:
        with self._event("run_component", scheduler, cfg=cfg, workspace=workspace) as ev:
            handle = self.schedule(
                self.dryrun_component(component, component_args, scheduler, cfg, workspace, parent_run_id)
            )
            ev.event.app_id = parse_safe_handle(handle)[2]
            return handle

    # -- observe ---------------------------------------------------------------------------------------------
    def _resolve(self, app_handle: AppHandle) -> Tuple[Scheduler, str]:
        scheduler, session, app_id = parse_safe_handle(app_handle)
        return self._scheduler(scheduler, session), app_id

    def _handle_event(self, api: str, app_handle: AppHandle) -> log_event:
        try:
            scheduler, _, app_id = parse_safe_handle(app_handle)
        except ValueError:
            scheduler, app_id = "", str(app_handle)
        return self._event(api, scheduler, app_id)

    def status(self, app_handle: AppHandle) -> Optional[AppStatus]:
        """The app's status, or None if its scheduler does not know it."""
        with self._handle_event("status", app_handle):
            return self._status(app_handle)

    def _status(self, app_handle: AppHandle) -> Optional[AppStatus]:
        sched, app_id = self._resolve(app_handle)
        desc = sched.describe(app_id)
        if desc is None:
            self._apps.pop(app_handle, None)
            return None
        status = AppStatus(
            state=desc.state,
            num_restarts=desc.num_restarts,
            msg=desc.msg,
            structured_error_msg=desc.structured_error_msg,
            ui_url=desc.ui_url,
            roles=desc.roles_statuses,
        )
        cause = self._failed_fast.get(app_handle)
        if cause is not None and status.is_terminal():
            _mark_failed_fast(status, *cause)
        return status

    def wait(
        self,
        app_handle: AppHandle,
        wait_interval: float = 10,
        timeout: Optional[float] = None,
        fail_fast: bool = False,
    ) -> Optional[AppStatus]:
        """Blocks until the app is terminal and returns its status (None if it is unknown).

        Backends that can report changes as they happen (local) wake this at once; for the others
        ``wait_interval`` caps the gap between checks, which start at 5 ms and grow. ``timeout`` (seconds)
        returns the current, still running, status instead of blocking forever.

        By default a failed replica does not stop the others (TorchX's semantics: the app stays RUNNING
        until every replica has exited, then is FAILED). ``fail_fast`` cancels the app as soon as one
        replica has FAILED while others still run (they end CANCELLED, or FAILED where the backend reports
        a stopped container so), which is what a distributed job whose peers wait for each other wants.
        """
        with self._handle_event("wait", app_handle):
            return self._wait(app_handle, wait_interval, timeout, fail_fast)

    def _wait(
        self, app_handle: AppHandle, wait_interval: float, timeout: Optional[float], fail_fast: bool
    ) -> Optional[AppStatus]:
        sched, app_id = self._resolve(app_handle)
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.005
        stopping = False
        while True:
            status = self._status(app_handle)
            if status is None or status.is_terminal():
                return status
            failed = failed_replica(status) if fail_fast and not stopping else None
            if failed is not None:
                self._failed_fast[app_handle] = (failed[0], failed[1].id, failed[1].exit_code)
                sched.cancel(app_id)
                stopping = True
            if deadline is not None and time.monotonic() >= deadline:
                return status
            step = min(delay, wait_interval)
            if deadline is not None:
                step = max(0.0, min(step, deadline - time.monotonic()))
            sched.wait_for_change(app_id, step)
            delay = min(delay * 1.5, 1.0)

    def wait_for_change(self, app_handle: AppHandle, timeout: float) -> None:
        """Blocks until ``app_handle``'s backend may have news, or ``timeout`` seconds: the local backend
        wakes it as soon as any replica of this process prints or ends (not only that app's), the others
        sleep. For whoever watches several apps at once (a sweep's feeder, ``as_completed``): waiting in
        :meth:`wait` on one of them would miss the others' ends until it ends or times out."""
        sched, app_id = self._resolve(app_handle)
        sched.wait_for_change(app_id, timeout)

    def cancel(self, app_handle: AppHandle) -> None:
        """Asks the app to stop; returns at once. Unknown or finished apps are left alone."""
        with self._handle_event("cancel", app_handle):
            sched, app_id = self._resolve(app_handle)
            status = self._status(app_handle)
            if status is not None and not status.is_terminal():
                sched.cancel(app_id)

    def stop(self, app_handle: AppHandle) -> None:
        """Deprecated alias of :meth:`cancel`."""
        self.cancel(app_handle)

    def describe(self, app_handle: AppHandle) -> Optional[AppDef]:
        """The AppDef of the app: the one given to :meth:`run` or :meth:`dryrun` (if this runner submitted
        it; without the variables the runner adds to each role), else what the scheduler can reconstruct;
        None if unknown."""
        with self._handle_event("describe", app_handle):
            sched, app_id = self._resolve(app_handle)
            desc = sched.describe(app_id)
            if desc is None:
                return None
            cached = self._apps.get(app_handle)
            if cached is not None:
                return cached
            roles = list(desc.roles) or [Role(r.role, "") for r in desc.roles_statuses]
            return AppDef(name=app_id, roles=roles)

    def log_lines(
        self,
        app_handle: AppHandle,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        """Log items of replica ``k`` of ``role_name`` (see ``Scheduler.log_iter``)."""
        with self._handle_event("log_lines", app_handle):
            sched, app_id = self._resolve(app_handle)
            if sched.describe(app_id) is None:
                raise UnknownAppException(app_handle)
            return sched.log_iter(app_id, role_name, k, regex, since, until, should_tail, streams=streams)

    def usage(self, app_handle: AppHandle) -> List[UsageSample]:
        """What each replica of the app uses now (ended replicas: their kept totals); see
        ``schedulers.usage_api``. Raises UnknownAppException for an unknown app and ValueError for a
        scheduler that cannot measure usage."""
        with self._handle_event("usage", app_handle):
            sched, app_id = self._resolve(app_handle)
            if not isinstance(sched, UsageMixin):
                backend = parse_safe_handle(app_handle)[0]
                raise ValueError(f"the {backend} scheduler does not report resource usage")
            if sched.describe(app_id) is None:
                raise UnknownAppException(app_handle)
            return sched.usage(app_id)

    def usage_many(self, app_handles: Sequence[AppHandle]) -> Dict[AppHandle, List[UsageSample]]:
        """:meth:`usage` of several apps, asked of each scheduler once (a backend that must take two
        readings for a CPU % waits once for all its apps). Apps the scheduler does not know, and apps of
        a scheduler that cannot measure usage, are left out."""
        by_sched: Dict[Tuple[str, str], List[Tuple[AppHandle, str]]] = {}
        for handle in app_handles:
            scheduler, session, app_id = parse_safe_handle(handle)
            by_sched.setdefault((scheduler, session), []).append((handle, app_id))
        out: Dict[AppHandle, List[UsageSample]] = {}
        for (scheduler, session), apps in by_sched.items():
            with self._event("usage_many", scheduler, ",".join(app_id for _, app_id in apps)):
                sched = self._scheduler(scheduler, session)
                if not isinstance(sched, UsageMixin):
                    continue
                found = sched.usage_many([app_id for _, app_id in apps])
            out.update({handle: found[app_id] for handle, app_id in apps if app_id in found})
        return out

    def log_items(
        self,
        app_handle: AppHandle,
        role_name: str,
        k: int = 0,
        *,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
        timed: bool = False,
    ) -> Iterable[Any]:
        """``log_lines``, and with ``timed=True`` each item as ``(time, item)``: when it was written, from
        a backend that records it (``schedulers.timed_logs.TimedLogs``), else when it was read here (so a
        merge by time falls back to arrival order)."""
        if not timed:
            return self.log_lines(app_handle, role_name, k, regex, since, until, should_tail, streams)
        with self._handle_event("log_lines", app_handle):
            sched, app_id = self._resolve(app_handle)
            if sched.describe(app_id) is None:
                raise UnknownAppException(app_handle)
            if isinstance(sched, TimedLogs):
                return sched.log_iter_timed(app_id, role_name, k, regex, since, until, should_tail, streams=streams)
            items = sched.log_iter(app_id, role_name, k, regex, since, until, should_tail, streams=streams)
            return ((time.time(), item) for item in items)

    def list(self, scheduler: str) -> List[ListAppResponse]:
        """The apps of this session on ``scheduler``, each with its handle."""
        with self._event("list", scheduler):
            apps = self._scheduler(scheduler).list()
            for app in apps:
                app.app_handle = make_app_handle(scheduler, self._name, app.app_id)
            return apps


def failed_replica(status: AppStatus) -> Optional[Tuple[str, Any]]:
    """The first FAILED replica as ``(role name, ReplicaStatus)``, or None."""
    for role in status.roles:
        for replica in role.replicas:
            if replica.state == AppState.FAILED:
                return role.role, replica
    return None


def _mark_failed_fast(status: AppStatus, role: str, k: int, exit_code: Optional[int]) -> None:
    """An app that a fail-fast wait cancelled because replica ``role/k`` failed ended FAILED, whatever
    the backend calls the stop (local: CANCELLED for every replica): the app and that replica read
    FAILED, and ``msg`` says why the others stopped."""
    status.state = AppState.FAILED
    for role_status in status.roles:
        for replica in role_status.replicas:
            if role_status.role == role and replica.id == k:
                replica.state = AppState.FAILED
                replica.exit_code = exit_code if exit_code is not None else replica.exit_code
    code = f" (exit code {exit_code})" if exit_code is not None else ""
    status.msg = f"replica {role}/{k} failed{code}; the other replicas were stopped (fail_fast)"


def get_runner(
    name: Optional[str] = None,
    component_defaults: Optional[Dict[str, Dict[str, str]]] = None,
    **scheduler_params: Any,
) -> Runner:
    """A Runner over every registered scheduler. Use ``with get_runner() as runner:``."""
    return Runner(
        name=name or DEFAULT_SESSION,
        scheduler_factories=get_scheduler_factories(),
        component_defaults=component_defaults,
        scheduler_params=scheduler_params,
    )

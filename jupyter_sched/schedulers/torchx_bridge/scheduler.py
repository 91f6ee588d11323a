"""``-s torchx:<name>``: any scheduler TorchX has installed, behind our Scheduler interface.

Users who already run TorchX on Kubernetes, AWS Batch, GCP Batch, Ray or LSF keep their setup and get our
runner, CLI, magics and panes on it. Each call is TorchX's own (``submit_dryrun``, ``schedule``,
``describe``, ``list``, ``cancel``, ``log_iter``, ``run_opts``, ``close``), with AppDefs, states and
responses rebuilt on the other side (:mod:`convert`). The dry run's request is TorchX's
whole ``AppDryRunInfo``, shown as TorchX renders it (:mod:`text`); ``schedule`` hands it back
to TorchX unchanged. A backend that cannot reach its service fails with the service's own words and a
hint. Dry runs show TorchX's request with secrets masked by our one rule (:mod:`jupyter_sched.specs.output.masking`),
whatever layout the backend gives it. Where a backend cannot follow a log (Ray), ``log_iter`` with
``should_tail`` polls it (:mod:`poll`). ``torchx:ray`` stages the job's working directory
itself (:mod:`ray`). Registered by the registry's ``torchx:`` prefix; needs
``pip install jupyter_sched[torchx]`` (and ``jupyter_sched[ray]`` for Ray).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import warnings
import weakref
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, TypeVar

from torchx.schedulers import get_scheduler_factories as torchx_factories

from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    WorkspaceMixin,
    checked_app,
)
from jupyter_sched.schedulers.common.state_dir import default_job_root, default_log_dir
from jupyter_sched.schedulers.common.workspace_source import WorkspaceSource, open_workspace
from jupyter_sched.schedulers.shared_files import MetricsFiles, SharedFiles
from jupyter_sched.schedulers.torchx_bridge import ray as ray_dirs
from jupyter_sched.schedulers.torchx_bridge.convert import (
    describe_from_torchx,
    list_from_torchx,
    runopts_from_torchx,
    stream_to_torchx,
    to_torchx_app,
)
from jupyter_sched.schedulers.torchx_bridge.poll import poll_lines
from jupyter_sched.schedulers.torchx_bridge.text import (
    DRYRUN_ACTION,
    LIST_ACTION,
    TorchXBackendError,
    backend_error,
    render_request,
)
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    ReplicaStatus,
    RoleStatus,
    runopts,
)
from jupyter_sched.specs.output.masking import secret_values
from jupyter_sched.specs.request.limits import machine_max_replicas, max_replicas_from_env

__all__ = ["PREFIX", "TorchXRayScheduler", "TorchXScheduler", "bridged_factories", "create_scheduler"]

PREFIX = "torchx"
_ON_THIS_MACHINE = {"local_cwd", "local_dir", "local_docker"}
_LISTS_IN_PROCESS = {"local_cwd", "local_dir"}  # TorchX keeps their apps in the process that started them
_CLUSTER_MAX_REPLICAS = 4096
_SHARED_STATES = {AppState.SUBMITTED, AppState.PENDING, AppState.SUCCEEDED, AppState.CANCELLED}
R = TypeVar("R")


class TorchXScheduler(Scheduler[Any], SharedFiles, MetricsFiles):
    """TorchX's scheduler ``name`` (``kubernetes``, ``local_cwd``, ...), as ``torchx:<name>``."""

    log_poll_interval: Optional[float] = None
    """Seconds between reads when following a log the backend cannot tail; None: TorchX tails it."""
    one_log_stream = False
    """True when the backend keeps one log per app with stdout and stderr together (Ray): it is served as
    stdout (and combined), and stderr is empty, so a view reading both streams shows each line once."""
    log_times = True
    """False when the backend's log lines carry no time, so ``since``/``until`` cannot be applied."""

    def __init__(self, name: str, session_name: str, **kwargs: Any) -> None:
        super().__init__(f"{PREFIX}:{name}", session_name)
        factories = torchx_factories()
        if name not in factories:
            raise ValueError(f"TorchX has no scheduler {name!r}; it has: {', '.join(sorted(factories))}")
        self.name = name
        self._tx = factories[name](session_name, **kwargs)
        self._shapes: Dict[str, List[Tuple[str, int]]] = {}  # app id -> (role, num_replicas), for describe

    def _call(self, action: str, fn: Callable[[], R], input_errors: bool = False) -> R:
        """``fn()``; what TorchX or its client raises becomes :class:`TorchXBackendError` with its words,
        the warnings it gave on the way, and a hint. With ``input_errors``, ValueError/TypeError/KeyError
        pass unchanged (TorchX naming bad input while building a request)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = fn()
            except (ValueError, TypeError, KeyError):
                if input_errors:
                    raise
                error: Optional[BaseException] = sys.exc_info()[1]
            except Exception as e:  # noqa: BLE001 - anything the backend's service or client raised
                error = e
            else:
                error = None
        said = [str(w.message) for w in caught if not issubclass(w.category, (DeprecationWarning, FutureWarning))]
        if error is not None:
            raise backend_error(self.name, action, error, said) from error
        for text in said:
            warnings.warn(text, stacklevel=3)
        return result

    def _run_opts(self) -> runopts:
        return runopts_from_torchx(self._tx.run_opts())

    def shared_root(self, cfg: Mapping[str, CfgVal]) -> str:
        """A TorchX cluster backend with a ``job_dir`` run option (its ``slurm``): that directory, else the
        default root of our Slurm jobs; any other: this machine's state directory."""
        if self.run_opts().get("job_dir") is not None:
            return str(cfg.get("job_dir") or default_job_root())
        return default_log_dir()

    def metrics_dir(self, app_id: str) -> Optional[str]:
        """Where the app's metrics are collected on this machine: ``<log_dir>/<session>/torchx-<name>/<app
        id>/metrics``. Its replicas run where no directory of ours is shared, so they get no
        ``JUPYTER_SCHED_METRICS_DIR`` and print their records as marked stderr lines; whoever reads their
        logs here stores the records in this directory (``frontend.logview.metric_lines``). The app id is
        quoted into one file name (a Kubernetes id holds a ``:``)."""
        from urllib.parse import quote

        name = quote(app_id, safe="") or "%"
        return os.path.join(default_log_dir(), self.session_name, f"{PREFIX}-{self.name}", name, "metrics")

    def max_replicas(self) -> int:
        default = machine_max_replicas(os.cpu_count()) if self.name in _ON_THIS_MACHINE else _CLUSTER_MAX_REPLICAS
        return max_replicas_from_env(os.environ, default)

    def _validate(self, app: AppDef, scheduler: str) -> None:
        self._tx._validate(to_torchx_app(app), self.name)  # TorchX's own per-backend check

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[Any]:
        app = self._for_torchx(checked_app(self, app))
        tx_info = self._call(
            DRYRUN_ACTION, lambda: self._tx.submit_dryrun(to_torchx_app(app), dict(cfg)), input_errors=True
        )
        tx_info._scheduler = self.name
        secrets = [v for role in app.roles for v in secret_values(role.env, [role.entrypoint, *role.args])]
        shown = tx_info._fmt  # TorchX's own rendering (its repr, a Volcano job as YAML, a batch script)
        tx_info._fmt = lambda request: render_request(tx_info, shown, secrets)
        return AppDryRunInfo(tx_info, str)

    def _for_torchx(self, app: AppDef) -> AppDef:
        """The app (the bridge's own copy) as TorchX gets it; a backend needing more overrides this."""
        return app

    def schedule(self, dryrun_info: AppDryRunInfo[Any]) -> str:
        app_id = self._call("submit the app", lambda: self._tx.schedule(dryrun_info.request))
        if dryrun_info.app is not None:
            self._shapes[app_id] = [(r.name, r.num_replicas) for r in dryrun_info.app.roles]
        return app_id

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        """TorchX's answer. Some TorchX backends (its ``local_cwd``) report no replicas; for an app submitted
        through this object they are listed with the app's state where that is every replica's state
        (pending, succeeded, cancelled) and UNKNOWN otherwise, so the panes still show each replica."""
        resp = describe_from_torchx(self._call(f"describe {app_id}", lambda: self._tx.describe(app_id)))
        if resp is not None and not resp.roles_statuses and app_id in self._shapes:
            shared = resp.state if resp.state in _SHARED_STATES else AppState.UNKNOWN
            resp.roles_statuses = [
                RoleStatus(role, [ReplicaStatus(k, shared, role, "") for k in range(n)])
                for role, n in self._shapes[app_id]
            ]
        return resp

    def list(self) -> List[ListAppResponse]:
        """TorchX's list. Where TorchX cannot list (its ``local_cwd`` keeps apps only in the process that
        started them), the apps started through this object, with their current states."""
        try:
            return list_from_torchx(self._call(LIST_ACTION, self._tx.list))
        except TorchXBackendError:
            if not self._shapes or self.name not in _LISTS_IN_PROCESS:
                raise
        described = ((app_id, self.describe(app_id)) for app_id in self._shapes)
        return [ListAppResponse(app_id, resp.state) for app_id, resp in described if resp is not None]

    def cancel(self, app_id: str) -> None:
        """TorchX's cancel, of an app the backend knows (an unknown one is left alone, as our contract says)."""
        if self.describe(app_id) is not None:
            self._call(f"cancel {app_id}", lambda: self._tx.cancel(app_id))

    def _cancel_existing(self, app_id: str) -> None:
        self.cancel(app_id)

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
        """TorchX's lines, each ending in ``\\n`` as our contract says (TorchX strips them on some backends).

        Where the backend cannot tail (:attr:`log_poll_interval`), ``should_tail`` reads the whole log again
        at that interval and yields only the new lines, until a read made after the app ended. Where it
        keeps one log for both streams (:attr:`one_log_stream`), that log is stdout and combined, and stderr
        is empty. Where its lines carry no time (:attr:`log_times`), ``since``/``until`` are refused."""
        if not self.log_times and (since is not None or until is not None):
            raise ValueError(
                f"since/until: torchx:{self.name}'s log lines carry no time (TorchX's {self.name} scheduler"
                " cannot select them by time); drop --since/--until (a regex still filters)"
            )
        if self.one_log_stream and streams is not None and Stream(streams) == Stream.STDERR:
            return iter(())
        tx_streams = None if self.one_log_stream else stream_to_torchx(streams)
        poll = self.log_poll_interval

        def read(tail: bool, pattern: Optional[str]) -> Iterable[str]:
            return self._call(
                f"read the logs of {app_id}",
                lambda: self._tx.log_iter(app_id, role_name, k, pattern, since, until, tail, streams=tx_streams),
            )

        if poll is None:
            return _whole_lines(read(should_tail, regex))
        lines = poll_lines(lambda: read(False, None), lambda: self._ended(app_id), poll, should_tail)
        if regex:
            pattern = re.compile(regex)
            lines = (line for line in lines if pattern.search(line))
        return _whole_lines(lines)

    def _ended(self, app_id: str) -> bool:
        resp = self.describe(app_id)
        return resp is None or resp.state.is_terminal

    def close(self) -> None:
        try:
            self._tx.close()
        except Exception:  # noqa: BLE001 - close never raises (our contract)
            pass


class TorchXRayScheduler(WorkspaceMixin[None], TorchXScheduler):
    """``torchx:ray``: TorchX's Ray scheduler, with the job's working directory staged by the bridge
    (:mod:`ray`), unknown jobs reported as unknown, and its one log followed by polling."""

    log_poll_interval = ray_dirs.LOG_POLL_S
    one_log_stream = True
    log_times = False

    def __init__(self, session_name: str, **kwargs: Any) -> None:
        TorchXScheduler.__init__(self, "ray", session_name, **kwargs)
        self._sources: Dict[str, Optional[WorkspaceSource]] = {}  # staged directory -> what it copies
        self._failures: Dict[str, Optional[str]] = {}  # failed job -> what its log says
        for name in ray_dirs.UPLOAD_LOGGERS:  # each submit's "Uploading package ..." on stderr: Ray's default
            if logging.getLogger(name).level in (logging.NOTSET, logging.INFO):  # (a level someone chose stays)
                logging.getLogger(name).setLevel(logging.WARNING)

    def build_workspace_and_update_role(self, role: Any, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        """A copy of ``workspace`` (a directory or an fsspec URL) becomes the job's working directory."""
        source = open_workspace(workspace)
        role.image = ray_dirs.stage(source)
        self._sources[role.image] = source

    def _for_torchx(self, app: AppDef) -> AppDef:
        workdir, source = ray_dirs.working_dir_source(app, self._sources)
        if workdir is None:
            workdir = ray_dirs.stage(source)
            self._sources[workdir] = source
        for role in app.roles:
            role.image = workdir
        return app

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[Any]:
        staged = set(self._sources)
        try:
            info = super()._submit_dryrun(app, cfg)
        except BaseException:  # what this dry run staged (here, or from its workspace) goes with it
            for path in (set(self._sources) - staged) | ({app.roles[0].image} & staged):
                self._forget(path)
            raise
        workdir = info.request.request.working_dir
        ray_dirs.remove(workdir)  # made again by schedule(): a dry run never submitted leaves nothing behind
        weakref.finalize(info.request, self._sources.pop, workdir, None)
        return info

    def _forget(self, path: str) -> None:
        ray_dirs.remove(path)
        self._sources.pop(path, None)

    def schedule(self, dryrun_info: AppDryRunInfo[Any]) -> str:
        workdir = dryrun_info.request.request.working_dir
        if workdir not in self._sources:
            raise ValueError(
                f"this torchx:ray dry run's working directory ({workdir}) was made by another scheduler object,"
                " or already submitted: make the dry run again with the runner that schedules it"
            )
        try:
            ray_dirs.stage(self._sources[workdir], workdir)
            return super().schedule(dryrun_info)
        finally:  # TorchX removes it after a submit, but not when it fails before
            self._forget(workdir)

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        """TorchX's answer; an unknown job is None, and a failed job's replica says what its log says
        went wrong (TorchX reports only the state), read once."""
        try:
            resp = super().describe(app_id)
        except TorchXBackendError as e:
            if e.__cause__ is not None and ray_dirs.is_unknown_job(e.__cause__):
                return None
            raise
        if resp is not None and resp.state == AppState.FAILED:
            if app_id not in self._failures:
                lines = self._call(f"read the logs of {app_id}", lambda: self._tx.log_iter(app_id, "ray", 0))
                self._failures[app_id] = ray_dirs.failure_summary(lines) or ray_dirs.job_message_summary(
                    self._call(f"read Ray's message for {app_id}", lambda: ray_dirs.job_message(app_id))
                )
            summary = self._failures[app_id]
            for role in resp.roles_statuses if summary else []:
                for replica in role.replicas:
                    replica.structured_error_msg = json.dumps({"message": summary})
            if summary:
                resp.msg = summary  # TorchX's msg is the state's name again ("FAILED")
        return resp

    def close(self) -> None:
        for path in list(self._sources):
            self._forget(path)
        super().close()


def _whole_lines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        yield line if line.endswith(("\n", "\r")) else line + "\n"


def create_scheduler(name: str, session_name: str, **kwargs: Any) -> TorchXScheduler:
    if name == "ray":
        return TorchXRayScheduler(session_name, **kwargs)
    return TorchXScheduler(name, session_name, **kwargs)


def bridged_factories() -> Dict[str, Callable[..., Scheduler]]:
    """``{name: factory}`` for every scheduler TorchX has installed; the registry names them ``torchx:name``.

    Keyword arguments our runner passes to every factory (e.g. ``log_dir``) reach TorchX's factory only if
    it declares them, since TorchX's factories refuse what they do not know.
    """

    def factory_for(name: str) -> Callable[..., Scheduler]:
        def factory(session_name: str, **kwargs: Any) -> Scheduler:
            return create_scheduler(name, session_name, **_accepted(torchx_factories()[name], kwargs))

        factory.__qualname__ = factory.__name__ = f"create_torchx_{name}"
        return factory

    return {name: factory_for(name) for name in torchx_factories()}


def _accepted(factory: Callable[..., Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    import inspect

    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()) and len(params) <= 2:
        return {}  # a lazy wrapper (*args, **kwargs): what the real factory takes is unknown
    return {k: v for k, v in kwargs.items() if k in params}

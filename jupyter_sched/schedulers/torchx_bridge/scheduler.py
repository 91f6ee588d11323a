"""``-s torchx:<name>``: any scheduler TorchX has installed, behind our Scheduler interface.

Users who already run TorchX on Kubernetes, AWS Batch, GCP Batch, Ray or LSF keep their setup and get our
runner, CLI, magics and panes on it. Each call is TorchX's own (``submit_dryrun``, ``schedule``,
``describe``, ``list``, ``cancel``, ``log_iter``, ``run_opts``, ``close``), with AppDefs, states and
responses rebuilt on the other side (:mod:`convert`). The dry run's request is TorchX's
whole ``AppDryRunInfo``, shown as TorchX renders it (:mod:`text`); ``schedule`` hands it back
to TorchX unchanged. A backend that cannot reach its service fails with the service's own words and a
hint. Registered by the registry's ``torchx:`` prefix; needs ``pip install jupyter_sched[torchx]``.
"""

from __future__ import annotations

import os
import sys
import warnings
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, TypeVar

from torchx.schedulers import get_scheduler_factories as torchx_factories

from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    checked_app,
)
from jupyter_sched.schedulers.common.state_dir import default_job_root, default_log_dir
from jupyter_sched.schedulers.shared_files import SharedFiles
from jupyter_sched.schedulers.torchx_bridge.convert import (
    describe_from_torchx,
    list_from_torchx,
    runopts_from_torchx,
    stream_to_torchx,
    to_torchx_app,
)
from jupyter_sched.schedulers.torchx_bridge.text import TorchXBackendError, backend_error, render_request
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    ReplicaStatus,
    RoleStatus,
    runopts,
)
from jupyter_sched.specs.limits import machine_max_replicas, max_replicas_from_env

__all__ = ["PREFIX", "TorchXScheduler", "bridged_factories", "create_scheduler"]

PREFIX = "torchx"
_ON_THIS_MACHINE = {"local_cwd", "local_dir", "local_docker"}
_CLUSTER_MAX_REPLICAS = 4096
_SHARED_STATES = {AppState.SUBMITTED, AppState.PENDING, AppState.SUCCEEDED, AppState.CANCELLED}
R = TypeVar("R")


class TorchXScheduler(Scheduler[Any], SharedFiles):
    """TorchX's scheduler ``name`` (``kubernetes``, ``local_cwd``, ...), as ``torchx:<name>``."""

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

    def max_replicas(self) -> int:
        default = machine_max_replicas(os.cpu_count()) if self.name in _ON_THIS_MACHINE else _CLUSTER_MAX_REPLICAS
        return max_replicas_from_env(os.environ, default)

    def _validate(self, app: AppDef, scheduler: str) -> None:
        self._tx._validate(to_torchx_app(app), self.name)  # TorchX's own per-backend check

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[Any]:
        app = checked_app(self, app)
        tx_info = self._call(
            "build the request", lambda: self._tx.submit_dryrun(to_torchx_app(app), dict(cfg)), input_errors=True
        )
        tx_info._scheduler = self.name
        return AppDryRunInfo(tx_info, render_request)

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
            return list_from_torchx(self._call("list apps", self._tx.list))
        except TorchXBackendError:
            if not self._shapes:
                raise
        described = ((app_id, self.describe(app_id)) for app_id in self._shapes)
        return [ListAppResponse(app_id, resp.state) for app_id, resp in described if resp is not None]

    def cancel(self, app_id: str) -> None:
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
        """TorchX's lines, each ending in ``\\n`` as our contract says (TorchX strips them on some backends)."""
        lines = self._call(
            f"read the logs of {app_id}",
            lambda: self._tx.log_iter(
                app_id, role_name, k, regex, since, until, should_tail, streams=stream_to_torchx(streams)
            ),
        )
        for line in lines:
            yield line if line.endswith(("\n", "\r")) else line + "\n"

    def close(self) -> None:
        try:
            self._tx.close()
        except Exception:  # noqa: BLE001 - close never raises (our contract)
            pass


def create_scheduler(name: str, session_name: str, **kwargs: Any) -> TorchXScheduler:
    return TorchXScheduler(name, session_name, **kwargs)


def bridged_factories() -> Dict[str, Callable[..., Scheduler]]:
    """``{name: factory}`` for every scheduler TorchX has installed; the registry names them ``torchx:name``.

    Keyword arguments our runner passes to every factory (e.g. ``log_dir``) reach TorchX's factory only if
    it declares them, since TorchX's factories refuse what they do not know.
    """

    def factory_for(name: str) -> Callable[..., Scheduler]:
        def factory(session_name: str, **kwargs: Any) -> Scheduler:
            return TorchXScheduler(name, session_name, **_accepted(torchx_factories()[name], kwargs))

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

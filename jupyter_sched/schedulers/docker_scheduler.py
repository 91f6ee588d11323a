"""The docker backend (``local_docker``): each replica is a container on the local Docker engine.

Stateless: every container carries ``jupyter_sched.*`` labels (app id and name, session, role name and
index, replica id, cancel grace, version), so ``describe``, ``list``, ``log_iter`` and ``cancel`` work from
any process, e.g. after a kernel restart. Replicas share the user-defined bridge network ``torchx``, TorchX's
(run option ``network``) and reach each other by container name; every replica gets the rank-0 container's
name in ``TORCHX_RANK0_HOST``, TorchX's name (``${rank0_env}`` in args names that variable); the request's
``environment`` is exactly TorchX's, our ``PYTHONUNBUFFERED`` and ``JUPYTER_SCHED_*`` are added at create
(see ``docker.request.job``).

* Resources are enforced: ``cpu`` -> ``nano_cpus``, ``memMB`` -> memory limit and ``/dev/shm`` size,
  ``gpu`` -> a device request. ``max_retries`` becomes a per-container ``on-failure`` restart policy: docker
  has no gang scheduling, so only the failed replica restarts (``retry_policy`` is not honoured), and
  ``num_restarts`` is docker's restart count.
* ``schedule`` is all or nothing: it checks host paths and images first, creates every container, then
  starts them; if any step fails for any replica, the containers already created are removed and the
  error names the replica (``docker.launch``). Images are pulled only under the ``pull`` policy (default:
  only if missing). A submitter killed before every container was started (SIGKILL) cannot roll back:
  each container names its submitter in a label, and ``describe``, ``list`` and ``cancel`` find such an
  app, remove its containers and read it FAILED, "submit interrupted" (``docker.interrupted``).
* ``cancel`` records the cancel in a *cancel record* container that any process sees, then asks the engine
  to stop every replica, one thread each (the image's stop signal, SIGKILL after ``cancel_grace``), and
  returns at once; the app ends CANCELLED (``docker.cancel``). The threads only wait until their request
  is sent (at most 0.5 s): a process that exits right after ``cancel`` (the CLI) still cancels every replica.
* Each replica gets the app's metrics directory on this machine, ``<log_dir>/<session>/<app_id>/metrics``
  (as the local backends'), bind-mounted at ``/jupyter_sched/metrics`` with ``JUPYTER_SCHED_METRICS_DIR``
  naming it, so ``jupyter_sched.track`` writes files this machine reads (``metrics_dir``; the path is a
  label). A container running as root hands its files over to the submitting user
  (``JUPYTER_SCHED_METRICS_OWNER``).
* Exited containers are kept, with their logs and metrics, until :meth:`DockerScheduler.cleanup` (or
  ``prune``).

The class keeps the public methods and the per-instance state (the engine client, cached network ids,
stop threads, stats watchers); the machinery is in its wing, ``docker/``, whose docstring lists its rooms:
the modules named above, ``docker.request`` (building and showing the request), ``docker.record``
(describe/list from container rows), ``docker.logs``, ``docker.cleanup`` and ``docker.usage``.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, TypeVar

from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    checked_app,
    stream_arg,
)
from jupyter_sched.schedulers.common.process_identity import is_gone
from jupyter_sched.schedulers.common.state_dir import default_log_dir
from jupyter_sched.schedulers.docker.cancel import CANCEL_RECORD_SUFFIX, cancel_app
from jupyter_sched.schedulers.docker.cleanup import (
    check_removable,
    remove_containers,
    remove_metrics_dir,
    remove_network,
    remove_workspace_image,
)
from jupyter_sched.schedulers.docker.engine import (
    DockerNotAvailableError,
    connect,
    ensure_network,
    has_docker,
    is_not_found,
    lost_engine,
    parallel,
)
from jupyter_sched.schedulers.docker.interrupted import undo_interrupted
from jupyter_sched.schedulers.docker.labels import (
    LABEL_APP_ID,
    LABEL_METRICS_DIR,
    LABEL_OWNER,
    LABEL_SESSION,
    owner_name,
)
from jupyter_sched.schedulers.docker.launch import create_and_start, ensure_images, make_metrics_dirs
from jupyter_sched.schedulers.docker.logs.reader import DockerLogIterator
from jupyter_sched.schedulers.docker.oom import OomEvents
from jupyter_sched.schedulers.docker.record.describe import (
    describe_response,
    interrupted_response,
    list_responses,
    replica_row,
)
from jupyter_sched.schedulers.docker.record.state import cancelled_at, is_record
from jupyter_sched.schedulers.docker.request.build import RANK0_ENV, DockerSubmitError, build_job, check_host_paths
from jupyter_sched.schedulers.docker.request.job import DEFAULT_NETWORK, DockerContainer, DockerJob
from jupyter_sched.schedulers.docker.request.options import DockerOpts, run_opts
from jupyter_sched.schedulers.docker.usage import TOTALS_DIR, DockerUsage
from jupyter_sched.schedulers.docker.workspace import DockerWorkspaceMixin
from jupyter_sched.schedulers.shared_files import MetricsFiles
from jupyter_sched.schedulers.usage_api import UsageMixin
from jupyter_sched.specs import AppDef, AppDryRunInfo, CfgVal, UnknownAppException, make_unique, runopts
from jupyter_sched.specs import Role as Role  # TorchX's docker_scheduler has it too; its users reach it here
from jupyter_sched.specs.output.names import safe_name
from jupyter_sched.specs.status.usage import UsageSample

if TYPE_CHECKING:  # pragma: no cover
    import docker

__all__ = [
    "CANCEL_RECORD_SUFFIX", "DockerContainer", "DockerJob", "DockerNotAvailableError", "DockerOpts",
    "DockerScheduler", "DockerSubmitError", "RANK0_ENV", "create_scheduler", "has_docker",
]  # fmt: skip

F = TypeVar("F", bound=Callable[..., Any])


def _engine_errors(method: F) -> F:
    """Turns a lost connection to the engine into DockerNotAvailableError (with how to start one)."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception as e:
            lost = lost_engine(e)
            if lost is not None:
                raise lost from e
            raise

    return wrapper  # type: ignore[return-value]


class DockerScheduler(DockerWorkspaceMixin, Scheduler[DockerJob], UsageMixin, MetricsFiles):
    """Runs apps as containers on the local Docker engine; see the module docstring.

    ``docker_client`` injects a ``docker.DockerClient``; by default one is made from the environment
    (``DOCKER_HOST``) on first use, so creating the scheduler and dry runs need no engine.
    """

    def __init__(self, session_name: str, docker_client: Optional["docker.DockerClient"] = None) -> None:
        super().__init__("docker", session_name)
        self._client = docker_client
        self._owns_client = docker_client is None
        self._lock = threading.Lock()
        self._networks: Dict[str, str] = {}
        self._described: Dict[str, float] = {}
        self._stop_threads: List[threading.Thread] = []
        self._usage = DockerUsage(lambda: self._docker().api, os.path.join(default_log_dir(), TOTALS_DIR))
        self._oom = OomEvents()
        self._metrics_dirs: Dict[str, str] = {}

    def _docker(self) -> "docker.DockerClient":
        client = self._client
        if client is None:
            with self._lock:
                if self._client is None:
                    self._client = connect()
                client = self._client
        return client

    # -- options and dry run ---------------------------------------------------------------------------
    def _run_opts(self) -> runopts:
        return run_opts()

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """A role without resources runs without limits."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[DockerJob]:
        app = checked_app(self, app)
        # make_unique is looked up here, in this module, so code written for TorchX can patch
        # docker_scheduler.make_unique to get a fixed app id
        app_id = make_unique(safe_name(app.name))
        metrics = os.path.abspath(os.path.join(default_log_dir(), self.session_name, app_id, "metrics"))
        return AppDryRunInfo(build_job(app, cfg, self.session_name, app_id, metrics_dir=metrics), repr)

    # -- schedule ----------------------------------------------------------------------------------------
    @_engine_errors
    def schedule(self, dryrun_info: AppDryRunInfo[DockerJob]) -> str:
        """Starts every replica or none (see the module docstring); returns the app id."""
        job = dryrun_info.request
        check_host_paths(job)
        client = self._docker()
        quiet = bool(dryrun_info.cfg.get("quiet", True)) if dryrun_info.cfg else True
        ensure_images(client, job, quiet)
        networks = {name: self._network(name) for name in {c.network or job.network for c in job.containers}}
        make_metrics_dirs(job)

        def undo() -> None:
            self._remove_app(job.app_id)
            for path in {c.labels.get(LABEL_METRICS_DIR) for c in job.containers} - {None, ""}:
                remove_metrics_dir(str(path))

        try:
            create_and_start(client, job, networks, undo)
            threading.Thread(target=self._watch_usage, args=(job.app_id,), daemon=True).start()
        except DockerSubmitError:
            raise
        except BaseException:  # e.g. KeyboardInterrupt half-way: the app's labels find what was created
            undo()
            raise
        return job.app_id

    def _remove_app(self, app_id: str) -> int:
        """Force-removes every container carrying the app's id (replicas and cancel record)."""
        ids = [row["Id"] for row in self._rows(app_id)]
        return remove_containers(self._docker().api, ids)

    def _network(self, name: str) -> str:
        net_id = self._networks.get(name)
        if net_id is not None:
            try:
                self._docker().api.inspect_network(net_id)
                return net_id
            except Exception as e:  # noqa: BLE001 - the SDK's errors told apart by is_not_found; others re-raised
                if not is_not_found(e):
                    raise
        net_id = ensure_network(self._docker(), name)
        self._networks[name] = net_id
        return net_id

    # -- observe ------------------------------------------------------------------------------------------
    def _rows(self, app_id: str) -> List[Dict[str, Any]]:
        """The app's containers (replicas and cancel record) as sparse list rows: one request."""
        return self._docker().api.containers(all=True, filters={"label": [f"{LABEL_APP_ID}={app_id}"]})

    def _undo_interrupted(self, rows: List[Dict[str, Any]]) -> Dict[str, str]:
        """App id -> why it FAILED, for each app in ``rows`` whose submit was cut short (undone here, if
        no reader did it before: ``docker.interrupted``)."""
        return undo_interrupted(self._docker().api, rows, is_gone)

    @_engine_errors
    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        asked = time.time()
        rows = self._rows(app_id)
        undone = self._undo_interrupted(rows)
        if app_id in undone:
            return interrupted_response(app_id, rows, undone[app_id])
        replicas = [r for r in rows if not is_record(r)]
        if not replicas:
            return None
        self._described[app_id] = asked
        api = self._docker().api
        infos = parallel(lambda r: api.inspect_container(r["Id"]), replicas, max_workers=4 if len(replicas) > 4 else 1)
        for _, err in infos:
            if err is not None and not is_not_found(err):
                raise err
        cancelled = cancelled_at(rows) is not None
        found = [self._oom.marked(api, i, cancelled) for i, _ in infos if i is not None]
        return describe_response(app_id, rows, found, self._usage.totals)

    @_engine_errors
    def list(self) -> List[ListAppResponse]:
        """This session's apps of this user (``LABEL_OWNER``), each once, from one label-filtered container
        list (no inspects)."""
        labels = [f"{LABEL_SESSION}={self.session_name}", f"{LABEL_OWNER}={owner_name()}"]
        rows = self._docker().api.containers(all=True, filters={"label": labels})
        return list_responses(rows, self._undo_interrupted(rows))

    # -- metrics ----------------------------------------------------------------------------------------------
    @_engine_errors
    def metrics_dir(self, app_id: str) -> Optional[str]:
        """The app's metrics directory on this machine, bind-mounted into each replica (its label, so any
        process finds it whatever its own state directory); None for an unknown app, or one submitted
        before there was a mount."""
        known = self._metrics_dirs.get(app_id)
        if known is None:
            rows = [r for r in self._rows(app_id) if not is_record(r)]
            if not rows:
                return None  # unknown (or not created yet): ask again next time
            known = next((str(p) for p in (r.get("Labels", {}).get(LABEL_METRICS_DIR) for r in rows) if p), "")
            self._metrics_dirs[app_id] = known  # a label never changes: one engine request per app
        return known or None

    # -- usage ------------------------------------------------------------------------------------------------
    @_engine_errors
    def usage(self, app_id: str) -> List[UsageSample]:
        """Per replica: the latest record of its stats stream while it runs (the first call for a
        container opens the stream), the totals a stream kept after it ended."""
        rows = [r for r in self._rows(app_id) if not is_record(r)]
        if not rows:
            raise UnknownAppException(app_id)
        api = self._docker().api
        infos = [i for i, _ in parallel(lambda r: api.inspect_container(r["Id"]), rows) if i is not None]
        return self._usage.samples(infos)

    def _watch_usage(self, app_id: str) -> None:
        """Submit: start the app's stats streams at once, so its peak and totals are kept even if nobody
        looks at its usage while it runs."""
        try:
            self.usage(app_id)
        except Exception:  # noqa: BLE001 - usage is a bonus: it must never disturb a submit
            pass

    def wait_for_change(self, app_id: str, timeout: float) -> None:
        """Returns at the first engine event of one of the app's containers (start, exit, restart, the
        cancel record...) since the last ``describe``, or after ``timeout``."""
        if timeout <= 0:
            return
        now = time.time()
        since = self._described.get(app_id, now)
        if now - since > 30:
            since = now
        try:
            events = self._docker().api.events(
                since=since,
                until=now + timeout,
                filters={"label": [f"{LABEL_APP_ID}={app_id}"], "type": "container"},
                decode=True,
            )
            try:
                for _ in events:
                    break
            finally:
                events.close()
        except Exception:  # noqa: BLE001 - an engine without events: just wait a little
            time.sleep(min(timeout, 0.05))

    # -- cancel --------------------------------------------------------------------------------------------
    @_engine_errors
    def _cancel_existing(self, app_id: str) -> None:
        rows = self._rows(app_id)
        if self._undo_interrupted(rows):
            return  # nothing of it runs any more: what a cancel would have stopped is removed
        threads = cancel_app(self._docker(), app_id, rows, self.session_name)
        self._stop_threads = [t for t in self._stop_threads if t.is_alive()] + threads

    def _is_cancelled(self, app_id: str) -> bool:
        return cancelled_at(self._rows(app_id)) is not None

    # -- clean-up --------------------------------------------------------------------------------------------
    @_engine_errors
    def cleanup(self, app_id: str, force: bool = False) -> int:
        """Removes the app's containers (replicas and cancel record, with their logs), its metrics directory
        and the workspace images only it used; returns how many containers were removed. A running app is refused unless
        ``force`` (which kills it)."""
        rows = self._rows(app_id)
        check_removable(app_id, rows, force)
        replicas = [r for r in rows if not is_record(r)]
        images = {r.get("ImageID") for r in replicas if r.get("ImageID")}
        names = [str((r.get("Names") or [""])[0]).lstrip("/") for r in replicas]
        metrics = {str((r.get("Labels") or {}).get(LABEL_METRICS_DIR) or "") for r in replicas} - {""}
        removed = self._remove_app(app_id)
        for path in metrics:
            remove_metrics_dir(path)
        self._metrics_dirs.pop(app_id, None)
        self._described.pop(app_id, None)
        for name in names:
            self._usage.forget(name)
        for image in images:
            remove_workspace_image(self._docker().api, str(image))
        return removed

    remove = cleanup

    def prune(self, network: bool = False) -> List[str]:
        """Cleans up every finished app of this session (running ones are left alone); with ``network``,
        also removes the shared network if no container uses it any more. Returns the removed app ids."""
        done = [a.app_id for a in self.list() if a.state.is_terminal]
        for app_id in done:
            self.cleanup(app_id)
        if network:
            self.remove_network()
        return done

    def remove_network(self, name: str = DEFAULT_NETWORK) -> bool:
        """Removes the network ``name`` (every copy of it) if no container is attached; True if removed."""
        removed = remove_network(self._docker().api, name)
        self._networks.pop(name, None)
        return removed

    def close(self) -> None:
        """Closes the engine connection this scheduler opened. Containers are left as they are (docker state
        outlives the notebook); use ``cleanup``/``prune`` to remove finished apps. Idempotent. Waits (briefly)
        for the stop requests of a recent ``cancel`` to be sent first."""
        deadline = time.monotonic() + 5.0
        for thread in self._stop_threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._stop_threads = []
        client, self._client = self._client, None
        if client is not None and self._owns_client:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - close must never raise
                pass

    # -- logs ------------------------------------------------------------------------------------------------
    @_engine_errors
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
        """Lines of replica ``k`` of ``role_name`` (see ``docker.logs.reader`` for follow and ``\\r`` details).
        A naive ``since``/``until`` is local time."""
        stream = stream_arg(streams)
        row = replica_row(app_id, self._rows(app_id), role_name, k)
        return DockerLogIterator(
            self._docker(),
            row["Id"],
            regex=regex,
            since=since,
            until=until,
            should_tail=should_tail,
            stream=stream,
            is_cancelled=lambda: self._is_cancelled(app_id),
        )


def create_scheduler(
    session_name: str, docker_client: Optional["docker.DockerClient"] = None, **kwargs: Any
) -> DockerScheduler:
    """``local_docker``: replicas as containers on the local Docker engine."""
    return DockerScheduler(session_name, docker_client=docker_client)

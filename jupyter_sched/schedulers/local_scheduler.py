"""The local backend: each replica is a process on this machine (``local_cwd``, ``local_dir``).

Replicas run without a shell, each leading its own session and process group, with their output copied
live into ``<log_dir>/<session>/<app_id>/<role>/<k>/{stdout,stderr,combined}.log``. Resource limits,
retries and mounts are not enforced locally (they are by the docker and slurm backends).

Replicas end with their owner: with a clean exit, on SIGTERM/SIGINT in a plain script (the handler that was
there before still runs), and when the owner is killed outright (a reaper process notices). Inside IPython
SIGINT is left alone, so interrupting a cell never kills jobs. Apps are recorded on disk, so ``list``,
``describe`` and ``log_iter`` work from any process that points at the same ``log_dir``.

This module holds the scheduler (TorchX's public surface: its methods, factories and the names TorchX code
imports from here); the machinery it delegates to is in its wing, ``local/``, whose docstring lists its
rooms: ``local.owned`` (starting an app and hearing its replicas end), ``local.cancel``, ``local.request``
(run options and the request), ``local.processes``, ``local.warm_starts``, ``local.record`` (finding,
describing and listing apps from their records), ``local.logs`` and ``local.usage``.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
import weakref
from collections import OrderedDict
from datetime import datetime
from functools import partial
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    checked_app,
    stream_arg,
)
from jupyter_sched.schedulers.common.state_dir import default_log_dir
from jupyter_sched.schedulers.local.cancel import cancel_recorded
from jupyter_sched.schedulers.local.logs.reader import ChangeFeed, LogIterator, replica_log
from jupyter_sched.schedulers.local.owned import OwnedApp, new_record
from jupyter_sched.schedulers.local.processes.procs import ProcessLoop, in_io_thread
from jupyter_sched.schedulers.local.processes.reaper import ReaperClient
from jupyter_sched.schedulers.local.processes.signals import SignalCleanup, SignalException
from jupyter_sched.schedulers.local.processes.spawn import check_entrypoints, make_dirs
from jupyter_sched.schedulers.local.record.describe import (
    describe_record,
    find_record,
    link_into_default_base,
    list_apps,
)
from jupyter_sched.schedulers.local.record.state import AppRecord
from jupyter_sched.schedulers.local.request.build import build_request
from jupyter_sched.schedulers.local.request.images import CWDImageProvider, ImageProvider, LocalDirectoryImageProvider
from jupyter_sched.schedulers.local.request.opts import LocalOpts, local_run_opts
from jupyter_sched.schedulers.local.request.popen import (
    ENV_CUDA_VISIBLE_DEVICES,
    PopenRequest,
    ReplicaParam,
    format_request,
)
from jupyter_sched.schedulers.local.usage.meter import LocalMeter, limit_request
from jupyter_sched.schedulers.local.warm_starts.zygote import ZygotePool, plan_starts
from jupyter_sched.schedulers.shared_files import MetricsFiles, SharedFiles
from jupyter_sched.schedulers.timed_logs import TimedLogs
from jupyter_sched.schedulers.usage_api import UsageMixin
from jupyter_sched.specs import AppDef, AppDryRunInfo, CfgVal, UnknownAppException, make_unique, runopts
from jupyter_sched.specs.output.names import safe_name
from jupyter_sched.specs.status.handles import check_name
from jupyter_sched.specs.status.usage import UsageSample

__all__ = [
    "ENV_CUDA_VISIBLE_DEVICES", "CWDImageProvider", "ImageProvider", "LocalDirectoryImageProvider", "LocalOpts",
    "LocalScheduler", "LogIterator", "PopenRequest", "ReplicaParam", "SignalException", "create_cwd_scheduler",
    "create_dir_scheduler", "create_scheduler", "default_log_dir",
]  # fmt: skip


# -- the scheduler -------------------------------------------------------------------------------------------


RECHECK_S = 0.5
"""How long a replica of an app another process owns is taken to be still running without reading its record
again (see ``LocalScheduler.replica_finished``)."""


class LocalScheduler(Scheduler[PopenRequest], UsageMixin, TimedLogs, SharedFiles, MetricsFiles):
    """Schedules on this machine; see the module docstring for what is and is not enforced."""

    def __init__(
        self,
        session_name: str,
        image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider] = CWDImageProvider,
        cache_size: int = 100,
        extra_paths: Optional[List[str]] = None,
        log_dir: Optional[str] = None,
    ) -> None:
        """``log_dir`` is where apps are recorded when ``cfg`` names no ``log_dir``, and where ``list`` and
        ``describe`` look for apps of other processes (default: :func:`default_log_dir`)."""
        super().__init__("local", check_name(session_name, "session name"))
        if cache_size <= 0:
            raise ValueError(f"cache_size={cache_size}: the cache size must be greater than zero")
        self._image_provider_class = image_provider_class
        self._image_provider_name = getattr(image_provider_class, "__name__", "")
        self._running_seen: Dict[Tuple[str, str, int], float] = {}  # see replica_finished
        self._cache_size = cache_size
        self._extra_paths = list(extra_paths or [])
        self._apps: "OrderedDict[str, OwnedApp]" = OrderedDict()
        self._bases: List[str] = [os.path.abspath(os.path.expanduser(log_dir or default_log_dir()))]
        self._loop = ProcessLoop()
        self._seen = threading.local()  # per thread: the loop's version when it last described an app
        self._zygotes = ZygotePool(self._loop)
        self._lock = threading.Lock()
        self._closed = False
        self._meter = LocalMeter()
        SignalCleanup.register(self.stop_owned_apps)
        _OPEN.add(self)

    # -- options and dry run ----------------------------------------------------------------------------
    def _run_opts(self) -> runopts:
        return local_run_opts()

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """Resources are not enforced locally, so a role without one is fine."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[PopenRequest]:
        app = checked_app(self, app)
        request = self._to_popen_request(app, cfg)
        return AppDryRunInfo(request, format_request)

    def _to_popen_request(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> PopenRequest:
        base = os.path.abspath(os.path.expanduser(str(cfg.get("log_dir") or self._bases[0])))
        # make_unique is looked up here, in this module, so code written for TorchX can patch
        # local_scheduler.make_unique to get a fixed app id
        app_id = make_unique(safe_name(app.name))
        provider = self._image_provider_class(cfg)
        request = build_request(app, cfg, provider, base, self.session_name, self._extra_paths, app_id=app_id)
        limit_request(request, cfg)
        plan_starts(request, app)  # which replicas are forked warm (function jobs), which exec'd
        return request

    # -- schedule ------------------------------------------------------------------------------------------
    def schedule(self, dryrun_info: AppDryRunInfo[PopenRequest]) -> str:
        """Starts every replica, or none: a replica that cannot start stops the ones already started and
        the error names it."""
        if self._closed:
            raise RuntimeError("this LocalScheduler was closed; create a new one (or a new runner)")
        if self._loop.failure:
            raise RuntimeError(f"this LocalScheduler's IO loop stopped ({self._loop.failure}); create a new one")
        request = dryrun_info.request
        check_entrypoints(request)
        # From here until the app is recorded and its groups are told to the reaper, a death of this
        # process (even by SIGKILL) makes the reaper undo the submit: no replica and no directory is left.
        ReaperClient.starting(request.log_dir, request.app_id)
        try:
            make_dirs(request)
            record = new_record(request, dryrun_info.app, self.session_name, self._image_provider_name)
            app = OwnedApp(record, self._meter, self._loop, self, zygotes=self._zygotes)
            app.start(request)
        except BaseException:
            ReaperClient.drop(request.log_dir)  # start() left nothing running and removed the directory
            raise
        if request.outlive_owner:
            ReaperClient.drop(request.log_dir)
        else:
            ReaperClient.watch(request.log_dir, [r.group for r in record.replicas])
        link_into_default_base(self._bases[0], self.session_name, request.log_dir)
        with self._lock:
            self._evict()
            self._apps[request.app_id] = app
        self._loop.add(app.replicas)
        base = os.path.dirname(os.path.dirname(request.log_dir))
        if base not in self._bases:
            self._bases.append(base)
        return request.app_id

    def _evict(self) -> None:
        """Keeps at most ``cache_size`` apps in memory by forgetting the oldest *finished* ones (they stay
        on disk, so ``describe`` and ``log_iter`` still find them). Running apps are never evicted."""
        while len(self._apps) >= self._cache_size:
            finished = [(a.record.finished, app_id) for app_id, a in self._apps.items() if a.record.done]
            if not finished:
                return
            del self._apps[min(finished)[1]]

    def cached_app_ids(self) -> List[str]:
        """The app ids held in memory, oldest first (for inspecting ``cache_size`` eviction)."""
        return list(self._apps)

    # -- describe / list ------------------------------------------------------------------------------------
    def _record(self, app_id: str) -> Optional[AppRecord]:
        """The app's record: in memory if this process owns it, else read from ``<base>/<session>/<app_id>``
        (an unsafe ``app_id`` is refused before any path is built). ``local_cwd`` and ``local_dir`` share the
        log dir, but each knows only its own apps: a ``local_dir://`` handle never finds (or cancels) a
        ``local_cwd`` app, as in TorchX, where each scheduler knows the apps it started."""
        record = self._any_record(app_id)
        if record is not None and record.image_provider not in ("", self._image_provider_name):
            return None
        return record

    def _any_record(self, app_id: str) -> Optional[AppRecord]:
        """The app's record whichever local scheduler started it (``list`` filters by its own)."""
        app = self._apps.get(app_id)
        if app is not None:
            return app.record
        return find_record(self._bases, self.session_name, app_id)

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        self._seen.version = self._loop.version  # before the read: see wait_for_change
        record = self._record(app_id)
        if record is None:
            return None
        # The IO thread may finish a replica while this runs: read one consistent copy, so the app's state
        # and its replicas' states always agree (a replica sets exit_code before finished).
        return describe_record(app_id, record.snapshot())

    def list(self) -> List[ListAppResponse]:
        """Apps of this session: those started here and those recorded on disk by other processes with the
        same image provider (``local_cwd`` and ``local_dir`` share the log dir, but each lists, describes and
        cancels only its own apps)."""
        owned = {app_id: app.record for app_id, app in list(self._apps.items())}
        return list_apps(owned, self._bases, self.session_name, self._image_provider_name, self._any_record)

    # -- cancel / close -----------------------------------------------------------------------------------------
    def _cancel_existing(self, app_id: str) -> None:
        """SIGTERM to every running replica's process group now, SIGKILL after ``cancel_grace``; returns
        at once. The app ends CANCELLED. Only groups that the record proves are the app's (pid and process
        start time) are signalled."""
        app = self._apps.get(app_id)
        if app is not None:
            app.cancel()
            return
        record = self._record(app_id)
        if record is None or record.done:
            return
        cancel_recorded(record)

    def stop_owned_apps(self, grace: float, signum: int = signal.SIGTERM) -> None:
        """SIGTERM to every running app this process owns (not those meant to outlive it), SIGKILL after
        ``grace`` seconds: the clean-up this scheduler registers for the owner's signals. On SIGINT (Ctrl-C
        outside IPython) the user asked to stop: the apps end CANCELLED. On SIGTERM they end FAILED, "owner
        process N exited" (the owner is on its way out; nobody cancelled them)."""
        for app in list(self._apps.values()):
            if app.record.outlive_owner:
                continue
            if signum == signal.SIGINT:
                app.cancel(grace=grace)
            else:
                app.stop_for_owner(grace, owner_exit_message())

    def close(self) -> None:
        """Stops this scheduler's running apps (SIGTERM, then SIGKILL after at most 2 s) and its IO thread.
        Idempotent; never raises. Log files are kept. The apps end FAILED with the reason: their owner
        exited (a clean exit, e.g. a kernel's restart or shutdown), or closed the scheduler while it ran
        on (``Runner.close``)."""
        if self._closed:
            return
        self._closed = True
        closed = f"owner process {os.getpid()} closed its scheduler; its replicas were stopped"
        msg = owner_exit_message() if _EXITING else closed
        try:
            running = [a for a in self._apps.values() if not a.record.done and not a.record.outlive_owner]
            for app in running:
                app.stop_for_owner(min(2.0, app.record.cancel_grace), msg)
            if sys.is_finalizing():  # the IO thread cannot run any more: the reaper finishes the job
                return
            if in_io_thread():  # collected on an IO thread, which must not wait: the apps end on their own
                self._loop.stop()
                return
            deadline = time.monotonic() + 5.0
            for app in running:
                for rep in app.replicas:
                    while not rep.finished and time.monotonic() < deadline:
                        self._loop.wait_for_change(self._loop.version, 0.05)
            self._zygotes.close()
            self._loop.stop()
        except Exception:  # noqa: BLE001 - close must never raise
            pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - a finaliser must not raise (close already swallows its own errors)
            pass

    # -- logs ----------------------------------------------------------------------------------------------------
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
        return self._log_reader(app_id, role_name, k, regex, since, until, should_tail, streams)

    def log_iter_timed(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[Tuple[float, str]]:
        """``log_iter`` with the time each item was written, from the log's time index. Replicas started
        with ``outlive_owner`` write their files without an index: their items carry the time they are read."""
        reader = self._log_reader(app_id, role_name, k, regex, since, until, should_tail, streams)
        record = self._record(app_id)
        if record is not None and record.outlive_owner:  # the index is missing for these (see above)
            return ((time.time(), item) for item in reader)
        return reader.timed()

    def _log_reader(
        self,
        app_id: str,
        role_name: str,
        k: int,
        regex: Optional[str],
        since: Optional[datetime],
        until: Optional[datetime],
        should_tail: bool,
        streams: Optional[Stream],
    ) -> LogIterator:
        stream = stream_arg(streams)
        record = self._record(app_id)
        if record is None:
            raise UnknownAppException(app_id)
        return replica_log(
            app_id, record, role_name, k, stream, regex, since, until, should_tail, scheduler=self,
            finished=partial(self.replica_finished, app_id, role_name, k), changes=self.log_changes(app_id),
        )  # fmt: skip

    def shared_root(self, cfg: Mapping[str, CfgVal]) -> str:
        """``log_dir``, else the per-user state directory: a function job's files sit beside its logs."""
        return str(cfg.get("log_dir") or default_log_dir())

    def metrics_dir(self, app_id: str) -> Optional[str]:
        """``<app dir>/metrics``: what each replica got as ``JUPYTER_SCHED_METRICS_DIR``."""
        record = self._record(app_id)
        return os.path.join(record.app_dir, "metrics") if record is not None else None

    def usage(self, app_id: str) -> List[UsageSample]:
        """Per replica: a live psutil sample of its process tree while it runs, its kept totals after."""
        record = self._record(app_id)
        if record is None:
            raise UnknownAppException(app_id)
        return self._meter.usage(record.snapshot(), owned=app_id in self._apps)

    def usage_many(self, app_ids: Sequence[str]) -> Dict[str, List[UsageSample]]:
        """:meth:`usage` of several apps, their replicas owned by other processes probed together."""
        records = [(app_id, self._record(app_id)) for app_id in app_ids]
        found = [(app_id, record.snapshot()) for app_id, record in records if record is not None]
        samples = self._meter.usage_many([(record, app_id in self._apps) for app_id, record in found])
        return {app_id: s for (app_id, _), s in zip(found, samples)}

    def wait_for_change(self, app_id: str, timeout: float) -> None:
        """Wakes as soon as a replica of this process ends (or prints); polls the state file briefly for
        apps owned by another process. A change since this thread's last ``describe`` wakes it at once:
        one that came between that read and this call would otherwise be missed until ``timeout``."""
        if app_id in self._apps:
            since = getattr(self._seen, "version", self._loop.version)
            self._loop.wait_for_change(since, timeout)
            self._seen.version = self._loop.version  # a second call without a describe waits for news
        else:
            time.sleep(min(timeout, 0.02))

    def replica_finished(self, app_id: str, role_name: str, k: int) -> bool:
        """True once the replica can write nothing more (every byte it printed is in its logs); with
        ``role_name=""``, once the whole app has.

        A follower asks before each read. For an app another process owns that means reading its record
        from disk, so a "not yet" is trusted for :data:`RECHECK_S` (a follower sees the end that much later at
        most): 64 followers of other processes' apps (the Jupyter server's job views) cost a 16th of what
        re-reading each record before every read did."""
        key = (app_id, role_name, k)
        owned = app_id in self._apps
        if not owned:
            asked = self._running_seen.get(key)
            if asked is not None and time.monotonic() - asked < RECHECK_S:
                return False
        record = self._record(app_id)
        if record is None:
            return True
        if not role_name:
            finished = record.done
        else:
            rep = record.replica(role_name, k)
            finished = rep is None or rep.done
        if not owned:
            if finished:
                self._running_seen.pop(key, None)
            else:
                self._running_seen[key] = time.monotonic()
                while len(self._running_seen) > 4096:
                    self._running_seen.pop(next(iter(self._running_seen)), None)
        return finished

    def log_changes(self, app_id: str) -> Optional[ChangeFeed]:
        """What wakes a follower of the app's logs the moment it prints (its IO loop), if this process
        owns the app; None otherwise (followers then poll the files)."""
        return self._loop if app_id in self._apps else None


_OPEN: "weakref.WeakSet[LocalScheduler]" = weakref.WeakSet()
_EXITING = False


def owner_exit_message() -> str:
    """Why an app ended whose owner (this process) exited: the reaper records the same words when the
    owner dies without a clean exit."""
    return f"owner process {os.getpid()} exited; its replicas were stopped"


@atexit.register
def _close_open_schedulers() -> None:
    """At a clean exit, close every scheduler while its IO thread still runs (a ``__del__`` during
    interpreter shutdown would find it frozen), so the apps it stopped record how they ended."""
    global _EXITING
    _EXITING = True
    for scheduler in list(_OPEN):
        scheduler.close()


def create_scheduler(
    session_name: str,
    cache_size: int = 100,
    extra_paths: Optional[List[str]] = None,
    image_provider_class: Callable[[Mapping[str, CfgVal]], ImageProvider] = CWDImageProvider,
    log_dir: Optional[str] = None,
    **kwargs: Any,
) -> LocalScheduler:
    return LocalScheduler(session_name, image_provider_class, cache_size, extra_paths, log_dir)


def create_cwd_scheduler(session_name: str, **kwargs: Any) -> LocalScheduler:
    """``local_cwd``: replicas run in the current working directory; the image name is ignored."""
    kwargs["image_provider_class"] = CWDImageProvider
    return create_scheduler(session_name, **kwargs)


def create_dir_scheduler(session_name: str, **kwargs: Any) -> LocalScheduler:
    """``local_dir``: the image is an absolute path to a directory the replicas run in."""
    kwargs["image_provider_class"] = LocalDirectoryImageProvider
    return create_scheduler(session_name, **kwargs)

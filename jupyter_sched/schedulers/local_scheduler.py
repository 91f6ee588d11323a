"""The local backend: each replica is a process on this machine (``local_cwd``, ``local_dir``).

Replicas run without a shell, each leading its own session and process group, with their output copied
live into ``<log_dir>/<session>/<app_id>/<role>/<k>/{stdout,stderr,combined}.log``. Resource limits,
retries and mounts are not enforced locally (they are by the docker and slurm backends).

Replicas end with their owner: with a clean exit, on SIGTERM/SIGINT in a plain script (the handler that was
there before still runs), and when the owner is killed outright (a reaper process notices). Inside IPython
SIGINT is left alone, so interrupting a cell never kills jobs. Apps are recorded on disk, so ``list``,
``describe`` and ``log_iter`` work from any process that points at the same ``log_dir``.
"""

from __future__ import annotations

import abc
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, TypedDict

from jupyter_sched.schedulers.api import (
    DescribeAppResponse,
    ListAppResponse,
    Scheduler,
    Stream,
    stream_arg,
)
from jupyter_sched.schedulers.local_logs import LogIterator
from jupyter_sched.schedulers.local_procs import ProcessLoop, Replica, _Sink
from jupyter_sched.schedulers.local_reaper import ReaperClient
from jupyter_sched.schedulers.local_state import (
    STATE_FILE,
    AppRecord,
    ReplicaRecord,
    load_record,
    process_start_time,
)
from jupyter_sched.specs import (
    NONE,
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    InvalidAppError,
    ReplicaStatus,
    Role,
    RoleStatus,
    UnknownAppException,
    macros,
    make_unique,
    runopts,
)

RANK0_ENV = "JUPYTER_SCHED_RANK0_HOST"
ERROR_FILE_ENV = "TORCHELASTIC_ERROR_FILE"
CANCEL_MARKER = "cancelled"
EXIT_CODE_FILE = "exit_code"


class LocalOpts(TypedDict, total=False):
    log_dir: str
    prepend_cwd: Optional[bool]
    auto_set_cuda_visible_devices: Optional[bool]
    cancel_grace: float
    outlive_owner: bool


def default_log_dir() -> str:
    """Where logs go without ``log_dir``: ``$JUPYTER_SCHED_LOG_DIR``, else a per-user state directory.

    Not a temporary directory: a notebook's job logs must outlive cells, runners and kernel restarts, and
    nothing here ever deletes a directory it did not create for a single app.
    """
    env = os.environ.get("JUPYTER_SCHED_LOG_DIR")
    if env:
        return env
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "jupyter_sched", "logs")


# -- the request -----------------------------------------------------------------------------------------


@dataclass
class ReplicaParam:
    """What one replica's ``Popen`` gets. ``env`` holds only what the app and scheduler set; the process
    sees it on top of the owner's environment."""

    args: List[str]
    env: Dict[str, str]
    stdout: Optional[str] = None
    stderr: Optional[str] = None
    combined: Optional[str] = None
    cwd: Optional[str] = None

    @property
    def command_line(self) -> str:
        """The argv as a copyable shell line (quoted; it is *not* run through a shell)."""
        return shlex.join(self.args)


@dataclass
class PopenRequest:
    """Everything needed to start every replica of an app."""

    app_id: str
    log_dir: str
    role_params: Dict[str, List[ReplicaParam]]
    role_log_dirs: Dict[str, List[str]]
    cancel_grace: float = 10.0
    outlive_owner: bool = False


def format_request(request: PopenRequest) -> str:
    """A readable rendering of the request: per replica its argv, cwd, env and log files."""
    out = [f"PopenRequest(app_id={request.app_id})", f"  log_dir: {request.log_dir}"]
    for role, params in request.role_params.items():
        out.append(f"  role {role}: {len(params)} replica(s)")
        for k, p in enumerate(params):
            out.append(f"    [{k}] argv: {p.command_line}")
            out.append(f"        cwd:  {p.cwd}")
            for key in sorted(p.env):
                out.append(f"        env:  {key}={p.env[key]}")
            out.append(f"        logs: {request.role_log_dirs[role][k]}/{{stdout,stderr,combined}}.log")
    return "\n".join(out)


# -- image providers ---------------------------------------------------------------------------------------


class ImageProvider(abc.ABC):
    """Turns a role's image into a directory on this machine (an "image root")."""

    @abc.abstractmethod
    def fetch(self, image: str) -> str:
        """Returns the path of the image root (or ``""`` if there is nothing to fetch)."""

    def fetch_role(self, role: Role) -> str:
        return self.fetch(role.image)

    def get_cwd(self, image: str) -> Optional[str]:
        return None

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return os.path.join(img_root, role.entrypoint)

    def get_replica_param(
        self,
        img_root: str,
        role: Role,
        stdout: Optional[str] = None,
        stderr: Optional[str] = None,
        combined: Optional[str] = None,
    ) -> ReplicaParam:
        return ReplicaParam(
            args=[self.get_entrypoint(img_root, role), *role.args],
            env=dict(role.env),
            stdout=stdout,
            stderr=stderr,
            combined=combined,
            cwd=self.get_cwd(role.image),
        )


class CWDImageProvider(ImageProvider):
    """Ignores the image name: replicas run in the current working directory (read at dry-run time)."""

    def __init__(self, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        self._cfg = cfg or {}

    def fetch(self, image: str) -> str:
        return os.getcwd()

    def get_cwd(self, image: str) -> Optional[str]:
        return os.getcwd()

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        return role.entrypoint


class LocalDirectoryImageProvider(ImageProvider):
    """The image name is an absolute path to an existing directory; replicas run there."""

    def __init__(self, cfg: Optional[Mapping[str, CfgVal]] = None) -> None:
        self._cfg = cfg or {}

    def fetch(self, image: str) -> str:
        if not os.path.isabs(image) or not os.path.isdir(image):
            raise ValueError(
                f"Invalid image name: {image}, does not exist or is not a directory."
                " With the local_dir scheduler the image is an absolute path to a directory."
            )
        return image

    def get_cwd(self, image: str) -> Optional[str]:
        return image

    def get_entrypoint(self, img_root: str, role: Role) -> str:
        """Absolute entrypoints run as given; a relative path (or a file present in the image) resolves
        against the image root; a bare command name is looked up on PATH."""
        entry = role.entrypoint
        if os.path.isabs(entry):
            return entry
        candidate = os.path.join(img_root, entry)
        if "/" in entry or os.path.exists(candidate):
            return candidate
        return entry


class SignalException(Exception):
    """Raised in the owner when it receives SIGTERM and had no handler of its own, so that ``with``
    blocks unwind and close their schedulers."""

    def __init__(self, msg: str, sigval: signal.Signals) -> None:
        super().__init__(msg)
        self.sigval = sigval


# -- the scheduler -------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _LocalApp:
    record: AppRecord
    replicas: List[Replica] = field(default_factory=list)


class LocalScheduler(Scheduler[PopenRequest]):
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
        super().__init__("local", session_name)
        if cache_size <= 0:
            raise ValueError(f"cache_size={cache_size}: the cache size must be greater than zero")
        self._image_provider_class = image_provider_class
        self._cache_size = cache_size
        self._extra_paths = list(extra_paths or [])
        self._apps: "OrderedDict[str, _LocalApp]" = OrderedDict()
        self._bases: List[str] = [os.path.abspath(os.path.expanduser(log_dir or default_log_dir()))]
        self._loop = ProcessLoop()
        self._lock = threading.Lock()
        self._closed = False
        _SignalCleanup.register(self)

    # -- options and dry run ----------------------------------------------------------------------------
    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("log_dir", str, "dir to write stdout/stderr log files of replicas (default: a per-user state dir)")
        opts.add(
            "prepend_cwd",
            bool,
            "if set, prepends CWD to replica's PATH env var making any binaries in CWD take precedence over"
            " those in PATH (otherwise CWD is appended after PATH)",
            default=False,
        )
        opts.add(
            "auto_set_cuda_visible_devices",
            bool,
            "sets `CUDA_VISIBLE_DEVICES` for roles that request GPU resources. Each role replica will be"
            " assigned one GPU. Does nothing if the device count is less than replicas.",
            default=False,
        )
        opts.add("cancel_grace", float, "seconds between SIGTERM and SIGKILL when the app is cancelled", default=10.0)
        opts.add(
            "outlive_owner",
            bool,
            "keep the replicas running when the process that started them exits (e.g. a kernel restart);"
            " they write their logs straight to files",
            default=False,
        )
        return opts

    def _validate(self, app: AppDef, scheduler: str) -> None:
        """Resources are not enforced locally, so a role without one is fine."""

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> AppDryRunInfo[PopenRequest]:
        request = self._to_popen_request(app, cfg)
        return AppDryRunInfo(request, format_request)

    def _to_popen_request(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> PopenRequest:
        app_id = make_unique(app.name)
        provider = self._image_provider_class(cfg)
        base = os.path.abspath(os.path.expanduser(str(cfg.get("log_dir") or self._bases[0])))
        app_dir = os.path.join(base, self.session_name, app_id)
        role_params: Dict[str, List[ReplicaParam]] = {}
        role_log_dirs: Dict[str, List[str]] = {}
        for role in app.roles:
            img_root = provider.fetch_role(role)
            cwd = provider.get_cwd(role.image) or os.getcwd()
            params, dirs = [], []
            for k in range(role.num_replicas):
                values = macros.Values(img_root=img_root, app_id=app_id, replica_id=str(k), rank0_env=RANK0_ENV)
                replica_role = values.apply(role)
                replica_dir = os.path.join(app_dir, role.name, str(k))
                param = provider.get_replica_param(
                    img_root,
                    replica_role,
                    stdout=os.path.join(replica_dir, "stdout.log"),
                    stderr=os.path.join(replica_dir, "stderr.log"),
                    combined=os.path.join(replica_dir, "combined.log"),
                )
                param.cwd = param.cwd or cwd
                env = param.env
                env.setdefault("PYTHONUNBUFFERED", "x")
                env.setdefault(ERROR_FILE_ENV, os.path.join(replica_dir, "error.json"))
                env[RANK0_ENV] = "localhost"
                env["JUPYTER_SCHED_APP_ID"] = app_id
                env["JUPYTER_SCHED_ROLE_NAME"] = role.name
                env["JUPYTER_SCHED_REPLICA_ID"] = str(k)
                env["PATH"] = self._compose_path(role.env.get("PATH"), cwd, bool(cfg.get("prepend_cwd")))
                params.append(param)
                dirs.append(replica_dir)
            role_params[role.name] = params
            role_log_dirs[role.name] = dirs
        if cfg.get("auto_set_cuda_visible_devices"):
            _assign_gpus(app, role_params)
        return PopenRequest(
            app_id=app_id,
            log_dir=app_dir,
            role_params=role_params,
            role_log_dirs=role_log_dirs,
            cancel_grace=float(cfg.get("cancel_grace") or 0.0),
            outlive_owner=bool(cfg.get("outlive_owner")),
        )

    def _compose_path(self, role_path: Optional[str], cwd: str, prepend_cwd: bool) -> str:
        """``extra_paths`` and the role's PATH come first, then the owner's PATH; the working directory is
        prepended with ``prepend_cwd`` and appended otherwise (as the option's help says)."""
        parts = [*self._extra_paths]
        if role_path:
            parts.append(role_path)
        if prepend_cwd:
            parts.insert(0, cwd)
        parts.append(os.environ.get("PATH", os.defpath))
        if not prepend_cwd:
            parts.append(cwd)
        return os.pathsep.join(p for p in parts if p)

    # -- schedule ------------------------------------------------------------------------------------------
    def schedule(self, dryrun_info: AppDryRunInfo[PopenRequest]) -> str:
        """Starts every replica, or none: a replica that cannot start stops the ones already started and
        the error names it."""
        if self._closed:
            raise RuntimeError("this LocalScheduler was closed; create a new one (or a new runner)")
        request = dryrun_info.request
        app = dryrun_info.app
        self._check_entrypoints(request)
        self._make_dirs(request)
        record = AppRecord(
            app_id=request.app_id,
            name=app.name if app else request.app_id.rsplit("-", 1)[0],
            session=self.session_name,
            app_dir=request.log_dir,
            owner_pid=os.getpid(),
            owner_started=_OWN_START,
            submitted=time.time(),
            roles=[_role_summary(r) for r in (app.roles if app else [])],
            outlive_owner=request.outlive_owner,
            cancel_grace=request.cancel_grace,
        )
        local_app = _LocalApp(record)
        started: List[Replica] = []
        try:
            for role_name, params in request.role_params.items():
                for k, param in enumerate(params):
                    rep_record = ReplicaRecord(
                        role=role_name,
                        replica_id=k,
                        stdout=param.stdout or "",
                        stderr=param.stderr or "",
                        combined=param.combined or "",
                        error_file=param.env.get(ERROR_FILE_ENV, ""),
                    )
                    rep = self._spawn(param, rep_record, local_app)
                    started.append(rep)
                    record.replicas.append(rep_record)
        except BaseException as e:
            self._rollback(started, request)
            if isinstance(e, OSError):
                raise RuntimeError(
                    f"could not start replica {role_name}[{k}] ({shlex.join(param.args)}): {e}."
                    " No replica of the app was left running."
                ) from e
            raise
        local_app.replicas = started
        record.create()
        self._link_into_default_base(request.log_dir)
        with self._lock:
            self._evict()
            self._apps[request.app_id] = local_app
        if not request.outlive_owner:
            ReaperClient.watch(request.log_dir, [r.pid for r in started])
        self._loop.add(started)
        base = os.path.dirname(os.path.dirname(request.log_dir))
        if base not in self._bases:
            self._bases.append(base)
        return request.app_id

    def _link_into_default_base(self, app_dir: str) -> None:
        """An app recorded under a custom ``log_dir`` gets a symlink in this scheduler's default log dir,
        so that other processes (CLI, a restarted kernel) that only know the default still find it."""
        default_session_dir = os.path.join(self._bases[0], self.session_name)
        if os.path.dirname(app_dir) == default_session_dir:
            return
        try:
            os.makedirs(default_session_dir, exist_ok=True)
            os.symlink(app_dir, os.path.join(default_session_dir, os.path.basename(app_dir)))
        except OSError:
            pass  # discoverability is a convenience; the app itself is fine

    def _check_entrypoints(self, request: PopenRequest) -> None:
        for role_name, params in request.role_params.items():
            param = params[0]
            exe = param.args[0]
            path = param.env.get("PATH")
            if "/" in exe:
                full = exe if os.path.isabs(exe) else os.path.join(param.cwd or os.getcwd(), exe)
                ok = os.path.isfile(full) and os.access(full, os.X_OK)
            else:
                ok = shutil.which(exe, path=path) is not None
            if not ok:
                raise InvalidAppError(
                    f"role {role_name!r}.entrypoint",
                    f"{exe!r} is not an executable file" + ("" if "/" in exe else " on PATH"),
                    "Install it, fix the name, or give its absolute path (use 'sh' with '-c' for shell syntax)",
                )

    def _make_dirs(self, request: PopenRequest) -> None:
        try:
            for dirs in request.role_log_dirs.values():
                for d in dirs:
                    os.makedirs(d)
        except OSError as e:
            shutil.rmtree(request.log_dir, ignore_errors=True)
            raise ValueError(
                f"log_dir: cannot create {request.log_dir!r} ({e.strerror})."
                " Set --cfg log_dir=<a writable directory>."
            ) from e

    def _spawn(self, param: ReplicaParam, rep_record: ReplicaRecord, local_app: _LocalApp) -> Replica:
        env = dict(os.environ)
        env.update(param.env)
        if local_app.record.outlive_owner:
            return self._spawn_detached(param, env, rep_record, local_app)
        sinks = [_Sink(p) for p in (param.stdout, param.stderr, param.combined) if p]
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            proc = subprocess.Popen(
                param.args,
                env=env,
                cwd=param.cwd,
                stdin=subprocess.DEVNULL,
                stdout=out_w,
                stderr=err_w,
                start_new_session=True,
            )
        except BaseException:
            for fd in (out_r, err_r):
                os.close(fd)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        rep_record.pid = proc.pid
        rep_record.started = time.time()
        return Replica(
            proc=proc,
            out_fd=out_r,
            err_fd=err_r,
            stdout=sinks[0],
            stderr=sinks[1],
            combined=sinks[2],
            on_done=lambda rep: self._on_replica_done(local_app, rep_record, rep),
        )

    def _spawn_detached(
        self, param: ReplicaParam, env: Dict[str, str], rep_record: ReplicaRecord, local_app: _LocalApp
    ) -> Replica:
        """``outlive_owner``: the replica writes straight to its log files (no pipe to this process, so it
        survives it) under a wrapper that records its exit code (see ``local_detached``)."""
        replica_dir = os.path.dirname(param.stdout or "")
        exit_file = os.path.join(replica_dir, EXIT_CODE_FILE)
        with open(param.stdout or os.devnull, "ab") as out, open(param.stderr or os.devnull, "ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "jupyter_sched.schedulers.local_detached", exit_file, *param.args],
                env=env,
                cwd=param.cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        rep_record.pid = proc.pid
        rep_record.started = time.time()
        sinks = [_Sink(p) for p in (param.stdout, param.stderr, param.combined) if p]
        return Replica(
            proc=proc,
            out_fd=-1,
            err_fd=-1,
            stdout=sinks[0],
            stderr=sinks[1],
            combined=sinks[2],
            on_done=lambda rep: self._on_replica_done(local_app, rep_record, rep),
        )

    def _rollback(self, started: List[Replica], request: PopenRequest) -> None:
        for rep in started:
            _killpg(rep.pid, signal.SIGKILL)
        for rep in started:
            rep.proc.wait()
            for fd in (rep.out_fd, rep.err_fd):
                if fd >= 0:
                    os.close(fd)
            for sink in (rep.stdout, rep.stderr, rep.combined):
                sink.close()
        shutil.rmtree(request.log_dir, ignore_errors=True)

    def _on_replica_done(self, local_app: _LocalApp, rep_record: ReplicaRecord, rep: Replica) -> None:
        """Loop thread: the replica exited and its output is fully written."""
        record = local_app.record
        rep_record.exit_code = rep.exit_code
        rep_record.finished = time.time()
        if not record.cancelled and os.path.exists(os.path.join(record.app_dir, CANCEL_MARKER)):
            record.cancelled = True
        try:
            record.save()
        except OSError:
            pass
        if not record.outlive_owner:
            ReaperClient.forget([rep.pid])

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
        app = self._apps.get(app_id)
        if app is not None:
            return app.record
        for base in self._bases:
            record = load_record(os.path.join(base, self.session_name, app_id))
            if record is not None:
                if not record.cancelled and os.path.exists(os.path.join(record.app_dir, CANCEL_MARKER)):
                    record.cancelled = True
                return record
        return None

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        record = self._record(app_id)
        if record is None:
            return None
        roles_statuses: Dict[str, RoleStatus] = {}
        for rep in record.replicas:
            status = roles_statuses.setdefault(rep.role, RoleStatus(rep.role, []))
            status.replicas.append(
                ReplicaStatus(
                    id=rep.replica_id,
                    state=rep.state(record.cancelled),
                    role=rep.role,
                    hostname="localhost",
                    structured_error_msg=_read_error(rep.error_file),
                    exit_code=rep.exit_code,
                    pid=rep.pid,
                    started=rep.started,
                    finished=rep.finished,
                )
            )
        errors = [r.structured_error_msg for rs in roles_statuses.values() for r in rs.replicas]
        errors = [e for e in errors if e != NONE]
        return DescribeAppResponse(
            app_id=app_id,
            state=record.state(),
            num_restarts=0,
            msg=record.msg or NONE,
            structured_error_msg=errors[0] if errors else NONE,
            ui_url=f"file://{record.app_dir}",
            roles_statuses=list(roles_statuses.values()),
            roles=[
                Role(
                    name=r["name"],
                    image=r.get("image", ""),
                    entrypoint=r.get("entrypoint", ""),
                    args=list(r.get("args", [])),
                    num_replicas=r.get("num_replicas", 1),
                )
                for r in record.roles
            ],
        )

    def list(self) -> List[ListAppResponse]:
        """Apps of this session: those started here and those recorded on disk by other processes."""
        seen: Dict[str, ListAppResponse] = {}
        for app_id, app in list(self._apps.items()):
            seen[app_id] = ListAppResponse(app_id=app_id, state=app.record.state(), name=app.record.name)
        for base in self._bases:
            session_dir = os.path.join(base, self.session_name)
            try:
                entries = os.listdir(session_dir)
            except OSError:
                continue
            for app_id in entries:
                if app_id in seen or not os.path.exists(os.path.join(session_dir, app_id, STATE_FILE)):
                    continue
                record = self._record(app_id)
                if record is not None:
                    seen[app_id] = ListAppResponse(app_id=app_id, state=record.state(), name=record.name)
        return sorted(seen.values(), key=lambda r: r.app_id)

    # -- cancel / close -----------------------------------------------------------------------------------------
    def _cancel_existing(self, app_id: str) -> None:
        """SIGTERM to every running replica's process group now, SIGKILL after ``cancel_grace``; returns
        at once. The app ends CANCELLED."""
        app = self._apps.get(app_id)
        if app is not None:
            self._cancel_owned(app)
            return
        record = self._record(app_id)
        if record is None or record.done:
            return
        open(os.path.join(record.app_dir, CANCEL_MARKER), "w").close()
        pids = [r.pid for r in record.replicas if not r.done and r.pid]
        for pid in pids:
            _killpg(pid, signal.SIGTERM)
        timer = threading.Timer(10.0, lambda: [_killpg(p, signal.SIGKILL) for p in pids])
        timer.daemon = True
        timer.start()

    def _cancel_owned(self, app: _LocalApp, grace: Optional[float] = None) -> None:
        record = app.record
        if record.done:
            return
        if not record.cancelled:
            record.cancelled = True
            try:
                open(os.path.join(record.app_dir, CANCEL_MARKER), "w").close()
                record.save()
            except OSError:
                pass
        for rep in app.replicas:
            if rep.exited_at is None:
                _killpg(rep.pid, signal.SIGTERM)
        delay = _grace_of(app) if grace is None else grace
        self._loop.call_later(delay, lambda: self._kill_survivors(app))

    def _kill_survivors(self, app: _LocalApp) -> None:
        for rep in app.replicas:
            if rep.exited_at is None:  # not reaped: its pid is still its group's id
                _killpg(rep.pid, signal.SIGKILL)

    def close(self) -> None:
        """Stops this scheduler's running apps (SIGTERM, then SIGKILL after at most 2 s) and its IO thread.
        Idempotent; never raises. Log files are kept."""
        if self._closed:
            return
        self._closed = True
        try:
            running = [a for a in self._apps.values() if not a.record.done and not a.record.outlive_owner]
            for app in running:
                self._cancel_owned(app, grace=min(2.0, _grace_of(app)))
            deadline = time.monotonic() + 5.0
            for app in running:
                for rep in app.replicas:
                    while not rep.finished and time.monotonic() < deadline:
                        with self._loop.changed:
                            if not rep.finished:
                                self._loop.changed.wait(0.05)
            self._loop.stop()
        except Exception:  # noqa: BLE001 - close must never raise
            pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
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
        stream = stream_arg(streams)
        record = self._record(app_id)
        if record is None:
            raise UnknownAppException(app_id)
        rep = record.replica(role_name, k)
        if rep is None:
            roles = sorted({r.role for r in record.replicas})
            if role_name not in roles:
                raise ValueError(f"app {app_id} has no role {role_name!r}; its roles are: {', '.join(roles)}")
            count = sum(1 for r in record.replicas if r.role == role_name)
            raise ValueError(f"role {role_name!r} of app {app_id} has replicas 0..{count - 1}, not {k}")
        path = {Stream.STDOUT: rep.stdout, Stream.STDERR: rep.stderr, Stream.COMBINED: rep.combined}[stream]
        if record.outlive_owner and (since or until):
            raise ValueError(
                "since/until are not available for apps started with outlive_owner=true (their output"
                " is not timestamped); read the whole log and filter it instead"
            )
        if record.outlive_owner and stream is Stream.COMBINED:
            path = rep.stdout  # detached replicas write their streams straight to files
        return LogIterator(app_id, regex, path, self, should_tail, role_name, k, since, until)

    def wait_for_change(self, app_id: str, timeout: float) -> None:
        """Wakes as soon as a replica of this process ends (or prints); polls the state file briefly for
        apps owned by another process."""
        if app_id in self._apps:
            with self._loop.changed:
                self._loop.changed.wait(timeout)
        else:
            time.sleep(min(timeout, 0.02))

    def _replica_finished(self, app_id: str, role_name: str, k: int) -> bool:
        record = self._record(app_id)
        rep = record.replica(role_name, k) if record else None
        return rep is None or rep.done

    def _log_version(self) -> int:
        return self._loop.version

    def _wait_log_change(self, version: int, idle: int = 0, app_id: Optional[str] = None) -> None:
        """Blocks until new output or a replica end in this process (woken at once), or, for apps of
        another process, for a poll interval that grows from 5 ms to 100 ms while the log stays idle."""
        with self._loop.changed:
            if self._loop.version == version:
                owned = app_id is not None and app_id in self._apps
                self._loop.changed.wait(0.25 if owned else min(0.005 * 1.5**idle, 0.1))

    def _wake_log_followers(self) -> None:
        with self._loop.changed:
            self._loop.version += 1
            self._loop.changed.notify_all()


def _grace_of(app: _LocalApp) -> float:
    return app.record.cancel_grace


def _role_summary(role: Role) -> Dict[str, Any]:
    return {
        "name": role.name,
        "image": role.image,
        "entrypoint": role.entrypoint,
        "args": list(role.args),
        "num_replicas": role.num_replicas,
    }


def _read_error(path: str) -> str:
    if not path:
        return NONE
    try:
        with open(path) as f:
            return f.read() or NONE
    except OSError:
        return NONE


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _assign_gpus(app: AppDef, role_params: Dict[str, List[ReplicaParam]]) -> None:
    """Gives each replica of a GPU role its own consecutive block of devices, if there are enough."""
    wanted = sum(r.num_replicas * max(r.resource.gpu, 0) for r in app.roles)
    available = _gpu_count()
    if wanted == 0:
        return
    if available < wanted:
        import warnings

        warnings.warn(
            f"auto_set_cuda_visible_devices: {wanted} GPUs requested but {available} found;"
            " CUDA_VISIBLE_DEVICES was not set",
            stacklevel=3,
        )
        return
    nxt = 0
    for role in app.roles:
        if role.resource.gpu <= 0:
            continue
        for param in role_params[role.name]:
            ids = range(nxt, nxt + role.resource.gpu)
            param.env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in ids)
            nxt += role.resource.gpu


def _gpu_count() -> int:
    """GPUs listed by ``nvidia-smi -L``; 0 when it is missing or fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return 0
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.strip().startswith("GPU"))


_OWN_START = process_start_time(os.getpid())


class _SignalCleanup:
    """Ends every live local scheduler's replicas on SIGTERM (always) and SIGINT (outside IPython), then
    chains to the handler that was installed before. Installed once, from the main thread only."""

    _schedulers: "weakref.WeakSet[LocalScheduler]" = weakref.WeakSet()
    _installed = False
    _previous: Dict[int, Any] = {}

    @classmethod
    def register(cls, scheduler: LocalScheduler) -> None:
        cls._schedulers.add(scheduler)
        if cls._installed or threading.current_thread() is not threading.main_thread():
            return
        cls._installed = True
        sigs = [signal.SIGTERM]
        if not _in_ipython():
            sigs.append(signal.SIGINT)
        for sig in sigs:
            cls._previous[sig] = signal.getsignal(sig)
            signal.signal(sig, cls._handle)

    @classmethod
    def _handle(cls, signum: int, frame: Any) -> None:
        for scheduler in list(cls._schedulers):
            for app in list(scheduler._apps.values()):
                if not app.record.outlive_owner:
                    scheduler._cancel_owned(app, grace=2.0)
        previous = cls._previous.get(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            raise SignalException(f"Process {os.getpid()} got signal: {signum}", signal.Signals(signum))


def _in_ipython() -> bool:
    import sys

    ipython = sys.modules.get("IPython")
    return bool(ipython and getattr(ipython, "get_ipython", lambda: None)())


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

"""A function call as an app: the AppDef, its job directory, the dry run, and the launch.

Each replica runs ``PYTHON bootstrap.py JOB_DIR`` (see :mod:`.bootstrap`), with ``dist.spmd``'s replica
identity in its env. Where the replicas run is read from the scheduler's own dry run (its neutral view),
not from its name: replicas in a container image run the image's ``python3`` with the job directory
bind-mounted at the same path (and the image is checked, :mod:`.images`); replicas without an image (this
machine, or cluster nodes sharing its filesystem) run this interpreter, ``sys.executable``. The job
directory is under the scheduler's shared root (``Runner.shared_root``: this machine's state directory, or
a cluster's shared ``job_dir``). Nothing is written before :func:`launch`: a dry run only
pickles in memory.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from jupyter_sched.components.dist import free_port
from jupyter_sched.functions import incomplete
from jupyter_sched.functions.calls import images
from jupyter_sched.functions.calls.pack import pack
from jupyter_sched.functions.results import BOOTSTRAP_FILE, CALL_FILE, META_FILE
from jupyter_sched.schedulers.common.private_files import DIR_MODE, make_private_dirs, write_private
from jupyter_sched.schedulers.warm_start import WARM_START
from jupyter_sched.specs import (
    AppDef,
    AppDryRunInfo,
    BindMount,
    Mount,
    Resource,
    Role,
    get_named_resources,
    macros,
    random_id,
)

FN_DIR_ENV = "JUPYTER_SCHED_FN_DIR"
CONTAINER_PYTHON = "python3"
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""This jupyter_sched package's directory, which a notebook job mounts into its containers (below)."""
CONTAINER_PACKAGE_ROOT = "/opt/jupyter_sched_host"
"""Where a notebook job's container finds this jupyter_sched (read-only, first on ``PYTHONPATH``): the call
is the package's notebook run and the notebook's kernel imports ``jupyter_sched.record``, so the replica
runs the very code that pickled the call, not a copy an image was built with."""
PRELOAD = ("cloudpickle", "traceback", "linecache", "zlib")
"""What the bootstrap imports (on its error path too): a warm interpreter on the local backend has these
and the bootstrap itself loaded before it forks a replica (see ``schedulers/local/warm_starts/zygote.py``)."""


@dataclass
class FunctionRequest:
    """What :func:`launch` would run: the scheduler's dry run plus the function's facts."""

    info: AppDryRunInfo
    job_dir: str
    payload: bytes
    fn_name: str
    source: str
    python: str
    image: Optional[str]
    scheduler: str
    num_replicas: int
    meta: Dict[str, Any] = field(default_factory=dict)

    @property
    def start(self) -> str:
        """How each replica's process starts, where the scheduler says (local: forked warm or exec'd)."""
        view = self.info.view()
        return next((text for name, text in (view.notes if view else []) if name.endswith("replicas start")), "")

    def summary(self) -> Dict[str, str]:
        """The facts a dry run shows, in order."""
        return {
            "function": self.fn_name,
            "defined at": self.source,
            "pickled size": f"{len(self.payload):,} bytes",
            "interpreter": self.python,
            **({"replicas start": self.start} if self.start else {}),
            "image": self.image or "(none: runs on the host's filesystem)",
            "replicas": str(self.num_replicas),
            "job directory": self.job_dir,
        }

    def __repr__(self) -> str:
        facts = "\n".join(f"  {k}: {v}" for k, v in self.summary().items())
        return f"function job on {self.scheduler}:\n{facts}\n{self.info!r}"


def prepare(
    runner: Any,
    fn: Any,
    args: Tuple[Any, ...] = (),
    kwargs: Optional[Mapping[str, Any]] = None,
    *,
    scheduler: str = "local_cwd",
    num_replicas: int = 1,
    cfg: Optional[Mapping[str, Any]] = None,
    resource: Union[Resource, str, None] = None,
    image: Optional[str] = None,
    name: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    meta: Optional[Mapping[str, Any]] = None,
) -> FunctionRequest:
    """Pickles the call and dry-runs its app; raises before anything runs if the call cannot be sent,
    the image cannot read it, or the scheduler refuses the app. A runnable with a
    ``__jupyter_sched_call__(args, kwargs)`` method (a ``jupyter_sched.Notebook``) is asked for the call to
    pickle instead, with facts for the meta file (``source``, ``output``...): it may refuse the arguments."""
    if not isinstance(num_replicas, int) or num_replicas < 1:
        raise ValueError(f"num_replicas must be an integer of 1 or more (got {num_replicas!r})")
    source = ""
    # looked up on the type, as Python looks up special methods: an object whose __getattr__ answers every
    # name (a proxy) is not taken for a runnable
    as_call = getattr(type(fn), "__jupyter_sched_call__", None)
    if as_call is not None:  # a runnable that is not itself the call (a Notebook): checked and snapshotted now
        fn, args, kwargs, extra = as_call(fn, tuple(args), dict(kwargs or {}))
        source = str(extra.get("source") or "")
        meta = {**extra, **dict(meta or {})}
    payload = pack(fn, tuple(args), dict(kwargs or {}))
    return prepare_call(
        runner, payload, fn_name=qualified_name(fn), source=source or source_of(fn),
        name=name or getattr(fn, "__name__", "") or type(fn).__name__, scheduler=scheduler,
        num_replicas=num_replicas, cfg=cfg, resource=resource, image=image, env=env, meta=meta,
    )  # fmt: skip


def prepare_call(
    runner: Any,
    payload: bytes,
    *,
    fn_name: str,
    source: str,
    name: str,
    scheduler: str = "local_cwd",
    num_replicas: int = 1,
    cfg: Optional[Mapping[str, Any]] = None,
    resource: Union[Resource, str, None] = None,
    image: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    meta: Optional[Mapping[str, Any]] = None,
) -> FunctionRequest:
    """:func:`prepare` of a call already pickled (``payload``, as :func:`.pack.pack` makes it): a new job
    directory and app for the same call, e.g. to retry it. ``fn_name`` and ``source`` describe it."""
    if not isinstance(num_replicas, int) or num_replicas < 1:
        raise ValueError(f"num_replicas must be an integer of 1 or more (got {num_replicas!r})")
    app_name = clean_name(name)
    # a sweep's run is an app of its own (<sweep>-NNN), but what its replicas run is the function: its role is
    # named after that, so each log line's gutter is `train/0`, not the run's whole name again
    role_name = clean_name(short_name(fn_name)) if meta and "sweep" in meta else app_name
    job_dir = os.path.join(job_root(runner, scheduler, cfg), f"{app_name}-{random_id()}")
    res = get_named_resources(resource) if isinstance(resource, str) else resource

    notebook = bool(meta and meta.get("notebook"))  # a notebook job: its containers need this package

    def app(python: str, mount: bool = False) -> AppDef:
        return function_app(
            app_name=app_name, job_dir=job_dir, python=python, num_replicas=num_replicas, image=image or "",
            resource=res, env=env, mount=mount, role_name=role_name, package=mount and notebook,
        )  # fmt: skip

    info = runner.dryrun(app(sys.executable), scheduler, cfg)
    view = info.view()
    plans = view.replicas if view is not None else []
    python, container_image = sys.executable, None
    if any(p.image is not None for p in plans):  # a container backend: the image's python, the job dir mounted
        if not image:
            here = images.local_versions()
            raise ValueError(
                f"image: {scheduler} runs each replica in a container image; pass image=... with Python"
                f" {images.minor(here[0])} and cloudpickle {images.major(here[1])}.x (jupyter-sched/python:local,"
                " built by scripts/setup/images.sh, has both)"
            )
        python = CONTAINER_PYTHON
        info = runner.dryrun(app(python, mount=True), scheduler, cfg)
        view = info.view()
        container_image = next((p.image for p in (view.replicas if view else []) if p.image), None)
        if container_image:
            versions = images.image_versions(container_image)
            if versions is not None:
                images.check_compatible(container_image, versions)
            if notebook:
                images.check_notebook_image(container_image)
    return FunctionRequest(
        info=info, job_dir=job_dir, payload=payload, fn_name=fn_name, source=source,
        python=python, image=container_image, scheduler=scheduler, num_replicas=num_replicas,
        meta={"function": fn_name, "source": source, **dict(meta or {})},
    )  # fmt: skip


def function_app(
    *,
    app_name: str,
    job_dir: str,
    python: str,
    num_replicas: int,
    image: str,
    resource: Optional[Resource],
    env: Optional[Mapping[str, str]],
    mount: bool = False,
    role_name: str = "",
    package: bool = False,
) -> AppDef:
    """The function job's app: each replica runs the bootstrap with the job directory (mounted at the same
    path with ``mount``, for a container); ``package`` also mounts this jupyter_sched read-only at
    :data:`CONTAINER_PACKAGE_ROOT` and puts it on ``PYTHONPATH`` (a notebook job in a container)."""
    role_env = {
        "RANK": macros.replica_id,
        "GROUP_RANK": macros.replica_id,
        "WORLD_SIZE": str(num_replicas),
        "LOCAL_RANK": "0",
        "LOCAL_WORLD_SIZE": "1",
        "MASTER_PORT": str(free_port()),
        "PYTHONUNBUFFERED": "1",
        "JUPYTER_SCHED_RANK0_ENV": macros.rank0_env,
        FN_DIR_ENV: job_dir,
        **({"PYTHONPATH": CONTAINER_PACKAGE_ROOT} if package else {}),
        **dict(env or {}),
    }
    mounts: List[Mount] = [BindMount(job_dir, job_dir)] if mount else []
    if package:
        mounts.append(BindMount(PACKAGE_DIR, f"{CONTAINER_PACKAGE_ROOT}/jupyter_sched", read_only=True))
    role = Role(
        name=role_name or app_name, image=image, entrypoint=python,
        args=[os.path.join(job_dir, BOOTSTRAP_FILE), job_dir], env=role_env, num_replicas=num_replicas,
        mounts=mounts, metadata={WARM_START: [*PRELOAD, bootstrap_source()]},
    )  # fmt: skip
    if resource is not None:
        role.resource = resource
    return AppDef(name=app_name, roles=[role])


def launch(runner: Any, request: FunctionRequest) -> str:
    """Writes the job directory (the pickled call, the bootstrap, a meta file) and schedules the app;
    returns its handle. If scheduling fails, the directory is removed again. Like logs, everything is
    private to its owner (0700 directories, parents created here included; 0600 files): the call holds
    the function's arguments. Until ``meta.json`` records the app the directory is marked incomplete, so
    if this process is killed on the way, the next one to use the root removes it (:mod:`.incomplete`,
    which runs here first for what earlier submits left)."""
    root = os.path.dirname(request.job_dir)
    make_private_dirs(root)
    incomplete.sweep(root)
    incomplete.begin(request.job_dir)
    try:
        os.mkdir(request.job_dir, DIR_MODE)
        write_private(os.path.join(request.job_dir, CALL_FILE), request.payload)
        with open(bootstrap_source(), "rb") as f:
            write_private(os.path.join(request.job_dir, BOOTSTRAP_FILE), f.read())
        handle = runner.schedule(request.info)
    except BaseException:
        shutil.rmtree(request.job_dir, ignore_errors=True)
        incomplete.done(request.job_dir)
        raise
    write_meta(request.job_dir, {**request.meta, "handle": handle, "submitted": time.time(),
                                 "num_replicas": request.num_replicas, "role": role_name(request)})  # fmt: skip
    incomplete.done(request.job_dir)
    return handle


def write_meta(job_dir: str, meta: Mapping[str, Any]) -> None:
    write_private(os.path.join(job_dir, META_FILE), json.dumps(dict(meta), default=repr))


def read_meta(job_dir: str) -> Dict[str, Any]:
    try:
        with open(os.path.join(job_dir, META_FILE)) as f:
            return dict(json.load(f))
    except (OSError, ValueError):
        return {}


def recorded_job_dir(runner: Any, handle: str) -> Optional[str]:
    """The job directory the app ``handle`` was launched with (its replicas' ``bootstrap.py JOB_DIR``
    arguments), if the scheduler still describes it: found wherever ``log_dir`` or ``job_dir`` put it."""
    try:
        app = runner.describe(handle)
    except Exception:  # noqa: BLE001 - the scheduler cannot say: the caller looks under the default root
        return None
    for role in app.roles if app is not None else []:
        args = [str(a) for a in role.args or []]
        if len(args) >= 2 and args[0] == os.path.join(args[1], BOOTSTRAP_FILE):
            return args[1]
    return None


def role_name(request: FunctionRequest) -> str:
    app = request.info.app
    return app.roles[0].name if app is not None and app.roles else ""


def bootstrap_source() -> str:
    from jupyter_sched.functions import bootstrap

    return str(bootstrap.__file__)


def job_root(runner: Any, scheduler: str, cfg: Optional[Mapping[str, Any]]) -> str:
    """Where the session's function jobs keep their directories on ``scheduler``: under the scheduler's
    shared root for ``cfg`` (Slurm's ``job_dir``; the local backends' ``log_dir``, so a function job's files
    sit beside its logs), its default when ``cfg`` does not name it."""
    session = runner.session_name or "default"
    base = runner.shared_root(scheduler, cfg)
    return os.path.join(os.path.abspath(os.path.expanduser(base)), session, "functions")


def clean_name(text: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in text.replace("<lambda>", "lambda"))
    cleaned = cleaned.strip("_-").lower()
    return cleaned[:40] or "fn"


def short_name(fn_name: str) -> str:
    """A call's name as a role's: ``train`` for ``Trainer.train`` or ``make.<locals>.train``, ``sweep_nb`` for
    a notebook's call (named by its file, ``sweep_nb.ipynb``)."""
    if fn_name.endswith(".ipynb"):
        return fn_name[: -len(".ipynb")].rsplit("/", 1)[-1]
    return fn_name.rsplit(".", 1)[-1]


def qualified_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__qualname__


def source_of(fn: Any) -> str:
    """``file:line`` where ``fn`` is defined (a notebook cell's file in a kernel), or ``unknown``."""
    target = fn if inspect.isfunction(fn) or inspect.isclass(fn) else getattr(fn, "__func__", type(fn))
    try:
        path = inspect.getsourcefile(target) or inspect.getfile(target)
        _, line = inspect.getsourcelines(target)
        return f"{path}:{line}"
    except (TypeError, OSError):
        code = getattr(target, "__code__", None)
        return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "unknown"

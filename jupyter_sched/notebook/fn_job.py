"""``jupyter_sched.submit(fn, *args, **kwargs)``: a notebook function as an app, returned as a Job.

The Job is the one ``%sched_run`` returns (same live view, ``wait``, ``logs``, ``cancel``), with the
function's values: :meth:`FunctionJob.result` is rank 0's return value and :meth:`FunctionJob.results`
one per replica; a function that raised re-raises here as
:class:`~jupyter_sched.functions.FunctionError` with the remote traceback and the replica, also from
``%sched_run --wait`` (through :meth:`FunctionJob.failure`). In a kernel with the extension loaded (it is
loaded on first use) the launch is recorded in the notebook's session like any other, so ``%sched_list``
and ``%sched_job`` find it; in plain Python the session's shared runner is used.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Mapping, Optional, Tuple, Union

from jupyter_sched.functions import (
    FunctionRequest,
    MissingResultError,
    Outcome,
    ResultError,
    launch,
    prepare,
    read_outcome,
)
from jupyter_sched.notebook.job import Job
from jupyter_sched.specs import AppState, AppStatus, Resource


class FunctionJob(Job):
    """A Job whose replicas call a pickled function; its values come back with :meth:`result`."""

    def __init__(self, handle: str, runner: Any, job_dir: str, num_replicas: int, role: str, **kwargs: Any) -> None:
        super().__init__(handle, runner, **kwargs)
        self.job_dir = job_dir
        self.num_replicas = num_replicas
        self.role = role

    def outcome(self, rank: int) -> Optional[Outcome]:
        """What replica ``rank`` returned or raised, or None if it has written nothing (yet). Raises
        ResultError (naming this app, the replica, the file and why) if its result cannot be read."""
        return read_outcome(self.job_dir, rank, self.handle, self.role)

    def failure(self, status: Optional[AppStatus]) -> Optional[Exception]:  # type: ignore[override]
        """The first replica's FunctionError if the function raised (rank order), or its ResultError if
        its result could not be written or read; else as for any Job."""
        if status is not None and status.is_terminal():
            for rank in range(self.num_replicas):
                try:
                    got = self.outcome(rank)
                except ResultError as e:
                    return e
                if got is not None and not got.ok:
                    return got.error(self.handle, self.role)
        return super().failure(status)

    def _values(self, ranks: List[int], timeout: Optional[float]) -> List[Any]:
        status = Job.result(self, timeout)  # the wait, the timeout and the failure (this class's) as a Job's
        values = []
        for rank in ranks:
            got = self.outcome(rank)
            if got is None:
                raise MissingResultError(
                    f"replica {self.role}/{rank} of {self.handle} ended {status.state}"
                    f" without writing a result to {self.job_dir}; see its logs: %sched_logs {self.handle}"
                )
            values.append(got.value)
        return values

    def result(self, timeout: Optional[float] = None) -> Any:
        """Waits for the app and returns rank 0's return value. Raises FunctionError if a replica's
        function raised, JobFailed if the app failed otherwise (killed, cancelled elsewhere), and
        TimeoutError if it is still running after ``timeout`` seconds."""
        return self._values([0], timeout)[0]

    def results(self, timeout: Optional[float] = None) -> List[Any]:
        """Every replica's return value, in rank order (raises as :meth:`result`)."""
        return self._values(list(range(self.num_replicas)), timeout)

    @property
    def succeeded(self) -> bool:
        return self.state == AppState.SUCCEEDED


def notebook_session() -> Any:
    """The extension's Session in a running IPython (loading the extension if needed), else None."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    if shell is None:
        return None
    from jupyter_sched.notebook.extension import load, loaded

    magics = loaded(shell) or load(shell)
    return magics.session


def runner_and_session() -> Tuple[Any, Any]:
    session = notebook_session()
    if session is not None:
        return session.runner, session
    from jupyter_sched.notebook.session import shared_runner
    from jupyter_sched.runner import DEFAULT_SESSION

    return shared_runner(DEFAULT_SESSION, ""), None


def start(request: FunctionRequest, runner: Any, session: Any) -> FunctionJob:
    """Launches a prepared request and returns its Job (recorded in the session, if any)."""
    handle = launch(runner, request)
    app = request.info.app
    role = app.roles[0].name if app is not None and app.roles else ""
    extra = (
        {"settings": session.settings, "interactive": session.interactive}
        if session is not None
        else {"interactive": lambda: False}
    )
    job = FunctionJob(handle, runner, request.job_dir, request.num_replicas, role, name=role or None, **extra)
    job.bound_to_kernel = getattr(request.info.request, "outlive_owner", None) is False
    if session is not None:
        session.jobs[handle] = job
        session.launched(handle, job.name)
    return job


def submit(
    fn: Any,
    *args: Any,
    scheduler: str = "local_cwd",
    num_replicas: int = 1,
    cfg: Optional[Mapping[str, Any]] = None,
    resource: Union[Resource, str, None] = None,
    image: Optional[str] = None,
    name: Optional[str] = None,
    **kwargs: Any,
) -> FunctionJob:
    """Runs ``fn(*args, **kwargs)`` in ``num_replicas`` replicas on ``scheduler``; returns its Job.

    ``fn`` may be anything defined in the notebook (a function, lambda, closure, class or callable
    object): it is pickled with cloudpickle into the app's job directory. Each replica has ``RANK``,
    ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` in its environment, as with ``dist.spmd``.
    ``job.result()`` is rank 0's return value, ``job.results()`` every replica's. Prints go to the logs.
    Raises before launching if something the call needs cannot be pickled (naming it), or if the
    image's Python or cloudpickle cannot read it (``local_docker``).
    """
    runner, session = runner_and_session()
    request = prepare(
        runner, fn, args, kwargs, scheduler=scheduler, num_replicas=num_replicas, cfg=cfg, resource=resource,
        image=image, name=name,
    )  # fmt: skip
    return start(request, runner, session)


def dryrun(
    fn: Any, *args: Any, scheduler: str = "local_cwd", num_replicas: int = 1, cfg: Optional[Mapping[str, Any]] = None,
    resource: Union[Resource, str, None] = None, image: Optional[str] = None, name: Optional[str] = None,
    **kwargs: Any,
) -> FunctionRequest:
    """What :func:`submit` would run (function, source, pickled size, interpreter, image, the
    scheduler's request); nothing runs and nothing is written."""
    runner, _ = runner_and_session()
    return prepare(runner, fn, args, kwargs, scheduler=scheduler, num_replicas=num_replicas, cfg=cfg,
                   resource=resource, image=image, name=name)  # fmt: skip


def attach(handle: str, cfg: Optional[Mapping[str, Any]] = None) -> FunctionJob:
    """The FunctionJob of a function app launched earlier (another kernel, before a restart): its
    ``result()`` reads what the replicas wrote. LookupError if no function job directory records it."""
    import glob
    import os

    from jupyter_sched.functions.launch import job_root, read_meta, recorded_job_dir
    from jupyter_sched.specs import parse_app_handle

    runner, session = runner_and_session()
    root = job_root(runner, parse_app_handle(handle).scheduler_backend, cfg)

    def candidates() -> Iterator[str]:  # the directory the app records, else every one under the root
        recorded = recorded_job_dir(runner, handle)
        if recorded:
            yield recorded
        yield from sorted(os.path.dirname(p) for p in glob.glob(os.path.join(root, "*", "meta.json")))

    for job_dir in candidates():
        meta = read_meta(job_dir)
        if meta.get("handle") == handle:
            extra = {"settings": session.settings, "interactive": session.interactive} if session is not None else {}
            job = FunctionJob(handle, runner, job_dir, int(meta.get("num_replicas", 1)), str(meta.get("role", "")),
                              **extra)  # fmt: skip
            if session is not None:
                session.jobs[handle] = job
            return job
    raise LookupError(
        f"no function job directory under {root} records {handle}; was it launched with jupyter_sched.submit?"
    )

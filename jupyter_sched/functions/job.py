"""``jupyter_sched.submit(fn, *args, **kwargs)``: a function as an app, returned as a Job.

The Job is the one ``%sched_run`` returns (``wait``, ``logs``, ``cancel``, and in a notebook the same live
view), with the function's values: :meth:`FunctionJob.result` is rank 0's return value and
:meth:`FunctionJob.results` one per replica; a function that raised re-raises here as
:class:`~jupyter_sched.functions.FunctionError` with the remote traceback and the replica, also from
``%sched_run --wait`` (through :meth:`FunctionJob.failure`).

A :class:`Launcher` binds the calls to a runner and to what its front end does with each launched job
(``on_launch``): the notebook records it in its session, so ``%sched_list`` and ``%sched_job`` find it. In a
plain process (no IPython needed) the session's shared runner is used and nothing else happens.
"""

from __future__ import annotations

import glob
import json
import os
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Union

from jupyter_sched.frontend.job import Job
from jupyter_sched.functions import incomplete
from jupyter_sched.functions.errors import MissingResultError, ResultError
from jupyter_sched.functions.launch import FunctionRequest, job_root, launch, prepare, read_meta, recorded_job_dir
from jupyter_sched.functions.results import Outcome, read_outcome
from jupyter_sched.runner import Runner
from jupyter_sched.specs import AppStatus, Resource, parse_app_handle
from jupyter_sched.specs.output.labels import app_label

OnLaunch = Callable[[Job], None]
"""What a front end does with a job it did not create itself (the notebook: record it in its session)."""


class FunctionJob(Job):
    """A Job whose replicas call a pickled function; its values come back with :meth:`result`."""

    def __init__(self, handle: str, runner: Any, job_dir: str, num_replicas: int, role: str, **kwargs: Any) -> None:
        super().__init__(handle, runner, **kwargs)
        self.job_dir = job_dir
        self.num_replicas = num_replicas
        self.role = role

    @property
    def output_path(self) -> Optional[str]:
        """A notebook job's output notebook (rank 0's, in its job directory; the partial one while it runs),
        None for a function job. See :mod:`jupyter_sched.functions.notebooks`."""
        name = read_meta(self.job_dir).get("output")
        return os.path.join(self.job_dir, str(name)) if name else None

    def notebook_progress(self) -> Optional[Dict[str, Any]]:
        """A notebook job's last progress record (``state``, ``cell`` of ``cells``, the cell's first
        ``line``, when it ``started``, ``error``), None before its first one or for a function job."""
        try:
            with open(os.path.join(self.job_dir, "progress.json")) as f:
                return dict(json.load(f))
        except (OSError, ValueError):
            return None

    def outcome(self, rank: int) -> Optional[Outcome]:
        """What replica ``rank`` returned or raised, or None if it has written nothing (yet). Raises
        ResultError (naming this app, the replica, the file and why) if its result cannot be read."""
        return read_outcome(self.job_dir, rank, self.handle, self.role)

    def failure(self, status: Optional[AppStatus]) -> Optional[Exception]:
        """The first replica's FunctionError if the function raised (rank order), or its ResultError if
        its result could not be written or read; else as for any Job."""
        if status is not None and status.is_terminal():
            for rank in range(self.num_replicas):
                try:
                    got = self.outcome(rank)
                except ResultError as e:
                    return e
                if got is not None and not got.ok:
                    return got.error(self.handle, self.role, self.job_dir, self.num_replicas)
        return super().failure(status)

    def exception(self, timeout: Optional[float] = None) -> Optional[Exception]:
        """Waits for the app and returns what :meth:`result` would raise, or None if it succeeded: the
        FunctionError of the first replica whose function raised (``.exception`` is the remote exception
        itself, ``.rerun_here()`` runs the call here), a ResultError, or JobFailed (killed, cancelled
        elsewhere). TimeoutError if it is still running after ``timeout`` seconds."""
        try:
            self._values([0], timeout)
        except TimeoutError:
            raise
        except Exception as e:  # noqa: BLE001 - this is the answer, not a failure of this method
            return e
        return None

    def _values(self, ranks: List[int], timeout: Optional[float]) -> List[Any]:
        status = Job.result(self, timeout)  # the wait, the timeout and the failure (this class's) as a Job's
        values = []
        for rank in ranks:
            got = self.outcome(rank)
            if got is None:
                raise MissingResultError(
                    f"replica {self.role}/{rank} of {app_label(self.handle)} ended {status.state}"
                    f" without writing a result to {self.job_dir}; see its logs: %sched_logs {self.app_id}"
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


def start(request: FunctionRequest, runner: Any, on_launch: Optional[OnLaunch] = None) -> FunctionJob:
    """Launches a prepared request and returns its Job (handed to ``on_launch``, if given)."""
    handle = launch(runner, request)
    app = request.info.app
    role = app.roles[0].name if app is not None and app.roles else ""
    # named as the app (a sweep's run: <sweep>-NNN; its role is the function's name)
    job = FunctionJob(handle, runner, request.job_dir, request.num_replicas, role, name=app.name if app else None)
    job.bound_to_kernel = getattr(request.info.request, "outlive_owner", None) is False
    if on_launch is not None:
        on_launch(job)
    return job


class Launcher:
    """``submit`` and ``attach`` on ``runner``, each launched job handed to ``on_launch`` (sweeps launch
    through one too: :mod:`jupyter_sched.functions.sweeps.sweep`). The root ``jupyter_sched.submit`` picks the
    notebook's launcher in a kernel, else one on the default session's shared runner."""

    def __init__(self, runner: Runner, on_launch: Optional[OnLaunch] = None, adopt: Optional[OnLaunch] = None):
        self.runner = runner
        self.on_launch = on_launch
        #: What the front end does with a job found again (``attach``): the notebook knows it from then on.
        self.adopt = adopt

    def submit(
        self,
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
        image's Python or cloudpickle cannot read it (``local_docker``). The keywords above are
        ``submit``'s; every other keyword goes to ``fn``.
        """
        request = prepare(
            self.runner, fn, args, kwargs, scheduler=scheduler, num_replicas=num_replicas, cfg=cfg,
            resource=resource, image=image, name=name,
        )  # fmt: skip
        return start(request, self.runner, self.on_launch)

    def attach(self, handle: str, cfg: Optional[Mapping[str, Any]] = None) -> FunctionJob:
        """The FunctionJob of a function app launched earlier (another kernel, before a restart): its
        ``result()`` reads what the replicas wrote. LookupError if no function job directory records it."""
        root = job_root(self.runner, parse_app_handle(handle).scheduler_backend, cfg)
        incomplete.sweep(root)  # what submits killed on the way left there (a recorded job is never removed)

        def candidates() -> Iterator[str]:  # the directory the app records, else every one under the root
            recorded = recorded_job_dir(self.runner, handle)
            if recorded:
                yield recorded
            yield from sorted(os.path.dirname(p) for p in glob.glob(os.path.join(root, "*", "meta.json")))

        for job_dir in candidates():
            meta = read_meta(job_dir)
            if meta.get("handle") == handle:
                job = FunctionJob(handle, self.runner, job_dir, int(meta.get("num_replicas", 1)),
                                  str(meta.get("role", "")))  # fmt: skip
                if self.adopt is not None:
                    self.adopt(job)
                return job
        raise LookupError(
            f"no function job directory under {root} records {handle}; was it launched with jupyter_sched.submit?"
        )

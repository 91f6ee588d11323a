"""Function jobs as futures: :func:`as_completed` over jobs or a sweep, and the items of ``map``.

``as_completed`` yields each job as it ends, in the order they end, as ``concurrent.futures`` and dask
do. Over plain jobs it waits the way a sweep's feeder does: on the scheduler, for the oldest job still
running, in short slices (:data:`SLICE`) so the others are seen too; the local backend wakes that wait
the moment the app ends, Docker at the engine's event, other backends poll. Over a sweep it waits on the
sweep's own change notices (its feeder already watches the runs), so runs launched later, and runs
retried while it iterates, are yielded when they end. Runs that never started (cancelled while queued)
have no job and are not yielded: ``sweep.runs`` lists them. Over a chunked map it yields each item (a
future of its own, :class:`jupyter_sched.functions.sweeps.maps.Item`) as its chunk reports it done.
"""

from __future__ import annotations

import inspect
import threading
import time
from typing import Any, Iterable, Iterator, List, Optional, Set, Tuple

#: Seconds one wait on the oldest running job lasts before every job is looked at again.
SLICE = 0.05


def as_completed(jobs_or_sweep: Any, timeout: Optional[float] = None) -> Iterator[Any]:
    """Yields the jobs of ``jobs_or_sweep`` (an iterable of Jobs, or a Sweep) as they end (succeeded,
    failed or cancelled: ``job.exception()`` tells which). ``TimeoutError`` if some have not ended
    ``timeout`` seconds after the first ``next()``."""
    if hasattr(jobs_or_sweep, "completed_since"):  # a chunked map (:mod:`.maps`): its items, one by one
        return iter(jobs_or_sweep.as_completed(timeout))
    deadline = None if timeout is None else time.monotonic() + timeout
    if hasattr(jobs_or_sweep, "runs") and hasattr(jobs_or_sweep, "on_change"):
        return _sweep_completed(jobs_or_sweep, deadline, timeout)
    jobs = list(jobs_or_sweep)
    for i, job in enumerate(jobs):
        if not (hasattr(job, "handle") and hasattr(job, "runner")):
            raise TypeError(f"as_completed: item {i} is a {type(job).__name__}, not a Job (or give a sweep)")
    return _jobs_completed(jobs, deadline, timeout)


def _jobs_completed(jobs: List[Any], deadline: Optional[float], timeout: Optional[float]) -> Iterator[Any]:
    pending: List[Any] = []
    for job in jobs:
        if all(job is not other for other in pending):
            pending.append(job)
    while pending:
        for job in list(pending):
            try:
                status = job.fetch_status()
            except Exception:  # noqa: BLE001 - a scheduler hiccup: ask again next time round
                continue
            if status is None or status.is_terminal():
                pending.remove(job)
                yield job
        if not pending:
            return
        _check(deadline, timeout, len(pending))
        oldest = pending[0]
        step = SLICE if deadline is None else max(0.0, min(SLICE, deadline - time.monotonic()))
        try:
            oldest.runner.wait_for_change(oldest.handle, step)  # any pending job's end wakes it (local)
        except Exception:  # noqa: BLE001
            time.sleep(step)


def _sweep_completed(sweep: Any, deadline: Optional[float], timeout: Optional[float]) -> Iterator[Any]:
    changed = threading.Event()
    sweep.on_change(changed.set)
    seen: Set[Tuple[int, str]] = set()
    try:
        while True:
            changed.clear()
            finished = sweep.finished  # read before the runs: a run that ends after this is seen next time
            for run in list(sweep.runs):
                job = run.job
                if run.done and job is not None and (run.index, job.handle) not in seen:
                    seen.add((run.index, job.handle))
                    yield job
            if finished:
                return
            left = sum(1 for run in sweep.runs if not run.done)
            _check(deadline, timeout, left)
            changed.wait(0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic())))
    finally:
        sweep.off_change(changed.set)


def _check(deadline: Optional[float], timeout: Optional[float], left: int) -> None:
    if deadline is not None and time.monotonic() >= deadline:
        raise TimeoutError(f"as_completed: {left} job(s) still running after {timeout} s")


def map_values(fn: Any, items: Iterable[Any]) -> Tuple[str, List[Any]]:
    """For ``map(fn, items)``: the argument's name in the table (``fn``'s first parameter, else ``arg``)
    and the items as a list; an empty, string or non-iterable ``items`` is an error saying what to give."""
    if isinstance(items, (str, bytes)):
        raise TypeError(
            f"map: items is a {type(items).__name__}; give a list of values (a string would map its characters)"
        )
    try:
        values = list(items)
    except TypeError:
        raise TypeError(f"map: items must be iterable (a list, range, ...), not {type(items).__name__}") from None
    if not values:
        raise ValueError("map: items is empty: give at least one value")
    name = "arg"
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no signature (some builtins): the column is "arg"
        params = []
    if params and params[0].kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
        name = params[0].name
    return name, values

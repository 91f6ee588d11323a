"""``jupyter_sched.sweep(fn, grid, max_concurrent=N)``: one function job per grid point, N at a time.

Every point is pickled and dry-run before the first launch, so a bad grid, an unpicklable argument or a
refused app stops the sweep before anything runs (all or none). Runs beyond ``max_concurrent`` wait in
the kernel: a feeder thread launches the next one as soon as the scheduler reports a running one ended
(it waits on the scheduler, woken by the local backend's events, else polling briefly). Each run is an
ordinary app of the session named ``<sweep>-<index>``, so ``%sched_list`` shows a sweep's runs together,
and a manifest (``sweeps/<sweep>.json`` next to the function job directories) lists their handles and
job directories: :func:`load_sweep` rebuilds a sweep's finished runs, with their results, after a
kernel restart (runs that were still queued in the old kernel never started, and say so).

The live view is :class:`~jupyter_sched.notebook.sweep_view.SweepView`; the record (static HTML and
text, replaced in place by the final table) follows :mod:`.record`'s protocol, as a Job's does.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

from jupyter_sched.functions import FunctionRequest, ResultError, prepare
from jupyter_sched.functions.grid import Grid, expand
from jupyter_sched.functions.launch import clean_name, read_meta
from jupyter_sched.functions.results import Outcome
from jupyter_sched.notebook.fn_job import FunctionJob, runner_and_session, start
from jupyter_sched.schedulers.private_files import make_private_dirs, write_private
from jupyter_sched.specs import AppState, random_id

QUEUED = "QUEUED"
#: Seconds the feeder waits on the oldest running app before it looks at all of them again.
FEED_SLICE = 0.05


@dataclass
class Run:
    """One point of the sweep: its parameters, its Job once launched, and how it ended."""

    index: int
    params: Dict[str, Any]
    request: Optional[FunctionRequest] = None
    job: Optional[FunctionJob] = None
    state: str = QUEUED
    launched: Optional[float] = None
    started: Optional[float] = None
    ended: Optional[float] = None
    outcome: Optional[Outcome] = None
    error: str = ""
    problem: Optional[Exception] = None  # why the result cannot be had (ResultError), raised by results()

    @property
    def handle(self) -> str:
        return self.job.handle if self.job is not None else ""

    @property
    def done(self) -> bool:
        return self.ended is not None


class Sweep:
    """The runs of one sweep. ``results()`` (grid order), ``wait()``, ``cancel()``; displays as a table."""

    def __init__(self, name: str, fn_name: str, runs: List[Run], max_concurrent: int, runner: Any, session: Any,
                 manifest: str) -> None:  # fmt: skip
        self.name = name
        self.fn_name = fn_name
        self.runs = runs
        self.max_concurrent = max_concurrent
        self.runner = runner
        self.session = session
        self.manifest = manifest
        self.cancelled = False
        self._lock = threading.RLock()
        self._done = threading.Event()
        self._listeners: List[Callable[[], None]] = []
        self._final_callbacks: List[Callable[[], None]] = []
        self._view: Any = None
        self._view_lock = threading.Lock()  # not the sweep's lock: the feeder never waits on a view
        self._thread: Optional[threading.Thread] = None

    def __repr__(self) -> str:
        return f"<Sweep {self.name}: {self.counts_text()}>"

    # -- running ---------------------------------------------------------------------------------------
    def start(self) -> "Sweep":
        self._thread = threading.Thread(target=self._feed, name=f"jupyter_sched-sweep-{self.name}", daemon=True)
        self._thread.start()
        return self

    def _feed(self) -> None:
        try:
            while True:
                with self._lock:
                    active = [r for r in self.runs if r.job is not None and not r.done]
                    changed = self._reap(active)
                    active = [r for r in active if not r.done]
                    queued = [r for r in self.runs if r.state == QUEUED]
                    while queued and len(active) < self.max_concurrent and not self.cancelled:
                        run = queued.pop(0)
                        self._launch(run)
                        changed = True
                        if not run.done:
                            active.append(run)
                    finished = not active and (not queued or self.cancelled)
                if changed:
                    self._notify()
                if finished:
                    break
                try:
                    self.runner.wait(active[0].handle, wait_interval=FEED_SLICE, timeout=FEED_SLICE)
                except Exception:  # noqa: BLE001 - a scheduler hiccup: look again after a pause
                    time.sleep(FEED_SLICE)
        finally:
            self._finish()

    def _launch(self, run: Run) -> None:
        run.launched = time.time()
        try:
            assert run.request is not None
            run.job = start(run.request, self.runner, self.session)
            run.state = "SUBMITTED"
            self._write_manifest()
        except Exception as e:  # noqa: BLE001 - shown in the run's row; the others go on
            run.state, run.error, run.ended = AppState.FAILED.name, f"could not launch: {e}", time.time()

    def _reap(self, active: List[Run]) -> bool:
        changed = False
        for run in active:
            assert run.job is not None
            try:
                status = run.job.fetch_status()
            except Exception as e:  # noqa: BLE001
                run.error = f"status unavailable: {e}"
                continue
            state = status.state.name if status is not None else AppState.UNKNOWN.name
            replicas = [r for role in status.roles for r in role.replicas] if status is not None else []
            started = [r.started for r in replicas if r.started is not None]
            if started and run.started is None:
                run.started = min(started)
            if state != run.state:
                run.state, changed = state, True
            if status is None or status.is_terminal():
                ends = [r.finished for r in replicas if r.finished is not None]
                run.ended = max(ends) if ends else time.time()
                self._read_outcome(run)
                changed = True
        return changed

    def _read_outcome(self, run: Run) -> None:
        assert run.job is not None
        try:
            run.outcome = run.job.outcome(0)
        except ResultError as e:  # this run's error, raised by results() as it is
            run.error, run.problem = str(e), e
            return
        except Exception as e:  # noqa: BLE001 - an unreadable result is this run's error
            run.error = f"could not read the result: {e}"
            return
        if run.outcome is not None and run.outcome.unwritten:
            run.error = str(run.outcome.error(run.handle, run.job.role))
        elif run.outcome is not None and not run.outcome.ok:
            run.error = f"{run.outcome.exc_type}: {run.outcome.message}"
        elif run.outcome is None and run.state == AppState.SUCCEEDED.name:
            run.error = "no result written"

    def _finish(self) -> None:
        with self._lock:
            for run in self.runs:
                if run.state == QUEUED:
                    run.state, run.ended = AppState.CANCELLED.name, time.time()
            self._write_manifest()
            callbacks, self._final_callbacks = self._final_callbacks, []
            self._done.set()
        self._notify()
        for callback in callbacks:
            callback()

    # -- the API ---------------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: Optional[float] = None) -> "Sweep":
        """Blocks until every run has ended (or ``timeout`` seconds); an interrupt only stops waiting."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done.wait(0.25):
            if deadline is not None and time.monotonic() >= deadline:
                break
        return self

    def results(self, timeout: Optional[float] = None, errors: str = "raise") -> List[Any]:
        """Rank 0's return value of every run, in grid order, once all have ended. A run whose function
        raised raises its FunctionError (``errors="return"``: the error takes its place in the list; a
        run that ended without a result gives None)."""
        self.wait(timeout)
        if not self.finished:
            raise TimeoutError(f"sweep {self.name}: {self.counts_text()} after {timeout} s")
        values: List[Any] = []
        for run in self.runs:
            if run.outcome is not None and run.outcome.ok:
                values.append(run.outcome.value)
                continue
            err: Exception
            if run.problem is not None:
                err = run.problem
            elif run.outcome is not None and run.job is not None:
                err = run.outcome.error(run.handle, run.job.role)
            else:
                err = RuntimeError(f"sweep {self.name} run {run.index} {run.params}: {run.state} {run.error}".rstrip())
            if errors == "raise":
                raise err
            values.append(err)
        return values

    def cancel(self) -> None:
        """Cancels every run: queued ones never start, running ones are asked to stop."""
        with self._lock:
            self.cancelled = True
            running = [r.job for r in self.runs if r.job is not None and not r.done]
        for job in running:
            try:
                job.cancel()
            except Exception:  # noqa: BLE001 - already gone
                pass
        self._notify()

    def counts(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        with self._lock:
            for run in self.runs:
                out[run.state] = out.get(run.state, 0) + 1
        return out

    def counts_text(self) -> str:
        return ", ".join(f"{n} {state}" for state, n in sorted(self.counts().items()))

    def job(self, index: int) -> Optional[FunctionJob]:
        """The Job of run ``index`` (None while it is queued): its live panes, logs, result."""
        return self.runs[index].job

    # -- change notification and the record protocol (see notebook.record) ------------------------------
    def on_change(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def _notify(self) -> None:
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:  # noqa: BLE001 - a view that cannot redraw must not stop the sweep
                pass

    @property
    def final(self) -> bool:
        return self.finished

    def poll(self) -> None:
        """Nothing to ask: the feeder thread keeps the runs current."""

    def when_final(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._done.is_set():
                self._final_callbacks.append(callback)
                return
        callback()

    def view(self) -> Any:
        from jupyter_sched.notebook.sweep_view import SweepView

        with self._view_lock:
            if self._view is None:
                self._view = SweepView(self)
            return self._view

    def widget_bundle(self) -> Dict[str, Any]:
        return self.view().widget_bundle()

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        from jupyter_sched.notebook.sweep_view import record_bundle

        return record_bundle(self, as_of_ts)

    def _ipython_display_(self) -> None:
        from jupyter_sched.notebook import record

        if self.finished or not _interactive(self.session):
            from IPython.display import display

            display(self.record_bundle(None if self.finished else time.time()), raw=True)
            return
        record.show(self)

    # -- the manifest -----------------------------------------------------------------------------------
    def _write_manifest(self) -> None:
        data = {
            "name": self.name, "function": self.fn_name, "max_concurrent": self.max_concurrent,
            "runs": [{"index": r.index, "params": r.params, "handle": r.handle, "state": r.state,
                      "job_dir": r.request.job_dir if r.request is not None else (r.job.job_dir if r.job else "")}
                     for r in self.runs],
        }  # fmt: skip
        try:  # private, as the runs' own files: it lists their parameters
            make_private_dirs(os.path.dirname(self.manifest))
            write_private(self.manifest, json.dumps(data, default=repr))
        except OSError:  # the sweep runs on; only finding it after a restart suffers
            pass


def _interactive(session: Any) -> bool:
    return bool(session is not None and session.interactive())


def sweep(
    fn: Any,
    grid: Grid,
    *,
    scheduler: str = "local_cwd",
    max_concurrent: int = 4,
    num_replicas: int = 1,
    cfg: Optional[Mapping[str, Any]] = None,
    resource: Any = None,
    image: Optional[str] = None,
    name: Optional[str] = None,
) -> Sweep:
    """Runs ``fn(**point)`` for every point of ``grid`` (a list of keyword dicts, or a dict of lists
    meaning their product), at most ``max_concurrent`` at a time, on ``scheduler``. Returns a Sweep at
    once; display it for the live table, ``sweep.results()`` for the values in grid order."""
    if not isinstance(max_concurrent, int) or max_concurrent < 1:
        raise ValueError(f"max_concurrent must be an integer of 1 or more (got {max_concurrent!r})")
    points = expand(grid)
    runner, session = runner_and_session()
    sweep_name = clean_name(name or f"{getattr(fn, '__name__', 'fn')}-sweep")[:20] + "-" + random_id()
    runs = []
    for i, params in enumerate(points):
        request = prepare(
            runner, fn, (), params, scheduler=scheduler, num_replicas=num_replicas, cfg=cfg, resource=resource,
            image=image, name=f"{sweep_name}-{i:03d}", meta={"sweep": sweep_name, "index": i},
        )  # fmt: skip
        runs.append(Run(i, params, request))
    root = os.path.dirname(runs[0].request.job_dir) if runs[0].request else ""
    manifest = os.path.join(os.path.dirname(root), "sweeps", f"{sweep_name}.json")
    fn_name = getattr(fn, "__qualname__", None) or type(fn).__name__
    return Sweep(sweep_name, fn_name, runs, max_concurrent, runner, session, manifest).start()


def load_sweep(name: str, scheduler: str = "local_cwd", cfg: Optional[Mapping[str, Any]] = None) -> Sweep:
    """A sweep of this session launched earlier (e.g. before a kernel restart), with the results of its
    runs that finished. ``name`` is the sweep's name (``sweep.name``) or its manifest's path."""
    from jupyter_sched.functions.launch import job_root

    runner, session = runner_and_session()
    sweeps_dir = os.path.join(os.path.dirname(job_root(runner, scheduler, cfg)), "sweeps")
    path = name if name.endswith(".json") else os.path.join(sweeps_dir, f"{name}.json")
    with open(path) as f:
        data = json.load(f)
    runs = []
    for entry in data["runs"]:
        run = Run(int(entry["index"]), dict(entry.get("params") or {}))
        handle, job_dir = entry.get("handle") or "", entry.get("job_dir") or ""
        if handle and job_dir:
            meta = read_meta(job_dir)
            run.job = FunctionJob(handle, runner, job_dir, int(meta.get("num_replicas", 1)), str(meta.get("role", "")),
                                  interactive=lambda: False)  # fmt: skip
            run.state = "SUBMITTED"
        else:
            run.state, run.ended = AppState.CANCELLED.name, time.time()
            run.error = "was queued in an earlier kernel; never started"
        runs.append(run)
    max_concurrent = int(data.get("max_concurrent", 1))
    return Sweep(data["name"], data.get("function", ""), runs, max_concurrent, runner, session, path).start()

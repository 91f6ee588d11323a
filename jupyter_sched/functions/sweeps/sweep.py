"""``jupyter_sched.sweep(fn, grid, max_concurrent=N)``: one function job per grid point, N at a time.

Every point is pickled and dry-run before the first launch, so a bad grid, an unpicklable argument or a
refused app stops the sweep before anything runs (all or none). Runs beyond ``max_concurrent`` wait in
the kernel: a feeder thread launches the next one as soon as the scheduler reports a running one ended
(it waits on the scheduler, woken by the local backend's events, else polling briefly). Each run is an
ordinary app of the session named ``<sweep>-<index>``, so ``%sched_list`` shows a sweep's runs together,
and a manifest (``sweeps/<sweep>.json`` next to the function job directories) lists their handles and
job directories: :func:`load_sweep` (``jupyter_sched.load_sweep``) rebuilds a sweep's finished runs, with
their results, after a kernel restart (runs that were still queued in the old kernel never started, and say
so).

Early stopping (``stop=``, :mod:`jupyter_sched.functions.sweeps.stopping`): the feeder also reads the running
runs' metrics (what they log with ``jupyter_sched.track``) twice a second, asks the rule, writes the stop file
of a run it stops (its ``track.should_stop()`` turns true) and cancels it if it still runs ``stop_grace``
seconds later; the run's ``stopped`` field says why.

Results as data: :meth:`Sweep.to_dataframe` and :meth:`Sweep.best` (:mod:`jupyter_sched.functions.sweeps.table`;
what the runs logged: :meth:`Sweep.metrics`, :mod:`jupyter_sched.functions.sweeps.metric_data`),
:meth:`Sweep.results` with ``errors="raise"|"return"|"skip"`` (an error names its run by its parameters),
:meth:`Sweep.retry_failed` (the same calls again, in this sweep: :mod:`jupyter_sched.functions.sweeps.retry`),
:meth:`Sweep.rerun_here` (a run's call in this process: :mod:`jupyter_sched.functions.calls.rerun`), and
``jupyter_sched.as_completed(sweep)`` (:mod:`jupyter_sched.functions.sweeps.futures`).

A Sweep is plain Python (no IPython): its feeder, results, cancel and manifest. It tells listeners when it
changes and when it is final, which is all a front end needs to show it: the notebook's live table and
saved record (:mod:`jupyter_sched.notebook.panes.sweep_view`) are registered as IPython formatters when the
extension loads.
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Tuple, Union

from jupyter_sched.functions.calls import rerun
from jupyter_sched.functions.errors import MissingResultError, ResultError
from jupyter_sched.functions.job import FunctionJob, Launcher, start
from jupyter_sched.functions.launch import FunctionRequest, clean_name, job_root, prepare, read_meta
from jupyter_sched.functions.results import CALL_FILE, Outcome
from jupyter_sched.functions.sweeps import metric_data, retry, stopping, table
from jupyter_sched.functions.sweeps.grid import Grid, expand
from jupyter_sched.schedulers.common.private_files import make_private_dirs, write_private
from jupyter_sched.specs import AppState, AppStatus, random_id

QUEUED = "QUEUED"
#: How the front end that shows sweeps live in this process makes a sweep's view (the notebook registers its
#: table when the extension loads); :meth:`Sweep.view` uses the last one registered.
VIEW_MAKERS: List[Callable[["Sweep"], Any]] = []
#: Seconds the feeder waits for news of its running apps (the local backend wakes it at once) before it
#: looks at all of them again.
FEED_SLICE = 0.05
#: Seconds between two readings of the runs' metrics for early stopping (``track`` writes at most once a second).
STOP_SLICE = 0.5
#: Seconds a run asked to stop has to return before it is cancelled (``stop_grace`` of :func:`sweep`).
STOP_GRACE = 30.0


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
    status: Optional[AppStatus] = None  # the app's status when it ended (peak memory, CPU seconds)
    attempts: int = 0  # launches so far (retry_failed launches a run again)
    args: Tuple[Any, ...] = ()  # the call's positional arguments (map); a sweep calls fn(**params)
    stopped: Optional[str] = None  # why early stopping stopped it (the rule's reason); None: not stopped
    stop_asked: Optional[float] = None  # when its stop file was written
    stop_cancelled: bool = False  # it outlived stop_grace and was cancelled
    name: str = ""  # how errors name it, where its parameters are not enough (a map's item: "#3 (x=3)")

    @property
    def handle(self) -> str:
        return self.job.handle if self.job is not None else ""

    @property
    def done(self) -> bool:
        return self.ended is not None

    @property
    def label(self) -> str:
        """The run by its parameters: ``lr=1.0, epochs=4``."""
        return self.name or table.param_label(self.params) or f"#{self.index}"

    @property
    def job_dir(self) -> str:
        return self.job.job_dir if self.job is not None else (self.request.job_dir if self.request else "")


ERRORS = ("raise", "return", "skip")
"""What ``results(errors=...)`` takes, for a sweep and a map."""

class Sweep:
    """The runs of one sweep. ``results()`` (grid order), ``wait()``, ``cancel()``; displays as a table."""

    def __init__(self, name: str, fn_name: str, runs: List[Run], max_concurrent: int, launcher: Launcher,
                 manifest: str, options: Optional[Mapping[str, Any]] = None, stop: Any = None,
                 stop_grace: float = STOP_GRACE) -> None:  # fmt: skip
        self.name = name
        self.fn_name = fn_name
        self.runs = runs
        self.max_concurrent = max_concurrent
        self.launcher = launcher
        self.runner = launcher.runner
        self.manifest = manifest
        #: How runs launch (scheduler, num_replicas, cfg, resource, image): what retry_failed reuses.
        self.options: Dict[str, Any] = retry.options_from_json(None, "local_cwd", None)
        self.options.update(options or {})
        #: The table's order, ``(column, descending)``: a front end's live view and record (see sort()).
        self.order: Tuple[str, bool] = ("#", False)
        self.cancelled = False
        #: What :meth:`results` does with a run without a value when not told (``map(..., errors=...)``).
        self.errors = "raise"
        #: Early stopping (:mod:`jupyter_sched.functions.sweeps.stopping`): the rule, the grace before a run
        #: asked to stop is cancelled, and why the rule was turned off (it raised), if it was.
        self.stop = stopping.as_rule(stop)
        self.stop_grace = stop_grace
        self.stop_problem: Optional[str] = None
        self._followers: Dict[int, stopping.Follower] = {}  # by run index: its rank 0 records, read from a cursor
        self._next_look = 0.0
        self._feeding = False  # a feeder thread runs (set and cleared under the lock)
        self._lock = threading.RLock()
        self._done = threading.Event()
        self._listeners: List[Callable[[], None]] = []
        self._final_callbacks: List[Callable[[], None]] = []
        self._thread: Optional[threading.Thread] = None

    def __repr__(self) -> str:
        return f"<Sweep {self.name}: {self.counts_text()}>"

    # -- running ---------------------------------------------------------------------------------------
    def start(self) -> "Sweep":
        with self._lock:
            self._reap([r for r in self.runs if r.job is not None and not r.done])  # runs found again: as they are
            self._start_feeder()
        return self

    def _start_feeder(self) -> None:
        """Starts a feeder thread (the caller holds the lock and knows none runs)."""
        self._feeding = True
        self._done.clear()
        self._thread = threading.Thread(target=self._feed, name=f"jupyter_sched-sweep-{self.name}", daemon=True)
        self._thread.start()

    def _feed(self) -> None:
        callbacks: List[Callable[[], None]] = []
        ended = False
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
                    if finished:  # decided and recorded under the lock: retry_failed() sees one or the other
                        callbacks, ended = self._end(), True
                if self.stop is not None and not finished and time.monotonic() >= self._next_look:
                    changed = self._steer() or changed
                    self._next_look = time.monotonic() + STOP_SLICE
                if changed:
                    self._notify()
                if finished:
                    break
                try:
                    self.runner.wait_for_change(active[0].handle, FEED_SLICE)  # any active run's end wakes it
                except Exception:  # noqa: BLE001 - a scheduler hiccup: look again after a pause
                    time.sleep(FEED_SLICE)
        finally:
            if not ended:  # left by an exception: end as if every queued run was cancelled
                with self._lock:
                    callbacks = self._end()
            self._notify()
            for callback in callbacks:
                callback()

    def _launch(self, run: Run) -> None:
        run.launched = time.time()
        run.attempts += 1
        try:
            assert run.request is not None
            run.job = start(run.request, self.runner, self.launcher.on_launch)
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
            except Exception as e:  # noqa: BLE001 - shown in the run's row
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
                run.status = status
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
        elif run.outcome is None and run.state == AppState.FAILED.name:  # killed: why, as a job's panes say it
            run.error = run.job.failure_reason(run.status)

    def _steer(self) -> bool:
        """Early stopping, one pass (the feeder's thread, without the lock while it reads files): reads the
        runs' new records, asks the rule about each running run not yet asked to stop, writes the stop file
        of those it stops, and cancels those still running ``stop_grace`` seconds after. True if a run
        changed."""
        with self._lock:
            launched = [r for r in self.runs if r.job is not None]
            if self.cancelled:
                return False
        for run in launched:  # an ended run is read once more, then its history is complete
            follower = self._follower(run)
            if follower is not None and not follower.final:
                ended = run.done  # before the read: what it wrote before it ended is then all read
                follower.read()
                follower.history.done = follower.final = ended
        histories = [f.history for f in self._followers.values() if f.history.series]
        changed = False
        now = time.time()
        for run in launched:
            if run.done:
                continue
            if run.stop_asked is None:
                changed = self._judge(run, histories) or changed
            elif not run.stop_cancelled and now - run.stop_asked >= self.stop_grace:
                run.stop_cancelled = True
                try:
                    assert run.job is not None
                    run.job.cancel()
                except Exception:  # noqa: BLE001 - it ended meanwhile
                    pass
        return changed

    def _follower(self, run: Run) -> Optional[stopping.Follower]:
        follower = self._followers.get(run.index)
        if follower is None or follower.history.handle != run.handle:  # new, or launched again by retry_failed
            assert run.job is not None
            try:
                directory = self.runner.metrics_dir(run.handle)
            except Exception:  # noqa: BLE001 - a scheduler that cannot say: no metrics to judge by
                directory = None
            history = stopping.RunHistory(run.index, run.params, run.label, run.handle)
            follower = self._followers[run.index] = stopping.Follower(history, directory, run.job.role)
        return follower

    def _judge(self, run: Run, histories: List[stopping.RunHistory]) -> bool:
        follower = self._followers.get(run.index)
        rule = self.stop
        if follower is None or rule is None or not follower.history.series or not follower.metrics_dir:
            return False
        try:
            reason = stopping.decide(rule, follower.history, histories)
        except Exception as e:  # noqa: BLE001 - a broken rule ends early stopping, never the sweep
            self.stop = None
            self.stop_problem = (f"sweep {self.name}: early stopping is off: the stop rule"
                                 f" {stopping.rule_name(rule)} raised {type(e).__name__}: {e}")  # fmt: skip
            warnings.warn(self.stop_problem, RuntimeWarning, stacklevel=1)
            return True
        if reason is None:
            return False
        asked = time.time()
        try:
            stopping.request_stop(follower.metrics_dir)
        except OSError as e:  # it cannot be asked: cancelled at the next pass instead
            reason, asked = f"{reason} (cancelled: its stop file could not be written: {e})", asked - self.stop_grace
        with self._lock:
            run.stopped, run.stop_asked = reason, asked
            self._write_manifest()
        return True

    def _end(self) -> List[Callable[[], None]]:
        """Marks the sweep ended (the caller holds the lock); returns the callbacks to call after."""
        for run in self.runs:
            if run.state == QUEUED:
                run.state, run.ended = AppState.CANCELLED.name, time.time()
        self._write_manifest()
        callbacks, self._final_callbacks = self._final_callbacks, []
        self._feeding = False
        self._done.set()
        return callbacks

    # -- the API ---------------------------------------------------------------------------------------
    @property
    def lock(self) -> Any:
        """The lock under which the feeder changes the runs (a subclass's readers of its own state take it)."""
        return self._lock

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

    def results(self, timeout: Optional[float] = None, errors: Optional[str] = None) -> List[Any]:
        """Rank 0's return value of every run, in grid order, once all have ended. ``errors``: what a run
        without a value gives (default: the sweep's ``errors``, ``"raise"`` unless ``map`` was told otherwise).
        ``"raise"``: the first such run's error is raised, naming the
        run by its parameters (its function's FunctionError, a ResultError if its result cannot be read,
        a MissingResultError if it ended without one); ``"return"``: the error takes the run's place in
        the list; ``"skip"``: only the values of the runs that returned, in grid order."""
        errors = self.errors if errors is None else errors
        if errors not in ERRORS:
            raise ValueError(f'errors={errors!r}: give errors="raise", "return" (errors in place) or "skip"')
        self.wait(timeout)
        if not self.finished:
            raise TimeoutError(f"{self.noun} {self.name}: {self.counts_text()} after {timeout} s")
        values: List[Any] = []
        for entry in self.result_entries():
            if entry.outcome is not None and entry.outcome.ok:
                values.append(entry.outcome.value)
            elif errors == "raise":
                err = self.entry_error(entry, hint=True)
                assert err is not None
                raise err
            elif errors == "return":
                values.append(self.entry_error(entry))
        return values

    noun = "sweep"
    """What the errors of :meth:`results` call this (a chunked map says "map")."""

    def result_entries(self) -> List[Any]:
        """What :meth:`results` gives a value for, in order: the runs (a chunked map's items)."""
        return list(self.runs)

    def entry_error(self, entry: Any, hint: bool = False) -> Optional[Exception]:
        """Why an entry of :meth:`result_entries` has no value (:meth:`run_error` for a run)."""
        return self.run_error(entry, hint)

    def run_error(self, run: Union[Run, int], hint: bool = False) -> Optional[Exception]:
        """Why run ``run`` (a Run or its index) has no value, naming it by its parameters; None if it
        returned one. ``hint``: the message also says how to get the other runs' values."""
        run = self.runs[run] if isinstance(run, int) else run
        if run.outcome is not None and run.outcome.ok:
            return None
        err: Union[Exception, Any]
        if run.problem is not None:
            err = run.problem
        elif run.outcome is not None and run.job is not None:
            err = run.outcome.error(run.handle, run.job.role, run.job.job_dir, run.job.num_replicas)
        else:
            what = run.error or (run.stopped if run.stopped else "still running" if not run.done else "no result")
            err = MissingResultError(f"ended {run.state} without a value: {what}" if run.done else what)
        advice = (
            f"(sweep {self.name}: {self.counts_text()}) sweep.results(errors=\"return\") gives every run's value"
            f" with errors in place, errors=\"skip\" only the values; sweep.retry_failed() runs the failed ones"
            f" again"
        )
        if hasattr(err, "in_run"):  # how to debug it: the same sentence as a job's error (errors.debug_hint)
            err.in_run(run.label, advice if hint else "", f"sweep.rerun_here({run.index})")
        return err

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

    # -- results as data (jupyter_sched.functions.sweeps.table) --------------------------------------------------
    def records(self) -> List[Dict[str, Any]]:
        """One dict per run: what :meth:`to_dataframe` holds, without pandas."""
        with self._lock:
            return table.records(list(self.runs))

    def to_dataframe(self, metrics: Optional[str] = None) -> Any:
        """A pandas DataFrame, one row per run (index ``run``): the parameters, ``state``, ``handle``,
        ``submitted``/``started``/``ended`` (local times), ``elapsed_s``, ``peak_memory_bytes``,
        ``cpu_seconds``, the returned dict's fields flattened (``metrics.acc``; any other value is one
        ``result`` column), ``output_path`` (a notebook's runs: each one's output notebook), ``stopped`` (why
        early stopping stopped the run, else None) and ``error`` (its text). ``metrics="last"|"min"|"max"|"best"``:
        also a ``metrics.<key>`` column per key the runs logged with ``jupyter_sched.track`` (rank 0's last, min
        or max value; ``best``: by the key's goal); a result field of the same name is then ``result.<name>``.
        Needs pandas (an optional dependency)."""
        with self._lock:
            runs = list(self.runs)
        cells = None if metrics is None else metric_data.summary_columns(runs, metrics)
        return table.to_dataframe(runs, cells)

    def metrics(self, key: Union[None, str, List[str]] = None) -> Any:
        """What the runs logged with ``jupyter_sched.track``, as one long pandas DataFrame: ``run, step, t,
        key, value, role, replica`` (``key``: one key or a list, only those). Read again at each call."""
        with self._lock:
            runs = list(self.runs)
        return metric_data.long_frame(runs, key)

    def best(self, key: Union[None, str, Callable[[Any], Any]] = None, mode: str = "min", *,
             metric: Optional[str] = None, scope: Optional[str] = None) -> "table.Best":  # fmt: skip
        """``(run, value)`` of the best run: ``best.run.params`` are its parameters, ``best.run.job`` its Job.

        ``best("loss")``: the run whose result field ``"loss"`` (``"metrics.acc"``, or a function of the
        returned value) is lowest (``mode="min"``) or highest (``"max"``); runs without it are left out.
        Where no run returned such a field, the metric of that name the runs logged with
        ``jupyter_sched.track`` is ranked instead (scope ``"last"``). ``best(metric="loss", scope=...)``
        always ranks the logged metric (rank 0's values, NaN skipped), with Ray Tune's scopes: ``"last"``
        (default), ``"all"`` (the best of every step), ``"avg"``, ``"last-5-avg"`` (any ``last-N-avg``)."""
        if key is not None and metric is not None:
            raise ValueError(f"best({key!r}, metric={metric!r}): give a result field or metric=, not both")
        with self._lock:
            runs = list(self.runs)
        if metric is not None or scope is not None:
            name = metric if metric is not None else key
            if not isinstance(name, str):
                raise ValueError('best(metric=...): name the metric the runs log, e.g. best(metric="loss")')
            return metric_data.best(runs, name, mode, scope or "last")
        if key is None:
            raise ValueError('best(): give a result field (best("loss")) or a logged metric (best(metric="loss"))')
        if callable(key) or table.has_field(runs, key) or not metric_data.scores(runs, key, mode, "last"):
            return table.best(runs, key, mode)  # the result field, or the error that lists the fields
        return metric_data.best(runs, key, mode, "last")

    def sort(self, by: str = "#", descending: bool = False) -> "Sweep":
        """Orders the table by column ``by`` (a parameter, ``state``, ``elapsed``, a result field, a logged
        metric's ``metrics.<key>``, ...), in a front end's live view and in the record a saved notebook
        keeps. Returns the sweep, so
        ``sweep.sort("loss")`` at the end of a cell shows it."""
        with self._lock:
            runs = list(self.runs)
            names = table.column_names(runs)
        if by not in names and self.finished:
            names += [f"metrics.{key}" for key in metric_data.logged_keys(runs)]  # the view's metric columns
            if by not in names:
                raise ValueError(f"sort: no column {by!r}; the columns are: {', '.join(map(repr, names))}")
        self.order = (by, bool(descending))
        self._notify()
        return self

    # -- steering: retry, re-run here ----------------------------------------------------------------------
    def retry_failed(self, cancelled: bool = False) -> retry.Retried:
        """Launches the FAILED runs again (``cancelled=True``: the CANCELLED ones too), in this sweep:
        same index and parameters, the same pickled call, a new app ``<sweep>-NNN``; the table shows them
        run again and ``results()`` waits for them. Works on a sweep found again by :func:`load_sweep`
        (the call is read from the run's job directory). Everything is prepared before anything is
        launched. Returns what was launched again (a :class:`~.retry.Retried`: the runs' indices, shown as
        one line), not the sweep: a cell ending in ``sweep.retry_failed()`` then shows a note, not a second
        live table under the one already shown."""
        wanted = {AppState.FAILED.name} | ({AppState.CANCELLED.name} if cancelled else set())
        with self._lock:
            runs = [r for r in self.runs if r.done and r.state in wanted]
        requests = {}
        for run in runs:
            payload = retry.payload_of(run.request, run.job_dir) if (run.request or run.job_dir) else None
            if payload is None:
                raise ValueError(f"run {run.index} ({run.label}) never started and its call was not kept: "
                                 "run it again with jupyter_sched.sweep")  # fmt: skip
            requests[run.index] = retry.prepare_again(
                self.runner, payload, run.job_dir, self.options, f"{self.name}-{run.index:03d}",
                {"sweep": self.name, "index": run.index, "attempt": run.attempts + 1, "function": self.fn_name},
            )  # fmt: skip
        done = retry.Retried(self.name, [r.index for r in runs], [r.label for r in runs],
                             " or ".join(sorted(wanted)))  # fmt: skip
        if not runs:
            return done
        with self._lock:
            for run in runs:
                run.request, run.job, run.state, run.error, run.problem = requests[run.index], None, QUEUED, "", None
                run.outcome = run.status = None
                self._reset(run)
                run.launched = run.started = run.ended = None
                run.stopped, run.stop_asked, run.stop_cancelled = None, None, False
            self.cancelled = False
            if not self._feeding:
                self._start_feeder()
        self._notify()
        return done

    def _reset(self, run: Run) -> None:
        """Run ``run`` is about to launch again (the caller holds the lock): what a subclass keeps per run
        starts over (a chunked map's items)."""

    def rerun_here(self, index: int) -> Any:
        """Calls run ``index``'s function with its arguments in this process (as rank 0) and returns its
        value, or raises what it raises, here: ``%debug`` opens the failing frame, breakpoints stop."""
        __tracebackhide__ = True  # noqa: F841 - IPython and pytest start the traceback at the user's code
        run = self.runs[index]
        if run.request is not None:
            call = rerun.load(run.request.payload, f"run {index} ({run.label})")
        elif run.job_dir:
            call = rerun.read(os.path.join(run.job_dir, CALL_FILE))
        else:
            raise ValueError(f"run {index} ({run.label}) never started and its call was not kept")
        return rerun.run(call, 0, int(self.options.get("num_replicas") or 1))

    def as_completed(self, timeout: Optional[float] = None) -> Iterable[FunctionJob]:
        """The runs' Jobs as they end (see ``jupyter_sched.as_completed``)."""
        from jupyter_sched.functions.sweeps.futures import as_completed

        return as_completed(self, timeout)

    # -- change notification, for the views of a front end ---------------------------------------------
    def on_change(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def off_change(self, callback: Callable[[], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def changed(self) -> None:
        """Tells the listeners (views, records) that the sweep changed, e.g. its order."""
        self._notify()

    def _notify(self) -> None:
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:  # noqa: BLE001 - whatever a view raises while it redraws, the sweep goes on
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
        """The live view of the front end that shows sweeps in this process (in a notebook: the table with
        its sort, run picker and Cancel all, made on first use). RuntimeError where none is registered."""
        if not VIEW_MAKERS:
            raise RuntimeError(
                "no front end shows sweeps live in this process: in IPython, %load_ext jupyter_sched first"
            )
        return VIEW_MAKERS[-1](self)

    # -- the manifest -----------------------------------------------------------------------------------
    def _write_manifest(self) -> None:
        data = {
            "name": self.name, "function": self.fn_name, "max_concurrent": self.max_concurrent,
            "options": retry.options_to_json(self.options),
            "runs": [{"index": r.index, "params": r.params, "handle": r.handle, "state": r.state,
                      "job_dir": r.job_dir if r.handle else "", **({"stopped": r.stopped} if r.stopped else {})}
                     for r in self.runs],
        }  # fmt: skip
        try:  # private, as the runs' own files: it lists their parameters
            make_private_dirs(os.path.dirname(self.manifest))
            write_private(self.manifest, json.dumps(data, default=repr))
        except OSError:  # the sweep runs on; only finding it after a restart suffers
            pass


def sweep(
    launcher: Launcher,
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
    stop: Any = None,
    stop_grace: float = STOP_GRACE,
) -> Sweep:
    """Runs ``fn(**point)`` for every point of ``grid`` (a list of keyword dicts, or a dict of lists
    meaning their product), at most ``max_concurrent`` at a time, on ``scheduler``, through ``launcher``.
    Returns a Sweep at once; display it for the live table, ``sweep.results()`` for the values in grid
    order.

    ``stop``: early stopping (:mod:`jupyter_sched.functions.sweeps.stopping`), a rule such as
    ``jupyter_sched.MedianStopping("loss")`` or a function ``(run, history) -> bool | str``, judged on what the
    runs log with ``jupyter_sched.track``. A run it stops sees ``track.should_stop()`` turn true and is
    cancelled if it still runs ``stop_grace`` seconds later; its row says ``stopped`` and why, and its slot
    goes to the next run."""
    rule, grace = stopping_options(stop, stop_grace)
    points = [Point(params, (), params) for params in expand(grid)]
    options = dict(scheduler=scheduler, num_replicas=num_replicas, cfg=cfg, resource=resource, image=image)
    base = name or f"{getattr(fn, '__name__', 'fn')}-sweep"
    return start_sweep(launcher, fn, points, options, max_concurrent, base, rule, grace)


def stopping_options(stop: Any, stop_grace: Any) -> Tuple[Optional[stopping.Rule], float]:
    """``stop=`` and ``stop_grace=`` checked before anything is prepared: a bad one is an error naming it."""
    rule = stopping.as_rule(stop)
    if isinstance(stop_grace, bool) or not isinstance(stop_grace, (int, float)) or not stop_grace >= 0:
        raise ValueError(f"stop_grace={stop_grace!r}: give the seconds (0 or more) a run asked to stop has to"
                         " return before it is cancelled")  # fmt: skip
    return rule, float(stop_grace)


class Point(NamedTuple):
    """One run to prepare: its row's parameters, and the call's positional and keyword arguments."""

    params: Dict[str, Any]
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]
    name: str = ""  # the run's name in errors, where its parameters are not enough (Run.name)


def start_sweep(launcher: Launcher, fn: Any, points: List[Point], options: Dict[str, Any], max_concurrent: int,
                base: str, stop: Optional[stopping.Rule] = None, stop_grace: float = STOP_GRACE,
                make: Optional[Callable[..., Sweep]] = None) -> Sweep:  # fmt: skip
    """Prepares every point (all or none: a refusal raises before anything runs) and starts the feeder of
    the Sweep that ``make`` builds (``Sweep``'s own arguments; default: a Sweep)."""
    if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int) or max_concurrent < 1:
        raise ValueError(f"max_concurrent must be an integer of 1 or more (got {max_concurrent!r})")
    runner = launcher.runner
    sweep_name = clean_name(base)[:20] + "-" + random_id()
    runs = []
    for i, point in enumerate(points):
        request = prepare(
            runner, fn, point.args, point.kwargs, name=f"{sweep_name}-{i:03d}",
            meta={"sweep": sweep_name, "index": i}, **options,
        )  # fmt: skip
        runs.append(Run(i, point.params, request, args=point.args, name=point.name))
    root = os.path.dirname(runs[0].request.job_dir) if runs[0].request else ""
    manifest = os.path.join(os.path.dirname(root), "sweeps", f"{sweep_name}.json")
    fn_name = getattr(fn, "__qualname__", None) or type(fn).__name__
    build = make or Sweep
    return build(sweep_name, fn_name, runs, max_concurrent, launcher, manifest, options, stop, stop_grace).start()


def load_sweep(
    launcher: Launcher, name: str, scheduler: str = "local_cwd", cfg: Optional[Mapping[str, Any]] = None
) -> Sweep:
    """A sweep of ``launcher``'s session launched earlier (e.g. before a kernel restart), with the results
    of its runs that finished; ``retry_failed()`` launches its failed runs again. ``name`` is the sweep's
    name (``sweep.name``) or its manifest's path."""
    runner = launcher.runner
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
            run.job = FunctionJob(handle, runner, job_dir, int(meta.get("num_replicas", 1)), str(meta.get("role", "")))
            if launcher.adopt is not None:  # known to the front end, which knows the kernel that launched it
                launcher.adopt(run.job)
            run.state = "SUBMITTED"
            run.attempts = int(meta.get("attempt") or 1)
            run.stopped = entry.get("stopped") or None
        else:
            run.state, run.ended = AppState.CANCELLED.name, time.time()
            run.error = "was queued in an earlier kernel; never started"
        runs.append(run)
    max_concurrent = int(data.get("max_concurrent", 1))
    options = retry.options_from_json(data.get("options"), scheduler, cfg)
    return Sweep(data["name"], data.get("function", ""), runs, max_concurrent, launcher, path, options).start()

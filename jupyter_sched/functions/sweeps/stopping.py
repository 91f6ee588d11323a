"""Early stopping for sweeps: rules that say when a run is losing, judged from what its replicas log.

``jupyter_sched.sweep(fn, grid, stop=rule)``: the sweep's feeder (in the notebook's process) reads each
running run's metrics (what ``jupyter_sched.track`` wrote in the app's metrics directory, rank 0: the first
role's replica 0), asks the rule, and when it says stop, writes the run's ``stop`` file (so
``track.should_stop()`` turns true in every replica, which may save and return) and cancels the run if it
is still running after ``stop_grace`` seconds. Nothing here needs the backend: it works wherever the
metrics directory is readable from the notebook (local backends, Slurm's shared ``job_dir``).

A rule is any callable ``rule(run, history) -> bool | str | None``: ``run`` is the :class:`RunHistory` being
judged, ``history`` every run of the sweep that has logged (this one included), each a :class:`RunHistory`.
A true value stops the run; a string is the reason shown in the sweep's table. Two rules are built in,
each with the semantics of its well-known namesake, so results carry over:

* :class:`MedianStopping` -- Optuna's ``MedianPruner`` (and Ray Tune's ``MedianStoppingRule``, which also
  compares the run's *best value so far*): at a step, the run's best value up to that step is compared with
  the median of the other runs' values *at that same step* (Optuna's choice; Ray averages each other run's
  values up to the step instead). Strictly worse than the median stops it.
* :class:`SuccessiveHalving` -- Optuna's ``SuccessiveHalvingPruner`` (asynchronous successive halving): rungs
  at steps ``min_steps * reduction_factor ** (min_early_stopping_rate + r)``; a run reaching a rung goes on
  only if its value there is in the best ``1 / reduction_factor`` of the runs that had reached that rung by
  then (itself included, so the first to arrive always goes on).

Rules are pure functions of the histories (the timestamps included), so the same records give the same
decisions however often the feeder asks. Arguments are checked when a rule is made: a bad one is a
ValueError or TypeError naming the field and the fix. :func:`as_rule` checks ``stop=``, :func:`decide` turns
an answer into a reason.

The feeder's side: a :class:`Follower` reads a run's new records from a byte cursor into its
:class:`RunHistory` (the reader of ``job.metrics()``, ``frontend.jobs.metrics``), and :func:`request_stop`
writes the stop file (its name from ``track.layout``, the one ``track.should_stop`` looks for).
"""

from __future__ import annotations

import math
import os
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from jupyter_sched.frontend.jobs.metrics import read_records
from jupyter_sched.schedulers.common.private_files import make_private_dirs, write_private
from jupyter_sched.track.layout import STOP_ALL
from jupyter_sched.track.values import check_key

MODES = ("min", "max")


class Point(NamedTuple):
    """One logged value of one key: its step, when it was logged (seconds since the epoch), the value."""

    step: int
    t: float
    value: float


@dataclass
class RunHistory:
    """What a rule sees of one run: who it is and the values its rank 0 logged so far, per key in the order
    they were logged (a replica that restarted logs its steps again; the last value at a step counts)."""

    index: int
    params: Dict[str, Any]
    label: str = ""
    handle: str = ""
    done: bool = False
    series: Dict[str, List[Point]] = field(default_factory=dict)
    steps: Dict[str, Tuple[int, Dict[int, Point]]] = field(default_factory=dict, repr=False, compare=False)
    """:meth:`by_step`'s index per key, with the length of the series it was made from (a rule asks it of
    every run for every run it judges: made once per new record, not once per question)."""

    def values(self, key: str) -> List[Point]:
        """The points of ``key`` in the order logged (empty if the run never logged it)."""
        return self.series.get(key, [])

    def by_step(self, key: str) -> Dict[int, Point]:
        """``{step: point}`` of ``key``, the last point logged at each step (do not change it: it is kept)."""
        points = self.values(key)
        kept = self.steps.get(key)
        if kept is None or kept[0] != len(points):
            kept = self.steps[key] = (len(points), {p.step: p for p in points})
        return kept[1]

    def at(self, key: str, step: int) -> Optional[float]:
        """The value of ``key`` at ``step`` (the last one logged there), or None."""
        point = self.by_step(key).get(step)
        return None if point is None else point.value

    def last(self, key: str) -> Optional[float]:
        """The value of ``key`` logged last, or None."""
        points = self.values(key)
        return points[-1].value if points else None

    def last_step(self, key: Optional[str] = None) -> Optional[int]:
        """The highest step logged (of ``key``, or of any key), or None."""
        keys = [key] if key is not None else list(self.series)
        steps = [p.step for k in keys for p in self.series.get(k, [])]
        return max(steps) if steps else None


Decision = Union[bool, str, None]
Rule = Callable[[RunHistory, Sequence[RunHistory]], Decision]


def number(x: float) -> str:
    """A value in a reason: four significant digits (``0.8123`` -> ``0.8123``, ``12345.0`` -> ``1.234e+04``)."""
    return f"{x:.4g}"


def worse(a: float, b: float, mode: str) -> bool:
    """Whether ``a`` is strictly worse than ``b`` by ``mode``."""
    return a > b if mode == "min" else a < b


def finite(x: Optional[float]) -> bool:
    return x is not None and not math.isnan(x)


def check_mode(mode: Any, rule: str) -> str:
    if mode not in MODES:
        raise ValueError(f'{rule}(mode={mode!r}): give mode="min" (lower is better, e.g. a loss) or mode="max"'
                         " (higher is better, e.g. an accuracy)")  # fmt: skip
    return str(mode)


def check_int(value: Any, name: str, rule: str, least: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{rule}({name}={value!r}): give an integer {what}")
    if value < least:
        raise ValueError(f"{rule}({name}={value!r}): give an integer {what}")
    return value


def check_metric(metric: Any, rule: str) -> str:
    try:
        return check_key(metric)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{rule}(metric=...): {e}; name the key the runs log with track.log") from None


class MedianStopping:
    """Stops a run whose best ``metric`` so far is worse than the median of the other runs at the same step.

    Optuna's ``MedianPruner`` semantics: at step ``s`` (``s >= grace_steps``), the run's best value of
    ``metric`` over its steps up to ``s`` (lowest for ``mode="min"``, NaN skipped) is compared with the
    median of the values the *other* runs logged at step ``s`` (running, ended or stopped; NaN skipped),
    once at least ``min_runs`` of them did. Strictly worse stops the run; a run whose values are all NaN
    is stopped as worse than any median. The feeder reads the records as they come, so the run is judged at
    the latest of its steps that ``min_runs`` others reached too: a run ahead of the others is judged where
    they can be compared with it. One difference from Optuna, by design: Optuna's median is over COMPLETE
    trials only, here over every other run that reached the step (as Ray Tune's rule does), since a sweep's
    runs run side by side. ``scripts/optuna_yardstick.py`` checks both rules' decisions against Optuna's.

    ``grace_steps`` (default 5): steps before it are never judged (first losses say little: Ray calls it the
    grace period, Optuna ``n_warmup_steps``). ``min_runs`` (default 3, Ray's ``min_samples_required``): how
    many other runs must have a value at a step before it is judged there.
    """

    def __init__(self, metric: str, mode: str = "min", grace_steps: int = 5, min_runs: int = 3) -> None:
        self.metric = check_metric(metric, "MedianStopping")
        self.mode = check_mode(mode, "MedianStopping")
        self.grace_steps = check_int(grace_steps, "grace_steps", "MedianStopping", 0,
                                     "of 0 or more: the first step a run may be stopped at")  # fmt: skip
        self.min_runs = check_int(min_runs, "min_runs", "MedianStopping", 1,
                                  "of 1 or more: how many other runs must have reached a step")  # fmt: skip

    def __repr__(self) -> str:
        return (f"MedianStopping(metric={self.metric!r}, mode={self.mode!r}, grace_steps={self.grace_steps},"
                f" min_runs={self.min_runs})")  # fmt: skip

    def __call__(self, run: RunHistory, history: Sequence[RunHistory]) -> Optional[str]:
        own = run.by_step(self.metric)
        others = [r.by_step(self.metric) for r in history if r.index != run.index]
        for step in sorted((s for s in own if s >= self.grace_steps), reverse=True):
            there = [o[step].value for o in others if step in o and finite(o[step].value)]
            if len(there) < self.min_runs:
                continue
            median = statistics.median(there)
            so_far = [p.value for s, p in own.items() if s <= step and finite(p.value)]
            if not so_far:
                return (f"stopped at step {step}: {self.metric} is NaN, the median of {len(there)} other runs"
                        f" {number(median)}")  # fmt: skip
            best = min(so_far) if self.mode == "min" else max(so_far)
            if worse(best, median, self.mode):
                return (f"stopped at step {step}: {self.metric} {number(best)} worse than the median"
                        f" {number(median)} (of {len(there)} other runs)")  # fmt: skip
            return None  # judged at its latest comparable step: not worse
        return None


class SuccessiveHalving:
    """Asynchronous successive halving, as Optuna's ``SuccessiveHalvingPruner``.

    Rung ``r`` is at step ``min_steps * reduction_factor ** (min_early_stopping_rate + r)``. A run's value at
    a rung is the one it logged at the first step it reached there. It goes on only if that value is within
    the best ``1 / reduction_factor`` of the values of the runs that had reached the rung by the same time
    (itself included; at least the best one goes on, so the first run to arrive always does); else it is
    stopped, and a NaN there stops it. ``bootstrap_count``: a rung must have seen more than this many runs
    before any goes on (Optuna's meaning; 0, the default, never stops a run for it).
    """

    def __init__(self, metric: str, mode: str = "min", min_steps: int = 1, reduction_factor: int = 4,
                 min_early_stopping_rate: int = 0, bootstrap_count: int = 0) -> None:  # fmt: skip
        self.metric = check_metric(metric, "SuccessiveHalving")
        self.mode = check_mode(mode, "SuccessiveHalving")
        self.min_steps = check_int(min_steps, "min_steps", "SuccessiveHalving", 1,
                                   "of 1 or more: the step of the first rung")  # fmt: skip
        self.reduction_factor = check_int(reduction_factor, "reduction_factor", "SuccessiveHalving", 2,
                                          "of 2 or more: 1 in reduction_factor runs goes on at each rung")  # fmt: skip
        self.min_early_stopping_rate = check_int(min_early_stopping_rate, "min_early_stopping_rate",
                                                 "SuccessiveHalving", 0, "of 0 or more")  # fmt: skip
        self.bootstrap_count = check_int(bootstrap_count, "bootstrap_count", "SuccessiveHalving", 0, "of 0 or more")

    def __repr__(self) -> str:
        return (f"SuccessiveHalving(metric={self.metric!r}, mode={self.mode!r}, min_steps={self.min_steps},"
                f" reduction_factor={self.reduction_factor})")  # fmt: skip

    def rung_step(self, rung: int) -> int:
        return int(self.min_steps * self.reduction_factor ** (self.min_early_stopping_rate + rung))

    def arrival(self, run: RunHistory, step: int) -> Optional[Point]:
        """The point at which ``run`` reached ``step``: the first one logged at that step or after."""
        for point in run.values(self.metric):
            if point.step >= step:
                return point
        return None

    def __call__(self, run: RunHistory, history: Sequence[RunHistory]) -> Optional[str]:
        rung = 0
        while True:
            step = self.rung_step(rung)
            mine = self.arrival(run, step)
            if mine is None:
                return None  # not at this rung yet
            if not finite(mine.value):
                return f"stopped at step {mine.step}: {self.metric} is NaN at rung {rung} (step {step})"
            competing = [mine.value]
            for other in history:
                if other.index == run.index:
                    continue
                theirs = self.arrival(other, step)
                if theirs is not None and theirs.t <= mine.t and finite(theirs.value):
                    competing.append(theirs.value)
            if len(competing) <= self.bootstrap_count:
                return (f"stopped at step {mine.step}: rung {rung} (step {step}) had seen {len(competing)} runs,"
                        f" not more than bootstrap_count={self.bootstrap_count}")  # fmt: skip
            kept = max(len(competing) // self.reduction_factor, 1)
            ranked = sorted(competing, reverse=self.mode == "max")
            cutoff = ranked[kept - 1]
            if worse(mine.value, cutoff, self.mode):
                return (f"stopped at step {mine.step}: {self.metric} {number(mine.value)} worse than"
                        f" {number(cutoff)}, the cutoff of the best {kept} of {len(competing)} runs at rung"
                        f" {rung} (step {step})")  # fmt: skip
            rung += 1


def as_rule(stop: Any) -> Optional[Rule]:
    """``stop=`` of a sweep as a rule: None (no early stopping), a built-in rule, or a callable
    ``(run, history) -> bool | str``. Anything else is a TypeError saying what to give."""
    if stop is None or callable(stop):
        return stop
    raise TypeError(
        f"stop={stop!r} (a {type(stop).__name__}): give jupyter_sched.MedianStopping('loss'),"
        " jupyter_sched.SuccessiveHalving('loss', min_steps=...), or a function (run, history) -> bool or a"
        " reason string; or None for no early stopping"
    )


def decide(rule: Rule, run: RunHistory, history: Sequence[RunHistory]) -> Optional[str]:
    """The rule's answer for ``run`` as a reason (None: it goes on). A bare True becomes ``stopped at step N:
    <rule> said so``; a reason not starting with "stopped" gets ``stopped at step N:`` in front. An answer
    that is not a bool, a string or None is a TypeError naming the rule."""
    answer = rule(run, history)
    if answer is None or answer is False or answer == "":
        return None
    at = run.last_step()
    prefix = f"stopped at step {at}" if at is not None else "stopped"
    if answer is True:
        return f"{prefix}: {rule_name(rule)} said so"
    if isinstance(answer, str):
        return answer if answer.startswith("stopped") else f"{prefix}: {answer}"
    raise TypeError(f"the stop rule {rule_name(rule)} returned {answer!r} (a {type(answer).__name__}): return"
                    " True or a reason string to stop the run, False or None to let it go on")  # fmt: skip


def rule_name(rule: Any) -> str:
    if isinstance(rule, (MedianStopping, SuccessiveHalving)):
        return type(rule).__name__
    return str(getattr(rule, "__qualname__", None) or getattr(rule, "__name__", None) or type(rule).__name__)


class Follower:
    """A run's rank 0 records (its role's replica 0), read from a cursor into its :class:`RunHistory`, so each
    pass reads only what was appended since (a line being written is read whole the next time)."""

    def __init__(self, history: RunHistory, metrics_dir: Optional[str], role: str) -> None:
        self.history = history
        self.metrics_dir = metrics_dir
        self.role = role
        self.cursor = 0
        self.skipped = 0
        self.final = False  # the run ended and its records were read after: nothing more will come

    def read(self) -> bool:
        """Adds the records written since the last read; True if there were any."""
        if not self.metrics_dir:
            return False
        chunk = read_records(self.metrics_dir, self.role, 0, self.cursor)
        self.cursor, self.skipped = chunk.cursor, self.skipped + chunk.skipped
        for record in chunk.records:
            if record.step is None:
                continue
            for key, value in record.metrics.items():
                self.history.series.setdefault(key, []).append(Point(record.step, record.t, value))
        return bool(chunk.records)


def request_stop(metrics_dir: str) -> str:
    """Creates the app's ``stop`` file (every replica's :func:`jupyter_sched.track.should_stop` turns true);
    returns its path. Private to the owner, as the rest of the metrics directory."""
    make_private_dirs(metrics_dir)
    path = os.path.join(metrics_dir, STOP_ALL)
    write_private(path, "")
    return path

"""A sweep's metrics as its table shows them: each run's last values (a column per key) and one key's series
per run (the chart under the table), read live from what the runs log with ``jupyter_sched.track``.

Each run is read at its rank 0 (its role's replica 0, as the job pane and ``sweep.to_dataframe(metrics=)``
show it) from a byte cursor, like the job pane's Metrics section (:mod:`.metrics_view`): a read takes only
what was appended since the last one, a run that has ended is read once more and then never again, and a run
launched again (``retry_failed``) is read anew from its new app. Each key of a run keeps at most
``2 * MAX_POINTS`` points (then it is cut to ``MAX_POINTS`` by ``downsample``, each bucket's min and max
kept), so a long sweep's memory is bounded as the charts are.

The columns are at most :data:`MAX_COLUMNS` keys, those with a goal (``track.define_metric``) first, then
alphabetical; a column's best cell is the run whose last value is best by the key's goal (NaN never; no
mark without a goal). Nothing here imports IPython: the view (:mod:`.sweep_view`) renders it.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from jupyter_sched.frontend.jobs.metric_charts import MAX_POINTS, Point, RunSeries, runs_chart_img
from jupyter_sched.frontend.jobs.metrics import downsample, read_records, replicas
from jupyter_sched.functions.sweeps.metric_data import metrics_dir

MAX_COLUMNS = 6
"""Metric columns in the table at most (keys with a goal first, then alphabetical); the chart takes any key."""
PREFIX = "metrics."
"""A metric column's name: ``metrics.loss``, as ``sweep.to_dataframe(metrics="last")`` names it."""


def _value(point: Point) -> float:
    return point[1]


@dataclass
class RunMetrics:
    """One run's rank 0 series, read from a cursor (the model's lock guards it)."""

    handle: str
    directory: Optional[str] = None
    replica: Optional[Tuple[str, int]] = None
    cursor: int = 0
    series: Dict[str, List[Point]] = field(default_factory=dict)
    goals: Dict[str, str] = field(default_factory=dict)
    final: bool = False
    """Read to the end after the run ended: never read again."""


def rank0(role: Optional[str], found: Sequence[Tuple[str, int]]) -> Optional[Tuple[str, int]]:
    """The run's rank 0 among the replicas that logged: its role's replica 0, else the first replica 0, else
    the first (as ``sweep.to_dataframe(metrics=)`` picks it)."""
    if role is not None and (role, 0) in found:
        return (role, 0)
    zeros = [r for r in found if r[1] == 0]
    if zeros:
        return zeros[0]
    return found[0] if found else None


class SweepMetrics:
    """The runs' metrics of one sweep; thread-safe (the view's drawing thread and a record's reader both
    refresh it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: Dict[int, RunMetrics] = {}
        self.chosen: Optional[str] = None
        """The key the chart shows (the view's menu sets it); None: the first key."""
        self.version = 0
        """Counts the reads that changed something: the chart is drawn again only when it moved."""
        self._chart: Tuple[Tuple[int, Optional[str]], str] = ((-1, None), "")

    def refresh(self, runs: Sequence[Any]) -> bool:
        """Reads what each launched run appended since the last read; True if anything was."""
        changed = False
        with self.lock:
            for run in runs:
                handle = run.handle
                if not handle:
                    continue
                kept = self.runs.get(run.index)
                if kept is None or kept.handle != handle:  # first seen, or launched again as a new app
                    changed = changed or kept is not None
                    kept = self.runs[run.index] = RunMetrics(handle)
                if kept.final:
                    continue
                ended = run.done  # asked before the read: a read after the end sees every record
                changed = self._read(run, kept) or changed
                kept.final = ended
            if changed:
                self.version += 1
        return changed

    @staticmethod
    def _read(run: Any, kept: RunMetrics) -> bool:
        if kept.directory is None:
            kept.directory = metrics_dir(run)
            if kept.directory is None:
                return False
        role = getattr(getattr(run, "job", None), "role", None)
        if kept.replica is None or kept.replica != (role, 0):  # until its own rank 0 logged, look again
            picked = rank0(role, replicas(kept.directory))
            if picked != kept.replica:
                kept.replica, kept.cursor, kept.series, kept.goals = picked, 0, {}, {}
        if kept.replica is None:
            return False
        chunk = read_records(kept.directory, kept.replica[0], kept.replica[1], kept.cursor)
        kept.cursor = chunk.cursor
        for record in chunk.records:
            kept.goals.update(record.define)
            for key, value in record.metrics.items():
                points = kept.series.setdefault(key, [])
                points.append((record.step, value))
                if len(points) > 2 * MAX_POINTS:
                    kept.series[key] = downsample(points, MAX_POINTS, _value)
        return bool(chunk.records)

    def logged(self, index: int) -> bool:
        """Whether run ``index`` has logged a metric (it has a line, and a swatch in the table)."""
        with self.lock:
            kept = self.runs.get(index)
            return bool(kept is not None and kept.series)

    def goals(self) -> Dict[str, str]:
        """Each key's goal, as any run defined it (the first run's, where they differ)."""
        out: Dict[str, str] = {}
        with self.lock:
            for index in sorted(self.runs):
                for key, goal in self.runs[index].goals.items():
                    out.setdefault(key, goal)
        return out

    def keys(self) -> List[str]:
        """Every key a run logged: those with a goal first, then the others, each group alphabetical."""
        goals = self.goals()
        with self.lock:
            found = {key for kept in self.runs.values() for key in kept.series}
        return sorted(found, key=lambda k: (goals.get(k) not in ("min", "max"), k))

    def columns(self) -> List[str]:
        return self.keys()[:MAX_COLUMNS]

    def last(self, index: int, key: str) -> Optional[float]:
        """Run ``index``'s last value of ``key``, or None."""
        with self.lock:
            kept = self.runs.get(index)
            points = kept.series.get(key) if kept is not None else None
            return points[-1][1] if points else None

    def best_run(self, key: str, goal: Optional[str]) -> Optional[int]:
        """The run whose last value of ``key`` is best by ``goal`` (the lowest index if tied; NaN never), or
        None without a goal or a value."""
        if goal not in ("min", "max"):
            return None
        found: Optional[Tuple[int, float]] = None
        with self.lock:
            for index in sorted(self.runs):
                points = self.runs[index].series.get(key)
                if not points or math.isnan(points[-1][1]):
                    continue
                v = points[-1][1]
                if found is None or (v < found[1] if goal == "min" else v > found[1]):
                    found = (index, v)
        return found[0] if found else None

    def shown_key(self) -> Optional[str]:
        """The key the chart shows: the chosen one while a run has logged it, else the first key."""
        keys = self.keys()
        with self.lock:
            chosen = self.chosen
        return chosen if chosen in keys else (keys[0] if keys else None)

    def series(self, key: str) -> List[RunSeries]:
        """``key``'s series of every run that logged any metric, in run order, named by the run's number (its
        colour in the chart is ``run_color(number)``, as the table's swatch)."""
        with self.lock:
            return [(str(i), list(self.runs[i].series.get(key, []))) for i in sorted(self.runs) if self.runs[i].series]

    def chart_html(self) -> str:
        """The chart of the shown key, a line per run (an ``<img>``, kept by a saved notebook); "" before any
        run logged."""
        key = self.shown_key()
        if key is None:
            return ""
        with self.lock:
            stamp = (self.version, key)
            if self._chart[0] == stamp:  # nothing read since it was drawn (100 runs: about 0.1 s a drawing)
                return self._chart[1]
        series = self.series(key)
        drawn = runs_chart_img(key, series, self.goals().get(key), [int(name) for name, _p in series])
        with self.lock:
            self._chart = (stamp, drawn)
        return drawn

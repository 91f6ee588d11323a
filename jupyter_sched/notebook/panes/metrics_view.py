"""The job pane's Metrics section: a chart per key of what one replica logged with ``jupyter_sched.track``, live.

The section appears once the app's metrics directory holds a replica's records: one chart per key
(:mod:`jupyter_sched.frontend.jobs.metric_charts`, at most :data:`MAX_CHARTS`, then a line naming how many more
``job.metrics()`` has), of the first role's replica 0 by default, and a replica picker when there are
several. The records are those ``job.metrics()`` reads (``frontend.jobs.metrics.read_records``), read from a
byte cursor per replica, so each tick reads only what was appended since; a replica is read only once it
is picked. Each key keeps at most ``2 * MAX_POINTS`` points: past that its series is cut to ``MAX_POINTS``
by ``downsample`` (each bucket's min and max kept, so the extremes and the last value always stay), which
bounds the memory of a long run as well as the chart.

Traffic is bounded: a ticker (at most twice a second) sets the charts' HTML trait only when the rendering
changed, and the picker's options only when a replica appeared, so a job that logs nothing new sends
nothing, and one that logs 1,000 points a second sends at most two messages a second, each holding at most
:data:`MAX_CHARTS` charts of at most 1,000 points. The record of the cell (:mod:`..displays.record`) keeps
the section as it was last drawn (read to the end once the app has ended): the charts are images, so a
saved, exported or reopened notebook shows the curves without a kernel.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.frontend.jobs.metric_charts import MAX_POINTS, Point, chart_img, format_number
from jupyter_sched.frontend.jobs.metrics import downsample, read_records, replicas
from jupyter_sched.notebook.kernel.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.kernel.live import Ticker
from jupyter_sched.notebook.panes.theme import PANE_STYLE, esc

MAX_CHARTS = 24
"""Charts shown at most (keys in alphabetical order); the others are named by count."""
INTERVAL = 0.5
"""Seconds between reads and redraws: at most twice a second."""
Replica = Tuple[str, int]


def _value(point: Point) -> float:
    return point[1]


class ReplicaSeries:
    """One replica's series per key, read from its records file from a cursor (not thread-safe: the view
    holds its lock)."""

    def __init__(self, role: str, replica: int) -> None:
        self.role, self.replica = role, replica
        self.cursor = 0
        self.series: Dict[str, List[Point]] = {}
        self.counts: Dict[str, int] = {}
        self.goals: Dict[str, str] = {}
        self.skipped = 0

    def read(self, directory: str) -> bool:
        """Reads what was appended since the last read; True if anything was."""
        chunk = read_records(directory, self.role, self.replica, self.cursor)
        self.cursor = chunk.cursor
        self.skipped += chunk.skipped
        for record in chunk.records:
            self.goals.update(record.define)
            for key, value in record.metrics.items():
                points = self.series.setdefault(key, [])
                points.append((record.step, value))
                self.counts[key] = self.counts.get(key, 0) + 1
                if len(points) > 2 * MAX_POINTS:
                    self.series[key] = downsample(points, MAX_POINTS, _value)
        return bool(chunk.records or chunk.skipped)

    def lines(self) -> List[str]:
        """One line of text per key: its last value and step, and the best by its goal."""
        out = []
        for key in sorted(self.series)[:MAX_CHARTS]:
            points, goal = self.series[key], self.goals.get(key)
            step, value = points[-1]
            line = f"  {key}: last {format_number(value)}" + (f" @ {step}" if step is not None else "")
            finite = [p for p in points if p[1] == p[1]]
            if goal in ("min", "max") and finite:
                best = (min if goal == "min" else max)(finite, key=_value)
                line += f", {goal} {format_number(best[1])}" + (f" @ {best[0]}" if best[0] is not None else "")
            out.append(line)
        return out


def title_html(replica: Optional[str]) -> str:
    """The section's title: "metrics of train/0", or "metrics of" before the live pane's picker."""
    name = f" {esc(replica)}" if replica else ""
    return f'<div style="{PANE_STYLE};font-size:12px;margin:4px 6px 0 0"><b>metrics</b> of{name}</div>'


class MetricsView:
    """The charts of one app's metrics directory, one replica at a time (the picked one); thread-safe."""

    def __init__(self, directory: Optional[str], first_role: Optional[str] = None) -> None:
        self.directory = directory
        self.first_role = first_role
        self.lock = threading.Lock()
        self.replicas: List[Replica] = []
        self.picked: Optional[Replica] = None
        self.chosen = False  # a person picked the replica: it stays; else the default follows rank 0
        self.data: Dict[Replica, ReplicaSeries] = {}

    def default(self) -> Optional[Replica]:
        """Rank 0: the first role's replica 0 when it logged, else the first replica that did."""
        if (self.first_role, 0) in self.replicas:
            return (str(self.first_role), 0)
        return self.replicas[0] if self.replicas else None

    def refresh(self) -> bool:
        """Lists the replicas and reads the picked one's new records; True if anything changed."""
        if not self.directory:
            return False
        found = replicas(self.directory)
        with self.lock:
            changed = found != self.replicas
            self.replicas = found
            if self.picked is None or self.picked not in found or not self.chosen:
                self.picked = self.default()  # rank 0 once it has logged, though another replica did first
            picked = self.picked
            if picked is None:
                return changed
            series = self.data.setdefault(picked, ReplicaSeries(*picked))
            return series.read(self.directory) or changed

    def pick(self, replica: Replica) -> None:
        with self.lock:
            self.picked, self.chosen = replica, True
        self.refresh()

    def html(self, title: bool = True) -> str:
        """The section as HTML ("" while nothing was logged): a title naming the replica (``title``; the live
        pane has it in a row of its own, beside the picker), then the charts."""
        with self.lock:
            series = self.data.get(self.picked) if self.picked is not None else None
            if series is None or not series.series:
                return ""
            keys = sorted(series.series)
            charts = "".join(
                chart_img(key, series.series[key], series.goals.get(key), series.counts.get(key))
                for key in keys[:MAX_CHARTS]
            )
            name = f"{series.role}/{series.replica}"
            rest = len(keys) - MAX_CHARTS
            skipped = series.skipped
        notes = []
        if rest > 0:
            notes.append(f"{rest} more keys: job.metrics() has them all")
        if skipped:
            notes.append(f"{skipped} lines were not valid records (skipped)")
        note = f'<div style="font-size:11px;opacity:0.75">{esc("; ".join(notes))}</div>' if notes else ""
        head = title_html(name) if title else ""
        return (
            f'<div class="jsched-metrics" style="{PANE_STYLE}">{head}'
            f'<div style="display:flex;flex-wrap:wrap;align-items:flex-start">{charts}</div>{note}</div>'
        )

    def text(self) -> List[str]:
        """The section as lines of text (for ``text/plain``): the picked replica's last and best values."""
        with self.lock:
            series = self.data.get(self.picked) if self.picked is not None else None
            if series is None or not series.series:
                return []
            return [f"metrics of {series.role}/{series.replica}:"] + series.lines()


class MetricsPane:
    """The section's widgets: a replica picker (shown when several replicas logged) and the charts, hidden
    until the first record; a ticker reads and redraws until ``ended()`` is true, then once more."""

    def __init__(self, view: MetricsView, ended: Callable[[], bool], interval: float = INTERVAL) -> None:
        import ipywidgets as w

        self.view = view
        self.ended = ended
        self.interval = max(interval, INTERVAL)
        self.title = w.HTML(value="", layout=w.Layout(flex="0 0 auto"))
        self.charts = w.HTML(value="")
        self.picker = w.Dropdown(options=[], layout=w.Layout(width="auto", display="none"))
        head = w.HBox([self.title, self.picker], layout=w.Layout(align_items="center"))
        self.widget = w.VBox([head, self.charts], layout=w.Layout(display="none"))
        self.widget.add_class("jsched-metrics")
        self.ticker: Optional[Ticker] = None
        self._setting = False
        self._render_lock = threading.Lock()  # the ticker's thread and the picker's may both render
        self.picker.observe(self._on_pick, names="value")
        serve_on_side_thread(self.picker)

    def start(self) -> "MetricsPane":
        if self.view.directory:
            self.ticker = Ticker("metrics-pane", self.interval, self._tick).start()
        return self

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()

    def _tick(self) -> bool:
        ended = self.ended()  # asked before the read: a read after the end sees every record
        if self.view.refresh():
            self.render()
        return not ended

    def render(self) -> None:
        """Sets the widgets from the view, each trait only when it changed."""
        with self._render_lock:
            self._render_locked()

    def _render_locked(self) -> None:
        body = self.view.html(title=False)
        with self.view.lock:
            options = [(f"{role}/{k}", (role, k)) for role, k in self.view.replicas]
            picked = self.view.picked
        several = len(options) > 1  # the picker names the replica: "metrics of [train/0]"
        title = title_html(None if several else f"{picked[0]}/{picked[1]}") if picked is not None and body else ""
        with self.widget.hold_sync(), self.picker.hold_sync(), self.charts.hold_sync(), self.title.hold_sync():
            if body != self.charts.value:
                self.charts.value = body
            if title != self.title.value:
                self.title.value = title
            if [o[1] for o in options] != [o[1] for o in self.picker.options]:
                self._setting = True
                try:
                    self.picker.options = options
                finally:
                    self._setting = False
            if picked is not None and self.picker.value != picked:
                self._setting = True
                try:
                    self.picker.value = picked
                finally:
                    self._setting = False
            shown = "" if several else "none"
            if self.picker.layout.display != shown:
                self.picker.layout.display = shown
            display = "" if body else "none"
            if self.widget.layout.display != display:
                self.widget.layout.display = display

    def _on_pick(self, change: Dict[str, Any]) -> None:
        if self._setting or change.get("new") is None:
            return
        role, k = change["new"]
        self.view.pick((str(role), int(k)))
        self.render()

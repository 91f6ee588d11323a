"""A sweep as one table: a row per run (parameters, state, elapsed time, result), live and as a record.

A run's returned dict contributes its scalar values (numbers, strings, booleans; nested dicts flattened)
as columns, so a sweep over ``train(lr, bs) -> {"loss": ..., "acc": ...}`` reads as a results table; any
other value is one ``result`` column (its repr, shortened); the rows are
:func:`jupyter_sched.functions.sweeps.table.table_rows`. The live view sorts by any column (a menu: clicking a
header cannot reach the kernel from an HTML widget), cancels every run, and shows a chosen run's own
panes (its Job's live view) under the table; its controls stay after the end, for a person at the front
end. The record (``text/html`` and ``text/plain``) is the table in the sweep's order (``sweep.sort``),
"as of" a time while the sweep runs and final when it has ended, and follows every later sort. Beside it,
:data:`SWEEP_MIME` says which sweep the output shows, so JupyterLab can show the sweep as its Jupyter server
knows it when the table's kernel is gone (a reopened notebook), instead of "model not found".

A :class:`~jupyter_sched.functions.sweeps.sweep.Sweep` is plain Python: :func:`register` makes :func:`show` its
IPython display when the extension loads.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.frontend.jobs.metric_charts import BEST_COLOR, format_number, run_color, runs_chart_alt
from jupyter_sched.frontend.jobs.rows import sweep_state
from jupyter_sched.frontend.jobs.sweep_names import sweep_label
from jupyter_sched.functions.sweeps.sweep import VIEW_MAKERS, Sweep
from jupyter_sched.functions.sweeps.table import format_value, sort_rows, table_rows
from jupyter_sched.notebook.displays import record
from jupyter_sched.notebook.displays.record import widget_mimes
from jupyter_sched.notebook.panes.sweep_metrics import PREFIX, SweepMetrics
from jupyter_sched.notebook.panes.theme import NO_MATH, as_of, esc, fmt_duration, pill, table, text_table
from jupyter_sched.specs import AppState
from jupyter_sched.specs.output.labels import app_label

#: Seconds between drawings of a running sweep's table (its elapsed times move on, its runs log metrics).
TICK = 0.5
#: Seconds between two drawings at least: the table and the chart are redrawn at most twice a second.
MIN_GAP = 0.5
#: Seconds a first click on "Cancel all" waits for the second that confirms it (a job pane's Cancel waits as long).
CONFIRM_SECONDS = 4.0
CANCEL_LABEL = "Cancel all"
CONFIRM_LABEL = "Confirm cancel all?"
CANCELLING_LABEL = "Cancelling..."
#: The "stopped early" mark's colour (the cancelled state's).
STOPPED_COLOR = "#c99a00"


def metrics_of(sweep: Sweep) -> SweepMetrics:
    """The sweep's metrics as its table shows them (made on first use, once; read by :meth:`SweepMetrics.refresh`)."""
    with _VIEWS_LOCK:
        found = _METRICS.get(sweep)
        if found is None:
            found = _METRICS[sweep] = SweepMetrics()
        return found


def rows(sweep: Sweep, sort: Optional[str] = None, descending: bool = False) -> Tuple[List[str], List[List[Any]]]:
    """The table's column names and rows (raw values), ordered by ``sort`` (default: the sweep's order): the
    runs' rows (:func:`table_rows`) with a ``metrics.<key>`` column per shown metric (the run's last value)
    before the ``stopped`` and ``error`` columns."""
    if sort is None:
        sort, descending = sweep.order
    runs = list(sweep.runs)
    names, data = table_rows(runs, "#")
    columns = metrics_of(sweep).columns()
    if columns:
        model = metrics_of(sweep)
        at = next((i for i, n in enumerate(names) if n in ("stopped", "error")), len(names))
        added = [PREFIX + k for k in columns]
        # a returned field of the same name ({"metrics": {"acc": ...}}) is "metrics.acc (result)", as a field
        # named like a parameter is
        names = [f"{n} (result)" if n in added else n for n in names]
        names = names[:at] + added + names[at:]
        data = [row[:at] + [model.last(row[0], k) for k in columns] + row[at:] for row in data]
    if sort in names:
        data = sort_rows(data, names.index(sort), descending)
    return names, data


def best_cells(sweep: Sweep, names: List[str]) -> Dict[str, Optional[int]]:
    """``{column name: the run whose cell is best}`` of the metric columns among ``names`` (None: no goal,
    or no value yet)."""
    model = metrics_of(sweep)
    goals = model.goals()
    return {n: model.best_run(n[len(PREFIX):], goals.get(n[len(PREFIX):])) for n in names if n.startswith(PREFIX)}


def _fmt(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "elapsed":
        return fmt_duration(value)
    if name.startswith(PREFIX) and isinstance(value, float):
        return format_number(value)
    return format_value(value)


def _header(name: str) -> str:
    """A column's heading: ``stopped early`` for the column of the early stopping rule's reasons."""
    return "stopped early" if name == "stopped" else name


def _state_html(value: Any, stopped: Any) -> str:
    """The state pill, and a ``stopped early`` mark (its reason as the tooltip) for a run early stopping stopped."""
    if not stopped:
        return pill(value)
    return (f'{pill(value)} <span class="jsched-stopped" title="{esc(stopped)}" style="font-size:11px;'
            f'font-weight:600;color:{STOPPED_COLOR}">stopped early</span>')  # fmt: skip


def _cell_html(name: str, value: Any, best: bool) -> str:
    text = esc(_fmt(name, value))
    if not best:
        return text
    return (f'<span class="jsched-best" title="best by its goal" style="color:{BEST_COLOR};font-weight:700">'
            f"{text} \u2605</span>")  # fmt: skip


def _index_html(model: SweepMetrics, index: int) -> str:
    """The run's number, after a swatch of its line's colour in the chart once it logged a metric."""
    if not model.logged(index):
        return esc(index)
    swatch = (f'<span class="jsched-swatch" style="display:inline-block;width:8px;height:8px;border-radius:2px;'
              f'margin-right:4px;background:{run_color(index)}"></span>')  # fmt: skip
    return f'<span style="white-space:nowrap">{swatch}{esc(index)}</span>'



def _is_best(bests: Dict[str, Optional[int]], name: str, row: List[Any]) -> bool:
    return bests.get(name) is not None and bests[name] == row[0]


def table_html(sweep: Sweep, sort: Optional[str] = None, descending: bool = False) -> str:
    names, data = rows(sweep, sort, descending)
    bests = best_cells(sweep, names)
    model = metrics_of(sweep)
    at_stopped = names.index("stopped") if "stopped" in names else None
    body = []
    for row in data:
        stopped = row[at_stopped] if at_stopped is not None else None
        body.append([
            _state_html(v, stopped) if n == "state" else _index_html(model, v) if n == "#"
            else _cell_html(n, v, _is_best(bests, n, row))
            for n, v in zip(names, row)
        ])  # fmt: skip
    return table([_header(n) for n in names], body, raw=True)


def table_text(sweep: Sweep) -> str:
    names, data = rows(sweep)
    bests = best_cells(sweep, names)
    cells = [
        [_fmt(n, v) + (" *" if _is_best(bests, n, row) else "") for n, v in zip(names, row)]
        for row in data
    ]
    text = text_table([_header(n) for n in names], cells)
    if any(b is not None for b in bests.values()):
        text += "\n* the best last value by the metric's goal (track.define_metric)"
    return text


def chart_text(sweep: Sweep) -> str:
    """The chart in words (for ``text/plain``), or "" before any run logged."""
    model = metrics_of(sweep)
    key = model.shown_key()
    return "" if key is None else "chart: " + runs_chart_alt(key, model.series(key), model.goals().get(key))


def heading(sweep: Sweep) -> str:
    by, descending = sweep.order
    order = f"; sorted by {by}{' (descending)' if descending else ''}" if by != "#" or descending else ""
    return (
        f"sweep {sweep.name} of {sweep.fn_name}: {len(sweep.runs)} runs, "
        f"at most {sweep.max_concurrent} at a time; {sweep.counts_text()}{order}"
    )


SWEEP_MIME = "application/vnd.jupyter-sched.sweep+json"
"""Which sweep an output shows, for the JupyterLab extension (``labextension/src/output.ts``), as
:data:`~jupyter_sched.notebook.displays.record.JOB_MIME` is for a job: where the table's widget model is gone
(a reopened notebook, a restarted kernel) it shows the sweep as the Jupyter server knows it (its runs grouped
by name: ``GET jobs?sweep=``), live while they run, then writes the final table into the notebook. ``runs``
counts the runs still queued in the kernel too, which the server cannot know of."""


def sweep_mime(sweep: Sweep, as_of_ts: Optional[float]) -> Dict[str, Any]:
    """``{sweep, label, state, final, as_of, runs}``: the state is the server's rule for a sweep (RUNNING
    until every run has ended, then the worst end), so the saved state reads as the server's would."""
    finished = sweep.finished
    states = [run.state for run in sweep.runs]
    state = sweep_state(states) if finished and all(s in AppState.__members__ for s in states) else "RUNNING"
    return {"sweep": sweep.name, "label": sweep_label(sweep.name), "state": state, "final": finished,
            "as_of": None if finished else as_of_ts, "runs": len(states)}  # fmt: skip


def record_bundle(sweep: Sweep, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
    """The table in the sweep's order (grid order unless sorted), labelled "as of" while it runs, with its
    metric columns and the chart of the chosen metric (the runs' records read to now)."""
    metrics_of(sweep).refresh(list(sweep.runs))
    chart = metrics_of(sweep).chart_html()
    chart_words = chart_text(sweep)
    when = "" if sweep.finished or as_of_ts is None else f" ({as_of(as_of_ts)})"
    hint = (
        f"runs are apps named {sweep.name}-NNN (%sched_list); "
        f"reload after a restart: jupyter_sched.load_sweep({sweep.name!r})"
    )
    html = (
        f'<div class="jsched-record jsched-sweep {NO_MATH}" style="font-size:13px">'
        f"<div><b>{esc(heading(sweep))}</b>{esc(when)}</div>"
        f"{table_html(sweep)}{chart}<div style=\"font-size:11px;opacity:0.7\">{esc(hint)}</div></div>"
    )
    text = f"{heading(sweep)}{when}\n{table_text(sweep)}\n{chart_words + chr(10) if chart_words else ''}{hint}"
    return {"text/plain": text, "text/html": html, SWEEP_MIME: sweep_mime(sweep, as_of_ts)}


def run_choices(sweep: Sweep) -> List[Tuple[str, int]]:
    """The run picker's entries: ``3: lr=1.0, epochs=4``."""
    return [(f"{r.index}: {r.label}", r.index) for r in sweep.runs]


class SweepView:
    """The live table: a header with counts, Cancel all, sort controls, a run picker that shows that
    run's panes. Redraws on the sweep's changes (and each second for elapsed times) while it runs; its
    controls stay after the end (sort, pick a run, show its panes), and come alive again when
    ``retry_failed()`` runs some of it again.

    The sort controls set the sweep's order (``Sweep.sort``), so the record a saved notebook keeps is the
    table as sorted here, and ``sweep.sort(...)`` from code moves the controls.

    Only the view's own drawing thread writes its widgets. :meth:`redraw` (the sweep's change listener,
    and the sort controls' observer) only asks for a drawing and returns at once: it takes no lock that
    drawing holds, so neither the sweep's feeder thread nor an observer that ipywidgets fires while the
    drawing thread resets the sort menu's options ever waits on a drawing. The thread ends when the sweep
    has ended and no drawing is asked for, and starts again on the next request (a sort after the end).
    """

    def __init__(self, sweep: Sweep) -> None:
        import ipywidgets as w

        self.sweep = sweep
        self.head = w.HTML()
        self.table = w.HTML()
        self.cancel_button = w.Button(description=CANCEL_LABEL, icon="stop", button_style="danger",
                                      tooltip="Cancel every run (asks to confirm)",
                                      layout=w.Layout(width="auto", min_width="110px", flex="0 0 auto"))  # fmt: skip
        self.sort = w.Dropdown(description="sort by", options=["#"], value="#", layout=w.Layout(width="220px"))
        self.descending = w.Checkbox(description="descending", value=False, indent=False, layout=w.Layout(width="auto"))
        self.pick = w.Dropdown(description="run", options=run_choices(sweep), layout=w.Layout(width="300px"))
        self.show_button = w.Button(description="Show panes", icon="eye",
                                    layout=w.Layout(width="auto", min_width="120px", flex="0 0 auto"))
        self.panes = w.Output()
        self.metric = w.Dropdown(description="chart of", options=[], layout=w.Layout(width="260px", display="none"))
        self.chart = w.HTML()
        self._confirm_until = 0.0  # a first click's deadline for the second (monotonic seconds)
        self._shown: Optional[int] = None  # the run whose panes are shown (Show panes), followed from then on
        self._shown_job: Any = None  # the Job of that run the panes show (None: it had not started)
        self._cancelling = False
        self.cancel_button.on_click(self._on_cancel)
        self.show_button.on_click(self._show_run)
        controls = w.HBox([self.cancel_button, self.sort, self.descending, self.pick, self.show_button])
        self.widget = w.VBox([self.head, controls, self.table, self.metric, self.chart, self.panes])
        self.widget.add_class("jsched-sweep")
        self._wake = threading.Event()
        self._guard = threading.Lock()  # guards _drawer only; never held while a widget is written
        self._drawer: Optional[threading.Thread] = None
        self._draw()  # the first table, before any other thread can draw
        self.sort.observe(self._sort_chosen, names="value")
        self.descending.observe(self._sort_chosen, names="value")
        self.metric.observe(self._metric_chosen, names="value")
        sweep.on_change(self.redraw)
        self.redraw()

    def redraw(self) -> None:
        """Asks for the table to be drawn again; returns at once (the drawing thread draws it)."""
        self._wake.set()
        with self._guard:
            if self._drawer is None:
                name = f"jupyter_sched-sweep-view-{self.sweep.name}"
                self._drawer = threading.Thread(target=self._drawing, name=name, daemon=True)
                self._drawer.start()

    def _on_cancel(self, _button: Any = None) -> None:
        """A first click asks to confirm (the button says so for :data:`CONFIRM_SECONDS`); a second one in that
        time cancels every run. Only the state changes here: the drawing thread writes the button."""
        if self.sweep.finished:
            return
        now = time.monotonic()
        if now >= self._confirm_until:
            self._confirm_until = now + CONFIRM_SECONDS
            self.redraw()
            return
        self._confirm_until = 0.0
        self._cancelling = True
        self.redraw()
        self.sweep.cancel()

    def _sort_chosen(self, _change: Any) -> None:
        if threading.current_thread() is self._drawer:  # the drawing thread replacing the options: not a choice
            return
        by = self.sort.value if self.sort.value is not None else "#"
        self.sweep.order = (by, bool(self.descending.value))
        self.sweep.changed()  # redraws this view, and the record of every display of the sweep

    def _metric_chosen(self, change: Dict[str, Any]) -> None:
        if threading.current_thread() is self._drawer or change.get("new") is None:
            return
        metrics_of(self.sweep).chosen = str(change["new"])
        self.sweep.changed()  # redraws this view, and the record (which keeps the chart) of every display

    def _drawing(self) -> None:
        drawn = 0.0
        while True:
            gap = MIN_GAP - (time.monotonic() - drawn)
            if gap > 0:  # at most twice a second, however often the sweep changes
                time.sleep(gap)
            self._wake.clear()
            drawn = time.monotonic()
            try:
                self._draw()
            except Exception:  # noqa: BLE001 - a table that cannot be drawn now is drawn at the next change
                pass
            if self.sweep.finished:
                with self._guard:
                    if not self._wake.is_set():
                        self._drawer = None
                        return
            else:
                self._wake.wait(TICK)

    def _draw(self) -> None:
        """Reads the runs' new metric records, then sets each widget's value only where it changed (an idle
        sweep sends nothing)."""
        model = metrics_of(self.sweep)
        model.refresh(list(self.sweep.runs))
        names = rows(self.sweep)[0]
        by, descending = self.sweep.order
        if list(self.sort.options) != names:
            self.sort.options = names  # selects "#" (ipywidgets), which is not the user's choice: put it back
        shown = by if by in names else "#"
        if self.sort.value != shown:
            self.sort.value = shown
        if self.descending.value != descending:
            self.descending.value = descending
        choices = run_choices(self.sweep)
        if list(self.pick.options) != choices:
            picked = self.pick.value
            self.pick.options = choices
            self.pick.value = picked
        keys = model.keys()
        if list(self.metric.options) != keys:
            self.metric.options = keys  # selects the first (ipywidgets): the shown key is put back below
        charted = model.shown_key()
        if charted is not None and self.metric.value != charted:
            self.metric.value = charted
        display = "" if keys else "none"
        if self.metric.layout.display != display:
            self.metric.layout.display = display
        self._set(self.head, f"<b>{esc(heading(self.sweep))}</b>")
        self._set(self.table, table_html(self.sweep))
        self._set(self.chart, model.chart_html())
        finished = self.sweep.finished
        if finished:  # a retry later starts from a plain "Cancel all"
            self._cancelling, self._confirm_until = False, 0.0
        label = (CANCELLING_LABEL if self._cancelling else
                 CONFIRM_LABEL if time.monotonic() < self._confirm_until else CANCEL_LABEL)  # fmt: skip
        if self.cancel_button.description != label:
            self.cancel_button.description = label
        if self.cancel_button.disabled != (finished or self._cancelling):
            self.cancel_button.disabled = finished or self._cancelling
        if self._shown is not None and self.sweep.job(self._shown) is not self._shown_job:
            self._fill_panes()  # launched again (retry_failed): the panes follow the new attempt, as its row does

    @staticmethod
    def _set(widget: Any, value: str) -> None:
        if widget.value != value:
            widget.value = value

    def _show_run(self, _button: Any = None) -> None:
        """Shows the picked run's panes under the table, and follows that run from then on: when
        ``retry_failed()`` launches it again, the drawing thread puts the new attempt's panes in their place."""
        self._shown = int(self.pick.value)
        self._fill_panes()

    def _fill_panes(self) -> None:
        """The shown run's panes: a line naming it, then its Job's display (live, or its record once ended).
        Written as the Output's outputs, not captured with ``with output:``, so the drawing thread can write
        them as well as a click's handler."""
        from jupyter_sched.notebook.panes.job_view import mimebundle

        index = self._shown
        if index is None:
            return
        run = self.sweep.runs[index]
        job = run.job
        self._shown_job = job
        attempt = f" (attempt {run.attempts})" if run.attempts > 1 else ""
        if job is None:
            line = f"run {index}{attempt} has not started (queued, or cancelled before it started)\n"
            self.panes.outputs = ({"output_type": "stream", "name": "stdout", "text": line},)
            return
        self.panes.outputs = (
            {"output_type": "stream", "name": "stdout", "text": f"run {index}{attempt}: {app_label(job.handle)}\n"},
            {"output_type": "display_data", "data": mimebundle(job), "metadata": {}},
        )

    def widget_bundle(self) -> Dict[str, Any]:
        return widget_mimes(self.widget)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        """The widget with the record beside it; once the sweep ended, the widget only for a person at the
        front end (:func:`.record.frontend_takes_input`)."""
        keep = not self.sweep.finished or record.frontend_takes_input()
        bundle = self.widget_bundle() if keep else {}
        bundle.update(record_bundle(self.sweep, None if self.sweep.finished else time.time()))
        return bundle


# -- a Sweep's display, registered as an IPython formatter ----------------------------------------------

_VIEWS: "weakref.WeakKeyDictionary[Sweep, SweepView]" = weakref.WeakKeyDictionary()
_MAKING: "weakref.WeakKeyDictionary[Sweep, threading.Lock]" = weakref.WeakKeyDictionary()
_METRICS: "weakref.WeakKeyDictionary[Sweep, SweepMetrics]" = weakref.WeakKeyDictionary()
_VIEWS_LOCK = threading.Lock()  # guards the three tables only, never held while a view is made


def view_of(sweep: Sweep) -> SweepView:
    """The sweep's live table (made on first use, once). Each sweep's view is made under a lock of that
    sweep's own, so a view whose first drawing hangs holds up no other sweep's view, nor any feeder."""
    with _VIEWS_LOCK:
        view = _VIEWS.get(sweep)
        if view is not None:
            return view
        making = _MAKING.setdefault(sweep, threading.Lock())
    with making:
        with _VIEWS_LOCK:
            view = _VIEWS.get(sweep)
        if view is None:
            view = SweepView(sweep)
            with _VIEWS_LOCK:
                _VIEWS[sweep] = view
        return view


class SweepRecord:
    """A sweep as :mod:`.record` shows it: the live table while it runs, then its final record, which
    follows later changes (a sort, a retry: ``on_change``) and keeps the table's controls for a person at
    the front end (``widget_after_end``)."""

    def __init__(self, sweep: Sweep, interactive: Callable[[], bool] = lambda: True) -> None:
        self.sweep = sweep
        self.interactive = interactive

    def on_change(self, callback: Callable[[], None]) -> None:
        self.sweep.on_change(callback)

    def widget_after_end(self) -> bool:
        """Whether the ended sweep's display keeps its controls: with widgets shown, for a person at the
        front end (not a headless run, whose saved notebook must show the record alone)."""
        return self.interactive() and record.frontend_takes_input()

    @property
    def final(self) -> bool:
        return self.sweep.finished

    def poll(self) -> None:
        """Nothing to ask: the sweep's feeder thread keeps its runs current."""

    def when_final(self, callback: Callable[[], None]) -> None:
        self.sweep.when_final(callback)

    def widget_bundle(self) -> Dict[str, Any]:
        return view_of(self.sweep).widget_bundle()

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        return record_bundle(self.sweep, as_of_ts)


def show(sweep: Sweep, interactive: Callable[[], bool]) -> None:
    """IPython's display of a Sweep: the live table and its record where widgets render (``interactive``),
    kept up to date after the end (see :class:`SweepRecord`); else the record as of now (the final one once
    it has ended)."""
    if not interactive():
        from IPython.display import display

        display(record_bundle(sweep, None if sweep.finished else time.time()), raw=True)
        return
    record.show(SweepRecord(sweep, interactive))


def register(shell: Any, interactive: Callable[[], bool]) -> None:
    """Makes :func:`show` the display of every Sweep in ``shell``, and :func:`view_of` its ``sweep.view()``."""
    shell.display_formatter.ipython_display_formatter.for_type(Sweep, lambda sweep: show(sweep, interactive))
    if view_of not in VIEW_MAKERS:
        VIEW_MAKERS.append(view_of)


def unregister(shell: Any) -> None:
    formatter = shell.display_formatter.ipython_display_formatter
    if formatter.type_printers.get(Sweep) is not None:
        formatter.pop(Sweep)
    if view_of in VIEW_MAKERS:
        VIEW_MAKERS.remove(view_of)

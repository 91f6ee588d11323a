"""A sweep as one table: a row per run (parameters, state, elapsed time, result), live and as a record.

A run's returned dict contributes its scalar values (numbers, strings, booleans; nested dicts flattened)
as columns, so a sweep over ``train(lr, bs) -> {"loss": ..., "acc": ...}`` reads as a results table; any
other value is one ``result`` column (its repr, shortened); the rows are
:func:`jupyter_sched.functions.sweeps.table.table_rows`. The live view sorts by any column (a menu: clicking a
header cannot reach the kernel from an HTML widget), cancels every run, and shows a chosen run's own
panes (its Job's live view) under the table; its controls stay after the end, for a person at the front
end. The record (``text/html`` and ``text/plain``) is the table in the sweep's order (``sweep.sort``),
"as of" a time while the sweep runs and final when it has ended, and follows every later sort.

A :class:`~jupyter_sched.functions.sweeps.sweep.Sweep` is plain Python: :func:`register` makes :func:`show` its
IPython display when the extension loads.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.functions.sweeps.sweep import VIEW_MAKERS, Sweep
from jupyter_sched.functions.sweeps.table import format_value, table_rows
from jupyter_sched.notebook.displays import record
from jupyter_sched.notebook.displays.record import widget_mimes
from jupyter_sched.notebook.panes.theme import NO_MATH, as_of, esc, fmt_duration, pill, table, text_table
from jupyter_sched.specs.output.labels import app_label

#: Seconds between drawings of a running sweep's table (its elapsed times move on).
TICK = 1.0


def rows(sweep: Sweep, sort: Optional[str] = None, descending: bool = False) -> Tuple[List[str], List[List[Any]]]:
    """The table's column names and rows (raw values), ordered by ``sort`` (default: the sweep's order)."""
    if sort is None:
        sort, descending = sweep.order
    return table_rows(list(sweep.runs), sort, descending)


def _fmt(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "elapsed":
        return fmt_duration(value)
    return format_value(value)


def table_html(sweep: Sweep, sort: Optional[str] = None, descending: bool = False) -> str:
    names, data = rows(sweep, sort, descending)
    body = []
    for row in data:
        body.append([pill(v) if n == "state" else esc(_fmt(n, v)) for n, v in zip(names, row)])
    return table(names, body, raw=True)


def table_text(sweep: Sweep) -> str:
    names, data = rows(sweep)
    return text_table(names, [[_fmt(n, v) for n, v in zip(names, row)] for row in data])


def heading(sweep: Sweep) -> str:
    by, descending = sweep.order
    order = f"; sorted by {by}{' (descending)' if descending else ''}" if by != "#" or descending else ""
    return (
        f"sweep {sweep.name} of {sweep.fn_name}: {len(sweep.runs)} runs, "
        f"at most {sweep.max_concurrent} at a time; {sweep.counts_text()}{order}"
    )


def record_bundle(sweep: Sweep, as_of_ts: Optional[float] = None) -> Dict[str, str]:
    """The table in the sweep's order (grid order unless sorted), labelled "as of" while it runs."""
    when = "" if sweep.finished or as_of_ts is None else f" ({as_of(as_of_ts)})"
    hint = (
        f"runs are apps named {sweep.name}-NNN (%sched_list); "
        f"reload after a restart: jupyter_sched.load_sweep({sweep.name!r})"
    )
    html = (
        f'<div class="jsched-record jsched-sweep {NO_MATH}" style="font-size:13px">'
        f"<div><b>{esc(heading(sweep))}</b>{esc(when)}</div>"
        f"{table_html(sweep)}<div style=\"font-size:11px;opacity:0.7\">{esc(hint)}</div></div>"
    )
    text = f"{heading(sweep)}{when}\n{table_text(sweep)}\n{hint}"
    return {"text/plain": text, "text/html": html}


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
        self.cancel_button = w.Button(description="Cancel all", icon="stop", button_style="danger",
                                      layout=w.Layout(width="auto", min_width="110px", flex="0 0 auto"))  # fmt: skip
        self.sort = w.Dropdown(description="sort by", options=["#"], value="#", layout=w.Layout(width="220px"))
        self.descending = w.Checkbox(description="descending", value=False, indent=False, layout=w.Layout(width="auto"))
        self.pick = w.Dropdown(description="run", options=run_choices(sweep), layout=w.Layout(width="300px"))
        self.show_button = w.Button(description="Show panes", icon="eye",
                                    layout=w.Layout(width="auto", min_width="120px", flex="0 0 auto"))
        self.panes = w.Output()
        self.cancel_button.on_click(lambda _b: sweep.cancel())
        self.show_button.on_click(self._show_run)
        controls = w.HBox([self.cancel_button, self.sort, self.descending, self.pick, self.show_button])
        self.widget = w.VBox([self.head, controls, self.table, self.panes])
        self.widget.add_class("jsched-sweep")
        self._wake = threading.Event()
        self._guard = threading.Lock()  # guards _drawer only; never held while a widget is written
        self._drawer: Optional[threading.Thread] = None
        self._draw()  # the first table, before any other thread can draw
        self.sort.observe(self._sort_chosen, names="value")
        self.descending.observe(self._sort_chosen, names="value")
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

    def _sort_chosen(self, _change: Any) -> None:
        if threading.current_thread() is self._drawer:  # the drawing thread replacing the options: not a choice
            return
        by = self.sort.value if self.sort.value is not None else "#"
        self.sweep.order = (by, bool(self.descending.value))
        self.sweep.changed()  # redraws this view, and the record of every display of the sweep

    def _drawing(self) -> None:
        while True:
            self._wake.clear()
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
        self.head.value = f"<b>{esc(heading(self.sweep))}</b>"
        self.table.value = table_html(self.sweep)
        self.cancel_button.disabled = self.sweep.finished

    def _show_run(self, _button: Any = None) -> None:
        from IPython.display import display

        job = self.sweep.job(int(self.pick.value))
        self.panes.clear_output()
        with self.panes:
            if job is None:
                print("this run has not started (queued, or cancelled before it started)")
            else:
                print(f"run {self.pick.value}: {app_label(job.handle)}")
                display(job)

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
_VIEWS_LOCK = threading.Lock()  # guards the two tables only, never held while a view is made


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

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
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

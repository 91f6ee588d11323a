"""A sweep as one table: a row per run (parameters, state, elapsed time, result), live and as a record.

A run's returned dict contributes its scalar values (numbers, strings, booleans) as columns, so a sweep
over ``train(lr, bs) -> {"loss": ..., "acc": ...}`` reads as a results table; any other value is one
``result`` column (its repr, shortened). The live view sorts by any column (a menu: clicking a header
cannot reach the kernel from an HTML widget), cancels every run, and shows a chosen run's own panes
(its Job's live view) under the table. The record (``text/html`` and ``text/plain``) is the table in
grid order, "as of" a time while the sweep runs and final when it has ended.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from jupyter_sched.notebook.record import widget_mimes
from jupyter_sched.notebook.theme import NO_MATH, as_of, esc, fmt_duration, pill, table, text_table

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.sweep import Run, Sweep

SCALARS = (int, float, str, bool)
RESULT_CHARS = 60
#: Seconds between drawings of a running sweep's table (its elapsed times move on).
TICK = 1.0


def columns(sweep: "Sweep") -> Tuple[List[str], List[str], bool, bool]:
    """``(parameter names, result keys, has a plain result column, has an error column)``."""
    params: Dict[str, None] = {}
    keys: Dict[str, None] = {}
    plain = errors = False
    for run in sweep.runs:
        params.update(dict.fromkeys(run.params))
        if run.error:
            errors = True
        if run.outcome is not None and run.outcome.ok:
            value = run.outcome.value
            if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                keys.update(dict.fromkeys(k for k, v in value.items() if isinstance(v, SCALARS) or v is None))
            else:
                plain = True
    return list(params), [k for k in keys], plain, errors


def cells(run: "Run", params: List[str], keys: List[str], plain: bool, errors: bool, now: float) -> List[Any]:
    """The row's raw values (sortable): params, state, elapsed seconds, results, error."""
    value = run.outcome.value if run.outcome is not None and run.outcome.ok else None
    start = run.started or run.launched
    spent = None if start is None else (run.ended or now) - start
    row: List[Any] = [run.index, *(run.params.get(p) for p in params), run.state, spent]
    row += [value.get(k) if isinstance(value, dict) else None for k in keys]
    if plain:
        returned = run.outcome is not None and run.outcome.ok
        row.append(None if isinstance(value, dict) else _short(repr(value)) if returned else None)
    if errors:
        row.append(run.error or None)
    return row


def headers(params: List[str], keys: List[str], plain: bool, errors: bool) -> List[str]:
    """Column names; a result key named like a parameter (or a fixed column) is shown as ``key (result)``."""
    taken = {"#", "state", "elapsed", *params}
    shown = [f"{k} (result)" if k in taken else k for k in keys]
    return ["#", *params, "state", "elapsed", *shown, *(["result"] if plain else []), *(["error"] if errors else [])]


def rows(sweep: "Sweep", sort: Optional[str] = None, descending: bool = False) -> Tuple[List[str], List[List[Any]]]:
    params, keys, plain, errors = columns(sweep)
    names = headers(params, keys, plain, errors)
    now = time.time()
    data = [cells(run, params, keys, plain, errors, now) for run in list(sweep.runs)]
    if sort in names:
        i = names.index(sort)
        present = [r for r in data if r[i] is not None]
        missing = [r for r in data if r[i] is None]
        present.sort(key=lambda r: _sort_key(r[i]), reverse=descending)
        data = present + missing
    return names, data


def _sort_key(value: Any) -> Tuple[int, Any]:
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value))


def _short(text: str) -> str:
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"


def _fmt(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "elapsed":
        return fmt_duration(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def table_html(sweep: "Sweep", sort: Optional[str] = None, descending: bool = False) -> str:
    names, data = rows(sweep, sort, descending)
    body = []
    for row in data:
        body.append([pill(v) if n == "state" else esc(_fmt(n, v)) for n, v in zip(names, row)])
    return table(names, body, raw=True)


def table_text(sweep: "Sweep") -> str:
    names, data = rows(sweep)
    return text_table(names, [[_fmt(n, v) for n, v in zip(names, row)] for row in data])


def heading(sweep: "Sweep") -> str:
    return (
        f"sweep {sweep.name} of {sweep.fn_name}: {len(sweep.runs)} runs, "
        f"at most {sweep.max_concurrent} at a time; {sweep.counts_text()}"
    )


def record_bundle(sweep: "Sweep", as_of_ts: Optional[float] = None) -> Dict[str, str]:
    """The table in grid order, labelled "as of" while the sweep runs."""
    when = "" if sweep.finished or as_of_ts is None else f" ({as_of(as_of_ts)})"
    hint = (
        f"runs are apps named {sweep.name}-NNN (%sched_list); "
        f"reload after a restart: jupyter_sched.notebook.sweep.load_sweep({sweep.name!r})"
    )
    html = (
        f'<div class="jsched-record jsched-sweep {NO_MATH}" style="font-size:13px">'
        f"<div><b>{esc(heading(sweep))}</b>{esc(when)}</div>"
        f"{table_html(sweep)}<div style=\"font-size:11px;opacity:0.7\">{esc(hint)}</div></div>"
    )
    text = f"{heading(sweep)}{when}\n{table_text(sweep)}\n{hint}"
    return {"text/plain": text, "text/html": html}


class SweepView:
    """The live table: a header with counts, Cancel all, sort controls, a run picker that shows that
    run's panes. Redraws on the sweep's changes (and each second for elapsed times) until it ends.

    Only the view's own drawing thread writes its widgets. :meth:`redraw` (the sweep's change listener,
    and the sort controls' observer) only asks for a drawing and returns at once: it takes no lock that
    drawing holds, so neither the sweep's feeder thread nor an observer that ipywidgets fires while the
    drawing thread resets the sort menu's options ever waits on a drawing. The thread ends when the sweep
    has ended and no drawing is asked for, and starts again on the next request (a sort after the end).
    """

    def __init__(self, sweep: "Sweep") -> None:
        import ipywidgets as w

        self.sweep = sweep
        self.head = w.HTML()
        self.table = w.HTML()
        self.cancel_button = w.Button(description="Cancel all", icon="stop", button_style="danger",
                                      layout=w.Layout(width="auto", min_width="110px", flex="0 0 auto"))  # fmt: skip
        self.sort = w.Dropdown(description="sort by", options=["#"], value="#", layout=w.Layout(width="220px"))
        self.descending = w.Checkbox(description="descending", value=False, indent=False, layout=w.Layout(width="auto"))
        self.pick = w.Dropdown(description="run", options=[(f"{r.index}: {r.params}", r.index) for r in sweep.runs],
                               layout=w.Layout(width="300px"))  # fmt: skip
        self.show_button = w.Button(description="Show panes", icon="eye",
                                    layout=w.Layout(width="auto", min_width="120px", flex="0 0 auto"))
        self.panes = w.Output()
        self.cancel_button.on_click(lambda _b: sweep.cancel())
        self.show_button.on_click(self._show_run)
        controls = w.HBox([self.cancel_button, self.sort, self.descending, self.pick, self.show_button])
        self.widget = w.VBox([self.head, controls, self.table, self.panes])
        self.widget.add_class("jsched-sweep")
        self._sort_by = "#"  # the user's choice, kept while the menu's options are replaced
        self._wake = threading.Event()
        self._guard = threading.Lock()  # guards _drawer only; never held while a widget is written
        self._drawer: Optional[threading.Thread] = None
        self._draw()  # the first table, before any other thread can draw
        self.sort.observe(self._sort_chosen, names="value")
        self.descending.observe(lambda _c: self.redraw(), names="value")
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

    def _sort_chosen(self, change: Any) -> None:
        if threading.current_thread() is not self._drawer:  # not the drawing thread replacing the options
            self._sort_by = change["new"]
        self.redraw()

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
        if list(self.sort.options) != names:
            self.sort.options = names  # selects "#" (ipywidgets), which is not the user's choice: put it back
            self.sort.value = self._sort_by if self._sort_by in names else "#"
        sort_by = self._sort_by if self._sort_by in names else "#"
        self.head.value = f"<b>{esc(heading(self.sweep))}</b>"
        self.table.value = table_html(self.sweep, sort_by, self.descending.value)
        self.cancel_button.disabled = self.sweep.finished

    def _show_run(self, _button: Any = None) -> None:
        from IPython.display import display

        job = self.sweep.job(int(self.pick.value))
        self.panes.clear_output()
        with self.panes:
            if job is None:
                print("this run has not started (queued, or cancelled before it started)")
            else:
                print(f"run {self.pick.value}: {job.handle}")
                display(job)

    def widget_bundle(self) -> Dict[str, Any]:
        return widget_mimes(self.widget)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        """The widget while the sweep runs, with the record beside it; the record alone once it ended."""
        bundle = {} if self.sweep.finished else self.widget_bundle()
        bundle.update(record_bundle(self.sweep, None if self.sweep.finished else time.time()))
        return bundle

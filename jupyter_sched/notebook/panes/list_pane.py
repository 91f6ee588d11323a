"""``%sched_list`` as a live table: running apps first, then finished ones, newest first in each group.

Each row shows the state, name, handle, start time and age (running: for how long; finished: how long it
took), a Cancel button on running rows only (hidden, not removed, on finished ones so the columns stay
aligned), and an Open button that shows that app's live view (status over logs) under the table: no
handle to copy and no command to type. Rows are updated in place (a row's HTML changes only when what it
shows does, so an idle list of finished apps sends nothing); apps that appear while the list is live get a
row at their place in the order (new apps at the top). The ticker stops once every listed app has ended.
Cancel asks for a second click to confirm. Start and end times come from the app's status (read once for
a finished app, then cached), since the schedulers' listings carry only id, name and state.

Bounded whatever the history: the first screen has the first :data:`FIRST_SCREEN` entries in that order
and "Show more" adds as many again; a sweep's runs are one row with their counts; "this notebook" (the
apps this notebook launched, the default in a notebook) or "all" apps of the session. Only shown rows
have widgets, and the rows share their layout and style models, so the widget state a notebook saves
stays small (under 200 KB for a history of 1,000 apps: ``tests/notebook/test_list_scale.py``).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from jupyter_sched.frontend.jobs.sweep_names import sweep_label, sweep_of
from jupyter_sched.notebook.displays.record import RecordSource
from jupyter_sched.notebook.kernel.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.kernel.live import Ticker
from jupyter_sched.notebook.panes.theme import code, esc, fmt_duration, pill, text_table
from jupyter_sched.specs.output.masking import mask_out

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.kernel.session import AppRow, Session

CONFIRM_SECONDS = 4.0
_BUTTON = {"width": "92px"}
FIRST_SCREEN = 50
"""Entries (apps or sweeps) on the first screen; "Show more" adds as many again."""


@dataclass
class Times:
    """When an app's first replica started and (once it has ended) its last replica finished."""

    started: Optional[float] = None
    finished: Optional[float] = None
    final: bool = False


class TimeBook:
    """Start/end times per handle, read from the app's status; a finished app's are read only once."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self._times: Dict[str, Times] = {}

    def get(self, row: "AppRow") -> Times:
        known = self._times.get(row.handle)
        if known is not None and (known.final or (known.started is not None and not row.state.is_terminal)):
            return known
        try:
            status = self.runner.status(row.handle)
        except Exception:  # noqa: BLE001 - a row without times beats no list
            status = None
        reps = [r for role in (status.roles if status is not None else []) for r in role.replicas]
        starts = [r.started for r in reps if r.started is not None]
        ends = [r.finished for r in reps if r.finished is not None]
        final = status is not None and status.is_terminal()
        times = Times(min(starts) if starts else None, max(ends) if final and ends else None, final)
        self._times[row.handle] = times
        return times


def order(rows: List["AppRow"], book: TimeBook) -> List[Tuple["AppRow", Times]]:
    """Running (not ended) apps first, then ended ones; newest start first within each group."""
    timed = [(row, book.get(row)) for row in rows]
    return sorted(timed, key=lambda rt: (rt[0].state.is_terminal, -(rt[1].started or float("inf"))))


def when(times: Times, state: Any, now: float) -> Tuple[str, str]:
    """(start time, age): ``HH:MM:SS`` (with the date if not today); ``running 3m05s`` / ``took 4.2s``."""
    if times.started is None:
        return "-", "-"
    start = datetime.fromtimestamp(times.started)
    shown = start.strftime("%H:%M:%S" if start.date() == datetime.now().date() else "%Y-%m-%d %H:%M")
    if not state.is_terminal:
        return shown, f"running {fmt_duration(now - times.started)}"
    if times.finished is not None:
        return shown, f"took {fmt_duration(times.finished - times.started)}"
    return shown, "ended"


@dataclass
class Entry:
    """One line of the list: an app, or a sweep's runs (``sweep`` set) at the place of its first run."""

    rows: List[Tuple["AppRow", Times]]
    sweep: Optional[str] = None

    @property
    def key(self) -> str:
        return f"sweep:{self.sweep}" if self.sweep else self.rows[0][0].handle

    @property
    def running(self) -> bool:
        return any(not r.state.is_terminal for r, _ in self.rows)


def entries(timed: List[Tuple["AppRow", Times]]) -> List[Entry]:
    """Apps in order, a sweep's runs (two or more) as one entry where its first run is."""
    runs: Dict[str, List[Tuple["AppRow", Times]]] = {}
    for row, times in timed:
        name = sweep_of(row.name)
        if name:
            runs.setdefault(name, []).append((row, times))
    out: List[Entry] = []
    placed = set()
    for row, times in timed:
        name = sweep_of(row.name)
        if name and len(runs[name]) > 1:
            if name not in placed:
                placed.add(name)
                out.append(Entry(runs[name], name))
            continue
        out.append(Entry([(row, times)]))
    return out


def sweep_summary(entry: Entry) -> Tuple[str, str, Times]:
    """(state shown, ``3 runs: 2 SUCCEEDED, 1 RUNNING``, the sweep's first start and last end)."""
    counts: Dict[str, int] = {}
    for row, _ in entry.rows:
        counts[str(row.state)] = counts.get(str(row.state), 0) + 1
    starts = [t.started for _, t in entry.rows if t.started is not None]
    ends = [t.finished for _, t in entry.rows if t.finished is not None]
    running = entry.running
    worst = [s for s in ("FAILED", "CANCELLED", "UNKNOWN") if counts.get(s)]
    state = "RUNNING" if running else worst[0] if worst else "SUCCEEDED"
    text = f"{len(entry.rows)} runs: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda c: -c[1]))
    times = Times(min(starts) if starts else None, None if running or not ends else max(ends), not running)
    return state, text, times


def rows_text(rows: List["AppRow"], notices: List[str], book: Optional[TimeBook] = None, ages: bool = True,
              limit: Optional[int] = FIRST_SCREEN) -> str:  # fmt: skip
    """The list as text, in the pane's order, a sweep as one line; the first ``limit`` entries (None: all).
    ``ages=False`` leaves out running apps' ages (for a saved notebook's fallback, where they would go
    stale)."""
    if not rows:
        text = "no apps in this session"
    else:
        now = time.time()
        timed = order(rows, book) if book is not None else [(r, Times()) for r in rows]
        listed = entries(timed)
        shown = listed if limit is None else listed[:limit]
        table = []
        for entry in shown:
            if entry.sweep:
                state, counts, t = sweep_summary(entry)
                started, age = when(t, _State(state), now)
                table.append((f"sweep {entry.sweep}", counts, state, started, age if ages or t.final else ""))
                continue
            (r, t), = entry.rows
            started, age = when(t, r.state, now)
            table.append((r.handle, r.name, str(r.state), started, age if ages or r.state.is_terminal else ""))
        text = text_table(("APP HANDLE", "NAME", "STATE", "STARTED", "AGE"), table)
        if len(shown) < len(listed):
            text += f"\n... and {len(listed) - len(shown)} more (%sched_list -n 0 lists them all)"
    return "\n".join([text, *(str(mask_out(n)) for n in notices)])  # a backend's error text may quote a secret


@dataclass(frozen=True)
class _State:
    """A sweep's summary state where ``when`` expects an AppState."""

    name: str

    @property
    def is_terminal(self) -> bool:
        return self.name != "RUNNING"

    def __str__(self) -> str:
        return self.name


class _Shared:
    """Layout and style models every row uses (one model each, not one per row)."""

    def __init__(self) -> None:
        import ipywidgets as w
        from ipywidgets.widgets.widget_string import HTMLStyle  # not re-exported at the top in 8.1

        self.cancel_shown = w.Layout(visibility="visible", **_BUTTON)
        self.cancel_hidden = w.Layout(visibility="hidden", **_BUTTON)
        self.button = w.Layout(**_BUTTON)
        self.button_style = w.ButtonStyle()
        self.html = w.Layout()
        self.html_style = HTMLStyle()
        self.row = w.Layout()

    def close(self) -> None:
        for model in (self.cancel_shown, self.cancel_hidden, self.button, self.button_style, self.html,
                      self.html_style, self.row):  # fmt: skip
            model.close()


class _Row:
    def __init__(self, pane: "ListPane", row: "AppRow") -> None:
        import ipywidgets as w

        shared = pane.shared
        self.pane = pane
        self.row = row
        self.times = Times()
        self.html = w.HTML(layout=shared.html, style=shared.html_style)
        self.button = w.Button(description="Cancel", button_style="danger", icon="stop", style=shared.button_style,
                               layout=shared.cancel_shown, tooltip=f"cancel {row.handle}")  # fmt: skip
        self.open = w.Button(description="Open", icon="eye", layout=shared.button, style=shared.button_style,
                             tooltip="show this app's live view under the list")  # fmt: skip
        self.button.on_click(self._on_click)
        self.open.on_click(self._on_open)
        serve_on_side_thread(self.button, self.open)  # handled even while a cell waits (ipykernel 7)
        self.widget = w.HBox([self.button, self.open, self.html], layout=shared.row)
        self.widget.add_class("jsched-list-row")
        self.confirm_until = 0.0

    def close(self) -> None:
        for widget in (self.widget, self.button, self.open, self.html):
            widget.close()

    def update(self, row: "AppRow", times: Times, now: float) -> None:
        self.row, self.times = row, times
        started, age = when(times, row.state, now)
        value = (
            f"{pill(row.state)} <b>{esc(row.name)}</b> {code(row.handle)} "
            f'<span style="font-size:12px;opacity:0.8">started {esc(started)} &middot; {esc(age)}</span>'
        )
        with self.html.hold_sync(), self.button.hold_sync():
            if value != self.html.value:
                self.html.value = value
            ended = row.state.is_terminal
            self.button.disabled = ended or self.button.description == "Cancelling..."
            layout = self.pane.shared.cancel_hidden if ended else self.pane.shared.cancel_shown
            if self.button.layout is not layout:
                self.button.layout = layout
            if ended or (self.button.description == "Confirm?" and time.monotonic() >= self.confirm_until):
                self.button.description = "Cancel"

    def _on_click(self, _button: Any = None) -> None:
        with self.pane.lock:
            now = time.monotonic()
            if now >= self.confirm_until:
                self.confirm_until = now + CONFIRM_SECONDS
                self.button.description = "Confirm?"
                return
            self.button.description = "Cancelling..."
            self.button.disabled = True
        try:
            self.pane.session.runner.cancel(self.row.handle)
        except Exception as e:  # noqa: BLE001 - shown in the list, never raised on a comm thread
            with self.pane.lock:
                self.pane.notices.append(f"cancel {self.row.handle}: {e}")
                self.button.description = "Cancel"
        if self.pane.ticker is not None:
            self.pane.ticker.wake()

    def _on_open(self, _button: Any = None) -> None:
        self.pane.show(self.row.handle)


class _SweepRow:
    """A sweep's runs as one line: its state, name, counts, start and age (no buttons: the sweep's own
    table has them; ``load_sweep(name)`` shows it)."""

    def __init__(self, pane: "ListPane", name: str) -> None:
        import ipywidgets as w

        self.name = name
        self.html = w.HTML(layout=pane.shared.html, style=pane.shared.html_style)
        self.html.add_class("jsched-list-row")
        self.html.add_class("jsched-list-sweep")
        self.widget = self.html

    def update(self, entry: Entry, now: float) -> None:
        state, counts, times = sweep_summary(entry)
        started, age = when(times, _State(state), now)
        value = (
            f"{pill(state)} <b>{esc(sweep_label(self.name))}</b> sweep {code(self.name)} "
            f'<span style="font-size:12px;opacity:0.8">{esc(counts)} &middot; started {esc(started)}'
            f" &middot; {esc(age)}</span>"
        )
        if value != self.html.value:
            self.html.value = value

    def close(self) -> None:
        self.html.close()


class ListPane(RecordSource):
    """The live list. Create it on the cell's thread with the first listing; ``start()`` keeps it live."""

    def __init__(self, session: "Session", settings: PaneSettings, rows: List["AppRow"], notices: List[str],
                 schedulers: Optional[List[str]] = None, limit: Optional[int] = FIRST_SCREEN) -> None:  # fmt: skip
        import ipywidgets as w

        self.session = session
        self.settings = settings
        self.schedulers = schedulers
        self.lock = threading.Lock()
        self.notices = list(notices)
        self.shared = _Shared()
        #: The shown apps' rows, by handle (apps beyond the first screen and sweeps' runs have none).
        self.rows: Dict[str, _Row] = {}
        self.sweeps: Dict[str, _SweepRow] = {}
        #: Every app listed (in scope or not), as last listed.
        self.listed: List["AppRow"] = list(rows)
        self.first_screen = limit or 10**9
        self.limit = self.first_screen
        self.book = TimeBook(session.runner)
        self.ticker: Optional[Ticker] = None
        self.opened: Optional[str] = None
        self.notebook = os.environ.get("JPY_SESSION_NAME") or ""
        """The notebook this kernel runs (Jupyter tells its kernels); "this notebook" lists its launches."""
        self.header = w.HTML()
        self.scope = w.ToggleButtons(options=[("this notebook", "notebook"), ("all", "all")],
                                     value="notebook" if self.notebook else "all",
                                     tooltips=["apps launched from this notebook", "every app of the session"],
                                     layout=w.Layout(display="" if self.notebook else "none"))  # fmt: skip
        self.scope.style.button_width = "110px"
        self.scope.observe(self._on_scope, "value")
        self.more = w.Button(description="Show more", icon="angle-down", layout=w.Layout(width="auto"))
        self.more.on_click(self._on_more)
        serve_on_side_thread(self.scope, self.more)
        self.body = w.VBox()
        self.detail = w.VBox()
        self.widget = w.VBox([self.header, self.scope, self.body, self.more, self.detail])
        self.widget.add_class("jsched-list")
        self._apply(rows)

    def start(self) -> "ListPane":
        if any(not r.state.is_terminal for r in self.listed):
            interval = max(self.settings.status_interval, 1.0)
            self.ticker = Ticker("list-pane", interval, self._tick).start()
        return self

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()

    def _on_scope(self, _change: Any = None) -> None:
        with self.lock:
            self.limit = self.first_screen
            self._apply(self.listed)

    def _on_more(self, _button: Any = None) -> None:
        with self.lock:
            self.limit += self.first_screen
            self._apply(self.listed)

    def in_scope(self, rows: List["AppRow"]) -> List["AppRow"]:
        """All rows, or those this notebook launched (the session's launch registry says which)."""
        if self.scope.value != "notebook":
            return rows
        mine = {e["handle"] for e in self.session.registry() if e.get("notebook") == self.notebook}
        mine.update(self.session.launches)
        return [r for r in rows if r.handle in mine]

    def show(self, handle: str) -> None:
        """Shows the live view of ``handle`` under the list (Open); opening it again closes it."""
        import ipywidgets as w

        if self.opened == handle:
            self.opened, self.detail.children = None, ()
            return
        job = self.session.job(handle)
        title = w.HTML(f'<div style="font-size:12px;margin-top:6px">opened {code(handle)} &middot; keep it:'
                       f" {code('job = %sched_job ' + handle)}</div>")  # fmt: skip
        self.opened = handle
        self.detail.children = (title, job.view().widget)

    def _tick(self) -> bool:
        rows, notices = self.session.list_apps(self.schedulers)
        with self.lock:
            self.notices = notices + [n for n in self.notices if n.startswith("cancel ")]
            self._apply(rows)
            return any(not r.state.is_terminal for r in self.listed)

    def _apply(self, rows: List["AppRow"]) -> None:
        """Shows the first ``limit`` entries of ``rows`` in scope; rows of apps gone from the listing stay
        (with their last state) below them."""
        now = time.time()
        known = {r.handle for r in rows}
        gone = [v.row for h, v in self.rows.items() if h not in known]
        self.listed = list(rows) + gone
        scoped = self.in_scope(self.listed)
        listed = entries(order(scoped, self.book))
        shown = listed[: self.limit]
        views: List[Any] = []
        for entry in shown:
            if entry.sweep:
                sweep = self.sweeps.get(entry.sweep)
                if sweep is None:
                    sweep = self.sweeps[entry.sweep] = _SweepRow(self, entry.sweep)
                sweep.update(entry, now)
                views.append(sweep)
                continue
            (row, times), = entry.rows
            view = self.rows.get(row.handle)
            if view is None:
                view = self.rows[row.handle] = _Row(self, row)
            view.update(row, times, now)
            views.append(view)
        for handle in [h for h, v in self.rows.items() if v not in views and h != self.opened]:
            self.rows.pop(handle).close()
        for name in [n for n, v in self.sweeps.items() if v not in views]:
            self.sweeps.pop(name).close()
        ordered = tuple(v.widget for v in views)
        if ordered != tuple(self.body.children):
            self.body.children = ordered
        rest = len(listed) - len(shown)
        self.more.layout.display = "" if rest > 0 else "none"
        more = f"Show {min(rest, self.first_screen)} more ({rest} not shown)"
        if self.more.description != more:
            self.more.description = more
        live = sum(1 for r in scoped if not r.state.is_terminal)
        where = " launched from this notebook" if self.scope.value == "notebook" else ""
        text = f"session <b>{esc(self.session.name)}</b> &middot; {len(scoped)} app(s){where}, {live} running"
        text += "".join(f'<div style="color:#e75c58;font-size:12px">{esc(mask_out(n))}</div>' for n in self.notices)
        if not scoped:
            text += f'<div style="font-size:12px">no apps{where or " in this session"}</div>'
        if text != self.header.value:
            self.header.value = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        rows = self.in_scope(self.listed)
        text = (
            rows_text(rows, self.notices, self.book, ages=False) + "\n(states as listed; re-run %sched_list to refresh)"
        )
        bundle["text/plain"] = text
        bundle["text/html"] = f"<pre>{esc(text)}</pre>"
        return bundle

    # -- the cell's record (see .record): static once every listed app has ended (then Open is gone:
    # %sched_status / %sched_logs HANDLE show one; a list with running apps stays live, Open included) ---
    @property
    def final(self) -> bool:
        with self.lock:
            return all(r.state.is_terminal for r in self.listed)

    def poll(self) -> None:
        """Nothing to do: the ticker refreshes the rows while any app runs."""

    def when_final(self, callback: Any) -> None:
        """No callback: the next cell's ``post_run_cell`` publishes the final list."""

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        from jupyter_sched.notebook.panes.theme import NO_MATH, as_of

        with self.lock:
            text = rows_text(self.in_scope(self.listed), self.notices, self.book, ages=as_of_ts is None)
        if as_of_ts is not None:
            text += f"\n(states {as_of(as_of_ts)}; re-run %sched_list to refresh)"
        return {"text/plain": text, "text/html": f'<pre class="jsched-record {NO_MATH}">{esc(text)}</pre>'}

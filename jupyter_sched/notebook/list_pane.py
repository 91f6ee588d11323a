"""``%sched_list`` as a live table: running apps first, then finished ones, newest first in each group.

Each row shows the state, name, handle, start time and age (running: for how long; finished: how long it
took), a Cancel button on running rows only (hidden, not removed, on finished ones so the columns stay
aligned), and an Open button that shows that app's live view (status over logs) under the table: no
handle to copy and no command to type. Rows are updated in place (a row's HTML changes only when what it
shows does, so an idle list of finished apps sends nothing); apps that appear while the list is live get a
row at their place in the order (new apps at the top). The ticker stops once every listed app has ended.
Cancel asks for a second click to confirm. Start and end times come from the app's status (read once for
a finished app, then cached), since the schedulers' listings carry only id, name and state.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from jupyter_sched.notebook.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.live import Ticker
from jupyter_sched.notebook.record import RecordSource
from jupyter_sched.notebook.theme import code, esc, fmt_duration, pill, text_table

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.session import AppRow, Session

CONFIRM_SECONDS = 4.0
_BUTTON = {"width": "92px"}


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


def rows_text(rows: List["AppRow"], notices: List[str], book: Optional[TimeBook] = None, ages: bool = True) -> str:
    """The list as text, in the pane's order. ``ages=False`` leaves out running apps' ages (for a saved
    notebook's fallback, where they would go stale)."""
    if not rows:
        text = "no apps in this session"
    else:
        now = time.time()
        timed = order(rows, book) if book is not None else [(r, Times()) for r in rows]
        table = []
        for r, t in timed:
            started, age = when(t, r.state, now)
            table.append((r.handle, r.name, str(r.state), started, age if ages or r.state.is_terminal else ""))
        text = text_table(("APP HANDLE", "NAME", "STATE", "STARTED", "AGE"), table)
    return "\n".join([text, *notices])


class _Row:
    def __init__(self, pane: "ListPane", row: "AppRow") -> None:
        import ipywidgets as w

        self.pane = pane
        self.row = row
        self.times = Times()
        self.html = w.HTML()
        self.button = w.Button(description="Cancel", button_style="danger", icon="stop",
                               layout=w.Layout(**_BUTTON), tooltip=f"cancel {row.handle}")  # fmt: skip
        self.open = w.Button(description="Open", icon="eye", layout=w.Layout(**_BUTTON),
                             tooltip="show this app's live view under the list")  # fmt: skip
        self.button.on_click(self._on_click)
        self.open.on_click(self._on_open)
        serve_on_side_thread(self.button, self.open)  # handled even while a cell waits (ipykernel 7)
        self.widget = w.HBox([self.button, self.open, self.html])
        self.widget.add_class("jsched-list-row")
        self.confirm_until = 0.0

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
            visibility = "hidden" if ended else "visible"
            if self.button.layout.visibility != visibility:
                self.button.layout.visibility = visibility
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


class ListPane(RecordSource):
    """The live list. Create it on the cell's thread with the first listing; ``start()`` keeps it live."""

    def __init__(self, session: "Session", settings: PaneSettings, rows: List["AppRow"], notices: List[str],
                 schedulers: Optional[List[str]] = None) -> None:  # fmt: skip
        import ipywidgets as w

        self.session = session
        self.settings = settings
        self.schedulers = schedulers
        self.lock = threading.Lock()
        self.notices = list(notices)
        self.rows: Dict[str, _Row] = {}
        self.book = TimeBook(session.runner)
        self.ticker: Optional[Ticker] = None
        self.opened: Optional[str] = None
        self.header = w.HTML()
        self.body = w.VBox()
        self.detail = w.VBox()
        self.widget = w.VBox([self.header, self.body, self.detail])
        self.widget.add_class("jsched-list")
        self._apply(rows)

    def start(self) -> "ListPane":
        if any(not r.row.state.is_terminal for r in self.rows.values()):
            interval = max(self.settings.status_interval, 1.0)
            self.ticker = Ticker("list-pane", interval, self._tick).start()
        return self

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()

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
            return any(not r.row.state.is_terminal for r in self.rows.values())

    def _apply(self, rows: List["AppRow"]) -> None:
        now = time.time()
        timed = order(rows, self.book)
        for row, times in timed:
            existing = self.rows.get(row.handle)
            if existing is None:
                existing = self.rows[row.handle] = _Row(self, row)
            existing.update(row, times, now)
        ordered = tuple(self.rows[row.handle].widget for row, _ in timed)
        ordered += tuple(r.widget for h, r in self.rows.items() if r.widget not in ordered)  # gone from the listing
        if ordered != tuple(self.body.children):
            self.body.children = ordered
        live = sum(1 for r in self.rows.values() if not r.row.state.is_terminal)
        text = f"session <b>{esc(self.session.name)}</b> &middot; {len(self.rows)} app(s), {live} running"
        text += "".join(f'<div style="color:#e75c58;font-size:12px">{esc(n)}</div>' for n in self.notices)
        if not self.rows:
            text += '<div style="font-size:12px">no apps in this session</div>'
        if text != self.header.value:
            self.header.value = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        rows = [r.row for r in self.rows.values()]
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
            return all(r.row.state.is_terminal for r in self.rows.values())

    def poll(self) -> None:
        """Nothing to do: the ticker refreshes the rows while any app runs."""

    def when_final(self, callback: Any) -> None:
        """No callback: the next cell's ``post_run_cell`` publishes the final list."""

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        from jupyter_sched.notebook.theme import NO_MATH, as_of

        with self.lock:
            rows = [r.row for r in self.rows.values()]
            text = rows_text(rows, self.notices, self.book, ages=as_of_ts is None)
        if as_of_ts is not None:
            text += f"\n(states {as_of(as_of_ts)}; re-run %sched_list to refresh)"
        return {"text/plain": text, "text/html": f'<pre class="jsched-record {NO_MATH}">{esc(text)}</pre>'}

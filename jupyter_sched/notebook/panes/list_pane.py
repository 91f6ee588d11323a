"""``%sched_list`` as a live table: running apps first, then finished ones, newest first in each group.

Each row shows the state, name, handle, start time and age (running: for how long; finished: how long it
took), the main metric's last value when the app logged one (``loss 0.31``, the model's ``metrics``), a
Cancel button on running rows only (hidden, not removed, on finished ones so the columns stay aligned),
and an Open button that shows that app's live view (status over logs) under the table: no
handle to copy and no command to type. Rows are updated in place (a row's HTML changes only when what it
shows does, so an idle list of finished apps sends nothing); apps that appear while the list is live get a
row at their place in the order (new apps at the top). The ticker stops once every listed app has ended.
Cancel asks for a second click to confirm. What a row says (state, times, counts, a sweep's state and
label) is the front-end model's (:mod:`jupyter_sched.frontend.jobs`): this module only renders its rows,
listed by the session's one :class:`~jupyter_sched.frontend.jobs.listing.Lister` (an ended app's status is
read once, then kept).

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
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from jupyter_sched.frontend.jobs.metrics import main_metric_text
from jupyter_sched.frontend.jobs.order import Entry, group
from jupyter_sched.frontend.jobs.rows import JobRow, SweepRow
from jupyter_sched.notebook.displays.record import RecordSource
from jupyter_sched.notebook.kernel.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.kernel.live import Ticker
from jupyter_sched.notebook.panes.theme import code, esc, fmt_duration, pill, text_table
from jupyter_sched.specs.output.masking import mask_out

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.kernel.session import Session

CONFIRM_SECONDS = 4.0
_BUTTON = {"width": "92px"}
FIRST_SCREEN = 50
"""Entries (apps or sweeps) on the first screen; "Show more" adds as many again."""


def entries(rows: Sequence[JobRow]) -> List[Entry]:
    """The model's entries (:func:`jupyter_sched.frontend.jobs.order.group`): a sweep's runs are counted
    in its row, none carried (its own table shows them)."""
    return group(rows, runs_per_sweep=0)


def when(row: Union[JobRow, SweepRow], now: float) -> Tuple[str, str]:
    """(start time, age): ``HH:MM:SS`` (with the date if not today); ``running 3m05s`` / ``took 4.2s``."""
    if row.started is None:
        return "-", "-"
    start = datetime.fromtimestamp(row.started)
    shown = start.strftime("%H:%M:%S" if start.date() == datetime.now().date() else "%Y-%m-%d %H:%M")
    if row.running:
        return shown, f"running {fmt_duration(now - row.started)}"
    if row.span is not None:
        return shown, f"took {fmt_duration(row.span)}"
    return shown, "ended"


def counts_text(row: SweepRow) -> str:
    """``3 runs: 2 SUCCEEDED, 1 RUNNING``."""
    return f"{row.total} runs: " + ", ".join(f"{n} {s}" for s, n in sorted(row.counts.items(), key=lambda c: -c[1]))


def rows_text(rows: Sequence[JobRow], notices: List[str], ages: bool = True,
              limit: Optional[int] = FIRST_SCREEN) -> str:  # fmt: skip
    """The list as text, in the model's order, a sweep as one line; the first ``limit`` entries (None: all).
    ``ages=False`` leaves out running apps' ages (for a saved notebook's fallback, where they would go
    stale)."""
    if not rows:
        text = "no apps in this session"
    else:
        now = time.time()
        listed = entries(rows)
        shown = listed if limit is None else listed[:limit]
        table: List[Tuple[str, ...]] = []
        for entry in shown:
            started, age = when(entry, now)
            age = age if ages or not entry.running else ""
            if isinstance(entry, SweepRow):
                table.append((f"sweep {entry.sweep}", counts_text(entry), entry.state, started, age, ""))
            else:
                table.append((entry.handle, entry.name, entry.state, started, age, main_metric_text(entry.metrics)))
        headers: Tuple[str, ...] = ("APP HANDLE", "NAME", "STATE", "STARTED", "AGE", "METRIC")
        if not any(row[-1] for row in table):  # a METRIC column once a listed app logged a metric
            headers, table = headers[:-1], [row[:-1] for row in table]
        text = text_table(headers, table)
        if len(shown) < len(listed):
            text += f"\n... and {len(listed) - len(shown)} more (%sched_list -n 0 lists them all)"
    return "\n".join([text, *(str(mask_out(n)) for n in notices)])  # a backend's error text may quote a secret


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
    def __init__(self, pane: "ListPane", row: JobRow) -> None:
        import ipywidgets as w

        shared = pane.shared
        self.pane = pane
        self.row = row
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

    def update(self, row: JobRow, now: float) -> None:
        self.row = row
        started, age = when(row, now)
        metric = main_metric_text(row.metrics)
        metric_html = f' &middot; <span class="jsched-list-metric">{esc(metric)}</span>' if metric else ""
        value = (
            f"{pill(row.state)} <b>{esc(row.name)}</b> {code(row.handle)} "
            f'<span style="font-size:12px;opacity:0.8">started {esc(started)} &middot; {esc(age)}{metric_html}</span>'
        )
        with self.html.hold_sync(), self.button.hold_sync():
            if value != self.html.value:
                self.html.value = value
            ended = not row.running
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

    def update(self, entry: SweepRow, now: float) -> None:
        started, age = when(entry, now)
        value = (
            f"{pill(entry.state)} <b>{esc(entry.label)}</b> sweep {code(self.name)} "
            f'<span style="font-size:12px;opacity:0.8">{esc(counts_text(entry))} &middot; started {esc(started)}'
            f" &middot; {esc(age)}</span>"
        )
        if value != self.html.value:
            self.html.value = value

    def close(self) -> None:
        self.html.close()


class ListPane(RecordSource):
    """The live list. Create it on the cell's thread with the first listing; ``start()`` keeps it live."""

    def __init__(self, session: "Session", settings: PaneSettings, rows: List[JobRow], notices: List[str],
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
        self.listed: List[JobRow] = list(rows)
        self.first_screen = limit or 10**9
        self.limit = self.first_screen
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
        if any(r.running for r in self.listed):
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

    def in_scope(self, rows: List[JobRow]) -> List[JobRow]:
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
        listing = self.session.list_jobs(self.schedulers)
        with self.lock:
            self.notices = listing.notices + [n for n in self.notices if n.startswith("cancel ")]
            self._apply(listing.rows)
            return any(r.running for r in self.listed)

    def _apply(self, rows: List[JobRow]) -> None:
        """Shows the first ``limit`` entries of ``rows`` in scope; rows of apps gone from the listing stay
        (with their last state) below them."""
        now = time.time()
        known = {r.handle for r in rows}
        gone = [v.row for h, v in self.rows.items() if h not in known]
        self.listed = list(rows) + gone
        scoped = self.in_scope(self.listed)
        listed = entries(scoped)
        shown = listed[: self.limit]
        views: List[Any] = []
        for entry in shown:
            if isinstance(entry, SweepRow):
                sweep = self.sweeps.get(entry.sweep)
                if sweep is None:
                    sweep = self.sweeps[entry.sweep] = _SweepRow(self, entry.sweep)
                sweep.update(entry, now)
                views.append(sweep)
                continue
            view = self.rows.get(entry.handle)
            if view is None:
                view = self.rows[entry.handle] = _Row(self, entry)
            view.update(entry, now)
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
        live = sum(1 for r in scoped if r.running)
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
        text = rows_text(rows, self.notices, ages=False) + "\n(states as listed; re-run %sched_list to refresh)"
        bundle["text/plain"] = text
        bundle["text/html"] = f"<pre>{esc(text)}</pre>"
        return bundle

    # -- the cell's record (see .record): static once every listed app has ended (then Open is gone:
    # %sched_status / %sched_logs HANDLE show one; a list with running apps stays live, Open included) ---
    @property
    def final(self) -> bool:
        with self.lock:
            return all(not r.running for r in self.listed)

    def poll(self) -> None:
        """Nothing to do: the ticker refreshes the rows while any app runs."""

    def when_final(self, callback: Any) -> None:
        """No callback: the next cell's ``post_run_cell`` publishes the final list."""

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        from jupyter_sched.notebook.panes.theme import NO_MATH, as_of

        with self.lock:
            text = rows_text(self.in_scope(self.listed), self.notices, ages=as_of_ts is None)
        if as_of_ts is not None:
            text += f"\n(states {as_of(as_of_ts)}; re-run %sched_list to refresh)"
        return {"text/plain": text, "text/html": f'<pre class="jsched-record {NO_MATH}">{esc(text)}</pre>'}

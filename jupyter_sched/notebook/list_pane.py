"""``%sched_list`` as a live table: one row per app of the session, each with a Cancel button.

Rows are updated in place (a row's HTML changes only when its state does, so an idle list sends nothing);
apps that appear while the list is live get a new row. The ticker stops once every listed app has ended;
run ``%sched_list`` again to see apps started later. Cancel asks for a second click to confirm.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.live import Ticker
from jupyter_sched.notebook.theme import code, esc, pill, text_table

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.session import AppRow, Session

CONFIRM_SECONDS = 4.0


def rows_text(rows: List["AppRow"], notices: List[str]) -> str:
    if not rows:
        text = "no apps in this session"
    else:
        text = text_table(("APP HANDLE", "NAME", "STATE"), [(r.handle, r.name, str(r.state)) for r in rows])
    return "\n".join([text, *notices])


class _Row:
    def __init__(self, pane: "ListPane", row: "AppRow") -> None:
        import ipywidgets as w

        self.pane = pane
        self.row = row
        self.html = w.HTML()
        self.button = w.Button(description="Cancel", button_style="danger", icon="stop",
                               layout=w.Layout(width="auto"), tooltip=f"cancel {row.handle}")  # fmt: skip
        self.button.on_click(self._on_click)
        self.widget = w.HBox([self.button, self.html])
        self.confirm_until = 0.0
        self.update(row)

    def update(self, row: "AppRow") -> None:
        self.row = row
        value = f"{pill(row.state)} <b>{esc(row.name)}</b> {code(row.handle)}"
        with self.html.hold_sync(), self.button.hold_sync():
            if value != self.html.value:
                self.html.value = value
            ended = row.state.is_terminal
            self.button.disabled = ended or self.button.description == "Cancelling..."
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


class ListPane:
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
        self.ticker: Optional[Ticker] = None
        self.header = w.HTML()
        self.body = w.VBox()
        self.widget = w.VBox([self.header, self.body])
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

    def _tick(self) -> bool:
        rows, notices = self.session.list_apps(self.schedulers)
        with self.lock:
            self.notices = notices + [n for n in self.notices if n.startswith("cancel ")]
            self._apply(rows)
            return any(not r.row.state.is_terminal for r in self.rows.values())

    def _apply(self, rows: List["AppRow"]) -> None:
        added = []
        for row in rows:
            existing = self.rows.get(row.handle)
            if existing is None:
                existing = self.rows[row.handle] = _Row(self, row)
                added.append(existing.widget)
            else:
                existing.update(row)
        if added:
            self.body.children = tuple(self.body.children) + tuple(added)
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
        bundle["text/plain"] = rows_text(rows, self.notices) + "\n(states as listed; re-run %sched_list to refresh)"
        bundle["text/html"] = f"<pre>{esc(bundle['text/plain'])}</pre>"
        return bundle

    # -- the cell's record (see .record): static once every listed app has ended ---------------------
    @property
    def final(self) -> bool:
        with self.lock:
            return all(r.row.state.is_terminal for r in self.rows.values())

    def poll(self) -> None:
        """Nothing to do: the ticker refreshes the rows while any app runs."""

    def when_final(self, callback: Any) -> None:
        """No callback: the next cell's ``post_run_cell`` publishes the final list."""

    def widget_bundle(self) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        return {k: v for k, v in bundle.items() if k.startswith("application/vnd.jupyter.widget")}

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        from jupyter_sched.notebook.theme import NO_MATH, as_of

        with self.lock:
            rows = [r.row for r in self.rows.values()]
            text = rows_text(rows, self.notices)
        if as_of_ts is not None:
            text += f"\n(states {as_of(as_of_ts)}; re-run %sched_list to refresh)"
        return {"text/plain": text, "text/html": f'<pre class="jsched-record {NO_MATH}">{esc(text)}</pre>'}

    def _ipython_display_(self) -> None:
        from jupyter_sched.notebook import record

        record.show(self)

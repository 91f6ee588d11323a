"""The status pane of one app: identity, a state pill, elapsed time, one row per replica, a Cancel button.

A ticker polls the scheduler every ``status_interval`` (the log pane wakes it as soon as every replica's
output has ended, so the final state shows at once) and sets one HTML trait under the pane's lock, only
when the rendering changed. At a terminal state it renders the final summary, disables Cancel and stops.
Cancel asks for confirmation (second click within a few seconds) because it cannot be undone; clicks may
arrive on another thread (JupyterLab subshells), hence the lock.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Optional

from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.live import Ticker
from jupyter_sched.notebook.reprs import _messages_html, replica_table_html
from jupyter_sched.notebook.theme import code, esc, fmt_duration, pill
from jupyter_sched.notebook.usage_view import UsageView
from jupyter_sched.specs import AppState, AppStatus

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.job import Job

CONFIRM_SECONDS = 4.0


def app_span(status: Optional[AppStatus], now: float) -> Optional[float]:
    """Seconds from the first replica start to the last replica end (or ``now`` while any runs)."""
    if status is None:
        return None
    reps = [r for role in status.roles for r in role.replicas]
    starts = [r.started for r in reps if r.started is not None]
    if not starts:
        return None
    ends = [r.finished for r in reps]
    end = max(e for e in ends if e is not None) if status.is_terminal() and all(e is not None for e in ends) else now
    return end - min(starts)


def header_html(job: "Job", status: Optional[AppStatus], now: Optional[float]) -> str:
    """Name, app id, scheduler, state pill and elapsed time (``now`` None: only once terminal)."""
    state = status.state if status is not None else AppState.UNKNOWN
    span = app_span(status, now if now is not None else time.time())
    show = status is not None and (status.is_terminal() or now is not None)
    took = f" &middot; {fmt_duration(span)}" if show and span is not None else ""
    return (
        f'<div style="font-size:13px"><b>{esc(job.name)}</b> {code(job.app_id)} on {esc(job.scheduler)} '
        f"{pill(state)}{took}</div>"
    )


class StatusPane:
    """Widgets showing an app's state, refreshed until the app ends."""

    def __init__(self, job: "Job", settings: PaneSettings, status: Optional[AppStatus]) -> None:
        import ipywidgets as w

        self.job = job
        self.settings = settings
        self.status = status
        self.lock = threading.Lock()
        self.notice = ""
        self.ticker: Optional[Ticker] = None
        self._confirm_until = 0.0
        self.usage = UsageView()
        if status is not None:
            self.usage.update(job.usage)
        self.html = w.HTML()
        self.cancel_button = w.Button(description="Cancel", button_style="danger", icon="stop",
                                      tooltip="Cancel the app (asks to confirm)")  # fmt: skip
        hint = f"re-attach: <code>%sched_status {esc(job.handle)}</code>"
        self.widget = w.VBox([self.html, w.HBox([self.cancel_button, w.HTML(hint)])])
        self.widget.add_class("jsched-status")
        self.cancel_button.on_click(self._on_cancel)
        self._render_locked()

    @property
    def terminal(self) -> bool:
        return self.status is None or self.status.is_terminal()

    def start(self) -> "StatusPane":
        if not self.terminal:
            self.ticker = Ticker("status-pane", self.settings.status_interval, self._tick).start()
        return self

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()

    def wake(self) -> None:
        if self.ticker is not None:
            self.ticker.wake()

    def _tick(self) -> bool:
        status = self.job.fetch_status()
        self.usage.update(self.job.usage)
        with self.lock:
            self.status = status
            self._render_locked()
            return not self.terminal

    def _render_locked(self) -> None:
        status = self.status
        now = None if self.terminal else time.time()
        body = header_html(self.job, status, now)
        if status is None:
            body += '<div style="font-size:12px">the scheduler does not know this app (any more)</div>'
        else:
            body += replica_table_html(status, now) + self.usage.html() + _messages_html(status)
        if self.notice:
            body += f'<div style="color:#e75c58;font-size:12px">{esc(self.notice)}</div>'
        confirming = time.monotonic() < self._confirm_until
        with self.html.hold_sync(), self.cancel_button.hold_sync():
            if body != self.html.value:
                self.html.value = body
            self.cancel_button.disabled = self.terminal or self.cancel_button.description == "Cancelling..."
            if self.terminal:
                self.cancel_button.description = "Cancel"
            elif not confirming and self.cancel_button.description == "Confirm cancel?":
                self.cancel_button.description = "Cancel"

    def _on_cancel(self, _button: Any = None) -> None:
        with self.lock:
            if self.terminal:
                return
            now = time.monotonic()
            if now >= self._confirm_until:
                self._confirm_until = now + CONFIRM_SECONDS
                self.cancel_button.description = "Confirm cancel?"
                return
            self._confirm_until = 0.0
            self.cancel_button.description = "Cancelling..."
            self.cancel_button.disabled = True
        try:
            self.job.cancel()
        except Exception as e:  # noqa: BLE001 - shown in the pane, never raised on a comm thread
            with self.lock:
                self.notice = f"cancel failed: {e}"
                self.cancel_button.description = "Cancel"
                self._render_locked()
        self.wake()

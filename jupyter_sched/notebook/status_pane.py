"""The status pane of one app: identity, a state pill, elapsed time, one row per replica, a Cancel button.

A ticker polls the scheduler every ``status_interval`` (the log pane wakes it as soon as every replica's
output has ended, so the final state shows at once) and sets one HTML trait under the pane's lock, only
when the rendering changed; while the app runs the elapsed times change, so they tick once per interval.
The first failure goes into the header while the others still run (``python/1 FAILED: KeyError: 'y'``),
and each failed replica says why below the table: exit code and signal, then the error file's message or
the replica's last stderr lines (``stderr_tail``, which the job view takes from its log pane). At a
terminal state it renders the final summary, hides Cancel (there is nothing left to cancel) and stops.
Cancel asks for confirmation (second click within a few seconds) because it cannot be undone; clicks may
arrive on another thread (JupyterLab subshells), hence the lock.

The rendering functions are pure (status in, HTML or text out) so that the cell's static record
(:mod:`.record`) shows exactly what the pane showed.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.notebook.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.live import Ticker
from jupyter_sched.notebook.record import reattach_hint
from jupyter_sched.notebook.reprs import app_span, messages_html, replica_table_html
from jupyter_sched.notebook.theme import MONO, as_of, code, esc, exit_text, fmt_duration, pill
from jupyter_sched.notebook.usage_view import UsageView, totals_html
from jupyter_sched.specs import NONE, AppState, AppStatus, ReplicaStatus

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.frontend.job import Job

CONFIRM_SECONDS = 4.0
REASON_LINES = 6
#: ``(role, k) -> last stderr lines`` of a replica (empty when unknown).
StderrTail = Callable[[str, int], List[str]]


def error_file_message(text: Optional[str]) -> str:
    """The message of a TorchX-style error file (``{"message": {"message": ...}}``), or its first line."""
    if not text or text == NONE:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip().splitlines()[0] if text.strip() else ""
    message = data.get("message", data) if isinstance(data, dict) else data
    if isinstance(message, dict):
        message = message.get("message", "")
    return str(message or "").strip()


def failures(
    status: Optional[AppStatus], stderr_tail: Optional[StderrTail] = None
) -> List[Tuple[ReplicaStatus, str, List[str]]]:
    """Failed replicas, first to fail first: (replica, one-line reason, detail lines)."""
    if status is None:
        return []
    failed = [rep for role in status.roles for rep in role.replicas if rep.state == AppState.FAILED]
    failed.sort(key=lambda r: (r.finished is None, r.finished or 0.0, r.role, r.id))
    out = []
    for rep in failed:
        message = error_file_message(rep.structured_error_msg)
        tail = [line for line in (stderr_tail(rep.role, rep.id) if stderr_tail else []) if line.strip()]
        tail = tail[-REASON_LINES:]
        code_text = f"exit code {exit_text(rep.exit_code)}" if rep.exit_code is not None else ""
        reason = message or (tail[-1].strip() if tail else "") or code_text or "failed"
        detail = ([message] if message else []) + ([] if message else tail)
        out.append((rep, reason, detail))
    return out


def header_html(
    job: "Job", status: Optional[AppStatus], now: Optional[float], stderr_tail: Optional[StderrTail] = None,
    as_of_ts: Optional[float] = None,
) -> str:  # fmt: skip
    """Name, app id, scheduler, state pill and elapsed time (``now`` None: only once terminal), and the
    first failure. ``as_of_ts``: a snapshot that may go stale, so a running state says when it was true."""
    state = status.state if status is not None else AppState.UNKNOWN
    span = app_span(status, now if now is not None else (as_of_ts or time.time()))
    show = status is not None and (status.is_terminal() or now is not None or as_of_ts is not None)
    took = f" &middot; {fmt_duration(span)}" if show and span is not None else ""
    stale = status is not None and not status.is_terminal() and as_of_ts is not None
    when = f" <i>{esc(as_of(as_of_ts))}</i>" if stale else ""
    first = failures(status, stderr_tail)[:1]
    failed = (
        f'<div style="color:#e75c58;font-size:12px;font-weight:600">{esc(first[0][0].role)}/{first[0][0].id} FAILED:'
        f" {esc(first[0][1])}</div>"
        if first
        else ""
    )
    return (
        f'<div style="font-size:13px"><b>{esc(job.name)}</b> {code(job.app_id)} on {esc(job.scheduler)} '
        f"{pill(state)}{when}{took}</div>{failed}"
    )


def failures_html(status: Optional[AppStatus], stderr_tail: Optional[StderrTail] = None) -> str:
    """Why each failed replica failed: exit code (and signal), then its error message or last stderr lines."""
    out = []
    for rep, _, detail in failures(status, stderr_tail):
        code_text = f" &middot; exit code {esc(exit_text(rep.exit_code))}" if rep.exit_code is not None else ""
        body = "\n".join(detail)
        pre = (
            f'<pre style="{MONO};font-size:12px;white-space:pre-wrap;margin:2px 0 4px 12px;'
            f'border-left:2px solid #e75c58;padding-left:6px">{esc(body)}</pre>'
            if body
            else ""
        )
        failed = f'<b style="color:#e75c58">{esc(rep.role)}/{rep.id} FAILED</b>'
        out.append(f'<div style="font-size:12px">{failed}{code_text}</div>{pre}')
    return "".join(out)


def failures_text(status: Optional[AppStatus], stderr_tail: Optional[StderrTail] = None) -> List[str]:
    out = []
    for rep, reason, detail in failures(status, stderr_tail):
        code_text = f" (exit code {exit_text(rep.exit_code)})" if rep.exit_code is not None else ""
        out.append(f"{rep.role}/{rep.id} FAILED{code_text}: {reason}")
        out.extend(f"    {line}" for line in detail if line.strip() != reason)
    return out


def status_html(
    job: "Job", status: Optional[AppStatus], now: Optional[float], stderr_tail: Optional[StderrTail] = None,
    as_of_ts: Optional[float] = None,
) -> str:  # fmt: skip
    """The pane's body: header, replica table, why replicas failed, the scheduler's messages."""
    body = header_html(job, status, now, stderr_tail, as_of_ts)
    if status is None:
        return body + '<div style="font-size:12px">the scheduler does not know this app (any more)</div>'
    totals = totals_html(status) if status.is_terminal() else ""  # what each replica used, kept after the end
    return body + replica_table_html(status, now) + totals + failures_html(status, stderr_tail) + messages_html(status)


class StatusPane:
    """Widgets showing an app's state, refreshed until the app ends."""

    def __init__(self, job: "Job", settings: PaneSettings, status: Optional[AppStatus],
                 stderr_tail: Optional[StderrTail] = None) -> None:  # fmt: skip
        import ipywidgets as w

        self.job = job
        self.settings = settings
        self.status = status
        self.stderr_tail = stderr_tail
        self.lock = threading.Lock()
        self.notice = ""
        self.ticker: Optional[Ticker] = None
        self._confirm_until = 0.0
        self.usage = UsageView()
        if status is not None:
            self.usage.update(job.usage)
        self._on_final: List[Callable[[], None]] = []
        self.html = w.HTML()
        self.cancel_button = w.Button(description="Cancel", button_style="danger", icon="stop",
                                      tooltip="Cancel the app (asks to confirm)",
                                      layout=w.Layout(width="auto", flex="0 0 auto"))  # fmt: skip
        # the buttons keep their width; the hint wraps in what is left of the row
        self.hint = w.HTML(
            f'<span style="font-size:12px">re-attach: {code("%sched_status " + job.handle)}</span>',
            layout=w.Layout(flex="1 1 auto", min_width="0"),
        )
        #: The row of controls; a job view puts the log pane's controls into the same row.
        self.controls: List[Any] = [self.cancel_button]
        self.widget = w.VBox([self.html, w.HBox([self.cancel_button, self.hint])])
        self.widget.add_class("jsched-status")
        self.cancel_button.on_click(self._on_cancel)
        serve_on_side_thread(self.cancel_button)  # clicks are handled while a cell waits (ipykernel 7)
        self._render_locked()

    @property
    def terminal(self) -> bool:
        return self.status is None or self.status.is_terminal()

    def start(self) -> "StatusPane":
        if not self.terminal:
            self.ticker = Ticker("status-pane", self.settings.status_interval, self._tick, self._final).start()
        else:
            self._final()
        return self

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()

    def wake(self) -> None:
        if self.ticker is not None:
            self.ticker.wake()

    def when_final(self, callback: Callable[[], None]) -> None:
        """Calls ``callback`` (on the pane's thread, or now) once the app has ended and the pane shows it."""
        with self.lock:
            if not self.terminal:
                self._on_final.append(callback)
                return
        callback()

    def _final(self) -> None:
        with self.lock:
            callbacks, self._on_final = (self._on_final, []) if self.terminal else ([], self._on_final)
        for callback in callbacks:
            callback()

    def refresh(self) -> None:
        """Asks the scheduler and renders now, on the calling thread (the ticker notices the end too)."""
        self._tick()
        self.wake()

    def _tick(self) -> bool:
        status = self.job.fetch_status()
        self.usage.update(self.job.usage)
        with self.lock:
            self.status = status
            self._render_locked()
            return not self.terminal

    def static_html(self, as_of_ts: Optional[float] = None) -> str:
        """What the pane shows, without widgets, for the cell's record (``as_of_ts`` while running)."""
        with self.lock:
            return status_html(self.job, self.status, None, self.stderr_tail, as_of_ts if not self.terminal else None)

    @property
    def final(self) -> bool:
        return self.terminal

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        """The cell's record of this pane (see .record): the same table, as HTML and as text."""
        from jupyter_sched.notebook.reprs import REPLICA_HEADERS, replica_rows
        from jupyter_sched.notebook.theme import NO_MATH, text_table

        html = self.static_html(as_of_ts)
        with self.lock:
            status = self.status
        ended = status is None or status.is_terminal()
        head = self.job.summary(final_only=False) + ("" if ended or as_of_ts is None else f" ({as_of(as_of_ts)})")
        text = [head]
        if status is not None and status.roles:
            text.append(text_table(REPLICA_HEADERS, replica_rows(status, html=False)))
        text += failures_text(status, self.stderr_tail)
        hint = reattach_hint(self.job)
        text.append(hint)
        html += f'<div style="font-size:11px;opacity:0.7;margin-top:2px">{esc(hint)}</div>'
        return {
            "text/plain": "\n".join(text),
            "text/html": f'<div class="jsched-record jsched-status {NO_MATH}">{html}</div>',
        }

    def poll(self) -> None:
        """Nothing to do: the ticker polls."""

    def _render_locked(self) -> None:
        status = self.status
        now = None if self.terminal else time.time()
        body = status_html(self.job, status, now, self.stderr_tail) + ("" if self.terminal else self.usage.html())
        if self.notice:
            body += f'<div style="color:#e75c58;font-size:12px">{esc(self.notice)}</div>'
        confirming = time.monotonic() < self._confirm_until
        with self.html.hold_sync(), self.cancel_button.hold_sync():
            if body != self.html.value:
                self.html.value = body
            display = "none" if self.terminal else ""
            if self.cancel_button.layout.display != display:
                self.cancel_button.layout.display = display
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

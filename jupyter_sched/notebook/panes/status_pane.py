"""The status pane of one app: identity, a state pill, elapsed time, one row per replica, a Cancel button.

A ticker polls the scheduler every ``status_interval`` (the log pane wakes it as soon as every replica's
output has ended, so the final state shows at once) and sets one HTML trait under the pane's lock, only
when the rendering changed; while the app runs the elapsed times change, so they tick once per interval.
The first failure goes into the header while the others still run (``python/1 FAILED: KeyError: 'y'``),
and each failed replica says why below the table: exit code and signal, then the error file's message or
the replica's last stderr lines (``stderr_tail``: the job view reads them as every front end does, with
:func:`~jupyter_sched.frontend.jobs.stderr_tails.stderr_of`, so the pane's reason is the server's). At a
terminal state it renders the final summary, hides Cancel (there is nothing left to cancel) and stops.
Cancel asks for confirmation (second click within a few seconds) because it cannot be undone; clicks may
arrive on another thread (JupyterLab subshells), hence the lock.

The rendering functions are pure (status in, HTML or text out) so that the cell's static record
(:mod:`.record`) shows exactly what the pane showed.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from jupyter_sched.frontend.jobs.reasons import (
    StderrOf,
    app_message,
    error_file_message,
    failed_replicas,
    failure_line,
    replica_reason,
)
from jupyter_sched.frontend.jobs.rows import app_span
from jupyter_sched.notebook.displays.record import reattach_hint
from jupyter_sched.notebook.displays.reprs import replica_table_html
from jupyter_sched.notebook.kernel.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.kernel.live import Ticker
from jupyter_sched.notebook.panes.theme import MONO, PANE_STYLE, as_of, code, esc, fmt_duration, pill
from jupyter_sched.notebook.panes.usage_view import UsageView
from jupyter_sched.specs import AppState, AppStatus, ReplicaStatus
from jupyter_sched.specs.output.masking import mask_out

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.frontend.job import Job

CONFIRM_SECONDS = 4.0
REASON_LINES = 6
FAIL_COLOR = "#e75c58"
#: ``(role, k) -> last stderr lines`` of a replica (empty when unknown): :mod:`~jupyter_sched.frontend.jobs.reasons`'.
StderrTail = StderrOf
#: A notebook job's ``(progress record or None, output notebook path)``: see :func:`notebook_state`.
NotebookState = Tuple[Optional[Dict[str, Any]], str]




def failures(
    status: Optional[AppStatus], stderr_tail: Optional[StderrTail] = None, kernel_pid: Optional[int] = None
) -> List[Tuple[ReplicaStatus, str, List[str]]]:
    """Failed replicas, first to fail first: (replica, one-line reason, detail lines: its error file's
    message, else its last stderr lines). The order and the reason are :mod:`reasons`', as in JobFailed and
    the server's rows."""
    out = []
    for rep in failed_replicas(status):
        message = error_file_message(rep.structured_error_msg)
        tail = [line for line in (stderr_tail(rep.role, rep.id) if stderr_tail and not message else []) if line.strip()]
        reason = replica_reason(rep, status, tail, kernel_pid)
        last = [str(mask_out(line)) for line in tail[-REASON_LINES:]]  # shown as the reason: masked as it is
        detail = [message] if message and message != reason else ([] if message else last)
        if [line.strip() for line in detail] == [reason]:
            detail = []
        out.append((rep, reason, detail))
    return out


def header_html(
    job: "Job", status: Optional[AppStatus], now: Optional[float], first: Optional[Tuple[ReplicaStatus, str]] = None,
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
    failed = (
        f'<div class="jsched-failure" style="color:{FAIL_COLOR};font-size:12px;font-weight:600">'
        f"{esc(failure_line(*first))}</div>"
        if first
        else ""
    )
    return (
        f'<div style="font-size:13px"><b>{esc(job.name)}</b> {code(job.app_id)} on {esc(job.scheduler)} '
        f"{pill(state)}{when}{took}</div>{failed}"
    )


ShownInLogs = Callable[[str, int, List[str]], bool]
"""``(role, k, lines) -> bool``: the log pane below shows all of these lines of that replica."""


def failures_html(found: List[Tuple[ReplicaStatus, str, List[str]]], shown: Optional[ShownInLogs] = None) -> str:
    """Why each failed replica failed, under the table: one line each (the first is in the header already),
    then its error message or last stderr lines unless the log pane below shows them (a traceback once)."""
    out = []
    for n, (rep, reason, detail) in enumerate(found):
        if detail and shown is not None and shown(rep.role, rep.id, detail):
            detail = []
        line = (
            ""
            if n == 0
            else f'<div style="font-size:12px"><b style="color:{FAIL_COLOR}">{esc(rep.role)}/{rep.id} FAILED</b>'
            f"{esc(failure_line(rep, reason)[len(f'{rep.role}/{rep.id} FAILED'):])}</div>"
        )
        pre = (
            f'<pre style="{MONO};font-size:12px;line-height:1.35;white-space:pre-wrap;margin:2px 0 4px 12px;'
            f'padding:0 0 0 6px;border:none;border-left:2px solid {FAIL_COLOR};background:none">'
            f'{esc(chr(10).join(detail))}</pre>'
            if detail
            else ""
        )
        out.append(line + pre)
    return "".join(out)


def failures_text(status: Optional[AppStatus], stderr_tail: Optional[StderrTail] = None,
                  kernel_pid: Optional[int] = None, shown: Optional[ShownInLogs] = None) -> List[str]:  # fmt: skip
    out = []
    for rep, reason, detail in failures(status, stderr_tail, kernel_pid):
        out.append(failure_line(rep, reason))
        if not (detail and shown is not None and shown(rep.role, rep.id, detail)):
            out.extend(f"    {line}" for line in detail if line.strip() != reason)
    return out


def app_message_html(status: AppStatus) -> str:
    """The app's message, less what the pane says elsewhere (see :func:`reasons.app_message`)."""
    message = app_message(status)
    return f'<div class="jsched-message" style="font-size:12px">{esc(message)}</div>' if message else ""


def notebook_html(notebook: Optional[NotebookState]) -> str:
    """A notebook job's line under the header: its progress (``cell 5/23 · model.fit(...)``, escaped: the
    cell's first line is the user's text) and the output notebook's path; "" for any other job."""
    if notebook is None:
        return ""
    from jupyter_sched.functions.notebooks.args import progress_text

    progress, output = notebook
    line = progress_text(progress) or "waiting for the kernel to start"
    color = f";color:{FAIL_COLOR}" if progress and progress.get("state") in ("failed", "cancelled") else ""
    return (
        f'<div class="jsched-notebook" style="font-size:12px;margin:2px 0{color}">{esc(line)}</div>'
        f'<div class="jsched-notebook-output" style="font-size:12px">output: {code(output)}</div>'
    )


def notebook_text(notebook: Optional[NotebookState]) -> List[str]:
    """:func:`notebook_html` as text lines, for the cell's record and text front ends."""
    if notebook is None:
        return []
    from jupyter_sched.functions.notebooks.args import progress_text

    progress, output = notebook
    return [progress_text(progress) or "waiting for the kernel to start", f"output: {output}"]


def notebook_state(job: "Job") -> Optional[NotebookState]:
    """A notebook job's last progress record and output path, None for any other job (read from its job
    directory: a file or two, once per tick)."""
    output = getattr(job, "output_path", None)
    if not isinstance(output, str):
        return None
    return job.notebook_progress(), output  # type: ignore[attr-defined]


def status_html(
    job: "Job", status: Optional[AppStatus], now: Optional[float], stderr_tail: Optional[StderrTail] = None,
    as_of_ts: Optional[float] = None, usage_html: Optional[str] = None, shown: Optional[ShownInLogs] = None,
    notebook: Optional[NotebookState] = None,
) -> str:  # fmt: skip
    """The pane's body: header, a notebook job's progress (``notebook``), replica table, usage (``usage_html``;
    default: the kept totals of an ended app), why replicas failed (without what the log pane below shows,
    ``shown``), the app's message."""
    found = failures(status, stderr_tail, job.kernel_pid)
    first = (found[0][0], found[0][1]) if found else None
    body = header_html(job, status, now, first, as_of_ts) + notebook_html(notebook)
    if status is None:
        unknown = '<div style="font-size:12px">the scheduler does not know this app (any more)</div>'
        return f'<div style="{PANE_STYLE}">{body}{unknown}</div>'
    if usage_html is None:
        usage_html = UsageView().html(status, job.scheduler) if status.is_terminal() else ""
    return (
        f'<div style="{PANE_STYLE}">{body}{replica_table_html(status, now)}{usage_html}'
        f"{failures_html(found, shown)}{app_message_html(status)}</div>"
    )


class StatusPane:
    """Widgets showing an app's state, refreshed until the app ends."""

    def __init__(self, job: "Job", settings: PaneSettings, status: Optional[AppStatus],
                 stderr_tail: Optional[StderrTail] = None) -> None:  # fmt: skip
        import ipywidgets as w

        self.job = job
        self.settings = settings
        self.status = status
        self.stderr_tail = stderr_tail
        #: Set by a job view: which failure details its log pane shows already (they are not repeated).
        self.shown: Optional[ShownInLogs] = None
        self.lock = threading.Lock()
        self.notice = ""
        self.ticker: Optional[Ticker] = None
        self._confirm_until = 0.0
        self.usage = UsageView()
        #: A notebook job's progress and output path, read on each tick (None for other jobs, and never read).
        self.notebook = notebook_state(job)
        self.is_notebook = self.notebook is not None
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
        notebook = notebook_state(self.job) if self.is_notebook else None
        with self.lock:
            self.status = status
            self.notebook = notebook
            self._render_locked()
            return not self.terminal

    def body_html(self, as_of_ts: Optional[float] = None, live: bool = False) -> str:
        """The pane's HTML (the caller holds the lock): live, with elapsed times ticking; else frozen, for the
        cell's record (``as_of_ts`` while the app runs). The same layout either way: the usage chart's last
        frame stays once the app has ended."""
        status = self.status
        now = time.time() if live and not self.terminal else None
        usage = self.usage.html(status, self.job.scheduler) if status is not None else ""
        when = None if self.terminal else as_of_ts
        return status_html(self.job, status, now, self.stderr_tail, when, usage, self.shown, self.notebook)

    def static_html(self, as_of_ts: Optional[float] = None) -> str:
        """What the pane shows, without widgets, for the cell's record (``as_of_ts`` while running)."""
        with self.lock:
            return self.body_html(as_of_ts)

    @property
    def final(self) -> bool:
        return self.terminal

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        """The cell's record of this pane (see .record): the same table, as HTML and as text."""
        from jupyter_sched.notebook.displays.reprs import REPLICA_HEADERS, replica_rows
        from jupyter_sched.notebook.panes.theme import NO_MATH, text_table

        html = self.static_html(as_of_ts)
        with self.lock:
            status = self.status
        ended = status is None or status.is_terminal()
        head = self.job.summary(final_only=False) + ("" if ended or as_of_ts is None else f" ({as_of(as_of_ts)})")
        text = [head, *notebook_text(self.notebook)]
        if status is not None and status.roles:
            text.append(text_table(REPLICA_HEADERS, replica_rows(status, html=False)))
        text += failures_text(status, self.stderr_tail, self.job.kernel_pid)
        hint = reattach_hint(self.job)
        text.append(hint)
        html += f'<div style="font-size:11px;opacity:0.7;margin-top:2px">{esc(hint)}</div>'
        return {
            "text/plain": "\n".join(text),
            "text/html": f'<div class="jsched-record jsched-status {NO_MATH}" style="{PANE_STYLE}">{html}</div>',
        }

    def poll(self) -> None:
        """Nothing to do: the ticker polls."""

    def _render_locked(self) -> None:
        body = self.body_html(live=True)
        if self.notice:
            body += f'<div style="color:#e75c58;font-size:12px">{esc(mask_out(self.notice))}</div>'
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

"""A job on screen: the live view (status pane, the Metrics section once the job logged metrics or told TorchX's
tracker API something, log pane;
their controls in one row) and the record its cell keeps (:mod:`.record`), with or without the view.

``JobView`` owns the panes' threads and knows when the app has ended *and* its logs are read, which is
when its cell's output is replaced by the final record. ``JobRecord`` is the same record read on the
calling thread, for a job shown after it ended or where widgets are off: no widgets, no threads.

A :class:`~jupyter_sched.frontend.job.Job` knows nothing of this: :func:`register` makes :func:`show` and
:func:`mimebundle` its IPython formatters and :func:`live_view` its ``job.view()`` when the extension loads.
Displaying a job shows its live view where widgets render and, always, next to the widget, the cell's
record: the same panes as static ``text/html`` and ``text/plain``, labelled "as of" the moment shown while
the app runs, and replaced in place by the final state and log tail when it ends. A job that had ended
when displayed shows the record only, which needs no widget manager.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional

from jupyter_sched.frontend.job import VIEW_MAKERS, Job
from jupyter_sched.frontend.jobs.stderr_tails import stderr_of
from jupyter_sched.frontend.logview.log_model import ALL, app_sources, read_snapshot
from jupyter_sched.notebook.displays import record
from jupyter_sched.notebook.displays.job_display import display_of, take_compact
from jupyter_sched.notebook.displays.log_files import links_html, save_logs
from jupyter_sched.notebook.displays.record import RecordSource, filter_bundle, live_bundle, reattach_hint
from jupyter_sched.notebook.kernel.comm_thread import serve_on_side_thread
from jupyter_sched.notebook.kernel.config import PaneSettings
from jupyter_sched.notebook.panes.log_model import HtmlLogMux
from jupyter_sched.notebook.panes.log_pane import LogPane, follow_limit, frame_html
from jupyter_sched.notebook.panes.metrics_view import MetricsPane, MetricsView
from jupyter_sched.notebook.panes.status_pane import StatusPane, failures_text, notebook_text, status_html
from jupyter_sched.notebook.panes.theme import PANE_STYLE, code, esc, fmt_clock, pill
from jupyter_sched.notebook.panes.tracker_view import TrackedMetricsView
from jupyter_sched.specs.output.masking import masked_copy


class JobRecord:
    """A job shown without a live view: its record read on the calling thread (no widgets, no threads).
    While the app runs, ``poll`` (after each cell) asks the scheduler again."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.metrics: Optional[MetricsView] = None

    @property
    def final(self) -> bool:
        status = self.job.last_status
        return status is None or status.is_terminal()

    def poll(self) -> None:
        self.job.fetch_status()

    def when_final(self, callback: Callable[[], None]) -> None:
        """No thread watches a record: the next cell's ``post_run_cell`` polls it."""

    def widget_bundle(self) -> Dict[str, Any]:
        return {}

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        job, status = self.job, self.job.last_status
        settings = display_of(job).settings()
        mux = read_snapshot(job.runner, job.handle, follow_limit(app_sources(status)), settings.keep_lines,
                            settings.max_line_chars, mux_type=HtmlLogMux)  # fmt: skip
        assert isinstance(mux, HtmlLogMux)
        body, hidden = mux.to_html(ALL, min(settings.tail_lines, record.HTML_LOG_LINES),
                                   min(settings.max_update_chars, record.HTML_LOG_CHARS))  # fmt: skip
        ended = status is None or status.is_terminal()
        state = "ended" if ended else f"as of {fmt_clock(as_of_ts)}"
        log_html = frame_html(mux, "logs", ALL, body, hidden, state)
        rows, hidden_text = mux.rows(ALL, record.TEXT_LOG_LINES)
        earlier = [f"... {hidden_text:,} earlier lines not shown"] if hidden_text > 0 else []
        lines = earlier + mux.plain(ALL, record.TEXT_LOG_LINES)

        def shows(role: str, k: int, wanted: List[str], last_n: int = record.HTML_LOG_LINES) -> bool:
            rows = mux.rows(ALL, last_n)[0]
            seen = {line.text.strip() for i, line in rows if mux.sources[i].replica == f"{role}/{k}"}
            return all(w.strip() in seen for w in wanted if w.strip())

        stderr_tail = stderr_of(job.runner, job.handle)  # the reason every front end gives (stderr_tails)
        html = status_html(job, status, None, stderr_tail, None if ended else as_of_ts, shown=shows)
        failures = failures_text(status, stderr_tail, job.kernel_pid,
                                 lambda role, k, wanted: shows(role, k, wanted, record.TEXT_LOG_LINES))  # fmt: skip
        if self.metrics is None:  # kept, so that each record after the first reads only the newer records
            self.metrics = metrics_view(job, status)
        self.metrics.refresh()
        return record.job_bundle(job, status, html, failures, log_html, lines, as_of_ts,
                                 metrics_html=self.metrics.html(), metrics_lines=self.metrics.text())  # fmt: skip


class JobView(RecordSource):
    """Status pane, Metrics section (:mod:`.metrics_view`) and log pane (all replicas), their controls in one
    row. Stops its threads when the app has ended; then its cell shows the record (see :mod:`.record`)."""

    #: Seconds to wait for the log followers after the app ended before the record is published anyway.
    LOG_GRACE = 10.0

    def __init__(self, job: Job, settings: PaneSettings) -> None:
        import ipywidgets as w

        self.job = job
        status = job.fetch_status()  # on the caller's thread: creates the scheduler before any thread
        sources = follow_limit(app_sources(status))
        mux = HtmlLogMux(sources, settings.keep_lines, settings.max_line_chars)
        self.log_pane = LogPane(mux, settings, title="logs", live=True)
        # a failure's reason as every front end gives it: its stderr read from the scheduler's logs once, not
        # from the lines this pane happens to hold (a flood or the follower limit may have pushed them out)
        self.stderr_tail = stderr_of(job.runner, job.handle)
        self.status_pane = StatusPane(job, settings, status, stderr_tail=self.stderr_tail)
        self.status_pane.shown = self.in_logs  # a failure's traceback once: in the logs below
        self.metrics = MetricsPane(metrics_view(job, status), lambda: self.status_pane.terminal)
        self.log_pane.on_all_ended = self.status_pane.wake
        self.save_button = w.Button(
            description="Save logs", icon="download", layout=w.Layout(width="auto", flex="0 0 auto"),
            tooltip="write each replica's full log next to the notebook and link it",
        )
        # the links get a row of their own under the buttons, not a squeeze between them
        self.saved_links = w.HTML(layout=w.Layout(display="none"))
        self.saved_links.add_class("jsched-saved")
        self.save_button.on_click(self._on_save)
        serve_on_side_thread(self.save_button)
        serve_on_side_thread(self.log_pane.follow)
        controls = w.HBox([*self.status_pane.controls, *self.log_pane.controls, self.save_button,
                           self.status_pane.hint])  # fmt: skip
        controls.add_class("jsched-controls")
        top = w.VBox([self.status_pane.html, controls, self.saved_links])
        top.add_class("jsched-status")
        self.widget = w.VBox([top, self.metrics.widget, self.log_pane.html])
        self.widget.add_class("jsched-job")
        #: When "Save logs" last wrote the files (None before), and whether the app had ended then.
        self.saved_at: Optional[float] = None
        self.saved_final = False
        self._ended_at: Optional[float] = None
        self._final_lock = threading.Lock()
        self._final_callbacks: List[Callable[[], None]] = []
        self._fired = False
        #: ``(role, k, path, lines)`` of the files "Save logs" wrote; the record links them too.
        self.saved: List[Any] = []
        self.status_pane.start()
        self.log_pane.start(job.runner, job.handle)
        self.metrics.start()
        self.status_pane.when_final(self._on_status_final)

    def stop(self) -> None:
        self.status_pane.stop()
        self.log_pane.stop()
        self.metrics.stop()

    def in_logs(self, role: str, k: int, lines: List[str], last_n: Optional[int] = None) -> bool:
        """The log pane below shows ``lines`` of replica ``role/k``, or will: the failure's stderr is read
        from the scheduler's log, usually before this pane's follower has caught up, and is not repeated
        above while that replica's log is still being read (only once read, if the pane lost the lines)."""
        if self.log_pane.shows(role, k, lines, last_n):
            return True
        mux = self.log_pane.mux
        return not all(mux.ended[i] for i, s in enumerate(mux.sources) if s.replica == f"{role}/{k}")

    def _on_save(self, _button: Any = None) -> None:
        """Writes every replica's full log next to the notebook and links the files in the pane."""
        replicas = list(dict.fromkeys((s.role, s.k) for s in self.log_pane.mux.sources))
        self.save_button.disabled = True
        try:
            status = self.job.fetch_status()  # the pane's may lag by a tick: is the app over now?
            final = status is None or status.is_terminal()
            saved_at = time.time()
            self.saved = save_logs(self.job.runner, self.job.handle, self.job.app_id, replicas)
            self.saved_at, self.saved_final = saved_at, final
            value = links_html(self.saved, None if final else saved_at)
        except Exception as e:  # noqa: BLE001 - shown in the pane, never raised on a comm thread
            value = f'<span style="color:#e75c58;font-size:12px">{esc(f"could not save: {e}")}</span>'
        finally:
            self.save_button.disabled = False
        with self.saved_links.hold_sync():
            self.saved_links.value = f'<div style="{PANE_STYLE}">{value}</div>'
            self.saved_links.layout.display = ""

    # -- the record ------------------------------------------------------------------------------------
    @property
    def final(self) -> bool:
        """The app has ended and its logs are read (or did not finish within LOG_GRACE)."""
        if not self.status_pane.terminal:
            return False
        late = self._ended_at is not None and time.monotonic() - self._ended_at >= self.LOG_GRACE
        return self.log_pane.final or late

    def poll(self) -> None:
        """Catches up with an end the panes' threads have not seen yet (a ``--wait`` that just returned):
        the status pane renders the final state now, and the log pane gets until ``LOG_GRACE`` after the end
        to read the rest, so an ended app's view is ``final`` when this returns. (A shorter wait let a
        loaded machine's slow followers miss the record's update after the cell, and a headless client,
        which reads only while a cell runs, saved the live widget instead of the record.)"""
        status = self.job.last_status
        if not self.status_pane.terminal and status is not None and status.is_terminal():
            self.status_pane.refresh()
        if self.status_pane.terminal and not self.log_pane.final:
            if self._ended_at is None:
                self._ended_at = time.monotonic()
            self.log_pane.done.wait(max(0.0, self._ended_at + self.LOG_GRACE - time.monotonic()))

    def _on_status_final(self) -> None:
        if self._ended_at is None:  # a poll may have seen the end first
            self._ended_at = time.monotonic()
        self.log_pane.when_done(self._fire)
        timer = threading.Timer(self.LOG_GRACE, self._fire)
        timer.daemon = True
        timer.start()

    def _fire(self) -> None:
        with self._final_lock:
            if self._fired:
                return
            self._fired = True
            callbacks, self._final_callbacks = self._final_callbacks, []
        for callback in callbacks:
            callback()

    def when_final(self, callback: Callable[[], None]) -> None:
        with self._final_lock:
            if not self._fired:
                self._final_callbacks.append(callback)
                return
        callback()

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        """The view frozen (see :func:`record.job_bundle`): the status pane with its chart's last frame, the
        saved logs' links on their own line, the log pane's tail; the failure text once."""
        with self.status_pane.lock:
            status = self.status_pane.status
        ended = status is None or status.is_terminal()
        when = None if ended else as_of_ts
        text_lines = record.TEXT_LOG_LINES

        def in_text(role: str, k: int, lines: List[str]) -> bool:
            return self.in_logs(role, k, lines, text_lines)

        failures = failures_text(status, self.stderr_tail, self.job.kernel_pid, in_text)
        with self.status_pane.lock:  # a notebook job's progress and output path, above why it failed
            failures = notebook_text(self.status_pane.notebook) + failures
        saved = links_html(self.saved, None if self.saved_final else self.saved_at, ended)
        if ended:  # the ticker's last read may still be to come: the final record reads to the end itself
            self.metrics.view.refresh()
        return record.job_bundle(
            self.job, status, self.status_pane.static_html(when), failures, self.log_pane.static_html(when),
            self.log_pane.static_text(text_lines), when, f'<div class="jsched-saved">{saved}</div>' if saved else "",
            metrics_html=self.metrics.view.html(), metrics_lines=self.metrics.view.text(),
        )  # fmt: skip


def metrics_view(job: Job, status: Any) -> MetricsView:
    """The Metrics section's model of ``job``: its metrics directory (asked of the runner once: it does not
    move; none if the runner cannot say) and its first role, whose replica 0 is shown first; with the block
    of what the job told TorchX's tracker API under the charts (:mod:`.tracker_view`)."""
    try:
        directory = job.runner.metrics_dir(job.handle)
    except Exception:  # noqa: BLE001 - a pane without metrics beats no pane
        directory = None
    roles = getattr(status, "roles", None) or []
    return TrackedMetricsView(directory, roles[0].role if roles else None, job.handle)


# -- a Job's displays, registered as IPython formatters ----------------------------------------------------


def live_view(job: Job) -> JobView:
    """``job.view()`` in a notebook: the live view, made (and its threads started) on first use."""
    display = display_of(job)
    with display.lock:
        if display.view is None:
            display.view = JobView(job, display.settings())
        return display.view


def fallback_text(job: Job) -> str:
    """Text that stays true after this moment: the final state if already ended, else no state."""
    status = job.last_status
    details = f"\n{masked_copy(status).format()}" if status is not None and status.is_terminal() else ""
    return f"{job.summary()}{details}\n{reattach_hint(job)}"


def fallback_html(job: Job) -> str:
    status = job.last_status
    final = pill(status.state) if status is not None and status.is_terminal() else ""
    return (
        f'<div class="jsched-job"><b>{esc(job.name)}</b> {code(job.handle)} {final}<br>'
        f'<span style="font-size:12px">re-attach: {code("%sched_status " + job.handle)} &middot; logs: '
        f'{code("%sched_logs " + job.handle)}</span></div>'
    )


def display_source(job: Job) -> Any:
    """What a display of ``job`` shows: the live view (widgets), or the record alone."""
    status = job.fetch_status()
    display = display_of(job)
    if display.view is not None:
        return display.view
    if display.interactive() and status is not None and not status.is_terminal():
        return live_view(job)
    return JobRecord(job)


def _summary_bundle(job: Job) -> Dict[str, Any]:
    return {"text/plain": job.summary(), "text/html": f"<div>{esc(job.summary())}</div>"}


def show(job: Job) -> None:
    """IPython's display of a Job (what ``_ipython_display_`` was): the one-line summary where the cell
    already showed the view, else the live view with its record (see :mod:`.record`)."""
    from IPython.display import display

    if take_compact(job, by_ipython=True):
        display(_summary_bundle(job), raw=True)
        return
    record.show(display_source(job))


def mimebundle(job: Job, include: Any = None, exclude: Any = None) -> Dict[str, Any]:
    """What a display of ``job`` shows, without a display id (IPython's display itself uses :func:`show`)."""
    if take_compact(job):
        return filter_bundle(_summary_bundle(job), include, exclude)
    source = display_source(job)
    source.poll()
    return filter_bundle(live_bundle(source), include, exclude)


def register(shell: Any) -> None:
    """Makes :func:`show` and :func:`mimebundle` the displays of every Job in ``shell``, and
    :func:`live_view` its ``job.view()``."""
    formatter = shell.display_formatter
    formatter.ipython_display_formatter.for_type(Job, show)
    formatter.mimebundle_formatter.for_type(Job, mimebundle)
    if live_view not in VIEW_MAKERS:
        VIEW_MAKERS.append(live_view)


def unregister(shell: Any) -> None:
    formatter = shell.display_formatter
    for kind in (formatter.ipython_display_formatter, formatter.mimebundle_formatter):
        if kind.type_printers.get(Job) is not None:
            kind.pop(Job)
    if live_view in VIEW_MAKERS:
        VIEW_MAKERS.remove(live_view)

"""A job on screen: the live view (status pane over log pane, their controls in one row) and the record
its cell keeps (:mod:`.record`), with or without the view.

``JobView`` owns the panes' threads and knows when the app has ended *and* its logs are read, which is
when its cell's output is replaced by the final record. ``JobRecord`` is the same record read on the
calling thread, for a job shown after it ended or where widgets are off: no widgets, no threads.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional

from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.job import Job
from jupyter_sched.notebook.record import RecordSource
from jupyter_sched.notebook.theme import esc, fmt_clock


class JobRecord:
    """A job shown without a live view: its record read on the calling thread (no widgets, no threads).
    While the app runs, ``poll`` (after each cell) asks the scheduler again."""

    def __init__(self, job: Job) -> None:
        self.job = job

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

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        from jupyter_sched.notebook import record
        from jupyter_sched.notebook.log_model import ALL
        from jupyter_sched.notebook.log_pane import STDERR_WINDOW, app_sources, follow_limit, frame_html, read_snapshot
        from jupyter_sched.notebook.status_pane import failures_text, status_html

        job, status = self.job, self.job.last_status
        settings = job.pane_settings()
        mux = read_snapshot(job.runner, job.handle, follow_limit(app_sources(status)), settings)
        body, hidden = mux.to_html(ALL, min(settings.tail_lines, record.HTML_LOG_LINES),
                                   min(settings.max_update_chars, record.HTML_LOG_CHARS))  # fmt: skip
        ended = status is None or status.is_terminal()
        state = "ended" if ended else f"as of {fmt_clock(as_of_ts)}"
        log_html = frame_html(mux, "logs", ALL, body, hidden, state)
        rows, hidden_text = mux.rows(ALL, record.TEXT_LOG_LINES)
        earlier = [f"... {hidden_text:,} earlier lines not shown"] if hidden_text > 0 else []
        lines = earlier + mux.plain(ALL, record.TEXT_LOG_LINES)

        def stderr_tail(role: str, k: int) -> List[str]:
            view = f"{role}/{k}"
            if view not in mux.views():
                return []
            separate = any(s.replica == view and s.is_stderr for s in mux.sources)
            got, _ = mux.rows(view, STDERR_WINDOW if separate else 20)
            return [line.text for i, line in got if mux.sources[i].is_stderr or not separate][-20:]

        html = status_html(job, status, None, stderr_tail, None if ended else as_of_ts)
        return record.job_bundle(job, status, html, failures_text(status, stderr_tail), log_html, lines, as_of_ts)


class JobView(RecordSource):
    """Status pane over log pane (all replicas), their controls in one row. Stops its threads when the
    app has ended; then its cell shows the record (see :mod:`.record`)."""

    #: Seconds to wait for the log followers after the app ended before the record is published anyway.
    LOG_GRACE = 10.0
    #: Seconds ``poll`` (after a cell) waits for the logs of an app that has just ended.
    POLL_WAIT = 5.0

    def __init__(self, job: Job, settings: PaneSettings) -> None:
        import ipywidgets as w

        from jupyter_sched.notebook.log_model import LogMux
        from jupyter_sched.notebook.log_pane import LogPane, app_sources, follow_limit
        from jupyter_sched.notebook.status_pane import StatusPane

        self.job = job
        status = job.fetch_status()  # on the caller's thread: creates the scheduler before any thread
        sources = follow_limit(app_sources(status))
        mux = LogMux(sources, settings.keep_lines, settings.max_line_chars)
        self.log_pane = LogPane(mux, settings, title="logs", live=True)
        self.status_pane = StatusPane(job, settings, status, stderr_tail=self.log_pane.stderr_tail)
        self.log_pane.on_all_ended = self.status_pane.wake
        self.save_button = w.Button(
            description="Save logs", icon="download", layout=w.Layout(width="auto", flex="0 0 auto"),
            tooltip="write each replica's full log next to the notebook and link it",
        )
        self.saved_links = w.HTML()
        self.save_button.on_click(self._on_save)
        controls = w.HBox([*self.status_pane.controls, *self.log_pane.controls, self.save_button,
                           self.saved_links, self.status_pane.hint])  # fmt: skip
        controls.add_class("jsched-controls")
        top = w.VBox([self.status_pane.html, controls])
        top.add_class("jsched-status")
        self.widget = w.VBox([top, self.log_pane.html])
        self.widget.add_class("jsched-job")
        self._ended_at: Optional[float] = None
        self._final_lock = threading.Lock()
        self._final_callbacks: List[Callable[[], None]] = []
        self._fired = False
        #: ``(role, k, path, lines)`` of the files "Save logs" wrote; the record links them too.
        self.saved: List[Any] = []
        self.status_pane.start()
        self.log_pane.start(job.runner, job.handle)
        self.status_pane.when_final(self._on_status_final)

    def stop(self) -> None:
        self.status_pane.stop()
        self.log_pane.stop()

    def _on_save(self, _button: Any = None) -> None:
        """Writes every replica's full log next to the notebook and links the files in the pane."""
        from jupyter_sched.notebook.log_files import links_html, save_logs

        replicas = list(dict.fromkeys((s.role, s.k) for s in self.log_pane.mux.sources))
        self.save_button.disabled = True
        try:
            self.saved = save_logs(self.job.runner, self.job.handle, self.job.app_id, replicas)
            self.saved_links.value = links_html(self.saved)
        except Exception as e:  # noqa: BLE001 - shown in the pane, never raised on a comm thread
            self.saved_links.value = f'<span style="color:#e75c58;font-size:12px">{esc(f"could not save: {e}")}</span>'
        finally:
            self.save_button.disabled = False

    # -- the record ------------------------------------------------------------------------------------
    @property
    def final(self) -> bool:
        """The app has ended and its logs are read (or did not finish within LOG_GRACE)."""
        if not self.status_pane.terminal:
            return False
        late = self._ended_at is not None and time.monotonic() - self._ended_at > self.LOG_GRACE
        return self.log_pane.final or late

    def poll(self) -> None:
        """Catches up with an end the panes' threads have not seen yet (a ``--wait`` that just returned):
        the status pane renders the final state now, and the log pane gets a moment to read the rest."""
        status = self.job.last_status
        if not self.status_pane.terminal and status is not None and status.is_terminal():
            self.status_pane.refresh()
        if self.status_pane.terminal and not self.log_pane.final:
            self.log_pane.done.wait(self.POLL_WAIT)

    def _on_status_final(self) -> None:
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

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        from jupyter_sched.notebook import record
        from jupyter_sched.notebook.status_pane import failures_text

        with self.status_pane.lock:
            status = self.status_pane.status
        ended = status is None or status.is_terminal()
        when = None if ended else as_of_ts
        from jupyter_sched.notebook.log_files import links_html

        return record.job_bundle(
            self.job, status, self.status_pane.static_html(when), failures_text(status, self.log_pane.stderr_tail),
            self.log_pane.static_html(when) + links_html(self.saved), self.log_pane.static_text(record.TEXT_LOG_LINES),
            when,
        )  # fmt: skip

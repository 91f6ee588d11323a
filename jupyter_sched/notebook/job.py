"""The object ``%sched_run`` returns: a handle on a launched app that the user keeps in a variable.

``job.status``, ``job.wait()``, ``job.logs()``, ``job.cancel()`` and ``job.handle`` work anywhere (they
only call the Runner). Displaying a job shows its live view (status pane over log pane, their buttons in
one row) where widgets render, and always, next to the widget, the cell's record (:mod:`.record`): the same
panes as static ``text/html`` and ``text/plain``, labelled "as of" the moment shown while the app runs, and
replaced in place by the final state and log tail when it ends. A job that had ended when displayed shows
the record only, which needs no widget manager. So a saved, exported or headless-run notebook shows what
the panes showed.
"""

from __future__ import annotations

import sys
import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.theme import code, esc, fmt_clock, pill
from jupyter_sched.specs import AppState, AppStatus, parse_app_handle

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.outcome import JobFailed
    from jupyter_sched.runner import Runner
    from jupyter_sched.specs.usage import UsageSample


class LogLines(List[str]):
    """The lines of :meth:`Job.logs`; ``omitted`` counts earlier lines left out (by ``tail``)."""

    omitted: int = 0
    tail: Optional[int] = None

    def __repr__(self) -> str:
        more = f"  # {self.omitted} earlier lines omitted (tail={self.tail})" if self.omitted else ""
        return super().__repr__() + more


class Job:
    """A launched (or re-attached) app. Cheap to create; threads start only when its view is shown."""

    def __init__(
        self,
        handle: str,
        runner: "Runner",
        settings: Callable[[], PaneSettings] = PaneSettings,
        interactive: Callable[[], bool] = lambda: True,
        name: Optional[str] = None,
    ) -> None:
        self.handle = handle
        self.scheduler, self.session_name, self.app_id = parse_app_handle(handle)
        self.name = name or self.app_id.rsplit("-", 1)[0]
        self.runner = runner
        self._settings = settings
        self._interactive = interactive
        self._lock = threading.Lock()
        self._view: Optional["JobView"] = None
        self.last_status: Optional[AppStatus] = None
        #: Set by :meth:`cancel`: a CANCELLED end is then the user's doing, not a failure.
        self.cancel_requested = False
        #: ``--fail-fast``: waits cancel the other replicas as soon as one has failed.
        self.fail_fast = False
        #: The replicas end with this kernel (local schedulers without ``--detach``), as far as known.
        self.bound_to_kernel = False
        #: The cell (execution count) whose display of this job is a one-line summary: set by
        #: :meth:`compact_in_this_cell` after a blocking wait already showed the live view, and by
        #: ``--quiet``. One-shot, and only for that cell: ``job = %sched_run --quiet ...`` then ``job`` in
        #: a later cell shows the full display.
        self._compact_cell: Optional[int] = None

    def __repr__(self) -> str:
        """The handle, and the state only once it is final (a running state here would go stale in a
        saved notebook; ``job.state`` asks the scheduler)."""
        status = self.last_status
        return f"<Job {self.handle} {status.state}>" if status is not None and status.is_terminal() else f"<Job {self.handle}>"

    # -- the API --------------------------------------------------------------------------------------
    def fetch_status(self) -> Optional[AppStatus]:
        """Asks the scheduler (None if it does not know the app) and remembers the answer."""
        status = self.runner.status(self.handle)
        self.last_status = status
        return status

    @property
    def status(self) -> Optional[AppStatus]:
        """The app's current status (asks the scheduler)."""
        return self.fetch_status()

    @property
    def state(self) -> AppState:
        status = self.fetch_status()
        return status.state if status is not None else AppState.UNKNOWN

    def usage(self) -> List[UsageSample]:
        """What each replica uses now (ended replicas: their kept totals); see ``Runner.usage``."""
        return self.runner.usage(self.handle)

    def wait(self, timeout: Optional[float] = None, fail_fast: Optional[bool] = None) -> Optional[AppStatus]:
        """Blocks until the app ends (or ``timeout`` seconds) and returns its status, whatever the
        outcome (:meth:`result` raises instead when the app did not succeed). Waits in short slices, so
        an interrupt (■) arrives at once; interrupting only stops waiting. Clicks in the job's panes are
        handled meanwhile (ipykernel 7). ``fail_fast`` (default: as launched, ``--fail-fast``) cancels
        the other replicas as soon as one has failed."""
        fail_fast = self.fail_fast if fail_fast is None else fail_fast
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            status = self.runner.wait(self.handle, wait_interval=0.5, timeout=step, fail_fast=fail_fast)
            self.last_status = status
            if status is None or status.is_terminal():
                return status
            if deadline is not None and time.monotonic() >= deadline:
                return status

    def watch_fail_fast(self) -> None:
        """Applies ``--fail-fast`` while nobody waits: a daemon thread runs the Runner's fail-fast wait."""
        self.fail_fast = True
        threading.Thread(
            target=self.runner.wait, args=(self.handle, 1.0), kwargs={"fail_fast": True},
            name=f"jupyter_sched-fail-fast-{self.app_id}", daemon=True,
        ).start()  # fmt: skip

    def result(self, timeout: Optional[float] = None) -> AppStatus:
        """Waits like :meth:`wait`, then returns the final status if the app SUCCEEDED and raises
        :class:`~jupyter_sched.notebook.outcome.JobFailed` otherwise: FAILED, CANCELLED (unless this
        kernel cancelled it), or no longer known. ``TimeoutError`` if it is still running after
        ``timeout`` seconds."""
        status = self.wait(timeout)
        if status is not None and not status.is_terminal():
            raise TimeoutError(f"{self.handle} is still {status.state} after {timeout} s")
        failure = self.failure(status)
        if failure is not None:
            raise failure
        assert status is not None
        return status

    def failure(self, status: Optional[AppStatus]) -> Optional["JobFailed"]:
        """The JobFailed that ``status`` (an ended app) calls for, or None: SUCCEEDED, or CANCELLED
        after :meth:`cancel` was called on this Job (the user stopped it here, e.g. the pane's Cancel)."""
        from jupyter_sched.notebook.outcome import JobFailed, failure_message

        if status is not None and status.state == AppState.SUCCEEDED:
            return None
        if status is not None and status.state == AppState.CANCELLED and self.cancel_requested:
            return None
        return JobFailed(self, status, failure_message(self, status, self.fail_fast))

    def cancel(self) -> None:
        """Asks the app to stop (returns at once; ``wait()`` to see it end)."""
        self.cancel_requested = True
        self.runner.cancel(self.handle)

    def logs(
        self,
        role: Optional[str] = None,
        k: Optional[int] = None,
        streams: Optional[str] = None,
        regex: Optional[str] = None,
        tail: Optional[int] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
    ) -> "LogLines":
        """Every log line written so far (``tail=N``: only the last N), ``\r`` and colours resolved, as
        plain text. Several replicas are interleaved and prefixed ``role/k |`` (``!`` for stderr). The
        result is a list that also says what it left out: ``.omitted`` earlier lines (0 unless ``tail``
        cut some), never silently."""
        from jupyter_sched.notebook.log_model import ALL
        from jupyter_sched.notebook.log_pane import app_sources, read_snapshot

        settings = self._settings()
        sources = app_sources(self.fetch_status(), role, None if k is None else [k], streams)
        keep = max(tail, 1) if tail is not None else sys.maxsize
        settings = PaneSettings(**{**settings.__dict__, "keep_lines": keep})
        mux = read_snapshot(self.runner, self.handle, sources, settings, regex, since, until)
        n = keep if tail is not None else mux.total(ALL) + len(sources)
        lines = LogLines(mux.plain(ALL, n))
        lines.omitted, lines.tail = mux.rows(ALL, n)[1], tail
        return lines

    def pane_settings(self) -> PaneSettings:
        """The panes' settings as configured now (``%config SchedMagics``)."""
        return self._settings()

    def view(self) -> "JobView":
        """The live view (made, and its threads started, on first use)."""
        with self._lock:
            if self._view is None:
                self._view = JobView(self, self._settings())
            return self._view

    # -- display --------------------------------------------------------------------------------------
    def compact_in_this_cell(self) -> None:
        """The display of this job at the end of the running cell is the one-line summary."""
        self._compact_cell = _cell_number()

    def _take_compact(self) -> bool:
        cell, self._compact_cell = self._compact_cell, None
        return cell is not None and cell == _cell_number()

    def reattach_hint(self) -> str:
        return f"re-attach: %sched_status {self.handle} | logs: %sched_logs {self.handle} | stop: %sched_cancel {self.handle}"

    def summary(self, final_only: bool = True) -> str:
        """One line: the final state if the app had ended when last asked, else that it was launched
        (``final_only=False``: the state last seen, for a record that says when it was true)."""
        status = self.last_status
        if status is None or not status.is_terminal():
            if final_only or status is None:
                return f"{self.name} launched: {self.handle}"
            return f"{self.name} {status.state}: {self.handle}"
        line = f"{self.name} {status.state}: {self.handle}"
        codes = sorted({r.exit_code for role in status.roles for r in role.replicas if r.exit_code is not None})
        if codes:
            line += f" (exit code{'s' if len(codes) > 1 else ''} {', '.join(map(str, codes))})"
        return line

    def fallback_text(self) -> str:
        """Text that stays true after this moment: the final state if already ended, else no state."""
        status = self.last_status
        details = f"\n{status.format()}" if status is not None and status.is_terminal() else ""
        return f"{self.summary()}{details}\n{self.reattach_hint()}"

    def fallback_html(self) -> str:
        status = self.last_status
        final = pill(status.state) if status is not None and status.is_terminal() else ""
        return (
            f'<div class="jsched-job"><b>{esc(self.name)}</b> {code(self.handle)} {final}<br>'
            f'<span style="font-size:12px">re-attach: {code("%sched_status " + self.handle)} &middot; logs: '
            f'{code("%sched_logs " + self.handle)}</span></div>'
        )

    def _display_source(self) -> Any:
        """What a display of this job shows: the live view (widgets), or the record alone."""
        status = self.fetch_status()
        if self._view is not None:
            return self._view
        if self._interactive() and status is not None and not status.is_terminal():
            return self.view()
        return JobRecord(self)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        from jupyter_sched.notebook import record

        if self._take_compact():
            display({"text/plain": self.summary(), "text/html": f"<div>{esc(self.summary())}</div>"}, raw=True)
            return
        record.show(self._display_source())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        """What a display shows, without a display id (IPython's display uses ``_ipython_display_``)."""
        if self._take_compact():
            bundle = {"text/plain": self.summary(), "text/html": f"<div>{esc(self.summary())}</div>"}
            return _filter(bundle, include, exclude)
        source = self._display_source()
        source.poll()
        bundle = {} if source.final else source.widget_bundle()
        bundle.update(source.record_bundle(None if source.final else time.time()))
        return _filter(bundle, include, exclude)


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
        from jupyter_sched.notebook.log_pane import app_sources, follow_limit, frame_html, read_snapshot
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
        lines = ([f"... {hidden_text:,} earlier lines not shown"] if hidden_text > 0 else []) + mux.plain(ALL, record.TEXT_LOG_LINES)

        def stderr_tail(role: str, k: int) -> List[str]:
            view = f"{role}/{k}"
            if view not in mux.views():
                return []
            got, _ = mux.rows(view, 200)
            streams = {mux.sources[i].stream for i, _ in got}
            return [line.text for i, line in got if mux.sources[i].is_stderr or "stderr" not in streams][-20:]

        html = status_html(job, status, None, stderr_tail, None if ended else as_of_ts)
        return record.job_bundle(job, status, html, failures_text(status, stderr_tail), log_html, lines, as_of_ts)


class JobView:
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
        self.save_button = w.Button(description="Save logs", icon="download", layout=w.Layout(width="auto"),
                                    tooltip="write each replica's full log next to the notebook and link it")  # fmt: skip
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

    def widget_bundle(self) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        return {k: v for k, v in bundle.items() if k.startswith("application/vnd.jupyter.widget")}

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

    def _ipython_display_(self) -> None:
        from jupyter_sched.notebook import record

        record.show(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        bundle = {} if self.final else self.widget_bundle()
        bundle.update(self.record_bundle(None if self.final else time.time()))
        return _filter(bundle, include, exclude)


class View:
    """A widget shown with fallbacks: ``text/plain`` and ``text/html`` that stay true after display time.

    ``pane`` is the object that owns the widget's threads (``view.pane.stop()`` stops updating it).
    """

    def __init__(self, widget: Any, text: str, html: str, pane: Any = None) -> None:
        self.widget = widget
        self.text = text
        self.html = html
        self.pane = pane

    def __repr__(self) -> str:
        return self.text

    # The record protocol of .record, through the pane when it has one (status and log panes do).
    @property
    def trackable(self) -> bool:
        return hasattr(self.pane, "record_bundle")

    @property
    def final(self) -> bool:
        return bool(getattr(self.pane, "final", False))

    def poll(self) -> None:
        if hasattr(self.pane, "poll"):
            self.pane.poll()

    def when_final(self, callback: Callable[[], None]) -> None:
        if hasattr(self.pane, "when_final"):
            self.pane.when_final(callback)

    def widget_bundle(self) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        return {k: v for k, v in bundle.items() if k.startswith("application/vnd.jupyter.widget")}

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        if hasattr(self.pane, "record_bundle"):
            return dict(self.pane.record_bundle(as_of_ts))
        return {"text/plain": self.text, "text/html": self.html}

    def _ipython_display_(self) -> None:
        from jupyter_sched.notebook import record

        record.show(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        bundle = {} if self.final else self.widget_bundle()
        bundle.update(self.record_bundle(None if self.final else time.time()))
        return _filter(bundle, include, exclude)


def _cell_number() -> Optional[int]:
    """The execution count of the running cell (the same while its magics run and its result displays);
    -1 outside IPython."""
    from IPython import get_ipython

    shell = get_ipython()
    return -1 if shell is None else int(getattr(shell, "execution_count", -1))


def _filter(bundle: Dict[str, Any], include: Any, exclude: Any) -> Dict[str, Any]:
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle

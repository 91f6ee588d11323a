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
from jupyter_sched.notebook.record import RecordSource, filter_bundle, live_bundle
from jupyter_sched.notebook.theme import code, esc, pill
from jupyter_sched.specs import AppState, AppStatus, parse_app_handle

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.notebook.job_view import JobView
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
        self._shown_cell: Optional[int] = None

    def __repr__(self) -> str:
        """The handle, and the state only once it is final (a running state here would go stale in a
        saved notebook; ``job.state`` asks the scheduler)."""
        status = self.last_status
        if status is not None and status.is_terminal():
            return f"<Job {self.handle} {status.state}>"
        return f"<Job {self.handle}>"

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
        from jupyter_sched.notebook.job_view import JobView

        with self._lock:
            if self._view is None:
                self._view = JobView(self, self._settings())
            return self._view

    # -- display --------------------------------------------------------------------------------------
    def compact_in_this_cell(self) -> None:
        """The display of this job at the end of the running cell is the one-line summary."""
        self._compact_cell = _cell_number()

    def shown_in_this_cell(self) -> None:
        """The magic displayed the view itself (an assigned ``job = %sched_run ...``): IPython's display
        of ``job`` later in the same cell is then the one-line summary, not a second view."""
        self._shown_cell = _cell_number()

    def _take_compact(self, by_ipython: bool = False) -> bool:
        cell, self._compact_cell = self._compact_cell, None
        if by_ipython and cell is None:
            cell, self._shown_cell = self._shown_cell, None
        return cell is not None and cell == _cell_number()

    def reattach_hint(self) -> str:
        return (
            f"re-attach: %sched_status {self.handle} | logs: %sched_logs {self.handle}"
            f" | stop: %sched_cancel {self.handle}"
        )

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
        from jupyter_sched.notebook.job_view import JobRecord

        return JobRecord(self)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        from jupyter_sched.notebook import record

        if self._take_compact(by_ipython=True):
            display({"text/plain": self.summary(), "text/html": f"<div>{esc(self.summary())}</div>"}, raw=True)
            return
        record.show(self._display_source())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        """What a display shows, without a display id (IPython's display uses ``_ipython_display_``)."""
        if self._take_compact():
            bundle = {"text/plain": self.summary(), "text/html": f"<div>{esc(self.summary())}</div>"}
            return filter_bundle(bundle, include, exclude)
        source = self._display_source()
        source.poll()
        return filter_bundle(live_bundle(source), include, exclude)


class View(RecordSource):
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

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, str]:
        if hasattr(self.pane, "record_bundle"):
            return dict(self.pane.record_bundle(as_of_ts))
        return {"text/plain": self.text, "text/html": self.html}


def _cell_number() -> Optional[int]:
    """The execution count of the running cell (the same while its magics run and its result displays);
    -1 outside IPython."""
    from IPython import get_ipython

    shell = get_ipython()
    return -1 if shell is None else int(getattr(shell, "execution_count", -1))


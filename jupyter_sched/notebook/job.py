"""The object ``%sched_run`` returns: a handle on a launched app that the user keeps in a variable.

``job.status``, ``job.wait()``, ``job.logs()``, ``job.cancel()`` and ``job.handle`` work anywhere (they
only call the Runner). Displaying a job shows its live view (status pane over log pane) where widgets
render; next to the widget it always ships ``text/plain`` and ``text/html`` that hold only what cannot go
stale (identity, how to re-attach, and the final state if the app had already ended when it was shown),
so exports, nbval and terminals see something true instead of ``VBox(...)`` or frozen live numbers.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from jupyter_sched.notebook.config import PaneSettings
from jupyter_sched.notebook.theme import code, esc, pill
from jupyter_sched.specs import AppState, AppStatus, parse_app_handle

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner
    from jupyter_sched.specs.usage import UsageSample


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

    def wait(self, timeout: Optional[float] = None) -> Optional[AppStatus]:
        """Blocks until the app ends (or ``timeout`` seconds) and returns its status. Waits in short
        slices, so an interrupt (■) arrives at once; interrupting only stops waiting."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            status = self.runner.wait(self.handle, wait_interval=0.5, timeout=step)
            self.last_status = status
            if status is None or status.is_terminal():
                return status
            if deadline is not None and time.monotonic() >= deadline:
                return status

    def cancel(self) -> None:
        """Asks the app to stop (returns at once; ``wait()`` to see it end)."""
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
    ) -> List[str]:
        """The log lines written so far, ``\\r`` and colours resolved, as plain text. Several replicas are
        interleaved and prefixed ``role/k |`` (``!`` for stderr); ``tail`` keeps the last N lines."""
        from jupyter_sched.notebook.log_model import ALL
        from jupyter_sched.notebook.log_pane import app_sources, read_snapshot

        settings = self._settings()
        sources = app_sources(self.fetch_status(), role, None if k is None else [k], streams)
        if tail is not None:
            settings = PaneSettings(**{**settings.__dict__, "keep_lines": max(tail, 1)})
        mux = read_snapshot(self.runner, self.handle, sources, settings, regex, since, until)
        return mux.plain(ALL, tail if tail is not None else settings.keep_lines)

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

    def summary(self) -> str:
        """One line: the final state if the app had ended when last asked, else that it was launched."""
        status = self.last_status
        if status is None or not status.is_terminal():
            return f"{self.name} launched: {self.handle}"
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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        if self._take_compact():
            bundle = {"text/plain": self.summary(), "text/html": f"<div>{esc(self.summary())}</div>"}
        elif self._interactive():
            self.fetch_status()
            bundle = self.view()._repr_mimebundle_(include=include, exclude=exclude)
        else:
            self.fetch_status()
            bundle = {"text/plain": self.fallback_text(), "text/html": self.fallback_html()}
        return _filter(bundle, include, exclude)


class JobView:
    """Status pane over log pane (all replicas). Stops its threads when the app has ended."""

    def __init__(self, job: Job, settings: PaneSettings) -> None:
        import ipywidgets as w

        from jupyter_sched.notebook.log_model import LogMux
        from jupyter_sched.notebook.log_pane import LogPane, app_sources, follow_limit
        from jupyter_sched.notebook.status_pane import StatusPane

        self.job = job
        status = job.fetch_status()  # on the caller's thread: creates the scheduler before any thread
        self.status_pane = StatusPane(job, settings, status)
        sources = follow_limit(app_sources(status))
        mux = LogMux(sources, settings.keep_lines, settings.max_line_chars)
        self.log_pane = LogPane(mux, settings, title="logs", live=True)
        self.log_pane.on_all_ended = self.status_pane.wake
        self.widget = w.VBox([self.status_pane.widget, self.log_pane.widget])
        self.widget.add_class("jsched-job")
        self.status_pane.start()
        self.log_pane.start(job.runner, job.handle)

    def stop(self) -> None:
        self.status_pane.stop()
        self.log_pane.stop()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        bundle["text/plain"] = self.job.fallback_text()
        bundle["text/html"] = self.job.fallback_html()
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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_() or {})
        bundle["text/plain"] = self.text
        bundle["text/html"] = self.html
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

"""A cell's output as the record of a job: what its panes showed, kept in ``text/html`` and ``text/plain``.

Why: a widget renders only where a widget manager holds its model. A notebook reopened without a kernel
or saved widget state, ``nbconvert``, GitHub and terminals show an output's ``text/html`` or
``text/plain`` instead, so those must be true on their own. Every live display therefore ships, next to
the widget, a static rendering of the same panes "as of" the moment shown; and when its app ends, the
output is replaced in place (a display id and ``update_display_data``) by the final record: the status
table, why replicas failed and the log tail the pane showed (bounded, ``\\r`` resolved, colours as inline
styles, escaped and safe from maths rendering; no scripts, no classes that need a stylesheet). The widget
mime type is dropped then: an ended pane has nothing live left, and a saved notebook must show the record,
not "model not found". An app that had ended before it was shown gets the static record only.

Updates are sent twice: from the pane's thread the moment the app ends (JupyterLab and Notebook 7 route
them by display id to the cell, whatever cell runs), and from the kernel's main thread after the next
cell runs (``post_run_cell``), because a headless client (nbclient: ``nbconvert --execute``, papermill)
only reads messages while a cell executes. No environment variable is involved. Only displays in a
kernel are tracked (a terminal would print every update).

A source that changes after it has ended (a sweep: sorted, or runs retried) has ``on_change``. Its
displays stay tracked after the end: a change republishes the record (e.g. the sorted table), or the
live display again if it runs again. Such a source may also keep its widget (its controls) after the end
(``widget_after_end()``): only where a person is at the front end that displayed it, which is how
the record of a headless run (nbclient, papermill, nbval) stays free of widgets nobody can restore.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional

from jupyter_sched.frontend.jobs.rows import app_span
from jupyter_sched.notebook.displays.reprs import REPLICA_HEADERS, replica_rows
from jupyter_sched.notebook.panes.theme import NO_MATH, PANE_STYLE, as_of, esc, fmt_duration, text_table

TEXT_LOG_LINES = 40
"""Log lines in a record's ``text/plain``."""
HTML_LOG_LINES = 200
HTML_LOG_CHARS = 64_000
"""Bounds of the log tail in a record's ``text/html`` (at most the pane's own ``tail_lines``): a saved
notebook keeps one record per job cell, so it stays tens of KB however much the job printed."""

_TRACKED: Dict[str, Any] = {}
_KEPT: Dict[str, Any] = {}  # ended sources that change later: display id -> source
_WIDGET_AFTER_END: Dict[str, bool] = {}  # display id -> the final record keeps the widget
_DIRTY: Dict[str, None] = {}  # kept displays changed since their last update from the main thread
_LOCK = threading.Lock()


def _in_kernel() -> bool:
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def frontend_takes_input() -> bool:
    """Whether the request running now came from a front end a person uses: JupyterLab, Notebook and VS
    Code send ``allow_stdin=true`` with each cell; headless clients (nbclient under papermill and
    ``nbconvert --execute``, nbval) send false, since nobody could answer."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None or not hasattr(kernel, "get_parent"):
        return False
    parent = kernel.get_parent("shell") or {}
    return bool((parent.get("content") or {}).get("allow_stdin"))


def show(source: Any) -> None:
    """Displays ``source`` (an object with ``final``, ``record_bundle(as_of_ts)``, ``widget_bundle()``,
    ``when_final(callback)`` and ``poll()``): the static record if it has ended, else the widget and the
    record as of now under a display id that is updated with the final record when it ends. A source
    with ``on_change`` keeps its display id after the end (see the module's docstring)."""
    from IPython.display import display

    source.poll()
    kept = hasattr(source, "on_change") and _in_kernel() and getattr(source, "trackable", True)
    if source.final and not kept:
        display(_record(source, None), raw=True)
        return
    keep_widget = bool(getattr(source, "widget_after_end", lambda: False)())
    if source.final:
        bundle = _final_bundle(source, keep_widget)
    else:
        bundle = {**source.widget_bundle(), **_record(source, time.time())}
    if not _in_kernel() or not getattr(source, "trackable", True):
        display(bundle, raw=True)
        return
    display_id = uuid.uuid4().hex
    with _LOCK:
        (_KEPT if source.final else _TRACKED)[display_id] = source
        _WIDGET_AFTER_END[display_id] = keep_widget
    display(bundle, raw=True, display_id=display_id)
    if not source.final:
        source.when_final(lambda: publish(display_id, main_thread=False))
    if kept:
        source.on_change(lambda: changed(display_id))


def _final_bundle(source: Any, keep_widget: bool) -> Dict[str, Any]:
    record = _record(source, None)
    return {**source.widget_bundle(), **record} if keep_widget else record


def changed(display_id: str) -> None:
    """A kept source changed (its ``on_change``): an ended display shows the new record at once, and
    again from the main thread after the cell (for headless clients); one that runs again (a sweep's
    retry) is live again until it ends again. Displays still live are left to their widget."""
    from IPython.display import update_display

    with _LOCK:
        again = False
        source = _KEPT.get(display_id)
        if source is None:  # live, or ended with no cell run since (its final update came from a thread)
            source = _TRACKED.get(display_id)
            if source is None or not source.final:
                return
            _DIRTY[display_id] = None
        elif not source.final:
            again = True
            del _KEPT[display_id]
            _DIRTY.pop(display_id, None)
            _TRACKED[display_id] = source
        else:
            _DIRTY[display_id] = None
        keep_widget = _WIDGET_AFTER_END.get(display_id, False)
    try:
        if again:
            update_display({**source.widget_bundle(), **_record(source, time.time())}, raw=True, display_id=display_id)
            source.when_final(lambda: publish(display_id, main_thread=False))
        else:
            update_display(_final_bundle(source, keep_widget), raw=True, display_id=display_id)
    except Exception:  # noqa: BLE001 - a display that cannot be updated now is updated after the cell
        pass


def widget_mimes(widget: Any) -> Dict[str, Any]:
    """Only the widget-view part of ``widget``'s mime bundle (its text fallback is the record's job)."""
    bundle = dict(widget._repr_mimebundle_() or {})
    return {k: v for k, v in bundle.items() if k.startswith("application/vnd.jupyter.widget")}


def live_bundle(source: Any) -> Dict[str, Any]:
    """What a display of ``source`` shows without a display id: the widget and the record as of now, or
    the final record alone once it has ended."""
    bundle = {} if source.final else source.widget_bundle()
    bundle.update(source.record_bundle(None if source.final else time.time()))
    return bundle


def filter_bundle(bundle: Dict[str, Any], include: Any, exclude: Any) -> Dict[str, Any]:
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


class RecordSource:
    """The display side of a record source (see :func:`show`): a subclass gives ``widget``, ``final``,
    ``record_bundle(as_of_ts)``, ``poll()`` and ``when_final(callback)``."""

    widget: Any

    def widget_bundle(self) -> Dict[str, Any]:
        return widget_mimes(self.widget)

    def _ipython_display_(self) -> None:
        show(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> Dict[str, Any]:
        return filter_bundle(live_bundle(self), include, exclude)


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

    # The record protocol of this module, through the pane when it has one (status and log panes do).
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

    def record_bundle(self, as_of_ts: Optional[float] = None) -> Dict[str, Any]:
        if hasattr(self.pane, "record_bundle"):
            return dict(self.pane.record_bundle(as_of_ts))
        return {"text/plain": self.text, "text/html": self.html}


def _record(source: Any, as_of_ts: Optional[float]) -> Dict[str, Any]:
    """The source's record; if it cannot be made (a backend that fails to answer), a line saying so, so
    that the display (and the live widget) still appears."""
    try:
        return dict(source.record_bundle(as_of_ts))
    except Exception as e:  # noqa: BLE001 - the cell's output must not become a traceback
        text = f"(no record: {type(e).__name__}: {e})"
        return {"text/plain": text, "text/html": f'<div class="jsched-record {NO_MATH}">{esc(text)}</div>'}


def publish(display_id: str, main_thread: bool = True) -> bool:
    """Replaces the output ``display_id`` by its source's final record; from the main thread this is the
    last update (the display is forgotten). False if the display is not tracked."""
    from IPython.display import update_display

    with _LOCK:
        source = _TRACKED.get(display_id)
        if source is None:
            source = _KEPT.get(display_id)
        if source is None:
            return False
        if main_thread:
            _TRACKED.pop(display_id, None)
            _DIRTY.pop(display_id, None)
            if hasattr(source, "on_change"):
                _KEPT[display_id] = source
            else:
                _WIDGET_AFTER_END.pop(display_id, None)
        keep_widget = _WIDGET_AFTER_END.get(display_id, False)
    update_display(_final_bundle(source, keep_widget), raw=True, display_id=display_id)
    return True


def flush(*_args: Any) -> int:
    """``post_run_cell``: publishes every tracked display whose app has ended; returns how many."""
    with _LOCK:
        tracked = list(_TRACKED.items())
        dirty = [(display_id, _KEPT[display_id]) for display_id in _DIRTY if display_id in _KEPT]
    sent = 0
    for display_id, _source in dirty:
        try:
            if publish(display_id, main_thread=True):
                sent += 1
        except Exception:  # noqa: BLE001 - as below
            pass
    for display_id, source in tracked:
        try:
            source.poll()
            if source.final and publish(display_id, main_thread=True):
                sent += 1
        except Exception:  # noqa: BLE001 - a record that cannot be made must not break the user's cell
            with _LOCK:
                _TRACKED.pop(display_id, None)
    return sent


def tracked() -> List[str]:
    """Display ids still waiting for their final record."""
    with _LOCK:
        return list(_TRACKED)


def forget_all() -> None:
    """Stops tracking every display (``unload``)."""
    with _LOCK:
        _TRACKED.clear()
        _KEPT.clear()
        _WIDGET_AFTER_END.clear()
        _DIRTY.clear()


# -- the record of a job ------------------------------------------------------------------------------


def hint_text(handle: str, ended: bool) -> str:
    """How to get back to the app from another cell; ``stop`` only while there is something to stop."""
    hint = f"re-attach: %sched_status {handle} \u00b7 logs: %sched_logs {handle}"
    return hint if ended else f"{hint} \u00b7 stop: %sched_cancel {handle}"


JOB_MIME = "application/vnd.jupyter-sched.job+json"
"""Which job an output shows, for the JupyterLab extension (``labextension/src/output.ts``): where the
output's widget model is gone (reopened notebook, restarted kernel), it shows the job as the Jupyter server
knows it instead of "model not found", and the record below only if the server does not know the handle.
Front ends that do not know the type ignore it."""


def job_mime(job: Any, status: Any, as_of_ts: Optional[float]) -> Dict[str, Any]:
    ended = status is None or status.is_terminal()
    state = status.state.name if status is not None else "UNKNOWN"
    return {"handle": job.handle, "name": job.name, "state": state, "final": ended,
            "as_of": None if ended else as_of_ts}  # fmt: skip


def job_bundle(job: Any, status: Any, status_html: str, failures: List[str], log_html: str,
               log_lines: List[str], as_of_ts: Optional[float], saved_html: str = "", metrics_html: str = "",
               metrics_lines: Optional[List[str]] = None) -> Dict[str, Any]:  # fmt: skip
    """``text/plain`` and ``text/html`` of a job's record: the live view frozen, in its layout (status, the
    row the buttons were in, now the re-attach hint alone, the saved logs' links, the Metrics section's
    charts as images, the log pane; in text, each key's last and best value). ``as_of_ts``
    given and the app not ended: the state is labelled with the time it was true. Also :data:`JOB_MIME`."""
    ended = status is None or status.is_terminal()
    when = "" if ended or as_of_ts is None else f" ({as_of(as_of_ts)})"
    hint = hint_text(job.handle, ended)
    html = (
        f'<div class="jsched-record jsched-job {NO_MATH}" style="{PANE_STYLE}">'
        f'<div class="jsched-status">{status_html}'
        f'<div class="jsched-hint" style="font-size:11px;opacity:0.7;margin:4px 0 2px">{esc(hint)}</div>'
        f"{saved_html}</div>{metrics_html}"
        f'<div class="jsched-log" style="margin-top:4px">{log_html}</div></div>'
    )
    head = job.summary(final_only=False) + when
    span = _span_text(status)
    text = [head + span]
    if status is not None and status.roles:
        text.append(text_table(REPLICA_HEADERS, replica_rows(status, html=False)))
    text += failures
    text += metrics_lines or []
    if log_lines:
        text.append("logs:")
        text += [f"  {line}" for line in log_lines]
    text.append(hint)
    return {"text/plain": "\n".join(text), "text/html": html, JOB_MIME: job_mime(job, status, as_of_ts)}


def reattach_hint(job: Any) -> str:
    """How to get a job back in another cell: its status pane, its logs, and how to stop it while it runs
    (as far as last seen)."""
    status = job.last_status
    return hint_text(job.handle, status is not None and status.is_terminal())


def _span_text(status: Any) -> str:
    if status is None or not status.is_terminal():
        return ""
    span = app_span(status, time.time())
    return f" in {fmt_duration(span)}" if span is not None else ""

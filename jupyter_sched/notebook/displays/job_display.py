"""What the notebook remembers about each Job it shows: its panes' settings, whether displays may be live
widgets, its live view once made, and the cells whose display of it is a one-line summary.

A :class:`~jupyter_sched.frontend.job.Job` is plain Python; the notebook keeps this beside it (weakly: a job
nobody holds is forgotten). The session tracks every job it makes or is handed (``%sched_run``,
``jupyter_sched.submit`` in a kernel, ``%sched_job``); a job it never saw gets the defaults.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from jupyter_sched.frontend.job import Job
from jupyter_sched.notebook.kernel.config import PaneSettings


@dataclass
class JobDisplay:
    """The notebook's side of one job (see the module docstring)."""

    settings: Callable[[], PaneSettings] = PaneSettings
    interactive: Callable[[], bool] = lambda: True
    view: Any = None
    #: The cell (:func:`cell_number`) whose display of this job is a one-line summary: set by
    #: :func:`compact_in_this_cell` after a blocking wait already showed the live view, and by ``--quiet``.
    #: One-shot, and only for that cell: ``job = %sched_run --quiet ...`` then ``job`` in a later cell shows
    #: the full display.
    compact_cell: Optional[Any] = None
    shown_cell: Optional[Any] = None
    lock: threading.Lock = field(default_factory=threading.Lock)


_DISPLAYS: "weakref.WeakKeyDictionary[Job, JobDisplay]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def track(job: Job, settings: Callable[[], PaneSettings], interactive: Callable[[], bool]) -> JobDisplay:
    """Shows ``job`` with these settings from now on; its log lines are cut as the panes cut them."""
    with _LOCK:
        display = _DISPLAYS.get(job)
        if display is None:
            display = _DISPLAYS[job] = JobDisplay(settings, interactive)
        else:
            display.settings, display.interactive = settings, interactive
    job.line_chars = lambda: settings().max_line_chars
    return display


def display_of(job: Job) -> JobDisplay:
    """The notebook's side of ``job`` (the defaults for a job the session never saw)."""
    with _LOCK:
        display = _DISPLAYS.get(job)
        if display is None:
            display = _DISPLAYS[job] = JobDisplay()
        return display


def cell_number() -> Any:
    """What identifies the running cell (the same while its magics run and its result displays): in a
    kernel, its execute request's id; else the execution count; -1 outside IPython. (Not the count in a
    kernel: a client that does not store history, such as nbval, runs every cell under the same count.)"""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return -1
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and hasattr(kernel, "get_parent"):
        msg_id = ((kernel.get_parent("shell") or {}).get("header") or {}).get("msg_id")
        if msg_id:
            return msg_id
    return int(getattr(shell, "execution_count", -1))


def compact_in_this_cell(job: Job) -> None:
    """The display of ``job`` at the end of the running cell is the one-line summary."""
    display_of(job).compact_cell = cell_number()


def shown_in_this_cell(job: Job) -> None:
    """The magic displayed the view itself (an assigned ``job = %sched_run ...``): IPython's display of
    ``job`` later in the same cell is then the one-line summary, not a second view."""
    display_of(job).shown_cell = cell_number()


def take_compact(job: Job, by_ipython: bool = False) -> bool:
    """Whether this display of ``job`` is the one-line summary (and the mark is used up)."""
    display = display_of(job)
    cell, display.compact_cell = display.compact_cell, None
    if by_ipython and cell is None:
        cell, display.shown_cell = display.shown_cell, None
    return cell is not None and cell == cell_number()

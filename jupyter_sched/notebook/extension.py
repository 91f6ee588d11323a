"""Loading and unloading the extension into an IPython shell (``%load_ext``/``%unload_ext jupyter_sched``).

``load`` is idempotent (a second call returns the instance already registered) and cheap: it imports the
magics module (IPython is already there) but not ipywidgets, docker or any scheduler backend. It registers
the displays of the plain-Python objects users hold (a Job's live view and record, a Sweep's table) as
IPython formatters, so those objects need no IPython themselves. ``unload``
removes exactly what ``load`` added (IPython has no public way to unregister magics, so the entries that
point at our instance are deleted from the magics table) and stops the panes' threads; it never cancels
jobs and never closes runners, whose local schedulers would stop the apps they own.
"""

from __future__ import annotations

import weakref
from typing import Any, Optional

_LOADED: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_CELL_NAMERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def cell_namer(shell: Any) -> Any:
    """``filename -> "Cell In[12]"`` for the shell's cells (IPython's own label), else None: how a function
    job's remote traceback names the cell a function was defined in (functions.sources)."""

    def name(filename: str) -> Optional[str]:
        format_code_name = getattr(shell.compile, "format_code_name", None)  # IPython 8.? and later
        named = format_code_name(filename) if format_code_name is not None else None
        return " ".join(named) if named else None

    return name


def loaded(shell: Any) -> Optional[Any]:
    """The ``SchedMagics`` instance registered in ``shell``, if any."""
    return _LOADED.get(shell)


def load(shell: Any) -> Any:
    """Registers ``SchedMagics`` and the rich displays in ``shell``; returns the magics instance."""
    if shell is None:
        return None
    existing = _LOADED.get(shell)
    if existing is not None:
        return existing
    from jupyter_sched.functions.calls import sources
    from jupyter_sched.notebook.displays import record, reprs
    from jupyter_sched.notebook.kernel import notes
    from jupyter_sched.notebook.magics.sched_magics import SchedMagics
    from jupyter_sched.notebook.panes import job_view, sweep_view

    magics = SchedMagics(shell=shell)
    shell.register_magics(magics)
    reprs.register(shell)
    job_view.register(shell)
    sweep_view.register(shell, magics.session.interactive)
    shell.events.register("post_run_cell", record.flush)  # ended jobs' records reach headless clients
    notes.install(shell)  # library diagnostics as a one-line note, not stderr
    _CELL_NAMERS[shell] = namer = cell_namer(shell)
    sources.add_namer(namer)
    _LOADED[shell] = magics
    return magics


def shell_launcher() -> Optional[Any]:
    """In a running IPython, the session's launcher of ``jupyter_sched.submit``/``sweep`` (loading the
    extension if needed); None in a plain process (IPython missing, or not running)."""
    try:
        from IPython import get_ipython
    except ImportError:  # a plain process without IPython
        return None
    shell = get_ipython()
    if shell is None:
        return None
    return (loaded(shell) or load(shell)).session.launcher


def unload(shell: Any) -> None:
    """Removes the magics and displays ``load`` added and stops every pane thread (jobs keep running)."""
    magics = _LOADED.pop(shell, None)
    if magics is None:
        return
    from jupyter_sched.functions.calls import sources
    from jupyter_sched.notebook.displays import record, reprs
    from jupyter_sched.notebook.kernel import live, notes
    from jupyter_sched.notebook.panes import job_view, sweep_view

    manager = shell.magics_manager
    for kind, names in magics.magics.items():
        table = manager.magics.get(kind, {})
        for name in names:
            if getattr(table.get(name), "__self__", None) is magics:
                del table[name]
    if manager.registry.get(type(magics).__name__) is magics:
        del manager.registry[type(magics).__name__]
    if magics in getattr(shell, "configurables", []):
        shell.configurables.remove(magics)
    reprs.unregister(shell)
    job_view.unregister(shell)
    sweep_view.unregister(shell)
    if record.flush in shell.events.callbacks.get("post_run_cell", []):
        shell.events.unregister("post_run_cell", record.flush)
    notes.uninstall(shell)
    sources.remove_namer(_CELL_NAMERS.pop(shell, None))
    live.stop_all()
    record.forget_all()

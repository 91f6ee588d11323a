"""The notebook layer: ``%load_ext jupyter_sched`` magics, live status/log/list panes and rich reprs.

This is the only package of jupyter_sched that imports IPython and ipywidgets, and it imports them lazily:
loading the extension registers the magics and display formatters without importing ipywidgets, which is
first imported when a widget is shown. Its rooms, by what a newcomer looks for:

* :mod:`.extension` -- ``load``/``unload`` (idempotent) of the magics and formatters: registration.
* :mod:`.autoload` -- ``python -m jupyter_sched.notebook.autoload enable|disable|status``.
* :mod:`.magics` -- what a user types: ``SchedMagics`` and the work behind each magic.
* :mod:`.panes` -- what a user watches: the widgets (status, log, list, sweep, usage) and a job's live view.
* :mod:`.displays` -- what a user keeps: rich reprs of the data model and a cell's saved record.
* :mod:`.kernel` -- the extension's life in a kernel: configuration, session, threads, notes.

The Job (``jupyter_sched.frontend.job``), ``JobFailed``, function jobs and sweeps (``jupyter_sched.functions``)
are plain Python below this layer: ``jupyter_sched.submit`` works without IPython. What a job *is* on screen
(state, label, times, reason, usage, sweep grouping) comes from ``jupyter_sched.frontend``'s one model; the
panes render it and derive no job fact of their own. A new view of a job -- a metrics chart, a notebook's
progress bar -- is one field of that model plus one renderer here, in :mod:`.panes` (live) and
:mod:`.displays` (its saved record), beside the same renderers of the CLI, the server and the JupyterLab
extension.
"""

from jupyter_sched.frontend.job import JobFailed  # what --wait and job.result() raise

__all__ = ["JobFailed"]

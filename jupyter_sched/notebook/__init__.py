"""The notebook layer: ``%load_ext jupyter_sched`` magics, live status/log/list panes and rich reprs.

This is the only package of jupyter_sched that imports IPython and ipywidgets, and it imports them lazily:
loading the extension registers the magics and display formatters without importing ipywidgets, which is
first imported when a widget is shown. Modules:

* :mod:`.extension` -- ``load``/``unload`` (idempotent) of the magics and formatters.
* :mod:`.magics` -- ``SchedMagics``; :mod:`.config` its traits; :mod:`.args`, :mod:`.run_plan`,
  :mod:`.logs_cmd` the work behind the magics; :mod:`.session` runners, jobs and app lookup.
* :mod:`.job_view` -- a Job's live view (status pane over log pane) and its cell's record, registered as
  the Job's IPython displays; :mod:`.job_display` what the notebook keeps per job; :mod:`.record` a cell's
  output as the record of what its panes showed; :mod:`.callsite` whether a magic's result is assigned;
  :mod:`.comm_thread` the subshell that handles pane clicks while a cell blocks; :mod:`.status_pane`,
  :mod:`.log_pane`, :mod:`.list_pane` the widgets; :mod:`.log_model` the log model as HTML; :mod:`.live`
  the threads.
* :mod:`.reprs`, :mod:`.dryrun_repr` -- HTML/text/JSON displays of the data model; :mod:`.theme` helpers.
* :mod:`.fn_magic` -- ``%sched_run FUNCTION --flag value``; :mod:`.sweep_view` a sweep's table.

The Job (``jupyter_sched.frontend.job``), ``JobFailed``, function jobs and sweeps (``jupyter_sched.functions``)
are plain Python below this layer: ``jupyter_sched.submit`` works without IPython.
* :mod:`.autoload` -- ``python -m jupyter_sched.notebook.autoload enable|disable|status``.
"""

from jupyter_sched.frontend.job import JobFailed  # what --wait and job.result() raise

__all__ = ["JobFailed"]

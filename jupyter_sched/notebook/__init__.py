"""The notebook layer: ``%load_ext jupyter_sched`` magics, live status/log/list panes and rich reprs.

This is the only package of jupyter_sched that imports IPython and ipywidgets, and it imports them lazily:
loading the extension registers the magics and display formatters without importing ipywidgets, which is
first imported when a widget is shown. Modules:

* :mod:`.extension` -- ``load``/``unload`` (idempotent) of the magics and formatters.
* :mod:`.magics` -- ``SchedMagics``; :mod:`.config` its traits; :mod:`.args`, :mod:`.run_plan`,
  :mod:`.logs_cmd` the work behind the magics; :mod:`.session` runners, jobs and app lookup.
* :mod:`.job` -- the ``Job`` that ``%sched_run`` returns; :mod:`.outcome` ``JobFailed`` (what ``--wait``
  and ``job.result()`` raise); :mod:`.callsite` whether a magic's result is assigned; :mod:`.comm_thread`
  the subshell that handles pane clicks while a cell blocks; :mod:`.status_pane`, :mod:`.log_pane`,
  :mod:`.list_pane` the widgets; :mod:`.log_model` the multiplexed log model; :mod:`.live` the threads.
* :mod:`.reprs`, :mod:`.dryrun_repr` -- HTML/text/JSON displays of the data model; :mod:`.theme` helpers.
* :mod:`.fn_job` -- ``jupyter_sched.submit``: a notebook function as a Job (``FunctionJob``);
  :mod:`.fn_magic` ``%sched_run FUNCTION --flag value``; :mod:`.sweep`, :mod:`.sweep_view` sweeps and
  their table.
* :mod:`.autoload` -- ``python -m jupyter_sched.notebook.autoload enable|disable|status``.
"""

from jupyter_sched.notebook.outcome import JobFailed

__all__ = ["JobFailed"]

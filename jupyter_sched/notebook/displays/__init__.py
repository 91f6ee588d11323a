"""What a user keeps: rich displays of the data model and a cell's output as the saved record of a job.

* :mod:`.reprs` -- HTML/text/JSON displays of AppDef, AppStatus and friends, registered as IPython formatters.
* :mod:`.dryrun_repr` -- a dry run as a table per replica, a text rendering and JSON.
* :mod:`.record` -- a cell's output as the record of what its panes showed (``text/html`` and
  ``text/plain``), readable with no kernel and no extension.
* :mod:`.job_display` -- what the notebook remembers about each job it shows.
* :mod:`.launch_display` -- ``job = jupyter_sched.submit(...)`` shows the job as ``%sched_run`` does.
* :mod:`.log_files` -- a replica's full logs as files next to the notebook, linked from the pane.
"""

"""What a user watches: the live widgets, each a renderer of ``jupyter_sched.frontend``'s model of a job.

* :mod:`.job_view` -- a job on screen: the status pane over the log pane, and its cell's record.
* :mod:`.status_pane` -- one app's identity, state pill, elapsed time, replicas and Cancel button.
* :mod:`.usage_view`, :mod:`.usage_chart` -- the status pane's usage part and its CPU/memory chart.
* :mod:`.metrics_view` -- the job view's Metrics section: a live chart per key of one replica's
  ``jupyter_sched.track`` records (``frontend.jobs.metric_charts``), with a replica picker.
* :mod:`.tracker_view` -- the Metrics section's tracker block: what the job told TorchX's tracker API
  (``app_run_from_env()``), metadata as ``key = value``, artifacts as ``name → path``.
* :mod:`.log_pane` -- one replica's or all replicas' logs, live; :mod:`.log_model` the log model as HTML.
* :mod:`.list_pane` -- ``%sched_list`` as a live table of the frontend's jobs list.
* :mod:`.sweep_view` -- a sweep as one table, a row per run, with a live column per metric and a chart of
  one metric with a line per run; :mod:`.sweep_metrics` reads the runs' metrics for it.
* :mod:`.theme` -- HTML and text helpers shared by panes and reprs: state pills, times, tables.

Where new views go: a notebook job's progress bar is a part of :mod:`.status_pane`; a new column of the jobs
or sweep table is one cell renderer in :mod:`.list_pane` or :mod:`.sweep_view`. Each also needs its record
form in ``notebook.displays.record``.
"""

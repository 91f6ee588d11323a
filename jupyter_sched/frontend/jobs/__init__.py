"""The one model of a job and of a jobs list, which every front end renders and none re-derives.

* :mod:`.rows` -- a job's row and a sweep's row (dataclasses), each derived from an ``AppStatus`` once by
  :func:`~.rows.job_row` / :func:`~.rows.sweep_row`: state, label, times and span, counts, reason, usage,
  sweep.
* :mod:`.order` -- the list's order (running first, then newest first; total) and its sweep grouping.
* :mod:`.listing` -- the one listing over sessions x schedulers, with notices for schedulers that failed.
* :mod:`.payloads` -- the shapes of the server's other answers (a page of the list, a job's detail).
* :mod:`.schema` -- the JSON Schema of every payload and the extension's ``labextension/src/model.ts``,
  both written from the dataclasses.
* :mod:`.reasons` -- why a replica failed, in the words every front end shows (pure functions of a status).
* :mod:`.stderr_tails` -- a failed replica's last stderr lines, read once from its scheduler's logs: the one
  input of a reason that its status does not carry, which every front end reads the same way.
* :mod:`.sweep_names` -- which sweep an app belongs to, from its name alone.
* :mod:`.usage_table` -- ``job.usage()`` as a table of replicas.
* :mod:`.metrics` -- ``job.metrics``: what the replicas logged with ``jupyter_sched.track``, read back from the
  app's metrics directory (records from a cursor, torn lines skipped and counted, the summaries), as DataFrames.
* :mod:`.tracked` -- what a job told TorchX's tracker API (``app_run_from_env()``): metadata, artifacts and
  sources per run id, merged as TorchX's fsspec backend does; ``describe`` shows them, and its bounded, masked
  block (read again only when the files changed) is the server's ``tracker`` field, the job pane's and the
  JupyterLab job view's.
* :mod:`.metric_charts` -- a metric's chart: one small SVG line chart per key (axes, the last and the best
  value, NaN as gaps), as an ``<img>`` that survives JupyterLab's sanitizer; the job pane's Metrics section.

Who renders the rows: the notebook's ``%sched_list`` pane and its text (``notebook/panes/list_pane.py``),
``jupyter-sched list`` (``cli/cmd_list.py``), and the server (``server/rows.py`` pages and filters them,
``server/index.py`` caches the listing; the JupyterLab sidebar and notifications read them as the types of
``labextension/src/model.ts``).

Adding a field to a job's row (a metric for "live metrics", a progress for "notebook jobs"):

1. the model: a field of :class:`~.rows.JobRow` (and :class:`~.rows.SweepRow` if a sweep sums it), set in
   :func:`~.rows.job_row` (or :func:`~.rows.sweep_row`) and nowhere else;
2. the TypeScript: ``python -m jupyter_sched.frontend.jobs.schema --typescript > labextension/src/model.ts``
   (``tests/frontend/test_jobs_schema.py`` fails until it is done, and ``tests/server/test_schema.py``
   checks the server's answers against the schema);
3. one renderer per front end that shows it: a cell in ``notebook/panes/list_pane.py`` (the pane and
   :func:`rows_text`), a column in ``cli/cmd_list.py``, a span in ``labextension/src/sidebar.ts``.
"""

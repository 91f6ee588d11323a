"""What a user types: the magics and the work behind each.

* :mod:`.sched_magics` -- ``SchedMagics``: ``%sched_run``, ``%%sched_run``, ``%sched_notebook``, ``%sched_logs``,
  ``%sched_status``, ``%sched_job``, ``%sched_list``, ``%sched_cancel`` and the rest.
* :mod:`.args` -- the notebook's own switches of ``%sched_run``, shell-like splitting, ``$name`` expansion.
* :mod:`.run_plan` -- a ``%sched_run`` line (or cell) to a validated dry run, as ``jupyter-sched run`` does.
* :mod:`.fn_magic` -- ``%sched_run FUNCTION --flag value``: a notebook function launched from the magic.
* :mod:`.notebook_magic` -- ``%sched_notebook NOTEBOOK -p NAME VALUE``: a notebook run as a job from the magic.
* :mod:`.logs_cmd` -- ``%sched_logs``: which replicas, then a live pane, a snapshot, or plain text.
* :mod:`.metrics_cmd` -- ``%sched_metrics``: a job's metrics as a summary table (HTML and text), or its records.
* :mod:`.callsite` -- whether a magic's result is assigned (``job = %sched_run ...``) or shown.

A new magic goes in :mod:`.sched_magics` with its work in a module of its own here; what it shows is a
renderer in ``notebook.panes`` or ``notebook.displays``.
"""

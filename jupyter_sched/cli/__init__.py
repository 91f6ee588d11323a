"""The ``jupyter-sched`` command line: one module per verb (``cmd_run``, ``cmd_status``, ...).

``cmd_run.parse_run_args`` is the ``run`` verb's parser as a function (no ``sys.exit``), which the
notebook's ``%sched_run`` magic shares, so a magic line parses exactly like the command line.
"""

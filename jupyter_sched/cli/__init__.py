"""The ``jupyter-sched`` command line: one module per verb (``cmd_run``, ``cmd_status``, ...), argparse verbs
and exit codes. Parsing a run line, project config, handles, times and the log printer live in the
front-end layer (:mod:`jupyter_sched.frontend`), which the notebook's magics share.
"""

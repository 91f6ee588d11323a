"""The ``jupyter-sched`` command line: one module per verb (``cmd_run``, ``cmd_status``, ...), argparse verbs
and exit codes. Parsing a run line, project config, handles, times and the log printer live in the
front-end layer (:mod:`jupyter_sched.frontend`), which the notebook's magics share.

``main`` starts light: it imports ``verbs`` (every verb's one-line help and flags, nothing else), so
``--help`` and a verb's ``--help`` load no runner, scheduler or component; the verb that runs is imported
then, with what it needs. Keep a ``cmd_*`` module out of ``main``'s and ``verbs``' imports.
"""

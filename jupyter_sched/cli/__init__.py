"""The ``jupyter-sched`` command line: one module per verb (``cmd_run``, ``cmd_status``, ...), argparse verbs
and exit codes. Parsing a run line, project config, handles, times and the log printer live in the
front-end layer (:mod:`jupyter_sched.frontend`), which the notebook's magics share.

``main`` starts light: it imports ``verbs`` (every verb's one-line help and flags, nothing else), so
``--help`` and a verb's ``--help`` load no runner, scheduler or component; the verb that runs is imported
then, with what it needs. Keep a ``cmd_*`` module out of ``main``'s and ``verbs``' imports.

* :mod:`.main` -- ``jupyter-sched``: the parser built from :mod:`.verbs`, the verb run, its exit code.
* :mod:`.verbs` -- every verb's help and flags, and the module that runs it.
* The verbs: :mod:`.cmd_run` (``run`` and ``notebook``), :mod:`.cmd_status`, :mod:`.cmd_describe`,
  :mod:`.cmd_list`, :mod:`.cmd_log`, :mod:`.cmd_cancel`, :mod:`.cmd_top`, :mod:`.cmd_metrics`,
  :mod:`.cmd_builtins`, :mod:`.cmd_runopts`.
* :mod:`.render` -- data-model objects as YAML-like text and JSON; the jobs list and a job's facts come
  from ``jupyter_sched.frontend.jobs``, rendered here, never derived.
* :mod:`.common` -- what only a terminal needs: the runner, colours, messages on stderr.
* :mod:`.errors` -- the command line's exceptions and their exit codes.
"""

"""A run line, from what a user typed to a validated request, the same for ``%sched_run`` and ``jupyter-sched run``.

* :mod:`.config` -- the project's ``[tool.jupyter_sched]`` table.
* :mod:`.run_options` -- ``RUN_OPTIONS``, the one table of run options, with the parser and splitter built from it.
* :mod:`.run_args` -- a run line parsed and validated once, with the one cfg coercer.
* :mod:`.line_vars` -- ``$name`` expansion in a magic's line, the way a shell does it.
* :mod:`.parsers` -- an ``argparse.ArgumentParser`` that raises instead of exiting.
"""

"""The front-end layer: what the command line (``cli/``) and the notebook (``notebook/``) share, so a
``%sched_run`` line and ``jupyter-sched run`` are parsed, validated and resolved by the same code.

No IPython, no ``sys.exit``, no exit codes: errors are :mod:`.errors` exceptions that each front end shows
its own way. Modules:

* :mod:`.config` -- the project's ``[tool.jupyter_sched]`` config.
* :mod:`.run_options` -- ``RUN_OPTIONS``, the one table of run options, and the parser and line splitter
  built from it; :mod:`.run_args` -- a run line parsed and validated once, with the one cfg coercer.
* :mod:`.targets` -- schedulers, app handles, ``HANDLE/ROLE/K`` targets, replica lists, app status.
* :mod:`.times` -- ``--since``/``--until``.
* :mod:`.follow` -- reading several replicas' logs, with renderer hooks; :mod:`.printer` the text renderer.
* :mod:`.parsers`, :mod:`.errors` -- an argparse parser that raises, and the errors.
"""

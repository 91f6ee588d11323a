"""The front-end layer: what every front end shares -- the command line (``cli/``), the notebook
(``notebook/``), the Jupyter server extension (``server/``) and, through the server, the JupyterLab
extension -- so a job is parsed, modelled and followed by the same code, and each front end only renders.

No IPython, no ``sys.exit``, no exit codes: errors are :mod:`.errors` exceptions that each front end shows
its own way. Its rooms:

* :mod:`.jobs` -- the one model of a job and of a jobs list: rows, order, sweep grouping, the failure
  reason, usage. A new fact about a job (a metric, a notebook's progress) is a field here, once.
* :mod:`.logview` -- following and showing replica logs: the follower, the multiplexed log model, and the
  text renderers of ``jupyter-sched log``.
* :mod:`.launch` -- a run line, from the project's config and the one table of run options to a parsed,
  validated request.
* :mod:`.job` -- ``Job``, what ``%sched_run`` and ``jupyter_sched.submit`` return; ``JobFailed``.
* :mod:`.targets` -- what a user names: schedulers, app handles, ``HANDLE/ROLE/K`` targets, app status.
* :mod:`.times` -- ``--since``/``--until``, an ISO time or an age.
* :mod:`.errors` -- the errors a front end shows for what a user typed.
"""

"""A notebook run as a job: parameters in by papermill's conventions, an executed notebook out.

``jupyter_sched.Notebook("train.ipynb")`` is a runnable that ``submit``, ``sweep`` and ``map`` take like a
function: the job's call is the notebook as it was at submit with its parameters injected, which the
replica runs with nbclient on a kernel of its own Python, writing the partial output notebook and a
progress record as it goes; ``job.result()`` is the dict of values the notebook recorded with
``jupyter_sched.record``. papermill is never needed (nbclient and nbformat are). No IPython is imported
here: the kernel is a separate process. Rooms:

* :mod:`.notebook` -- the user's side: ``Notebook``, ``inspect_notebook``, the snapshot and parameter checks.
* :mod:`.params` -- papermill's conventions: reading the ``parameters`` cell, injecting the values.
* :mod:`.execute` -- the replica's side: the kernel, the run, the saved output and progress, the endings.
* :mod:`.args` -- a typed line (``train.ipynb -p lr 0.01 -y ...``) to a Notebook and its parameters, by
  papermill's flags: the one parser of ``%sched_notebook`` and ``jupyter-sched notebook``.
* :mod:`.record` -- ``jupyter_sched.record(name, value)``, run in the notebook's kernel.
"""

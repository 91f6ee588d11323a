"""Running a notebook's own Python functions as apps: pickling, the replica bootstrap, results.

This package is the front-end-neutral side of ``jupyter_sched.submit``, ``sweep`` and ``map``: it turns
``fn(*args, **kwargs)`` into an AppDef whose replicas unpickle and call it, checks before launch that the
call can be sent and that the replica's interpreter can read it, and reads back what each replica returned
or raised. None of it needs IPython: the notebook registers their displays when its extension loads. Rooms:

* :mod:`.job` -- the FunctionJob and the ``Launcher`` behind ``submit``.
* :mod:`.launch` -- a call as an app: its AppDef, job directory, dry run and launch.
* :mod:`.bootstrap` -- the replica side: unpickle the call, run it, write its outcome (copied into each
  job directory, so it stays a top-level module).
* :mod:`.results` -- reading what a replica returned or raised.
* :mod:`.incomplete` -- a job directory stays incomplete until its app is recorded; interrupted submits swept.
* :mod:`.errors` -- the errors of function jobs, each saying what to do.
* :mod:`.calls` -- one call: pickled, its sources, its arguments from a magic line, whether an image can
  run it, and run again here.
* :mod:`.sweeps` -- many calls: the grid, the Sweep, its table of runs, retries, and futures for ``map``.
* :mod:`.notebooks` -- a notebook as the call: ``jupyter_sched.Notebook``, its parameters, its run in a replica.
"""

from jupyter_sched.functions.errors import (
    FunctionError,
    IncompatibleImageError,
    MissingResultError,
    ResultError,
    UnpicklableError,
)
from jupyter_sched.functions.launch import FunctionRequest, launch, prepare
from jupyter_sched.functions.results import Outcome, read_outcome

__all__ = [
    "FunctionError",
    "FunctionRequest",
    "IncompatibleImageError",
    "MissingResultError",
    "Outcome",
    "ResultError",
    "UnpicklableError",
    "launch",
    "prepare",
    "read_outcome",
]

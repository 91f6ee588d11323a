"""Running a notebook's own Python functions as apps: pickling, the replica bootstrap, results.

This package is the front-end-neutral side of ``jupyter_sched.submit`` and ``jupyter_sched.sweep``: it
turns ``fn(*args, **kwargs)`` into an AppDef whose replicas unpickle and call it, checks before launch that
the call can be sent (:mod:`.pack`) and that the replica's interpreter can read it (:mod:`.images`), and
reads back what each replica returned or raised (:mod:`.results`). The notebook's Job and Sweep objects
(``jupyter_sched.notebook.fn_job``, ``.sweep``) sit on top of it.
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

"""Reading what a replica of a function job returned or raised (``result-<rank>.pkl`` in the job dir).

The bootstrap writes each outcome atomically, so a file is either absent (the replica has not finished,
or died before writing) or whole. Unpickling a value may need the notebook's classes: they are in this
process, since the value was made by code pickled from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

import cloudpickle

from jupyter_sched.functions.errors import FunctionError

CALL_FILE = "call.pkl"
BOOTSTRAP_FILE = "bootstrap.py"
META_FILE = "meta.json"


def result_path(job_dir: str, rank: int) -> str:
    return os.path.join(job_dir, f"result-{rank}.pkl")


@dataclass
class Outcome:
    """One replica's outcome: ``ok`` and ``value``, or the error's ``exc_type``, ``message``,
    ``traceback`` text and (when it could be pickled back) ``exception``."""

    rank: int
    ok: bool
    value: Any = None
    exc_type: str = ""
    message: str = ""
    traceback: str = ""
    exception: Optional[BaseException] = None

    def error(self, handle: str, role: str) -> FunctionError:
        return FunctionError(handle, f"{role}/{self.rank}", self.rank, self.exc_type, self.message,
                             self.traceback, self.exception)  # fmt: skip


def read_outcome(job_dir: str, rank: int) -> Optional[Outcome]:
    """The outcome of replica ``rank``, or None if it wrote none."""
    try:
        with open(result_path(job_dir, rank), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    raw = cloudpickle.loads(data)
    if raw.get("ok"):
        return Outcome(rank, True, raw.get("value"))
    exception = None
    if raw.get("exception"):
        try:
            exception = cloudpickle.loads(raw["exception"])
        except Exception:  # noqa: BLE001 - its class may not exist here; the text says it all
            exception = None
    return Outcome(rank, False, None, raw.get("type", ""), raw.get("message", ""), raw.get("traceback", ""), exception)

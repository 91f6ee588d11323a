"""Reading what a replica of a function job returned or raised (``result-<rank>.pkl`` in the job dir).

The bootstrap writes each outcome atomically, so a file is either absent (the replica has not finished,
or died before writing) or whole. Unpickling a value may need the notebook's classes: they are in this
process, since the value was made by code pickled from it. A file that cannot be read (damaged, or a
value of a class that exists only where the replica ran) raises :class:`ResultError`, naming the app, the
replica, the file and the reason; so does a result the replica could not write (it records why).
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

import cloudpickle

from jupyter_sched.functions.errors import FunctionError, ResultError

CALL_FILE = "call.pkl"
BOOTSTRAP_FILE = "bootstrap.py"
META_FILE = "meta.json"


def result_path(job_dir: str, rank: int) -> str:
    return os.path.join(job_dir, f"result-{rank}.pkl")


@dataclass
class Outcome:
    """One replica's outcome: ``ok`` and ``value``, or the error's ``exc_type``, ``message``,
    ``traceback`` text and (when it could be pickled back) ``exception``. ``unwritten`` is the result
    file the replica could not write (its ``message`` says why), e.g. on a full disk."""

    rank: int
    ok: bool
    value: Any = None
    exc_type: str = ""
    message: str = ""
    traceback: str = ""
    exception: Optional[BaseException] = None
    unwritten: str = ""

    def error(
        self, handle: str, role: str, job_dir: str = "", world_size: int = 1
    ) -> Union[FunctionError, ResultError]:
        """What to raise for this outcome: the function's own error (which can re-run the call of
        ``job_dir`` here), or why its result is missing."""
        if self.unwritten:
            return ResultError(handle, f"{role}/{self.rank}", self.rank, self.unwritten, self.message, writing=True)
        call_file = os.path.join(job_dir, CALL_FILE) if job_dir else ""
        return FunctionError(handle, f"{role}/{self.rank}", self.rank, self.exc_type, self.message,
                             self.traceback, self.exception, call_file, world_size)  # fmt: skip


def read_outcome(job_dir: str, rank: int, handle: str = "", role: str = "") -> Optional[Outcome]:
    """The outcome of replica ``rank``, or None if it wrote none. Raises :class:`ResultError` naming the
    app (``handle``), the replica (``role/rank``), the file and the reason if the file cannot be read."""
    path = result_path(job_dir, rank)

    def unreadable(reason: str) -> ResultError:
        return ResultError(handle, f"{role}/{rank}" if role else str(rank), rank, path, reason)

    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise unreadable(e.strerror or str(e)) from e
    try:
        raw = cloudpickle.loads(data)
    except ImportError as e:  # ModuleNotFoundError too
        missing = f" {e.name!r}" if e.name else ""
        raise unreadable(
            f"the value needs module{missing}, which this process cannot import ({type(e).__name__}: {e}); make it"
            " importable here (install it, or put it on sys.path), or return plain data (dicts, lists, numbers,"
            " strings)"
        ) from e
    except AttributeError as e:
        raise unreadable(
            f"the value's class is not defined here ({e}); define or import it in this process, or return plain"
            " data (dicts, lists, numbers, strings)"
        ) from e
    except (EOFError, pickle.UnpicklingError) as e:
        raise unreadable(
            f"the file ({len(data):,} bytes) is truncated or not a result the replica wrote"
            f" ({type(e).__name__}: {e or 'no data'})"
        ) from e
    except Exception as e:  # noqa: BLE001 - garbage, or a value whose own unpickling code fails here
        raise unreadable(f"it cannot be unpickled here ({type(e).__name__}: {e})") from e
    if not isinstance(raw, dict) or "ok" not in raw:
        raise unreadable(f"the file holds a {type(raw).__name__}, not a result the replica wrote")
    if raw.get("ok"):
        return Outcome(rank, True, raw.get("value"))
    return failed_outcome(rank, raw)


def failed_outcome(rank: int, raw: Mapping[str, Any]) -> Outcome:
    """A failure as a replica wrote it (a call's result file, or one item of a map's chunk): its words,
    and the exception itself where it can be unpickled here."""
    exception = None
    if raw.get("exception"):
        try:
            exception = cloudpickle.loads(raw["exception"])
        except Exception:  # noqa: BLE001 - its class may not exist here; the text says it all
            exception = None
    return Outcome(rank, False, None, raw.get("type", ""), raw.get("message", ""), raw.get("traceback", ""), exception,
                   str(raw.get("unwritten") or ""))  # fmt: skip

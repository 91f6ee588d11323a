"""Calling a function job's call again in this process: ``err.rerun_here()``, ``sweep.rerun_here(i)``.

A replica's traceback is text; the frames it names are gone. Running the same call here (the pickled
``(fn, args, kwargs, source map)`` of the job directory's ``call.pkl``, exactly what the replicas
unpickled) raises the same error in this process, where ``%debug`` opens the failing frame and a
``breakpoint()`` in the function stops. Each function's code gets back the file or cell it was written
in (:func:`jupyter_sched.functions.calls.sources.restore`), so the traceback and the debugger show source
lines, and the frames of this module are hidden from them (``__tracebackhide__``, which IPython and
pytest honour), so the traceback starts where the replica's did. For the call, ``RANK``, ``LOCAL_RANK``,
``GROUP_RANK`` and ``WORLD_SIZE`` are those of the replica being re-run, and are put back afterwards
(``MASTER_ADDR``/``MASTER_PORT`` are not set: a function that joins a process group needs its peers,
which a re-run here does not have).

This calls code in this process, so it runs with this process's packages and files, not the image's
or the node's: re-running a container's call needs the packages it imports here too.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, NamedTuple, Optional

import cloudpickle

from jupyter_sched.functions.calls import sources


class Call(NamedTuple):
    """An unpickled call: the function, its arguments and its source map."""

    fn: Any
    args: tuple
    kwargs: Dict[str, Any]
    source_map: List[sources.Entry]


def load(payload: bytes, where: str = "the call") -> Call:
    """The call pickled in ``payload`` (``call.pkl``'s content); ``where`` names it in errors."""
    try:
        fn, args, kwargs, entries = cloudpickle.loads(payload)
    except ImportError as e:
        raise RuntimeError(
            f"cannot re-run {where} here: it needs module {e.name!r}, which this process cannot import"
            f" ({type(e).__name__}: {e}); install it here, or debug where it ran"
        ) from e
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file
        raise RuntimeError(f"cannot re-run {where} here: it cannot be unpickled ({type(e).__name__}: {e})") from e
    return Call(fn, tuple(args), dict(kwargs), list(entries or []))


def read(call_file: str) -> Call:
    try:
        with open(call_file, "rb") as f:
            payload = f.read()
    except OSError as e:
        raise RuntimeError(
            f"cannot re-run the call in {call_file}: {e.strerror or e} (the job directory was removed?)"
        ) from e
    return load(payload, call_file)


def run(call: Call, rank: int = 0, world_size: int = 1) -> Any:
    """``call.fn(*call.args, **call.kwargs)`` here, as replica ``rank`` of ``world_size``; its value, or
    what it raises. IPython, its debugger and pytest leave this frame out of tracebacks."""
    __tracebackhide__ = True  # noqa: F841 - read by IPython (ultratb, %debug) and pytest
    sources.restore(call.fn, call.source_map)
    with replica_env(rank, world_size):
        return call.fn(*call.args, **call.kwargs)


def run_file(call_file: str, rank: int = 0, world_size: int = 1) -> Any:
    """:func:`run` of the call in ``call_file`` (a job directory's ``call.pkl``)."""
    __tracebackhide__ = True  # noqa: F841
    return run(read(call_file), rank, world_size)


@contextmanager
def replica_env(rank: int, world_size: int) -> Iterator[None]:
    """``RANK``, ``GROUP_RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` as a replica has them (one per host),
    restored afterwards."""
    values = {"RANK": str(rank), "GROUP_RANK": str(rank), "LOCAL_RANK": "0", "WORLD_SIZE": str(world_size)}
    saved: Dict[str, Optional[str]] = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old

"""The replica side of a function job: unpickle the call, run it, write what it returned or raised.

This file is copied into the job directory at launch and run as ``python bootstrap.py JOB_DIR`` in each
replica, so it may import only the standard library and cloudpickle: a container image or a cluster node
has neither jupyter_sched nor the notebook's packages beyond what the function itself imports.

The replica's identity is what ``dist.spmd`` gives (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``MASTER_PORT`` from the app's env); ``MASTER_ADDR`` is read here from the variable the scheduler names as
holding rank 0's host (``JUPYTER_SCHED_RANK0_ENV``). The outcome is written to ``result-<rank>.pkl``
atomically (a private temporary file renamed), so a reader never sees half a result. The exit code is 0
when the function returned and 1 when it raised; the traceback also goes to stderr, so the logs show it.
An outcome that cannot be written (a full disk) leaves no temporary file, and a small note in its place
that names the reason (``unwritten``), with exit code 1.

The call carries a source map (``jupyter_sched.functions.calls.sources``): where each function sent by value was
written and its lines. A traceback's frames are matched against it by code (name, first line, bytecode),
so they show the user's file, or the cell as IPython names it (``Cell In[12], line 3``), and the source
line, whatever file name the code arrived with.

A chunk of ``jupyter_sched.map`` (its keyword :data:`ITEMS_KEY` holds ``[(index, item), ...]``) calls the
function once per item, in order, and appends each item's outcome to ``items-<rank>.pkl`` in frames (an
8-byte length, then a pickled list of ``(index, ok, value or error)``), flushed a few times a second, so
the kernel reads the items done so far while the chunk runs. An item that raises is recorded and the
next one runs; the chunk's own result then names how many raised and its exit code is 1.
"""

import os
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

OUTCOME_FORMAT = 1
ITEMS_KEY = "jupyter_sched:items"
"""The keyword of a map chunk's call that holds its items (not a Python identifier: no function's own)."""
ITEMS_FLUSH = 0.2
"""Seconds between two writes of a chunk's finished items (each write is one frame)."""


def _rank() -> int:
    for name in ("RANK", "JUPYTER_SCHED_REPLICA_ID"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def _identity() -> None:
    rank0_var = os.environ.get("JUPYTER_SCHED_RANK0_ENV", "")
    if "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = os.environ.get(rank0_var, "") or "localhost"


def _type_name(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", "__main__") else f"{module}.{cls.__qualname__}"


def _format_exc() -> str:
    import traceback  # only on the error path: the common path imports nothing it does not use

    return traceback.format_exc()


def _places(entries: List[Any]) -> Dict[Tuple[str, int, int], Tuple[str, bool]]:
    """The source map's code keys -> ``(label, is_cell)``; each label's lines go into the line cache."""
    import linecache

    places: Dict[Tuple[str, int, int], Tuple[str, bool]] = {}
    for key, label, is_cell, first, lines in entries:
        places[tuple(key)] = (label, is_cell)
        known = linecache.cache.get(label, ())
        text = list(known[2]) if len(known) == 4 and known[1] is None else []  # ours (no mtime): another entry's
        text += [""] * (first - 1 + len(lines) - len(text))
        text[first - 1 : first - 1 + len(lines)] = lines
        linecache.cache[label] = (sum(map(len, text)), None, text, label)
    return places


def _relabel(te: Any, exc: Optional[BaseException], tb: Any, places: Dict[Any, Any], cells: Set[str]) -> None:
    """Gives ``te``'s frames that match the source map their label (their lines are in the line cache),
    and so on down the exception's cause, context and group members."""
    import traceback
    import zlib

    if te is None or exc is None:
        return
    codes = [frame.f_code for frame, _ in traceback.walk_tb(tb)]
    if len(codes) == len(te.stack):
        for i, (code, summary) in enumerate(zip(codes, te.stack)):
            found = places.get((code.co_name, code.co_firstlineno, zlib.crc32(code.co_code)))
            if found is None:
                continue
            label, is_cell = found
            if is_cell:
                cells.add(label)
            positions = {k: getattr(summary, k) for k in ("end_lineno", "colno", "end_colno") if hasattr(summary, k)}
            te.stack[i] = traceback.FrameSummary(label, summary.lineno, summary.name, **positions)
    for te_next, exc_next in ((te.__cause__, exc.__cause__), (te.__context__, exc.__context__)):
        if exc_next is not None:
            _relabel(te_next, exc_next, exc_next.__traceback__, places, cells)
    for te_member, exc_member in zip(getattr(te, "exceptions", None) or (), getattr(exc, "exceptions", ())):
        _relabel(te_member, exc_member, exc_member.__traceback__, places, cells)


def _format_error(exc: BaseException, tb: Any, entries: List[Any]) -> str:
    """The traceback from ``tb`` on, each frame of the user's code with its place and source line; a
    cell's frames read as IPython prints them (``Cell In[12], line 3, in train``)."""
    import traceback

    te = traceback.TracebackException(type(exc), exc, tb)
    cells: Set[str] = set()
    try:
        _relabel(te, exc, tb, _places(entries), cells)
    except Exception:  # noqa: BLE001 - a source map we cannot apply must not hide the error itself
        te = traceback.TracebackException(type(exc), exc, tb)
    text = "".join(te.format())
    for label in cells:
        text = text.replace(f'File "{label}", line ', f"{label}, line ")
    return text


def _error(exc: BaseException, text: str, cloudpickle: Any) -> Dict[str, Any]:
    pickled: Optional[bytes]
    try:
        pickled = cloudpickle.dumps(exc)
    except Exception:  # noqa: BLE001 - the text is enough
        pickled = None
    return {"format": OUTCOME_FORMAT, "ok": False, "type": _type_name(exc), "message": str(exc),
            "traceback": text, "exception": pickled}


def _write(job_dir: str, rank: int, outcome: Dict[str, Any], cloudpickle: Any) -> bool:
    path = os.path.join(job_dir, f"result-{rank}.pkl")
    try:
        data = cloudpickle.dumps(outcome)
    except Exception as e:  # noqa: BLE001 - the return value cannot be pickled: say so instead
        text = _format_exc()
        message = f"the function returned a {type(outcome.get('value')).__name__} that cannot be pickled: {e}"
        sys.stderr.write(message + "\n")
        data = cloudpickle.dumps({"format": OUTCOME_FORMAT, "ok": False, "type": "TypeError",
                                  "message": message, "traceback": text, "exception": None})
        outcome = {"ok": False}
    try:
        _save(path, data, job_dir)
    except OSError as e:  # a full disk, a read-only or vanished directory: leave the reason in its place
        what = "the returned value" if outcome["ok"] else f"the {outcome.get('type') or 'error'} it raised"
        reason = (
            f"{e.strerror or e} ({what}: {len(data):,} bytes pickled); make room there, or give the job a"
            " log_dir (job_dir on Slurm) with room"
        )
        sys.stderr.write(f"jupyter_sched: could not write the result to {path}: {reason}\n")
        sys.stderr.flush()
        note = {"format": OUTCOME_FORMAT, "ok": False, "type": type(e).__name__, "message": reason,
                "traceback": "", "exception": None, "unwritten": path}
        try:
            _save(path, cloudpickle.dumps(note), job_dir)
        except OSError:
            pass  # not even that fits: the exit code and the line above are all there is
        return False
    return bool(outcome["ok"])


def _save(path: str, data: bytes, job_dir: str) -> None:
    """``path`` replaced at once by a private file holding ``data``; on an error nothing is left behind."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private, as the job's logs
    try:
        with os.fdopen(fd, "wb") as f:
            _owned_by_job_owner(f.fileno(), job_dir)
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _owned_by_job_owner(fd: int, job_dir: str) -> None:
    """A replica running as root (a container's default user) writing into a job directory of another
    user hands the file to that user, who could not read a private root-owned file."""
    try:
        st = os.stat(job_dir)
        if os.geteuid() == 0 and st.st_uid != 0:
            os.fchown(fd, st.st_uid, st.st_gid)
    except OSError:
        pass


def main(argv: List[str]) -> int:
    job_dir = argv[1]
    rank = _rank()
    _identity()
    if os.getcwd() not in sys.path:  # as in the kernel: modules next to the notebook import
        sys.path.insert(1, os.getcwd())
    import cloudpickle

    try:
        with open(os.path.join(job_dir, "call.pkl"), "rb") as f:
            fn, args, kwargs, sources = cloudpickle.load(f)
    except BaseException as e:  # noqa: BLE001 - e.g. a module the function needs is missing here
        text = _format_exc()
        sys.stderr.write(text)
        _write(job_dir, rank, _error(e, text, cloudpickle), cloudpickle)
        return 1
    if ITEMS_KEY in kwargs:
        return _run_chunk(job_dir, rank, fn, kwargs.pop(ITEMS_KEY), sources, cloudpickle)
    try:
        value = fn(*args, **kwargs)
    except BaseException as e:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are outcomes too
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None  # from the function's frame on
        text = _format_error(e, tb, sources)
        sys.stderr.write(text)
        sys.stderr.flush()
        _write(job_dir, rank, _error(e, text, cloudpickle), cloudpickle)
        return 1
    sys.stdout.flush()
    ok = _write(job_dir, rank, {"format": OUTCOME_FORMAT, "ok": True, "value": value}, cloudpickle)
    return 0 if ok else 1


def _run_chunk(job_dir: str, rank: int, fn: Any, items: List[Tuple[int, Any]], sources: List[Any],
               cloudpickle: Any) -> int:  # fmt: skip
    """Calls ``fn(item)`` for each ``(index, item)``, appending the outcomes to ``items-<rank>.pkl``;
    then the chunk's own outcome: how many items ran, or how many raised (exit code 1)."""
    import struct
    import time

    failed: List[Tuple[int, str]] = []
    batch: List[Tuple[int, bool, Any]] = []
    path = os.path.join(job_dir, f"items-{rank}.pkl")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # private, as the job's logs
    with os.fdopen(fd, "ab", buffering=0) as out:
        _owned_by_job_owner(out.fileno(), job_dir)

        def flush() -> None:
            try:
                data = cloudpickle.dumps(batch)
            except Exception:  # noqa: BLE001 - some value cannot be pickled: each alone, that one as an error
                data = cloudpickle.dumps([_picklable(entry, cloudpickle) for entry in batch])
            out.write(struct.pack(">Q", len(data)) + data)
            batch.clear()

        last = time.monotonic()
        for index, item in items:
            try:
                batch.append((index, True, fn(item)))
            except BaseException as e:  # noqa: BLE001 - the item's outcome; the next item runs
                tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
                text = _format_error(e, tb, sources)
                sys.stderr.write(f"item {index}: {text}")
                failed.append((index, f"{_type_name(e)}: {e}"))
                batch.append((index, False, _error(e, text, cloudpickle)))
            if time.monotonic() - last >= ITEMS_FLUSH:
                flush()
                last = time.monotonic()
        if batch:
            flush()
    sys.stdout.flush()
    if not failed:
        ok = _write(job_dir, rank, {"format": OUTCOME_FORMAT, "ok": True, "value": len(items)}, cloudpickle)
        return 0 if ok else 1
    first, what = failed[0]
    message = f"{len(failed)} of {len(items)} items raised; the first, item {first}: {what}"
    _write(job_dir, rank, {"format": OUTCOME_FORMAT, "ok": False, "type": "MapItemsFailed", "message": message,
                           "traceback": "", "exception": None}, cloudpickle)  # fmt: skip
    return 1


def _picklable(entry: Tuple[int, bool, Any], cloudpickle: Any) -> Tuple[int, bool, Any]:
    """``entry`` if it pickles, else its item's error saying that its value cannot be pickled."""
    try:
        cloudpickle.dumps(entry)
        return entry
    except Exception as e:  # noqa: BLE001
        message = f"the function returned a {type(entry[2]).__name__} that cannot be pickled: {e}"
        return (entry[0], False, {"format": OUTCOME_FORMAT, "ok": False, "type": "TypeError", "message": message,
                                  "traceback": "", "exception": None})  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(sys.argv))

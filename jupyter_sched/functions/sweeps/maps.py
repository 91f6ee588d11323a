"""``jupyter_sched.map(fn, items, chunksize=None)``: items run in chunks, one app per chunk, one result per item.

One app per item costs an app's record, job directory and logs per item (about 50 kB) and a launch each:
a 10,000-item map of a trivial function took minutes where a process pool takes a fraction of a second.
A :class:`ChunkedMap` launches one function job per *chunk* of consecutive items; its replica calls the
function on each item in turn (the bootstrap's chunk mode, :mod:`jupyter_sched.functions.bootstrap`) and
appends each item's outcome to ``items-<rank>.pkl`` a few times a second, which this side reads while the
chunk runs (the table's ``done`` column) and in full when it ends, in item order. An item that raises is
recorded and the chunk goes on; the chunk then ends FAILED, its row's error names the failed items, and
``retry_failed()`` runs such chunks again.

The chunk size, when not given, follows ``multiprocessing.Pool.map``'s rule: ``ceil(items / (4 ×
max_concurrent))``, so each of the ``max_concurrent`` slots gets about four chunks (the last ones balance
the load; the table moves in steps a quarter of a slot's share). A map of at most ``4 × max_concurrent``
items thus gets a chunk of one: one app per item, the plain sweep it always was (each item its own run,
job, logs, retry, early stopping), since a launch per item costs little there. The map's items are items
of the chunks, not runs, for everything but the table: :meth:`ChunkedMap.results`, ``to_dataframe()``,
``best()``, ``as_completed`` (one :class:`Item` per item, a future: ``result()``, ``exception()``) and
``rerun_here(i)`` go by item. A failed item is named by its index and its value's repr (secrets masked,
shortened): ``#3 (path='a.txt')``.

With ``num_replicas`` above one, every replica of a chunk runs its items; the values are rank 0's.
Early stopping judges runs, so it needs a chunk of one (``stop=`` with ``chunksize`` above one is an
error). ``load_sweep`` finds a chunked map's chunks again, not its items.
"""

from __future__ import annotations

import math
import os
import struct
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

import cloudpickle

from jupyter_sched.functions.bootstrap import ITEMS_KEY
from jupyter_sched.functions.calls import rerun
from jupyter_sched.functions.errors import MissingResultError, ResultError
from jupyter_sched.functions.job import Launcher
from jupyter_sched.functions.results import Outcome, failed_outcome
from jupyter_sched.functions.sweeps import table
from jupyter_sched.functions.sweeps.futures import map_values
from jupyter_sched.functions.sweeps.sweep import (
    ERRORS,
    QUEUED,
    STOP_GRACE,
    Point,
    Run,
    Sweep,
    start_sweep,
    stopping_options,
)
from jupyter_sched.specs import AppState
from jupyter_sched.specs.output.masking import mask_text

SUCCEEDED = AppState.SUCCEEDED.name
#: ``max_concurrent`` when not given: a sweep's default.
MAX_CONCURRENT = 4
#: Chunks per concurrent slot when the chunk size is not given (``multiprocessing.Pool.map``'s 4).
CHUNKS_PER_SLOT = 4
#: Seconds between two readings of the running chunks' finished items (the table's ``done`` column).
PROGRESS_SLICE = 0.25
#: Characters of an item's value in its name (``#3 (path='a.txt')``), after masking.
LABEL_CHARS = 40
#: Failed items a chunk's row names in its error cell before ``and N more``.
ROW_FAILURES = 3


def map_sweep(launcher: Launcher, fn: Any, items: Iterable[Any], chunksize: Optional[int] = None,
              max_concurrent: Optional[int] = None, errors: str = "raise", *, scheduler: str = "local_cwd",
              num_replicas: int = 1, cfg: Optional[Mapping[str, Any]] = None, resource: Any = None,
              image: Optional[str] = None, name: Optional[str] = None, stop: Any = None,
              stop_grace: float = STOP_GRACE) -> Sweep:  # fmt: skip
    """Runs ``fn(item)`` for every item, ``chunksize`` items per app (default: :func:`chunk_size`), at
    most ``max_concurrent`` apps at a time (default 4): ``jupyter_sched.map(score, range(10)).results()``
    is the ten values in order. ``errors``: what ``results()`` does with a failed item unless told
    (``"raise"``, ``"return"``, ``"skip"``). A chunk of one is a plain Sweep, one run per item (its column
    named after ``fn``'s first parameter); larger chunks a :class:`ChunkedMap`. The other options are
    ``sweep``'s. Every option is checked, and every chunk pickled and dry-run, before anything launches."""
    workers = MAX_CONCURRENT if max_concurrent is None else max_concurrent
    check_options(chunksize, workers, errors)
    rule, grace = stopping_options(stop, stop_grace)
    if rule is not None and chunksize is not None and chunksize > 1:
        raise ValueError(
            f"stop=... with chunksize={chunksize}: early stopping judges runs, and a chunk's items share one;"
            " give chunksize=1 (or leave it out) to stop items early"
        )
    arg, values = map_values(fn, items)
    size = 1 if rule is not None else chunksize or chunk_size(len(values), workers)
    options = dict(scheduler=scheduler, num_replicas=num_replicas, cfg=cfg, resource=resource, image=image)
    base = name or f"{getattr(fn, '__name__', 'fn')}-map"
    if size == 1:
        points = [Point({arg: v}, (v,), {}, item_label(i, {arg: v})) for i, v in enumerate(values)]
        sweep = start_sweep(launcher, fn, points, options, workers, base, rule, grace,
                            make=partial(_with_errors, errors=errors))  # fmt: skip
        return sweep
    chunks = chunk_points(values, size)
    items = [(index, {arg: value}, c) for c, (_, pairs) in enumerate(chunks) for index, value in pairs]
    points = [Point(params, (), items_kwargs(pairs), f"chunk {params['items']}") for params, pairs in chunks]
    make = partial(ChunkedMap, items=items, errors=errors)
    return start_sweep(launcher, fn, points, options, workers, base, make=make)


def _with_errors(*args: Any, errors: str) -> Sweep:
    """A Sweep whose ``results()`` treats failed runs as ``errors`` says unless told."""
    sweep = Sweep(*args)
    sweep.errors = errors
    return sweep


def check_options(chunksize: Any, max_concurrent: Any, errors: Any) -> None:
    """The map's own options, checked before anything is pickled or launched."""
    if chunksize is not None and (isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1):
        raise ValueError(
            f"chunksize={chunksize!r}: give the number of items each app runs (an integer of 1 or more), or"
            " chunksize=None to choose it from the number of items and max_concurrent"
        )
    if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int) or max_concurrent < 1:
        raise ValueError(f"max_concurrent={max_concurrent!r}: give how many apps run at once (an integer of 1 or more)")
    if errors not in ERRORS:
        raise ValueError(
            f'errors={errors!r}: give errors="raise" (results() raises the first failed item\'s error),'
            ' "return" (its error in its place) or "skip" (failed items left out)'
        )


def chunk_size(n_items: int, max_concurrent: int) -> int:
    """``ceil(n_items / (4 × max_concurrent))``, at least 1: about four chunks per concurrent slot."""
    return max(1, math.ceil(n_items / (CHUNKS_PER_SLOT * max_concurrent)))


def item_label(index: int, params: Dict[str, Any]) -> str:
    """``#3 (path='a.txt')``: an item by its index and its value, secrets masked, then shortened."""
    parts = []
    for key, value in params.items():
        text = mask_text(f"{key}={value!r}")  # masked whole: a cut could leave a secret's name off its value
        parts.append(text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…")
    return f"#{index} ({', '.join(parts)})" if parts else f"#{index}"


@dataclass
class Item:
    """One item of a chunked map, and a future of its value: ``result()``, ``exception()``, ``done()``.

    It has the fields of a sweep's run that the table's data reads (``index``, ``params``, ``state``,
    ``outcome``, ``error``, times, ``handle``), so ``to_dataframe()`` and ``best()`` read items as rows."""

    index: int
    params: Dict[str, Any]
    chunk: int
    owner: "ChunkedMap"
    state: str = QUEUED
    outcome: Optional[Outcome] = None
    error: str = ""
    problem: Optional[Exception] = None  # why its outcome cannot be had (unreadable, chunk ended first)
    ended: Optional[float] = None
    status: Any = None

    @property
    def value(self) -> Any:
        """The item itself (what the function was called with)."""
        return next(iter(self.params.values()))

    @property
    def label(self) -> str:
        return item_label(self.index, self.params)

    @property
    def run(self) -> Run:
        """The chunk's run (its Job, state, times)."""
        return self.owner.runs[self.chunk]

    @property
    def handle(self) -> str:
        return self.run.handle

    @property
    def launched(self) -> Optional[float]:
        return self.run.launched

    @property
    def started(self) -> Optional[float]:
        return self.run.started

    def done(self) -> bool:
        return self.ended is not None

    def result(self, timeout: Optional[float] = None) -> Any:
        """Waits for the item and returns its value, or raises its error (naming it, as ``results()`` does)."""
        self.owner.wait_item(self, timeout)
        if self.outcome is not None and self.outcome.ok:
            return self.outcome.value
        err = self.owner.item_error(self)
        assert err is not None
        raise err

    def exception(self, timeout: Optional[float] = None) -> Optional[Exception]:
        """Waits for the item; its error (what ``result()`` would raise), or None if it returned a value."""
        self.owner.wait_item(self, timeout)
        return self.owner.item_error(self)


class ChunkedMap(Sweep):
    """A map whose runs are chunks of its items. The table shows the chunks (their item range, ``done``
    count, failed items); ``results()``, ``records()``/``to_dataframe()``, ``best()``, ``as_completed``
    and ``rerun_here`` go by item."""

    def __init__(self, *args: Any, items: List[Tuple[int, Dict[str, Any], int]], errors: str = "raise",
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.items = [Item(index, params, chunk, self) for index, params, chunk in items]
        self.errors = errors
        self.chunks: List[List[Item]] = [[] for _ in self.runs]
        for item in self.items:
            self.chunks[item.chunk].append(item)
        self._cursors: Dict[int, Tuple[int, int]] = {}  # chunk -> (byte offset in its items file, items read)
        self._next_progress = 0.0
        self.completed: List[int] = []  # item indices in the order they ended (as_completed reads it)
        for run in self.runs:
            self._show_progress(run)

    def __repr__(self) -> str:
        return f"<ChunkedMap {self.name}: {self.counts_text()}>"

    # -- reading the chunks' items (the feeder holds the lock) ----------------------------------------------
    def _reap(self, active: List[Run]) -> bool:
        changed = super()._reap(active)
        if time.monotonic() >= self._next_progress:
            for run in active:
                if not run.done and run.job is not None:
                    changed = self._read_items(run) or changed
            self._next_progress = time.monotonic() + PROGRESS_SLICE
        return changed

    def _read_outcome(self, run: Run) -> None:
        """A chunk ended: every item it wrote, then what its items that never ran are."""
        self._read_items(run)
        run.outcome = None  # the chunk's own outcome is a count: its items carry the values
        now = time.time()
        for item in self.chunks[run.index]:
            if item.ended is None:
                item.state, item.ended = run.state if run.state != AppState.SUCCEEDED.name else "FAILED", now
                item.error = f"chunk {run.index} ({run.handle}) ended {run.state} before this item finished"
                self.completed.append(item.index)
        self._show_progress(run)

    def _read_items(self, run: Run) -> bool:
        assert run.job is not None
        offset, count = self._cursors.get(run.index, (0, 0))
        path = os.path.join(run.job.job_dir, "items-0.pkl")
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except OSError:
            return False
        items = self.chunks[run.index]
        pos = 0
        while pos + 8 <= len(data):
            (size,) = struct.unpack_from(">Q", data, pos)
            if pos + 8 + size > len(data):
                break  # a frame still being written: read next time
            frame = data[pos + 8 : pos + 8 + size]
            pos += 8 + size
            try:
                entries = cloudpickle.loads(frame)
            except Exception as e:  # noqa: BLE001 - a value of a class that exists only where it ran
                entries = None
                reason = f"its frame of items cannot be unpickled here ({type(e).__name__}: {e})"
            if entries is None:  # the frame's items are not known one by one: the rest of the chunk says why
                for item in items[count:]:
                    self._end_item(item, None, ResultError(run.handle, "0", 0, path, reason))
                count = len(items)
                break
            now = time.time()
            for index, ok, got in entries:  # the common case inline: this loop runs once per item
                item = self.items[index]
                if ok:
                    item.outcome, item.state, item.ended = Outcome(0, True, got), SUCCEEDED, now
                    self.completed.append(index)
                else:
                    self._end_item(item, self._outcome(ok, got), None)
            count += len(entries)
        self._cursors[run.index] = (offset + pos, count)
        if pos:
            self._show_progress(run)
        return pos > 0

    @staticmethod
    def _outcome(ok: bool, got: Any) -> Outcome:
        return Outcome(0, True, got) if ok else failed_outcome(0, got)

    def _end_item(self, item: Item, outcome: Optional[Outcome], problem: Optional[Exception]) -> None:
        item.outcome, item.problem, item.ended = outcome, problem, time.time()
        ok = outcome is not None and outcome.ok
        item.state = AppState.SUCCEEDED.name if ok else AppState.FAILED.name
        if outcome is not None and not ok:
            item.error = mask_text(f"{outcome.exc_type}: {outcome.message}")
        elif problem is not None:
            item.error = mask_text(str(problem))
        self.completed.append(item.index)

    def _show_progress(self, run: Run) -> None:
        """The chunk's row: its items' range, how many are done, and the failed ones by index and value."""
        items = self.chunks[run.index]
        done = sum(1 for item in items if item.ended is not None)
        failed = [item for item in items if item.ended is not None and not (item.outcome and item.outcome.ok)]
        run.params["done"] = f"{done}/{len(items)}"
        if failed:
            named = "; ".join(f"{item.label}: {item.error}" for item in failed[:ROW_FAILURES])
            more = f"; and {len(failed) - ROW_FAILURES} more" if len(failed) > ROW_FAILURES else ""
            run.error = f"{len(failed)} failed: {named}{more}"

    def _end(self) -> List[Callable[[], None]]:
        """The map ended (the caller holds the lock): the items of chunks that never launched (cancelled
        while queued) end with them."""
        callbacks = super()._end()
        now = time.time()
        for run in self.runs:
            if run.job is None:
                for item in self.chunks[run.index]:
                    if item.ended is None:
                        item.state, item.ended = run.state, now
                        item.error = f"never started: chunk {run.index} ended {run.state} while queued"
                        self.completed.append(item.index)
        return callbacks

    def _reset(self, run: Run) -> None:
        """A chunk launched again (``retry_failed``): its items wait again."""
        super()._reset(run)
        self._cursors.pop(run.index, None)
        for item in self.chunks[run.index]:
            item.state, item.outcome, item.problem, item.error, item.ended = QUEUED, None, None, "", None
        run.error = ""
        self._show_progress(run)

    # -- the API, by item -------------------------------------------------------------------------------
    def counts(self) -> Dict[str, int]:
        """Items by state (a queued chunk's items are QUEUED; a running chunk's unfinished ones RUNNING)."""
        out: Dict[str, int] = {}
        with self.lock:
            for item in self.items:
                state = item.state if item.ended is not None or item.run.state == QUEUED else AppState.RUNNING.name
                out[state] = out.get(state, 0) + 1
        return out

    def counts_text(self) -> str:
        with self.lock:
            chunks = len(self.runs)
        return f"{len(self.items)} items in {chunks} chunks: {super().counts_text()}"

    def results(self, timeout: Optional[float] = None, errors: Optional[str] = None) -> List[Any]:
        """Every item's value, in item order, once all have ended. ``errors`` (default: the map's):
        ``"raise"`` raises the first failed item's error, naming it by index and value; ``"return"``
        puts each error in its item's place; ``"skip"`` leaves failed items out."""
        return super().results(timeout, errors)

    noun = "map"

    def result_entries(self) -> List[Any]:
        return list(self.items)

    def entry_error(self, entry: Any, hint: bool = False) -> Optional[Exception]:
        return self.item_error(entry, hint)

    def item_error(self, item: Union[Item, int], hint: bool = False) -> Optional[Exception]:
        """Why item ``item`` (an Item or its index) has no value, naming it by index and value; None if
        it returned one. ``hint``: the message also says how to get the other items' values."""
        item = self.items[item] if isinstance(item, int) else item
        if item.outcome is not None and item.outcome.ok:
            return None
        run = item.run
        err: Exception
        if item.outcome is not None:
            role = run.job.role if run.job is not None else ""
            err = item.outcome.error(run.handle, role)  # no call file: the chunk's call is not this item's
        elif item.problem is not None:
            err = item.problem
        else:
            what = item.error or ("still running" if item.ended is None else "no result")
            err = MissingResultError(f"ended {item.state} without a value: {what}" if item.ended else what)
        advice = (
            f"(map {self.name}: {self.counts_text()}) m.results(errors=\"return\") gives every item's value with"
            f" errors in place, errors=\"skip\" only the values; m.retry_failed() runs the failed chunks again"
        )
        if hasattr(err, "in_run"):  # how to debug it: the same sentence as a job's or a sweep's (errors.debug_hint)
            err.in_run(item.label, advice if hint else "", f"m.rerun_here({item.index})")
        return err

    def run_error(self, run: Union[Run, int], hint: bool = False) -> Optional[Exception]:
        """A chunk's first failed item's error (None if all its items returned)."""
        run = self.runs[run] if isinstance(run, int) else run
        for item in self.chunks[run.index]:
            if not (item.outcome is not None and item.outcome.ok):
                return self.item_error(item, hint)
        return None

    def completed_since(self, seen: int) -> List[int]:
        """The indices of the items that ended after the first ``seen`` (in the order they ended)."""
        with self.lock:
            return self.completed[seen:]

    def wait_item(self, item: Item, timeout: Optional[float]) -> None:
        """Blocks until ``item`` has ended (or the map has); TimeoutError after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        changed = threading.Event()
        self.on_change(changed.set)
        try:
            while True:
                changed.clear()
                if item.ended is not None or self.finished:
                    return
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"map {self.name}: item {item.label} still running after {timeout} s")
                changed.wait(0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic())))
        finally:
            self.off_change(changed.set)

    def records(self) -> List[Dict[str, Any]]:
        """One dict per item (``run`` is its index; ``handle`` its chunk's app): :meth:`to_dataframe`'s rows."""
        with self.lock:
            return table.records(list(self.items))

    def to_dataframe(self, metrics: Optional[str] = None) -> Any:
        """A pandas DataFrame, one row per item (index ``run``, the item's index): its value, ``state``, its
        chunk's ``handle`` and times, the returned dict's fields (or ``result``) and ``error``. ``metrics``
        is for sweeps' runs and is refused here."""
        if metrics is not None:
            raise ValueError("to_dataframe(metrics=...): a chunked map's items log no metrics of their own")
        with self.lock:
            items = list(self.items)
        return table.to_dataframe(items)

    def best(self, key: Union[None, str, Callable[[Any], Any]] = None, mode: str = "min", *,
             metric: Optional[str] = None, scope: Optional[str] = None) -> "table.Best":  # fmt: skip
        """``(item, value)`` of the item whose result field ``key`` (or function of its value) is lowest
        (``mode="min"``) or highest (``"max"``)."""
        if key is None or metric is not None or scope is not None:
            raise ValueError('best(): give a result field, e.g. m.best("loss") (a chunked map logs no metrics)')
        with self.lock:
            items = list(self.items)
        return table.best(items, key, mode)

    def rerun_here(self, index: int) -> Any:
        """Calls the function on item ``index`` in this process and returns its value, or raises what it
        raises, here: ``%debug`` opens the failing frame."""
        __tracebackhide__ = True  # noqa: F841 - IPython and pytest start the traceback at the user's code
        item = self.items[index]
        request = item.run.request
        if request is None:
            raise ValueError(f"item {item.label}: its chunk's call was not kept")
        call = rerun.load(request.payload, f"item {item.label}")
        return rerun.run(rerun.Call(call.fn, (item.value,), {}, call.source_map))

    def as_completed(self, timeout: Optional[float] = None) -> Iterator[Item]:  # type: ignore[override]
        """The items as they end (each an :class:`Item`: ``result()``, ``exception()``)."""
        return item_completed(self, timeout)


def item_completed(m: ChunkedMap, timeout: Optional[float] = None) -> Iterator[Item]:
    """Yields ``m``'s items in the order they end; TimeoutError if some have not ended ``timeout`` seconds
    after the first ``next()``. An item retried and ended again is yielded again."""
    deadline = None if timeout is None else time.monotonic() + timeout
    changed = threading.Event()
    m.on_change(changed.set)
    seen = 0
    try:
        while True:
            changed.clear()
            finished = m.finished  # read before the items: one that ends after this is seen next time
            fresh = m.completed_since(seen)
            seen += len(fresh)
            for index in fresh:
                yield m.items[index]
            if finished and seen >= len(m.completed):
                return
            if deadline is not None and time.monotonic() >= deadline:
                left = sum(1 for item in m.items if item.ended is None)
                raise TimeoutError(f"as_completed: {left} item(s) still running after {timeout} s")
            changed.wait(0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic())))
    finally:
        m.off_change(changed.set)


def chunk_points(values: List[Any], size: int) -> List[Tuple[Dict[str, Any], List[Tuple[int, Any]]]]:
    """The chunks of ``values``: per chunk, its row's parameters (``items``: the index range) and its
    ``(index, item)`` pairs, what the replica's call gets under :data:`ITEMS_KEY`."""
    out = []
    for start in range(0, len(values), size):
        part = values[start : start + size]
        last = start + len(part) - 1
        label = f"{start}-{last}" if last > start else str(start)
        out.append(({"items": label}, list(enumerate(part, start))))
    return out


def items_kwargs(pairs: List[Tuple[int, Any]]) -> Dict[str, Any]:
    """The keyword arguments of a chunk's call: its ``(index, item)`` pairs under :data:`ITEMS_KEY`."""
    return {ITEMS_KEY: pairs}


"""Following the logs of several replicas: one model that reads them, and renderers that show them.

:func:`follow` runs one reader thread per replica and hands whole items, in batches, to a renderer's hook
methods (:class:`FollowRenderer`: ``on_items``, ``on_error``, ``on_end``), as dask's
``diagnostics/progressbar.py`` keeps one model with hooks per display. The text renderer is
:class:`jupyter_sched.frontend.printer.LogPrinter` (the command line, and the notebook when it prints);
the notebook's live pane has its own reader (``notebook.log_pane``).
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional, Tuple

from jupyter_sched.schedulers.api import Stream

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner


class FollowRenderer:
    """The hooks :func:`follow` calls; a renderer overrides those it needs (all run on the caller's thread)."""

    def on_items(self, items: List[Tuple[Tuple[str, int], str]]) -> None:
        """Items (lines or ``\r`` frames) of replicas, in the order they were read."""

    def on_error(self, replica: Tuple[str, int], message: str) -> None:
        """The log of ``replica`` could not be read; the others go on."""

    def on_end(self) -> None:
        """Every log has ended."""


@dataclass
class TailOptions:
    """What to read of each replica's log (the arguments of ``Runner.log_lines``)."""

    regex: Optional[str] = None
    since: Optional[datetime] = None
    until: Optional[datetime] = None
    follow: bool = False
    streams: Optional[str] = None
    last: Optional[int] = None
    """Start each replica at its last ``last`` items (lines or ``\r`` frames) instead of its first."""


_DONE = object()
_BATCH = 512


def follow(
    runner: "Runner", app_handle: str, replicas: List[Tuple[str, int]], opts: TailOptions, renderer: FollowRenderer
) -> List[str]:
    """Reads the logs of ``replicas`` (one reader thread each) and hands whole items to ``renderer`` until
    every log has ended: with ``opts.follow`` that is when every replica has ended. Returns the errors met
    (also passed to ``renderer.on_error`` as they happen), one per replica whose log could not be read."""
    items: "queue.Queue[Tuple[Tuple[str, int], object]]" = queue.Queue(maxsize=4096)

    def lines_of(role: str, k: int, should_tail: bool) -> Iterable[str]:
        return runner.log_lines(
            app_handle, role, k, regex=opts.regex, since=opts.since, until=opts.until,
            should_tail=should_tail, streams=Stream(opts.streams) if opts.streams else None,
        )  # fmt: skip

    def read(replica: Tuple[str, int]) -> None:
        role, k = replica
        try:
            lines: Iterable[str] = lines_of(role, k, opts.follow)
            if opts.last is not None:
                lines = _from_last(lines_of(role, k, False), opts.last, lines if opts.follow else None)
            for line in lines:
                items.put((replica, line))
        except Exception as e:  # noqa: BLE001 - reported to the user, the other replicas go on
            items.put((replica, e))
        finally:
            items.put((replica, _DONE))

    for replica in replicas:
        threading.Thread(target=read, args=(replica,), name=f"log-{replica[0]}-{replica[1]}", daemon=True).start()
    errors: List[str] = []
    remaining = len(replicas)
    while remaining:
        try:
            batch = [items.get(timeout=0.5)]
        except queue.Empty:
            continue  # wake up now and then so Ctrl-C is handled promptly
        while len(batch) < _BATCH:  # whatever else is ready goes out in the same write
            try:
                batch.append(items.get_nowait())
            except queue.Empty:
                break
        lines: List[Tuple[Tuple[str, int], str]] = []
        for replica, item in batch:
            if item is _DONE:
                remaining -= 1
            elif isinstance(item, Exception):
                renderer.on_items(lines)
                lines = []
                message = f"cannot read the log of {replica[0]}/{replica[1]}: {item}"
                errors.append(message)
                renderer.on_error(replica, message)
            else:
                lines.append((replica, str(item)))
        renderer.on_items(lines)
    renderer.on_end()
    return errors


def _from_last(snapshot: Iterable[str], last: int, follow: Optional[Iterable[str]]) -> Iterator[str]:
    """The last ``last`` items of ``snapshot``, then what ``follow`` yields after the snapshot's items.

    ``follow`` reads the same log from its start and yields the same items in the same order (a running
    replica's unfinished line is in neither until it ends), so skipping as many items as the snapshot had
    continues exactly where it stopped: nothing lost, nothing printed twice. Memory is ``last`` items.
    """
    window: "deque[str]" = deque(maxlen=last)
    seen = 0
    for item in snapshot:
        window.append(item)
        seen += 1
    yield from window
    if follow is not None:
        yield from itertools.islice(follow, seen, None)

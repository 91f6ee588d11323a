"""Following the logs of several replicas: one model that reads them, and renderers that show them.

:func:`follow` runs one :class:`~jupyter_sched.frontend.logview.follower.LogFollower` per replica (the
reader every front end shares) and hands whole items, in batches, to a renderer's hook methods
(:class:`FollowRenderer`: ``on_items``, ``on_error``, ``on_end``). Items of several replicas are merged in
the order they were written (``Runner.log_items(timed=True)`` through a
:class:`~jupyter_sched.logs.reorder.Reorder`, held at most ``WINDOW_S``), not the order their readers
happened to deliver them; one replica's items go out as they come. This is as dask's
``diagnostics/progressbar.py`` keeps one model with hooks per display. The text renderer is
:class:`jupyter_sched.frontend.logview.printer.LogPrinter` (the command line, and the notebook when it
prints); the notebook's live pane renders the same followers' items into its own bounded view
(``notebook.panes.log_pane``).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, List, Optional, Tuple, TypeVar

from jupyter_sched.frontend.logview.follower import LogFollower
from jupyter_sched.frontend.logview.metric_lines import timed_text, without_metric_lines
from jupyter_sched.logs.reorder import WINDOW_S, Reorder
from jupyter_sched.schedulers.api import Stream

if TYPE_CHECKING:  # pragma: no cover
    from jupyter_sched.runner import Runner


class FollowRenderer:
    """The hooks :func:`follow` calls; a renderer overrides those it needs (all run on the caller's thread)."""

    def on_items(self, items: List[Tuple[Tuple[str, int], str]]) -> None:
        """Items (lines or ``\r`` frames) of replicas, in the order they were written."""

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
    metric_lines: bool = False
    """Show the marked metric lines as printed (``log --raw``); else they are taken out and their records
    stored (``logview.metric_lines``)."""


T = TypeVar("T")
_BATCH = 512
_BUFFER = 4096


def follow(
    runner: "Runner", app_handle: str, replicas: List[Tuple[str, int]], opts: TailOptions, renderer: FollowRenderer
) -> List[str]:
    """Reads the logs of ``replicas`` (one :class:`~jupyter_sched.frontend.logview.follower.LogFollower`
    each, lossless: a replica's reader waits while its items are unprinted) and hands whole items to
    ``renderer`` until every log has ended: with ``opts.follow`` that is when every replica has ended.
    Returns the errors met (also passed to ``renderer.on_error`` as they happen), one per replica whose log
    could not be read. Leaving early (Ctrl-C) stops every reader."""

    def timed_items(role: str, k: int, should_tail: bool) -> Iterable[Tuple[float, str]]:
        return runner.log_items(
            app_handle, role, k, regex=opts.regex, since=opts.since, until=opts.until,
            should_tail=should_tail, streams=Stream(opts.streams) if opts.streams else None, timed=True,
        )  # fmt: skip

    def opener(role: str, k: int) -> Callable[[], Iterable[Tuple[float, str]]]:
        def items() -> Iterable[Tuple[float, str]]:
            timed = timed_items(role, k, opts.follow)
            if opts.last is not None:
                timed = _from_last(timed_items(role, k, False), opts.last, timed if opts.follow else None)
            if opts.metric_lines:
                return timed
            return without_metric_lines(runner, app_handle, role, k, timed, timed_text)

        return items

    changed = threading.Event()
    followers = [
        LogFollower(opener(role, k), f"log-{role}-{k}", max_items=_BUFFER, on_change=changed.set)
        for role, k in replicas
    ]
    merge: Reorder[str] = Reorder(len(replicas), WINDOW_S, max_held=4096)
    errors: List[str] = []
    open_logs = set(range(len(replicas)))

    def release(everything: bool = False) -> None:
        ready = merge.release(time.monotonic(), everything)
        if ready:
            renderer.on_items([(replicas[index], item) for _, index, item in ready])

    try:
        for follower in followers:
            follower.start()
        while open_logs:
            # wake up now and then so Ctrl-C is handled promptly, and held items go out in time
            if not changed.wait(WINDOW_S / 2 if merge.held() else 0.5):
                release()
                continue
            changed.clear()  # before reading: an item that comes during the reads sets it again
            arrived = time.monotonic()
            for index in sorted(open_logs):
                batch = followers[index].read(_BATCH)
                for ts, item in batch.items:
                    merge.push(index, ts, str(item), arrived)
                if batch.items and followers[index].unread:
                    changed.set()  # more than one batch was waiting: the next round reads on
                if not batch.ended:
                    continue
                open_logs.discard(index)
                merge.end(index)
                if batch.error is not None:
                    release(everything=True)
                    replica = replicas[index]
                    message = f"cannot read the log of {replica[0]}/{replica[1]}: {batch.error}"
                    errors.append(message)
                    renderer.on_error(replica, message)
            release()
    finally:
        for follower in followers:
            follower.stop()
    release(everything=True)
    renderer.on_end()
    return errors


def _from_last(snapshot: Iterable[T], last: int, follow: Optional[Iterable[T]]) -> Iterator[T]:
    """The last ``last`` items of ``snapshot``, then what ``follow`` yields after the snapshot's items.

    ``follow`` reads the same log from its start and yields the same items in the same order (a running
    replica's unfinished line is in neither until it ends), so skipping as many items as the snapshot had
    continues exactly where it stopped: nothing lost, nothing printed twice. Memory is ``last`` items.
    """
    window: "deque[T]" = deque(maxlen=last)
    seen = 0
    for item in snapshot:
        window.append(item)
        seen += 1
    yield from window
    if follow is not None:
        yield from itertools.islice(follow, seen, None)
